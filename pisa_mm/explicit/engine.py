"""The explicit engine: enumerate candidate executions and evaluate the cat model on each."""

from __future__ import annotations

import threading
import time
import weakref
from collections.abc import Callable, Iterable, Iterator, Mapping, Sequence

from pisa_mm.cat.compact import Classes, Orders
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
from pisa_mm.explicit.candidates import Candidate, ForcedPairs, PathFilter, Prune, candidates
from pisa_mm.explicit.forced import ForcedOrders, forcing_model
from pisa_mm.explicit.monotone import monotone_axioms
from pisa_mm.explicit.size import candidate_space
from pisa_mm.litmus.program import LitmusTest, MemObs, Observable, Quantifier, RegObs
from pisa_mm.outcomes.condition import (
    condition_text,
    eval_prop,
    make_state,
    observables,
    passes_filter,
    reg_key,
    state_maker,
    verdict,
)
from pisa_mm.outcomes.model import FlagWitness, State, TestResult, Verdict
from pisa_mm.records import record, replace
from pisa_mm.values.expr import Expr, ReadValue

__all__ = ["Execution", "executions", "final_state", "run_test"]

ENGINE = "explicit"

Pairs = Iterable[tuple[int, int]]


@record
class Execution:
    """A candidate with the model's judgement on it.

    `failed` names the axioms that fail (only the first one unless `executions` was asked
    for all); `flags` are evaluated only for allowed executions.
    """

    candidate: Candidate
    allowed: bool
    failed: tuple[str, ...]
    flags: tuple[FlagWitness, ...]


@record
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
        if hit is None:
            # The evaluator ignores the events not in `events`: shapes and the pair sets the
            # structure holds are given whole.
            hit = self.static.held(name)
        return hit if hit is not None else self.static.pairs(name, self.happen)


# Built-ins that differ between candidates with the same events: the evaluator recomputes
# only what depends on them. Space sets and loc depend on computed addresses, hence on rf,
# unless every access has one possible location (`_Static.fixed_locs`): then they are
# functions of the events, like the static built-ins, and so is everything computed from
# them (`po \ loc`, `[M & GLOBAL]`, `conflict`...).
_DYNAMIC = frozenset({"rf", "co", "loc", *SPACE_SETS})
_DYNAMIC_FIXED = frozenset({"rf", "co"})

# Pruning judges partial candidates, which costs more than it cuts on small candidate
# spaces (explicit/size.py): below this estimate every candidate is judged whole. Measured
# with bench/run_bench.py: on the small shapes of litmus/gen (estimates 4-32), pruning
# makes the engine 1.5-1.7x slower; from about a hundred on it wins (2.5x at 300-500).
PRUNE_ABOVE = 64

# Coherence mappings whose `Orders` a structure keeps (`_Static.orders_of`).
_ORDERS_KEPT = 256


class _Static:
    """The static built-ins of a structure: sets computed once (the evaluator ignores the
    events outside a candidate's universe), relations computed on demand (see `_Base`)."""

    def __init__(self, es: EventStructure) -> None:
        self.es = es
        self.sets = static_sets(es)
        self.rels = static_relations(es)
        # When every access has one possible location, the space sets and `loc` do not
        # depend on rf: computed here for all events, restricted per candidate like the
        # static ones (a candidate's `locs` are then those locations, of its accesses).
        self.fixed_locs: dict[int, Location] | None = {}
        for e in es.events:
            if e.kind in (Kind.READ, Kind.WRITE):
                if len(e.locs) != 1:
                    self.fixed_locs = None
                    break
                self.fixed_locs[e.id] = next(iter(e.locs))
        self._located: dict[frozenset[int], tuple[dict[str, frozenset[int]], Pairs]] = {}
        self._sets: dict[
            frozenset[int], tuple[tuple[int, ...], Mapping[str, frozenset[int]], Pairs]
        ] = {}
        self._orders: dict[int, tuple[Mapping[Location, tuple[int, ...]], Orders]] = {}

    def orders_of(self, cand: Candidate) -> Orders:
        """A complete candidate's coherence as `Orders`, one object per co mapping (by
        identity, kept alive here): the candidates of one choice of paths share their
        coherence orders (candidates.py), and the evaluator knows a relation it was given
        before by its identity."""
        co = cand.co
        if cand.pending:
            return cand.co_orders()
        hit = self._orders.get(id(co))
        if hit is not None and hit[0] is co:
            return hit[1]
        orders = cand.co_orders()
        if len(self._orders) >= _ORDERS_KEPT:
            self._orders.clear()
        self._orders[id(co)] = (co, orders)
        return orders

    def sets_of(
        self, cand: Candidate
    ) -> tuple[tuple[int, ...], Mapping[str, frozenset[int]], Pairs]:
        """A candidate's events in order, its sets and `loc` (memoised by its events when
        they do not depend on rf)."""
        hit = self._sets.get(cand.events)
        if hit is not None:
            return hit
        ev = cand.events
        # Unrestricted: the evaluator ignores ids outside the universe (`BaseRelations`).
        space_sets, loc = self.located(cand)
        out = (tuple(sorted(ev)), {**self.sets, **space_sets}, loc)
        if self.fixed_locs is not None:
            self._sets[ev] = out
        return out

    def located(self, cand: Candidate) -> tuple[dict[str, frozenset[int]], Pairs]:
        """The space sets and `loc` of a candidate (memoised by its events when every
        access has one possible location)."""
        if self.fixed_locs is None:
            return _located(self.es, cand.events, cand.locs)
        hit = self._located.get(cand.events)
        if hit is None:
            ev = cand.events
            hit = self._located[ev] = _located(
                self.es, ev, {e: loc for e, loc in self.fixed_locs.items() if e in ev}
            )
        return hit


