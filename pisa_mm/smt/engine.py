"""The Z3 engine: all allowed final states, the verdict, flags and cut, by incremental SMT."""

from __future__ import annotations

import time
from collections.abc import Sequence
from typing import Any, assert_never

import z3

from pisa_mm.cat.syntax import Check, Model
from pisa_mm.events.kinds import Kind
from pisa_mm.events.model import EventStructure
from pisa_mm.litmus.program import (
    And,
    Atom,
    BoolConst,
    Implies,
    LitmusTest,
    Not,
    Observable,
    Or,
    Prop,
    Quantifier,
)
from pisa_mm.outcomes.condition import (
    condition_observables,
    condition_text,
    eval_prop,
    observables,
    state_maker,
)
from pisa_mm.outcomes.condition import verdict as herd_verdict
from pisa_mm.outcomes.model import FlagWitness, State, TestResult, Verdict
from pisa_mm.records import record, replace
from pisa_mm.smt.allsat import project
from pisa_mm.smt.encode import Encoding, uses_floats
from pisa_mm.smt.lits import Lit, lnot
from pisa_mm.smt.relations import RelV, SetV, Translator
from pisa_mm.smt.solver import Answer, Budget, Session
from pisa_mm.smt.symmetry import symmetry_constraints

__all__ = ["Problem", "run_smt", "run_verdict"]


class Problem:
    """One test's candidate executions and model, translated once and shared by queries.

    `axiom_lits[i]` holds iff axiom i of the model holds; `flag_lits[i]` iff flag i is
    raised. Nothing is asserted about the axioms: callers assert or assume them.
    """

    def __init__(
        self,
        es: EventStructure,
        model: Model,
        obs: Sequence[Observable],
        budget: Budget,
        *,
        with_flags: bool = True,
    ) -> None:
        self.es = es
        self.model = model
        self.obs = tuple(obs)
        self.enc = Encoding(es, self.obs)
        self.tr = Translator(self.enc, model)
        self.axioms: tuple[Check, ...] = model.axioms
        self.axiom_lits: list[Lit] = [self.tr.check_formula(c) for c in self.axioms]
        self.flags: tuple[Check, ...] = model.flags if with_flags else ()
        self.flag_lits: list[Lit] = [self.tr.nonempty(c.expr) for c in self.flags]
        self.c = self.enc.c
        self._guards = 0
        self._is_value: dict[tuple[Observable, int], Lit] = {}
        self.session = Session(budget, bit_vectors_only=not uses_floats(es))
        self.assert_lits(self.enc.constraints)

    def assert_lits(self, lits: Sequence[Lit]) -> None:
        for lit in lits:
            if lit is not True:
                self.session.add(self.c.to_z3(lit))

    def z3(self, lit: Lit) -> Any:
        return self.c.to_z3(lit)

    def guard(self, lit: Lit) -> Any:
        """A fresh Bool g with g -> lit asserted: check([g]) asks for lit without push/pop."""
        self._guards += 1
        g = z3.Bool(f"ask!{self._guards}")
        self.session.add(z3.Implies(g, self.z3(lit)))
        return g

    def truth(self, m: Any, lit: Lit) -> bool:
        return self.c.value(m, lit)

    def assert_axioms(self) -> None:
        self.assert_lits(self.axiom_lits)

    def prop_literal(self, prop: Prop) -> Lit:
        """The literal of a final-state proposition over the observables' terms."""
        c = self.c
        match prop:
            case Atom(obs=obs, value=value, negated=negated):
                term = self.enc.obs_terms[obs]
                lit = c.atom(term == z3.BitVecVal(value % (1 << term.size()), term.size()))
                return lnot(lit) if negated else lit
            case BoolConst(value=value):
                return value
            case Not(arg=arg):
                return lnot(self.prop_literal(arg))
            case And(args=args):
                return c.land_all(self.prop_literal(a) for a in args)
            case Or(args=args):
                return c.lor_all(self.prop_literal(a) for a in args)
            case Implies(lhs=lhs, rhs=rhs):
                return c.lor_all([lnot(self.prop_literal(lhs)), self.prop_literal(rhs)])
            case _:
                assert_never(prop)

    def complete(self) -> Lit:
        """The execution is complete: no path cut by the unroll bound or ended at an
        invalid address (only complete executions have final states)."""
        return self.c.land(lnot(self.enc.cut), lnot(self.enc.ended))

    def state_of(self, m: Any) -> dict[Observable, int]:
        return {
            o: m.eval(t, model_completion=True).as_long() for o, t in self.enc.obs_terms.items()
        }

    def is_value_lit(self, o: Observable, v: int) -> Lit:
        """A Boolean defined once as "observable `o` has value `v`": what enumeration
        assumes and blocks on (a clause or an assumption over existing variables is all the
        SAT-based solver then has to take: a new bit-vector comparison per query would grow
        the model conversion that every later model pays for)."""
        b = self._is_value.get((o, v))
        if b is None:
            b = self.c.var(f"is!{len(self._is_value)}")
            self.session.add(self.z3(b) == (self.enc.obs_terms[o] == v))
            self._is_value[(o, v)] = b
        return b

    def is_value(self, o: Observable, v: int) -> Any:
        return self.z3(self.is_value_lit(o, v))

    def flag_witness(self, i: int, m: Any) -> FlagWitness:
        check = self.flags[i]
        v = self.tr.value(check.expr, {})
        events: tuple[int, ...] = ()
        if isinstance(v, RelV):
            for (a, b), lit in sorted(v.pairs.items()):
                if self.truth(m, lit):
                    events = (a, b)
                    break
        elif isinstance(v, SetV):
            for e, lit in sorted(v.members.items()):
                if self.truth(m, lit):
                    events = (e,)
                    break
        texts = []
        for e in events:
            text, addr = event_text(self.es, e), self.es.events[e].addr
            if self.es.events[e].kind is Kind.EXIT and addr is not None:
                # an invalid access: say the address that made it invalid
                value = m.eval(self.enc.value(addr), model_completion=True).as_long()
                text += f" at address {value:#x}"
            texts.append(text)
        return FlagWitness(check.name, events, " / ".join(texts))


