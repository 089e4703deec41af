"""`query`: is one final-state outcome allowed? A witness, or why not: the minimal sets of
axioms whose removal allows it and, per candidate execution, the violated axioms."""

from __future__ import annotations

import itertools
from collections.abc import Sequence
from typing import Any

import z3

from pisa_mm.cat.eval import EvalResult, evaluate
from pisa_mm.cat.syntax import Model
from pisa_mm.enums import Enum
from pisa_mm.events.kinds import Kind
from pisa_mm.events.model import EventStructure, Location
from pisa_mm.events.relations import dynamic_space_sets, static_relations, static_sets
from pisa_mm.explicit.candidates import Candidate
from pisa_mm.litmus.program import (
    Condition,
    LitmusTest,
    Prop,
    Quantifier,
)
from pisa_mm.outcomes.condition import condition_observables, observables
from pisa_mm.records import record
from pisa_mm.smt.engine import Problem, event_text
from pisa_mm.smt.lits import Lit
from pisa_mm.smt.solver import Answer, Budget

__all__ = ["Allowed", "Forbidden", "InvalidAccess", "QueryResult", "Violation", "query"]

# Candidate execution shapes explained for a forbidden outcome, at most.
MAX_SHAPES = 12


class Allowed(Enum):
    YES = "allowed"
    NO = "forbidden"
    UNKNOWN = "unknown"
    # no complete allowed execution ends in the state, but an allowed execution cut by the
    # unroll bound has these values at the cut: not a final state (a larger bound may tell)
    CUT = "reached only by executions cut by the unroll bound"


@record
class Violation:
    """One candidate execution with the outcome, and the model's verdict on it."""

    candidate: Candidate
    result: EvalResult

    @property
    def failed(self) -> tuple[str, ...]:
        return self.result.failed


@record
class Forbidden:
    """Why an outcome is forbidden. `corrections`: every minimal set of axioms whose removal
    allows it (empty when no candidate execution has the outcome at all); `violations`: the
    distinct candidate executions with the outcome (at most MAX_SHAPES; `truncated` says
    whether there were more), each with its failing axioms."""

    corrections: tuple[tuple[str, ...], ...]
    violations: tuple[Violation, ...]
    truncated: bool


@record
class InvalidAccess:
    """An allowed execution that ends at an access whose address is none of the test's
    locations (undefined behaviour, `invalid-address`); `access`: that access and the
    address, as the engines' flag witness says them."""

    execution: Violation
    access: str


@record
class QueryResult:
    answer: Allowed
    witness: Violation | None  # the allowed execution (its result says which flags rise)
    why_not: Forbidden | None
    unroll: int
    # whatever the outcome, an allowed execution of the test has undefined behaviour: the
    # answer is about final states, which such an execution never reaches
    invalid: InvalidAccess | None = None


def decode(problem: Problem, m: Any) -> Candidate:
    """The concrete candidate execution of a z3 model (as the explicit engine spells it)."""
    enc = problem.enc
    es = enc.es
    choice: list[int] = []
    for t in es.threads:
        choice.append(
            next(k for k in range(len(t.paths)) if problem.truth(m, enc.sel[(t.index, k)]))
        )
    paths = tuple(t.paths[k] for t, k in zip(es.threads, choice, strict=True))
    events = frozenset(e.id for e in es.events if problem.truth(m, enc.exec[e.id]))
    rf = frozenset(p for p, lit in enc.rf.items() if problem.truth(m, lit))
    locs: dict[int, Location] = {}
    for eid, options in enc.at.items():
        if eid in events:
            locs[eid] = next(loc for loc, lit in options.items() if problem.truth(m, lit))
    values: dict[int, int] = {}
    for eid in sorted(events):
        e = es.events[eid]
        if e.kind is Kind.READ:
            values[eid] = m.eval(enc.read_value(eid), model_completion=True).as_long()
    for eid in sorted(events):
        e = es.events[eid]
        if e.kind in (Kind.WRITE, Kind.COLLECTIVE) and e.value is not None:
            values[eid] = m.eval(enc.value(e.value), model_completion=True).as_long()
    by_loc: dict[Location, list[int]] = {}
    for eid in sorted(events):
        if es.events[eid].kind is Kind.WRITE:
            by_loc.setdefault(locs[eid], []).append(eid)
    co_pairs = {p for p, lit in enc.co.items() if problem.truth(m, lit)}
    co = {
        loc: tuple(sorted(ws, key=lambda w: sum((x, w) in co_pairs for x in ws)))
        for loc, ws in by_loc.items()
    }
    contributions = {
        (e.thread, e.collective_index): values[e.id]
        for e in (es.events[i] for i in sorted(events))
        if e.kind is Kind.COLLECTIVE
        and e.thread is not None
        and e.collective_index is not None
        and e.id in values
    }
    return Candidate(
        contributions=contributions,
        paths=paths,
        path_indices=tuple(choice),
        events=events,
        rf=rf,
        co=co,
        locs=locs,
        values=values,
    )