def _located(
    es: EventStructure, ev: frozenset[int], locs: Mapping[int, Location]
) -> tuple[dict[str, frozenset[int]], Pairs]:
    sets = {name: s & ev for name, s in dynamic_space_sets(es, locs).items()}
    by_loc: dict[Location, list[int]] = {}
    for eid, loc in locs.items():
        by_loc.setdefault(loc, []).append(eid)
    return sets, Classes(tuple(frozenset(group) for group in by_loc.values()))


def base_relations(static: _Static, cand: Candidate) -> _Base:
    """Every built-in of `pisa_mm.cat.builtins` for one candidate execution."""
    ev = cand.events
    order, sets, loc = static.sets_of(cand)
    rels = {"loc": loc, "rf": cand.rf, "co": static.orders_of(cand)}
    return _Base(order, sets, rels, static.rels, ev)


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


class _Compiled:
    """What the engine compiles from a model alone, for one set of dynamic built-ins: the
    evaluator of every check, and that of the axioms monotone in rf and co (for pruning;
    None when there are none), each compiled on first use (small tests are not pruned:
    PRUNE_ABOVE)."""

    def __init__(self, model: Model, dynamic: frozenset[str]) -> None:
        self.model = model
        self.dynamic = dynamic
        self._evaluator: Evaluator | None = None
        self._pruner: Evaluator | None = None
        self._pruner_done = False
        self._forcing: ForcedOrders | None = None
        self._forcing_done = False

    @property
    def evaluator(self) -> Evaluator:
        if self._evaluator is None:
            self._evaluator = Evaluator(self.model, dynamic=self.dynamic)
        return self._evaluator

    @property
    def pruner(self) -> Evaluator | None:
        if not self._pruner_done:
            names = monotone_axioms(self.model, frozenset({"rf", "co"}))
            if names:
                self._pruner = Evaluator(self.model, checks=names, dynamic=self.dynamic)
            self._pruner_done = True
        return self._pruner

    @property
    def forcing(self) -> ForcedOrders | None:
        """The coherence pairs the pruning axioms force, for `candidates` (None when their
        syntax shows none: explicit/forced.py)."""
        if not self._forcing_done:
            names = monotone_axioms(self.model, frozenset({"rf", "co"}))
            extended = forcing_model(self.model, names) if names else None
            if extended is not None:
                self._forcing = ForcedOrders(extended, self.dynamic)
            self._forcing_done = True
        return self._forcing


# Per thread (an Evaluator keeps the session of its last static key) and per model, so that
# a suite run compiles each model once per worker, not twice per test.
_LOCAL = threading.local()