def event_text(es: EventStructure, eid: int) -> str:
    """`P0: st.global.32b [@x], 1` (the explicit engine's wording, so witnesses compare)."""
    e = es.events[eid]
    text = e.text or e.kind.value
    return text if e.thread is None else f"P{e.thread}: {text}"


@record
class _Enumeration:
    rows: tuple[tuple[int, ...], ...]  # each state's values, in the order of problem.obs
    complete: bool
    raised: dict[int, FlagWitness]  # flags seen raised in the enumerated models


def enumerate_states(problem: Problem, where: Lit = True, *, name: str = "") -> _Enumeration:
    """Every allowed final state (under the asserted axioms) of the executions where
    `where` holds: the projection of the models on the observables (smt/allsat.py).

    `where` hangs off an activation literal, so that later queries on the same solver
    ignore it (cheaper than push/pop, which makes z3 re-internalise)."""
    raised: dict[int, FlagWitness] = {}
    if where is False:
        return _Enumeration((), True, raised)
    active = z3.Bool(f"enumerating{name}")
    if where is not True:
        problem.assert_lits([problem.c.implies(problem.c.atom(active), where)])

    def on_model(m: Any) -> None:
        for i, lit in enumerate(problem.flag_lits):
            if i not in raised and lit is not False and problem.truth(m, lit):
                raised[i] = problem.flag_witness(i, m)

    active_lit = problem.c.atom(active)

    def block(values: dict[Observable, int]) -> None:
        clause = problem.c.lor_all(lnot(problem.is_value_lit(o, v)) for o, v in values.items())
        problem.assert_lits([problem.c.implies(active_lit, clause)])

    found = project(
        problem.session, active, problem.obs, problem.is_value, problem.state_of, on_model, block
    )
    return _Enumeration(found.rows, found.complete, raised)


def _decide_flags(
    problem: Problem, where: Lit, flags: dict[int, FlagWitness], *, cut: bool
) -> bool:
    """Add to `flags` every flag not yet in it that some allowed execution where `where`
    holds raises (marked `cut` if asked); False when the solver gave up.

    A model raises at least one pending flag (each gets its witness from it) and the rest
    are asked again, so a test that raises none costs one query."""
    s = problem.session
    while True:
        pending = [
            i for i, lit in enumerate(problem.flag_lits) if lit is not False and i not in flags
        ]
        if not pending:
            return True
        ask = problem.c.land(where, problem.c.lor_all(problem.flag_lits[i] for i in pending))
        if ask is False:
            return True
        answer = s.check([problem.guard(ask)])
        if answer is Answer.UNKNOWN:
            return False
        if answer is Answer.UNSAT:
            return True
        m = s.model()
        for i in pending:
            if problem.truth(m, problem.flag_lits[i]):
                w = problem.flag_witness(i, m)
                flags[i] = replace(w, cut=True) if cut else w


def _state_order(state: State) -> tuple[tuple[str, int], ...]:
    """States' order (that of State's fields) as a tuple key: sorting compares in C."""
    return state.values


