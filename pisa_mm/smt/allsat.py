"""Every satisfying assignment of a few observed terms, by a search over their values."""

from __future__ import annotations

import operator
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
    """The solutions found, each a row of values in the order of `keys` (rows, not dicts:
    a test may have tens of thousands), and whether the search finished (False: the
    solver gave up, and `rows` is a subset)."""

    keys: tuple[K, ...]
    rows: tuple[tuple[int, ...], ...]
    complete: bool

    @property
    def solutions(self) -> tuple[dict[K, int], ...]:
        """The rows as key -> value dicts."""
        return tuple(dict(zip(self.keys, row, strict=True)) for row in self.rows)


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
        self.trusted = [False] * len(keys)
        self.domains: list[list[int]] = []
        self.lits: list[dict[int, Any]] = []
        self.pair_of: dict[int, tuple[int, int]] = {}  # a literal's ast id -> (level, value)
        self.nogoods: dict[tuple[int, int], list[tuple[tuple[int, int], ...]]] = {}
        self.active_id = -1

    def order(self, keys: Sequence[K], domains: dict[K, set[int]]) -> None:
        """Search `keys` in this order, with these domains (their literals made once)."""
        self.keys = keys
        self.domains = [sorted(domains[k]) for k in keys]
        self.lits = [
            {v: self.is_value(k, v) for v in d} for k, d in zip(keys, self.domains, strict=True)
        ]
        self.pair_of = {
            lit.get_id(): (level, v) for level, d in enumerate(self.lits) for v, lit in d.items()
        }
        self.probes = [0] * len(keys)
        self.hits = [0] * len(keys)
        self.trusted = [False] * len(keys)

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

    def children(self, prefix: list[Any], values: list[int], level: int) -> list[int]:
        """The values of keys[level] that some solution extending the prefix (`values`, and
        `prefix` their literals) has; all of the domain, unchecked, at a trusted level (the
        next level's checks include them)."""
        domain = self.domains[level]
        if self.trusted[level]:
            return domain
        lits = self.lits[level]
        if not self.probing(level):
            seen: list[int] = []
            key = self.keys[level]
            while self.check([*prefix, *(z3.Not(lits[v]) for v in seen)]):
                seen.append(self.model_values()[key])
            return sorted(seen)
        found = []
        nogoods = self.nogoods
        for v in domain:
            known = nogoods.get((level, v))
            if known and any(all(values[i] == u for i, u in ng) for ng in known):
                continue
            self.probes[level] += 1
            if self.check([*prefix, lits[v]]):
                self.hits[level] += 1
                found.append(v)
            elif self._learn(level) < level:
                break  # the prefix itself is impossible (a trusted level let it through)
        self._trust(level)
        return found

    def _learn(self, level: int) -> int:
        """Record the unsat core of the failed probe just made as a nogood: a set of (level,
        value) pairs no solution has all of (the assertions only grow, so it stays one).
        It is filed under its deepest pair, whose probes then skip a check when the rest
        of it is in their prefix. The deepest level in the core (-1: none)."""
        pairs = []
        for ast_id in self.session.unsat_core_ids():
            pair = self.pair_of.get(ast_id)
            if pair is not None:
                pairs.append(pair)
            elif ast_id != self.active_id:  # not one of ours: learn nothing
                return level
        if not pairs:
            return -1
        deepest = max(pairs)
        pairs.remove(deepest)
        self.nogoods.setdefault(deepest, []).append(tuple(pairs))
        return deepest[0]

    def _trust(self, level: int) -> None:
        """Stop checking the values of a probing level when that is expected to save checks:
        a value it would have found impossible then costs one failed check per value of the
        next level (or one, when that level asks for models) instead of one, and each of
        its values costs none. Never the last level (a solution is only reached through a
        check that assumed all of it), nor next to a trusted level (their misses would
        multiply)."""
        last = len(self.keys) - 1
        probes, hits = self.probes[level], self.hits[level]
        if level == last or probes < PROBE_TRIAL or self.trusted[level + 1]:
            return
        if level > 0 and self.trusted[level - 1]:
            return
        miss_cost = len(self.domains[level + 1]) if self.probing(level + 1) else 1
        if hits > (probes - hits) * (miss_cost - 1):
            self.trusted[level] = True


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
    search.active_id = active.get_id()
    keys = tuple(keys)
    solutions: list[dict[K, int]] = []
    rows: list[tuple[int, ...]] = []
    try:
        while len(solutions) < BLOCKING:
            if not search.check([active]):
                return _done(keys, solutions, rows, True)
            solutions.append(search.model_values())
            if not keys:
                return _done(keys, solutions, rows, True)
            if block is not None:
                block(solutions[-1])
            else:
                blocking = z3.Or([z3.Not(is_value(k, v)) for k, v in solutions[-1].items()])
                session.add(z3.Implies(active, blocking))
        # many solutions: the rest (those the blocking clauses leave) by the search
        if not search.check([active]):
            return _done(keys, solutions, rows, True)
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
        order = sorted(range(len(keys)), key=lambda i: len(domains[keys[i]]))
        search.order([keys[i] for i in order], domains)
        _walk(search, active, _row_of(order), rows)
    except _GaveUp:
        return _done(keys, solutions, rows, False)
    return _done(keys, solutions, rows, True)


def _done(
    keys: tuple[K, ...], solutions: list[dict[K, int]], rows: list[tuple[int, ...]], complete: bool
) -> Projection[K]:
    """The projection of the blocked solutions and the search's rows."""
    first = [tuple(s[k] for k in keys) for s in solutions]
    return Projection(keys, (*first, *rows), complete)


def _row_of(order: list[int]) -> Callable[[list[int]], tuple[int, ...]]:
    """The row (values in the keys' order) of the values of a leaf of the search (in the
    search's order: key `order[j]` at level j)."""
    where = [0] * len(order)
    for level, i in enumerate(order):
        where[i] = level
    if len(where) < 2:  # itemgetter of one index gives a value, of none fails
        return lambda values: tuple(values)
    return operator.itemgetter(*where)


def _walk(
    search: _Search[K],
    active: Any,
    row_of: Callable[[list[int]], tuple[int, ...]],
    out: list[tuple[int, ...]],
) -> None:
    """Depth-first over the levels, iteratively (a large test has many keys). Every value of
    the first level's domain is possible by definition; deeper ones are checked (or
    trusted, `_Search._trust`), the last level's always."""
    depth = len(search.keys)
    stack: list[tuple[list[Any], list[int]]] = [([active], [])]
    while stack:
        prefix, values = stack.pop()
        level = len(values)
        if level == depth:
            out.append(row_of(values))
            continue
        found = search.domains[0] if level == 0 else search.children(prefix, values, level)
        lits = search.lits[level]
        # pushed in reverse so that solutions come out in the domains' order
        for v in reversed(found):
            stack.append(([*prefix, lits[v]], [*values, v]))