def _compiled(model: Model, fixed_locs: bool) -> _Compiled:
    """The compiled model, for structures whose accesses have fixed locations or not."""
    cache: weakref.WeakKeyDictionary[Model, tuple[_Compiled, _Compiled]] | None
    cache = getattr(_LOCAL, "cache", None)
    if cache is None:
        cache = _LOCAL.cache = weakref.WeakKeyDictionary()
    hit = cache.get(model)
    if hit is None:
        hit = cache[model] = (_Compiled(model, _DYNAMIC), _Compiled(model, _DYNAMIC_FIXED))
    return hit[fixed_locs]


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


def _forced_pairs(static: _Static, compiled: _Compiled) -> ForcedPairs:
    """The pairs of writes the pruning axioms show ordered (explicit/forced.py), asked with
    co given as those pairs; the forcing model is compiled on the first question."""

    def forced(bare: Candidate, asked: frozenset[tuple[int, int]]) -> frozenset[tuple[int, int]]:
        forcing = compiled.forcing
        if forcing is None:
            return frozenset()
        base = base_relations(static, bare)
        return forcing.pairs(replace(base, rels={**base.rels, "co": asked}), (static, bare.events))

    return forced


def executions(
    es: EventStructure,
    model: Model,
    *,
    all_failures: bool = False,
    prune: bool = True,
    paths_wanted: PathFilter | None = None,
) -> Iterator[Execution]:
    """Well-formed candidates of `es`, judged by `model`.

    With `prune` (the default), candidates that some partial execution already shows to be
    forbidden are skipped; without it, every candidate is judged (for explanations).
    `paths_wanted` restricts the enumeration to the path choices it accepts (liveness).
    """
    for cand, result in _judged(es, model, all_failures, prune, paths_wanted):
        flags = tuple(_witness(es, name, result, cand) for name in result.flags)
        yield Execution(cand, result.consistent, result.failed, flags)


def _judged(
    es: EventStructure,
    model: Model,
    all_failures: bool,
    prune: bool,
    paths_wanted: PathFilter | None = None,
) -> Iterator[tuple[Candidate, EvalResult]]:
    """The candidates of `executions` with the model's judgement, whose failed axioms are
    found only if asked (`EvalResult.failed`): counting needs only whether one fails."""
    static = _Static(es)
    compiled = _compiled(model, static.fixed_locs is not None)
    evaluator = compiled.evaluator
    pruner = _pruner(static, compiled.pruner) if prune else None
    forced = _forced_pairs(static, compiled) if prune else None
    for cand in candidates(es, pruner, paths_wanted, forced):
        # The static key names the structure too: the evaluators outlive this test.
        result = evaluator.evaluate(
            base_relations(static, cand),
            static_key=(static, cand.events),
            fail_fast=not all_failures,
        )
        yield cand, result


def _project(
    test: LitmusTest,
    es: EventStructure,
    cand: Candidate,
    obs: tuple[Observable, ...],
    regs: dict[int, dict[str, Expr]] | None = None,
) -> dict[Observable, int]:
    """The final value of each observable in `cand`; `regs` memoises the final registers
    of each path (by id: the structure keeps its paths alive) over a run's candidates."""
    row = _row(es, cand, obs, _reg_keys(obs), {} if regs is None else regs)
    return dict(zip(obs, row, strict=True))


def _reg_keys(obs: tuple[Observable, ...]) -> tuple[str | None, ...]:
    """Per observable, its register's key in `final_regs` (None for a memory location)."""
    return tuple(reg_key(o) if isinstance(o, RegObs) else None for o in obs)


def _row(
    es: EventStructure,
    cand: Candidate,
    obs: tuple[Observable, ...],
    keys: tuple[str | None, ...],
    memo: dict[int, dict[str, Expr]],
) -> tuple[int, ...]:
    """The values of `_project`, in the order of `obs` (`keys`: `_reg_keys(obs)`): a row is
    all `run_test` needs to know a state it has seen (no mapping made, no observable
    hashed)."""
    out: list[int] = []
    for o, key in zip(obs, keys, strict=True):
        if isinstance(o, RegObs):
            assert key is not None
            out.append(_final_reg(es, cand, o.thread, key, memo))
        else:
            out.append(_final_mem(es, cand, o))
    return tuple(out)