@record
class _Base:
    """The built-ins of one concrete execution, as the cat evaluator asks for them."""

    events: tuple[int, ...]
    sets: dict[str, frozenset[int]]
    rels: dict[str, frozenset[tuple[int, int]]]

    def set(self, name: str) -> frozenset[int]:
        return self.sets[name]

    def rel(self, name: str) -> frozenset[tuple[int, int]]:
        return self.rels[name]


def base_relations(es: EventStructure, cand: Candidate) -> _Base:
    """Every built-in of `pisa_mm.cat.builtins` in one candidate execution."""
    ev = cand.events
    sets = {name: s & ev for name, s in static_sets(es).items()}
    sets.update({name: s & ev for name, s in dynamic_space_sets(es, cand.locs).items()})
    rels = {
        name: frozenset(p for p in r if p[0] in ev and p[1] in ev)
        for name, r in static_relations(es).items()
        if name != "id"
    }
    by_loc: dict[Location, list[int]] = {}
    for eid, loc in cand.locs.items():
        by_loc.setdefault(loc, []).append(eid)
    rels["loc"] = frozenset((a, b) for group in by_loc.values() for a in group for b in group)
    rels["rf"] = cand.rf
    rels["co"] = cand.co_pairs()
    return _Base(tuple(sorted(ev)), sets, rels)


def judge(es: EventStructure, model: Model, cand: Candidate) -> EvalResult:
    """The concrete evaluator's verdict (and witnesses) on one decoded execution."""
    return evaluate(model, base_relations(es, cand))


def query(
    test: LitmusTest,
    es: EventStructure,
    model: Model,
    prop: Prop,
    budget: Budget | None = None,
    *,
    max_shapes: int = MAX_SHAPES,
) -> QueryResult:
    """Decide whether an execution allowed by `model` ends in a state satisfying `prop`.

    Only complete executions end in a final state: one cut by the unroll bound (or ended
    at an invalid address) never makes an outcome allowed. When only cut executions have
    the values, the answer is `Allowed.CUT` with one of them as witness. The test's filter
    is not applied: the question is about the model's executions."""
    asked = condition_observables(Condition(Quantifier.EXISTS, prop, test.condition.span))
    obs = tuple(dict.fromkeys((*observables(test), *asked)))
    problem = Problem(es, model, obs, budget or Budget(), with_flags=False)
    s = problem.session
    switches = [z3.Bool(f"axiom!{i}") for i in range(len(problem.axioms))]
    for switch, lit in zip(switches, problem.axiom_lits, strict=True):
        s.add(z3.Implies(switch, problem.z3(lit)))
    unknown = QueryResult(Allowed.UNKNOWN, None, None, es.unroll)
    invalid: InvalidAccess | None = None
    if problem.enc.ended is not False:  # some access may have an invalid address
        # asked before the outcome is asserted: undefined behaviour, whatever the outcome
        answer = s.check([*switches, problem.guard(problem.enc.ended)])
        if answer is Answer.UNKNOWN:  # never a silent "no undefined behaviour"
            return unknown
        if answer is Answer.SAT:
            invalid = _invalid_access(problem, s.model())
    s.add(problem.z3(problem.prop_literal(prop)))
    complete = problem.guard(problem.complete())
    answer = s.check([*switches, complete])
    if answer is Answer.UNKNOWN:
        return unknown
    if answer is Answer.SAT:
        cand = decode(problem, s.model())
        witness = Violation(cand, judge(es, model, cand))
        return QueryResult(Allowed.YES, witness, None, es.unroll, invalid)
    if problem.enc.cut is not False:
        answer = s.check([*switches, problem.guard(problem.enc.cut)])
        if answer is Answer.UNKNOWN:
            return unknown
        if answer is Answer.SAT:
            cand = decode(problem, s.model())
            witness = Violation(cand, judge(es, model, cand))
            return QueryResult(Allowed.CUT, witness, None, es.unroll, invalid)
    corrections, done = _corrections(problem, switches, complete)
    violations, truncated, complete2 = _shapes(problem, max_shapes, complete)
    if not (done and complete2):
        return unknown
    why = Forbidden(corrections, violations, truncated)
    return QueryResult(Allowed.NO, None, why, es.unroll, invalid)