def run_smt(
    test: LitmusTest,
    es: EventStructure,
    model: Model,
    budget: Budget | None = None,
) -> TestResult:
    """Run one test under one model with Z3 (see docs/smt.md).

    States come from the allowed complete executions that pass the test's filter; `cut`
    counts the distinct observable states of allowed executions cut by the unroll bound."""
    start = time.perf_counter()
    budget = budget or Budget()
    obs = observables(test)
    problem = Problem(es, model, obs, budget)
    problem.assert_axioms()
    s = problem.session
    s.add(*symmetry_constraints(test, problem.enc, obs))
    c = problem.c
    kept = True if test.filter is None else problem.prop_literal(test.filter)
    final = c.land(problem.complete(), kept)

    enum_result = enumerate_states(problem, final)
    unknown = not enum_result.complete
    states: list[State] = []
    positive = negative = 0
    make = state_maker(obs)
    # the condition reads a dict of its own observables (building one of all of them per
    # state costs more than the rest of the state's bookkeeping)
    asked = set(condition_observables(test.condition))
    places = [(o, i) for i, o in enumerate(obs) if o in asked]
    for row in enum_result.rows:
        states.append(make(row))
        if eval_prop(test.condition.prop, {o: row[i] for o, i in places}):
            positive += 1
        else:
            negative += 1
    cut_result = enumerate_states(problem, problem.enc.cut, name="-cut")
    unknown |= not cut_result.complete

    # Flags: those of executions with a final state that passes the filter, or ended by an
    # invalid address (no final state to filter); then those only cut executions raise.
    flags = dict(enum_result.raised)
    uncut = c.land(lnot(problem.enc.cut), c.lor(problem.enc.ended, kept))
    unknown |= not _decide_flags(problem, uncut, flags, cut=False)
    for i, w in cut_result.raised.items():
        flags.setdefault(i, replace(w, cut=True))
    unknown |= not _decide_flags(problem, problem.enc.cut, flags, cut=True)

    verdict = (
        Verdict.UNKNOWN if unknown else herd_verdict(test.condition.quantifier, positive, negative)
    )
    return TestResult(
        name=test.name,
        model=model.name,
        engine="smt",
        quantifier=test.condition.quantifier.value,
        observables=obs,
        states=tuple(sorted(states, key=_state_order)),
        verdict=verdict,
        positive=positive,
        negative=negative,
        flags=tuple(sorted(flags.values(), key=lambda f: f.name)),
        cut=len(cut_result.rows),
        condition_text=condition_text(test.condition),
        seconds=time.perf_counter() - start,
        counts_executions=False,
    )


def run_verdict(
    test: LitmusTest, es: EventStructure, model: Model, budget: Budget | None = None
) -> TestResult:
    """The verdict alone (`run --verdict-only`): one check for an allowed complete execution
    that passes the filter and decides the verdict (its state satisfies the proposition for
    `exists` / `~exists`, falsifies it for `forall`); when there is none, one more for an
    allowed execution cut by the unroll bound (a larger bound might then decide)."""
    start = time.perf_counter()
    obs = observables(test)
    problem = Problem(es, model, obs, budget or Budget(), with_flags=False)
    problem.assert_axioms()
    s = problem.session
    s.add(*symmetry_constraints(test, problem.enc, obs))
    c = problem.c
    quantifier = test.condition.quantifier
    prop = problem.prop_literal(test.condition.prop)
    deciding = lnot(prop) if quantifier is Quantifier.FORALL else prop
    kept = True if test.filter is None else problem.prop_literal(test.filter)
    answer = s.check([problem.guard(c.land_all([problem.complete(), kept, deciding]))])
    cut = False
    if answer is Answer.UNSAT:
        cut_answer = s.check([problem.guard(problem.enc.cut)])
        cut = cut_answer is Answer.SAT
        if cut_answer is Answer.UNKNOWN:
            answer = Answer.UNKNOWN
    if answer is Answer.UNKNOWN:
        verdict = Verdict.UNKNOWN
    else:
        found = answer is Answer.SAT
        verdict = Verdict.OK if found == (quantifier is Quantifier.EXISTS) else Verdict.NO
    return TestResult(
        name=test.name,
        model=model.name,
        engine="smt",
        quantifier=quantifier.value,
        observables=obs,
        states=(),
        verdict=verdict,
        positive=0,
        negative=0,
        flags=(),
        cut=int(cut),
        condition_text=condition_text(test.condition),
        seconds=time.perf_counter() - start,
        counts_executions=False,
        verdict_only=True,
    )


def run_test(test: LitmusTest, structure: EventStructure, model: Model, options: Any) -> TestResult:
    """The registry entry (`pisa_mm.engines`): options may carry `timeout`, `rlimit` and
    `verdict_only`."""
    budget = Budget(
        timeout=getattr(options, "timeout", None), rlimit=getattr(options, "rlimit", None)
    )
    if getattr(options, "verdict_only", False):
        return run_verdict(test, structure, model, budget)
    return run_smt(test, structure, model, budget)