def _final_reg(
    es: EventStructure, cand: Candidate, thread: int, key: str, memo: dict[int, dict[str, Expr]]
) -> int:
    path = cand.paths[thread]
    regs = memo.get(id(path))
    if regs is None:
        regs = memo[id(path)] = dict(path.final_regs)
    expr = regs.get(key)
    if expr is None:
        return 0  # a register never written reads as 0 (as in events.semantics)
    if type(expr) is ReadValue:
        # The common final register, a value read: what `evaluate` makes of it (one that
        # was not read is left to `evaluate`, which says so).
        value = cand.values.get(expr.event)
        if value is not None:
            return value & ((1 << expr.width) - 1)
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
    # the unroll bound is already in `structure`
    if options.verdict_only:
        return _verdict_only(test, structure, model)
    start = time.perf_counter()
    obs = observables(test)
    keys = _reg_keys(obs)
    prop = test.condition.prop
    states: set[State] = set()
    positive = negative = cut = 0
    flags: dict[str, FlagWitness] = {}
    cut_flags: dict[str, FlagWitness] = {}
    regs: dict[int, dict[str, Expr]] = {}
    # per row of final values: its state and the proposition's value, None if filtered out
    outcomes: dict[tuple[int, ...], tuple[State, bool] | None] = {}
    make: Callable[[Sequence[int]], State] | None = None
    prune = candidate_space(structure) > PRUNE_ABOVE
    # `cut` and `ended` of the last choice of paths (by identity: its candidates share it)
    paths: tuple[object, ...] | None = None
    cut_paths = ended = False
    for cand, result in _judged(structure, model, False, prune):
        if not result.consistent:
            continue
        if cand.paths is not paths:
            paths, cut_paths, ended = cand.paths, cand.cut, cand.ended
        # A flag's witness is that of the first execution that raises it: found only then.
        if cut_paths:
            cut += 1
            for n in result.flags:
                if n not in cut_flags:
                    cut_flags[n] = replace(_witness(structure, n, result, cand), cut=True)
            continue
        if not ended:  # an ended one has no final state to filter or count
            # The observables are the same, in the same order, for every candidate of the
            # test: the values alone decide the filter, the state and the proposition.
            row = _row(structure, cand, obs, keys, regs)
            if row in outcomes:
                known = outcomes[row]
            else:
                values = dict(zip(obs, row, strict=True))
                if passes_filter(test, values):
                    if make is None:  # `make_state`'s order and texts, worked out once
                        make = state_maker(tuple(values))
                    known = outcomes[row] = (make(row), eval_prop(prop, values))
                else:
                    known = outcomes[row] = None
            if known is None:
                continue
            state, holds = known
            states.add(state)
            if holds:
                positive += 1
            else:
                negative += 1
        for n in result.flags:
            if n not in flags:
                flags[n] = _witness(structure, n, result, cand)
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


def _verdict_only(test: LitmusTest, structure: EventStructure, model: Model) -> TestResult:
    """The verdict alone: candidates are judged until the first allowed complete execution
    that decides it (one whose state satisfies the proposition for `exists` / `~exists`,
    one that does not for `forall`); without one, every candidate was seen."""
    start = time.perf_counter()
    obs = observables(test)
    quantifier = test.condition.quantifier
    deciding = quantifier is not Quantifier.FORALL  # the proposition's value that decides
    found = cut = False
    for cand, result in _judged(structure, model, False, True):
        if not result.consistent:
            continue
        if cand.cut:
            cut = True
            continue
        if cand.ended:
            continue
        values = _project(test, structure, cand, obs)
        if passes_filter(test, values) and eval_prop(test.condition.prop, values) == deciding:
            found = True
            break
    ok = found if quantifier is Quantifier.EXISTS else not found
    return TestResult(
        name=test.name,
        model=model.name,
        engine=ENGINE,
        quantifier=quantifier.value,
        observables=obs,
        states=(),
        verdict=Verdict.OK if ok else Verdict.NO,
        positive=0,
        negative=0,
        flags=(),
        cut=int(cut and not found),
        condition_text=condition_text(test.condition),
        seconds=time.perf_counter() - start,
        verdict_only=True,
    )


def final_state(test: LitmusTest, es: EventStructure, cand: Candidate) -> State | None:
    """The final state of one candidate, projected on the test's observables (for reports);
    None when it has none: cut by the unroll bound, ended at an invalid address, or
    discarded by the test's filter, as `run_test` counts them."""
    if cand.cut or cand.ended:
        return None
    values = _project(test, es, cand, observables(test))
    return make_state(values) if passes_filter(test, values) else None
