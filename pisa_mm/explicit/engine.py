"""The explicit engine: enumerate candidate executions and evaluate the cat model on each."""

from __future__ import annotations

import threading
import time
import weakref
from collections.abc import Iterable, Iterator, Mapping
from dataclasses import dataclass, replace

from pisa_mm.cat.eval import EvalResult, Evaluator
from pisa_mm.cat.syntax import Model
from pisa_mm.engines import EngineOptions
from pisa_mm.events.model import EventStructure, Kind, Location, Space
from pisa_mm.events.relations import (
    SPACE_SETS,
    StaticRelations,
    dynamic_space_sets,
    static_relations,
    static_sets,
)
from pisa_mm.explicit.candidates import Candidate, Prune, candidates
from pisa_mm.explicit.monotone import monotone_axioms
from pisa_mm.litmus.program import LitmusTest, MemObs, Observable, RegObs
from pisa_mm.outcomes.condition import (
    condition_text,
    eval_prop,
    make_state,
    observables,
    passes_filter,
    reg_key,
    verdict,
)
from pisa_mm.outcomes.model import FlagWitness, State, TestResult

__all__ = ["Execution", "executions", "final_state", "run_test"]

ENGINE = "explicit"

Pairs = frozenset[tuple[int, int]]


@dataclass(frozen=True, slots=True)
class Execution:
    """A candidate with the model's judgement on it.

    `failed` names the axioms that fail (only the first one unless `executions` was asked
    for all); `flags` are evaluated only for allowed executions.
    """

    candidate: Candidate
    allowed: bool
    failed: tuple[str, ...]
    flags: tuple[FlagWitness, ...]


@dataclass(frozen=True, slots=True)
class _Base:
    """The built-ins of one candidate, as the cat evaluator's `BaseRelations` asks for them:
    the static relations are streamed among the events that happen, never materialised
    (`ext` of 2,000 threads has millions of pairs; the evaluator keeps them as bits)."""

    events: tuple[int, ...]
    sets: Mapping[str, frozenset[int]]
    rels: Mapping[str, Pairs]
    static: StaticRelations
    happen: frozenset[int]

    def set(self, name: str) -> frozenset[int]:
        return self.sets[name]

    def rel(self, name: str) -> Iterable[tuple[int, int]]:
        hit = self.rels.get(name)
        return hit if hit is not None else self.static.pairs(name, self.happen)


# Built-ins that differ between candidates with the same events: the evaluator recomputes
# only what depends on them. Space sets and loc depend on computed addresses, hence on rf.
_DYNAMIC = frozenset({"rf", "co", "loc", *SPACE_SETS})


class _Static:
    """The static built-ins of a structure: sets computed once and restricted per event set,
    relations computed on demand (see `_Base`)."""

    def __init__(self, es: EventStructure) -> None:
        self.es = es
        self.sets = static_sets(es)
        self.rels = static_relations(es)
        self._restricted: dict[frozenset[int], dict[str, frozenset[int]]] = {}

    def restricted(self, events: frozenset[int]) -> dict[str, frozenset[int]]:
        """Static sets restricted to the events that happen (memoised)."""
        hit = self._restricted.get(events)
        if hit is None:
            hit = self._restricted[events] = {name: s & events for name, s in self.sets.items()}
        return hit


def base_relations(static: _Static, cand: Candidate) -> _Base:
    """Every built-in of `pisa_mm.cat.builtins` for one candidate execution."""
    ev = cand.events
    sets = dict(static.restricted(ev))
    sets.update({name: s & ev for name, s in dynamic_space_sets(static.es, cand.locs).items()})
    by_loc: dict[Location, list[int]] = {}
    for eid, loc in cand.locs.items():
        by_loc.setdefault(loc, []).append(eid)
    rels = {
        "loc": frozenset((a, b) for group in by_loc.values() for a in group for b in group),
        "rf": cand.rf,
        "co": cand.co_pairs(),
    }
    return _Base(tuple(sorted(ev)), sets, rels, static.rels, ev)


def _describe(es: EventStructure, eid: int, cand: Candidate) -> str:
    e = es.events[eid]
    if e.thread is None:
        return e.text
    text = f"P{e.thread}: {e.text or e.kind.value}"
    if e.kind is Kind.EXIT and e.addr is not None:  # an invalid access: say its address
        text += f" at address {cand.evaluate(es, e.addr):#x}"
    return text


def _witness(es: EventStructure, name: str, ev: EvalResult, cand: Candidate) -> FlagWitness:
    w = ev.witness(name)
    if w is None:
        raise RuntimeError(f"flag {name} raised without a witness")
    first: tuple[int, ...] = w.pairs[0] if w.pairs else w.events[:1]
    return FlagWitness(name, first, " / ".join(_describe(es, e, cand) for e in first))


@dataclass(frozen=True, slots=True)
class _Compiled:
    """What the engine compiles from a model alone: the evaluator of every check, and that
    of the axioms monotone in rf and co (for pruning; None when there are none)."""

    evaluator: Evaluator
    pruner: Evaluator | None


# Per thread (an Evaluator keeps the session of its last static key) and per model, so that
# a suite run compiles each model once per worker, not twice per test.
_LOCAL = threading.local()