def _invalid_access(problem: Problem, m: Any) -> InvalidAccess:
    """The execution of model `m`, which ends at an invalid address, and that access."""
    es = problem.es
    cand = decode(problem, m)
    texts = []
    for eid in sorted(cand.events):
        e = es.events[eid]
        if e.kind is Kind.EXIT and e.addr is not None:
            value = m.eval(problem.enc.value(e.addr), model_completion=True).as_long()
            texts.append(f"{event_text(es, eid)} at address {value:#x}")
    execution = Violation(cand, judge(es, problem.model, cand))
    return InvalidAccess(execution, " / ".join(texts))


def _corrections(
    problem: Problem, switches: Sequence[Any], complete: Any
) -> tuple[tuple[tuple[str, ...], ...], bool]:
    """Every minimal set of axioms whose removal makes the outcome reachable (the minimal
    correction sets), smallest first; the models have a handful of named axioms, so the
    subsets are tried by size, skipping supersets of sets already found."""
    names = [c.name for c in problem.axioms]
    found: list[frozenset[int]] = []
    n = len(switches)
    for size in range(1, n + 1):
        for drop in itertools.combinations(range(n), size):
            dropped = frozenset(drop)
            if any(f <= dropped for f in found):
                continue
            keep = [switches[i] for i in range(n) if i not in dropped]
            answer = problem.session.check([*keep, complete])
            if answer is Answer.UNKNOWN:
                return (), False
            if answer is Answer.SAT:
                found.append(dropped)
    return tuple(tuple(names[i] for i in sorted(f)) for f in found), True


def _shapes(
    problem: Problem, limit: int, complete: Any
) -> tuple[tuple[Violation, ...], bool, bool]:
    """The distinct complete candidate executions (paths, rf, co) with the outcome, axioms
    dropped (`complete`: the guard of completeness)."""
    enc = problem.enc
    s = problem.session
    shape = [
        problem.z3(lit)
        for lit in (*enc.rf.values(), *enc.co.values(), *enc.exec)
        if not _const(lit)
    ]
    out: list[Violation] = []
    s.push()
    try:
        s.add(complete)
        while True:
            answer = s.check()
            if answer is Answer.UNKNOWN:
                return tuple(out), False, False
            if answer is Answer.UNSAT:
                return tuple(out), False, True
            if len(out) == limit:
                return tuple(out), True, True
            m = s.model()
            cand = decode(problem, m)
            out.append(Violation(cand, judge(problem.es, problem.model, cand)))
            if not shape:
                return tuple(out), False, True
            s.add(z3.Or([lit != m.eval(lit, model_completion=True) for lit in shape]))
    finally:
        s.pop()


def _const(lit: Lit) -> bool:
    return lit is True or lit is False
