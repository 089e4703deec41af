"""Every satisfying assignment of a few observed terms, by a search over their values."""

from __future__ import annotations

from collections.abc import Callable, Sequence
from typing import Any, Generic, TypeVar

import z3

from pisa_mm.records import record
from pisa_mm.smt.solver import Answer, Session

__all__ = ["Projection", "project"]

K = TypeVar("K")

# A level probes each value of its domain (one assumption-only check, no model) while at
# least this fraction of its probes succeed, judged after PROBE_TRIAL probes; below it, the
# level asks the solver for models instead (one check and a model per value found, and one
# that fails). Probing is ~3x cheaper per check than a model, hence the break-even point.
PROBE_HIT_RATE = 0.3
PROBE_TRIAL = 32

# The first solutions come from the classic loop, a check and a blocking clause each: for a
# handful it is the fewest checks. Each clause slows every later check, so past this many
# the search takes over, over the solutions the clauses leave.
BLOCKING = 64


@record
class Projection(Generic[K]):
    """The solutions found (each a key -> value dict), and whether the search finished
    (False: the solver gave up, and `solutions` is a subset)."""

    solutions: tuple[dict[K, int], ...]
    complete: bool


class _GaveUp(Exception):
    pass


class _Search(Generic[K]):
    """The search of `project`: its solver, the literals it assumes and its statistics."""

    def __init__(
        self,
        session: Session,
        keys: Sequence[K],
        is_value: Callable[[K, int], Any],
        values_of: Callable[[Any], dict[K, int]],
        on_model: Callable[[Any], None],
    ) -> None:
        self.session = session
        self.keys = keys
        self.is_value = is_value
        self.values_of = values_of
        self.on_model = on_model
        self.probes = [0] * len(keys)
        self.hits = [0] * len(keys)

    def check(self, assumptions: list[Any]) -> bool:
        answer = self.session.check(assumptions)
        if answer is Answer.UNKNOWN:
            raise _GaveUp
        return answer is Answer.SAT

    def model_values(self) -> dict[K, int]:
        m = self.session.model()
        self.on_model(m)
        return self.values_of(m)

    def probing(self, level: int) -> bool:
        probes = self.probes[level]
        return probes < PROBE_TRIAL or self.hits[level] >= PROBE_HIT_RATE * probes

    def children(self, prefix: list[Any], level: int, domain: list[int]) -> list[int]:
        """The values of keys[level] that some solution extending `prefix` has."""
        key = self.keys[level]
        if self.probing(level):
            found = []
            for v in domain:
                self.probes[level] += 1
                if self.check([*prefix, self.is_value(key, v)]):
                    self.hits[level] += 1
                    found.append(v)
            return found
        seen: list[int] = []
        while self.check([*prefix, *(z3.Not(self.is_value(key, v)) for v in seen)]):
            seen.append(self.model_values()[key])
        return sorted(seen)


def project(
    session: Session,
    active: Any,
    keys: Sequence[K],
    is_value: Callable[[K, int], Any],
    values_of: Callable[[Any], dict[K, int]],
    on_model: Callable[[Any], None] = lambda m: None,
    block: Callable[[dict[K, int]], None] | None = None,
) -> Projection[K]:
    """The distinct assignments of `keys` in the models of the session's assertions under
    the assumption `active`, exactly.

    `is_value(k, v)` is a z3 Boolean equivalent to "key k has value v" (defined once per
    pair: the search assumes them rather than adding clauses, so the solver's clause set
    does not grow with the solutions, as it does with one blocking clause per solution);
    `values_of(model)` reads every key's value; `on_model` sees every model the search asks
    for. The first BLOCKING solutions come from blocking clauses hung off `active`
    (`block(solution)` asserts one, when the caller has its own way to build it). Past
    them, each key's domain (its values in some model) is found by blocking one key at a
    time; then a depth-first search that fixes the keys one by one, smallest domain first,
    keeping a value when a check under the prefix of fixed values finds it possible. Every
    solution's prefixes are possible and its values are in their domains, so nothing is
    missed; a leaf is reached only through checks that succeeded, so nothing is invented;
    the blocked solutions are exactly those the search no longer sees.
    """
    search = _Search(session, keys, is_value, values_of, on_model)
    solutions: list[dict[K, int]] = []
    try:
        while len(solutions) < BLOCKING:
            if not search.check([active]):
                return Projection(tuple(solutions), True)
            solutions.append(search.model_values())
            if not keys:
                return Projection(tuple(solutions), True)
            if block is not None:
                block(solutions[-1])
            else:
                blocking = z3.Or([z3.Not(is_value(k, v)) for k, v in solutions[-1].items()])
                session.add(z3.Implies(active, blocking))
        # many solutions: the rest (those the blocking clauses leave) by the search
        if not search.check([active]):
            return Projection(tuple(solutions), True)
        first = search.model_values()
        domains: dict[K, set[int]] = {k: {v} for k, v in first.items()}
        for k in keys:
            blocked = [active, *(z3.Not(is_value(k, v)) for v in sorted(domains[k]))]
            while search.check(blocked):
                for key, v in search.model_values().items():
                    if v not in domains[key]:
                        domains[key].add(v)
                        if key == k:
                            blocked.append(z3.Not(is_value(k, v)))
        search.keys = sorted(keys, key=lambda k: len(domains[k]))
        _walk(search, active, [sorted(domains[k]) for k in search.keys], solutions)
    except _GaveUp:
        return Projection(tuple(solutions), False)
    return Projection(tuple(solutions), True)


def _walk(
    search: _Search[K], active: Any, domains: list[list[int]], out: list[dict[K, int]]
) -> None:
    """Depth-first over the levels, iteratively (a large test has many keys). Every value of
    the first level's domain is possible by definition; deeper ones are checked."""
    keys = search.keys
    stack: list[tuple[list[Any], list[int]]] = [([active], [])]
    while stack:
        prefix, values = stack.pop()
        level = len(values)
        if level == len(keys):
            out.append(dict(zip(keys, values, strict=True)))
            continue
        key = keys[level]
        found = domains[0] if level == 0 else search.children(prefix, level, domains[level])
        # pushed in reverse so that solutions come out in the domains' order
        for v in reversed(found):
            stack.append(([*prefix, search.is_value(key, v)], [*values, v]))