def _compiled(model: Model) -> _Compiled:
    cache: weakref.WeakKeyDictionary[Model, _Compiled] | None = getattr(_LOCAL, "cache", None)
    if cache is None:
        cache = _LOCAL.cache = weakref.WeakKeyDictionary()
    hit = cache.get(model)
    if hit is None:
        names = monotone_axioms(model, frozenset({"rf", "co"}))
        pruner = Evaluator(model, checks=names, dynamic=_DYNAMIC) if names else None
        hit = cache[model] = _Compiled(Evaluator(model, dynamic=_DYNAMIC), pruner)
    return hit


def _pruner(static: _Static, evaluator: Evaluator | None) -> Prune | None:
    """Cut partial candidates that already fail an axiom monotone in rf and co: every
    completion fails it too (see explicit/monotone.py), whatever the model says."""
    if evaluator is None:
        return None
    pruner = evaluator

    def keep(partial: Candidate) -> bool:
        base = base_relations(static, partial)
        key = (static, partial.events)
        return pruner.evaluate(base, static_key=key, fail_fast=True).consistent

    return keep


def executions(
    es: EventStructure, model: Model, *, all_failures: bool = False, prune: bool = True
) -> Iterator[Execution]:
    """Well-formed candidates of `es`, judged by `model`.

    With `prune` (the default), candidates that some partial execution already shows to be
    forbidden are skipped; without it, every candidate is judged (for explanations).
    """
    static = _Static(es)
    compiled = _compiled(model)
    evaluator = compiled.evaluator
    for cand in candidates(es, _pruner(static, compiled.pruner) if prune else None):
        # The static key names the structure too: the evaluators outlive this test.
        result = evaluator.evaluate(
            base_relations(static, cand),
            static_key=(static, cand.events),
            fail_fast=not all_failures,
        )
        flags = tuple(_witness(es, name, result, cand) for name in result.flags)
        yield Execution(cand, result.consistent, result.failed, flags)


def _project(
    test: LitmusTest, es: EventStructure, cand: Candidate, obs: tuple[Observable, ...]
) -> dict[Observable, int]:
    """The final value of each observable in `cand`."""
    out: dict[Observable, int] = {}
    for o in obs:
        match o:
            case RegObs():
                out[o] = _final_reg(es, cand, o)
            case MemObs():
                out[o] = _final_mem(es, cand, o)
    return out


def _final_reg(es: EventStructure, cand: Candidate, o: RegObs) -> int:
    regs = dict(cand.paths[o.thread].final_regs)
    expr = regs.get(reg_key(o))
    if expr is None:
        return 0  # a register never written reads as 0 (as in events.semantics)
    return cand.evaluate(es, expr)


def _mem_location(es: EventStructure, o: MemObs) -> Location:
    var = es.layout.variable(o.var)
    if var is None:
        raise RuntimeError(f"observable {o} names no variable of the layout")
    instance = o.instance if var.space is Space.SHARED else None
    return Location(o.var, o.index * var.width // 8, instance, var.space)


def _final_mem(es: EventStructure, cand: Candidate, o: MemObs) -> int:
    loc = _mem_location(es, o)
    value = cand.final_value(loc)
    if value is not None:
        return value
    for init_loc, init_value in es.init:
        if init_loc == loc:
            return init_value
    raise RuntimeError(f"no initial value for observable {o}")


def run_test(
    test: LitmusTest, structure: EventStructure, model: Model, options: EngineOptions
) -> TestResult:
    """Enumerate, judge and count: herd's counts are allowed complete executions.

    An allowed execution cut by the unroll bound (or ended by an invalid address) is no
    final state: it is counted in `cut` (when cut) and only its flags are reported.
    """
    del options  # the unroll bound is already in `structure`
    start = time.perf_counter()
    obs = observables(test)
    prop = test.condition.prop
    states: set[State] = set()
    positive = negative = cut = 0
    flags: dict[str, FlagWitness] = {}
    cut_flags: dict[str, FlagWitness] = {}
    for ex in executions(structure, model):
        if not ex.allowed:
            continue
        if ex.candidate.cut:
            cut += 1
            for f in ex.flags:
                cut_flags.setdefault(f.name, replace(f, cut=True))
            continue
        if ex.candidate.ended:  # no final state to filter or count, but its flags stand
            for f in ex.flags:
                flags.setdefault(f.name, f)
            continue
        values = _project(test, structure, ex.candidate, obs)
        if not passes_filter(test, values):
            continue
        states.add(make_state(values))
        if eval_prop(prop, values):
            positive += 1
        else:
            negative += 1
        for f in ex.flags:
            flags.setdefault(f.name, f)
    for name, f in cut_flags.items():
        flags.setdefault(name, f)
    return TestResult(
        name=test.name,
        model=model.name,
        engine=ENGINE,
        quantifier=test.condition.quantifier.value,
        observables=obs,
        states=tuple(sorted(states)),
        verdict=verdict(test.condition.quantifier, positive, negative),
        positive=positive,
        negative=negative,
        flags=tuple(flags[n] for n in sorted(flags)),
        cut=cut,
        condition_text=condition_text(test.condition),
        seconds=time.perf_counter() - start,
    )


def final_state(test: LitmusTest, es: EventStructure, cand: Candidate) -> State | None:
    """The final state of one candidate, projected on the test's observables (for reports);
    None when it has none: cut by the unroll bound, ended at an invalid address, or
    discarded by the test's filter, as `run_test` counts them."""
    if cand.cut or cand.ended:
        return None
    values = _project(test, es, cand, observables(test))
    return make_state(values) if passes_filter(test, values) else None
