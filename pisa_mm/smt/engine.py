"""The Z3 engine: all allowed final states, the verdict, flags and cut, by incremental SMT."""

from __future__ import annotations

import time
from collections.abc import Sequence
from dataclasses import dataclass
from typing import Any

import z3

from pisa_mm.cat.syntax import Check, Model
from pisa_mm.events.model import EventStructure
from pisa_mm.litmus.program import LitmusTest, Observable
from pisa_mm.outcomes.condition import condition_text, eval_prop, make_state, observables
from pisa_mm.outcomes.condition import verdict as herd_verdict
from pisa_mm.outcomes.model import FlagWitness, State, TestResult, Verdict
from pisa_mm.smt.encode import Encoding, uses_floats
from pisa_mm.smt.lits import Lit, lnot
from pisa_mm.smt.relations import RelV, SetV, Translator
from pisa_mm.smt.solver import Answer, Budget, Session
from pisa_mm.smt.symmetry import symmetry_constraints

__all__ = ["Problem", "run_smt"]


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

    def state_of(self, m: Any) -> dict[Observable, int]:
        return {
            o: m.eval(t, model_completion=True).as_long() for o, t in self.enc.obs_terms.items()
        }

    def blocking(self, values: dict[Observable, int]) -> Lit:
        """The clause "some observable differs from `values`", over one Boolean per
        (observable, value) defined once: a clause over existing variables is all the
        SAT-based solver then has to add (a new bit-vector comparison per clause would grow
        the model conversion that every later model pays for)."""
        lits: list[Lit] = []
        for o, v in values.items():
            b = self._is_value.get((o, v))
            if b is None:
                b = self.c.var(f"is!{len(self._is_value)}")
                self.session.add(self.z3(b) == (self.enc.obs_terms[o] == v))
                self._is_value[(o, v)] = b
            lits.append(lnot(b))
        return self.c.lor_all(lits)

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
        return FlagWitness(check.name, events, " / ".join(event_text(self.es, e) for e in events))


def event_text(es: EventStructure, eid: int) -> str:
    """`P0: st.global.32b [@x], 1` (the explicit engine's wording, so witnesses compare)."""
    e = es.events[eid]
    text = e.text or e.kind.value
    return text if e.thread is None else f"P{e.thread}: {text}"


@dataclass(frozen=True, slots=True)
class _Enumeration:
    states: tuple[dict[Observable, int], ...]
    complete: bool
    raised: dict[int, FlagWitness]  # flags seen raised in the enumerated models
    cut: bool  # some enumerated model used a cut path


def enumerate_states(problem: Problem) -> _Enumeration:
    """Every allowed final state (under the asserted axioms), by blocking clauses.

    The blocking clauses hang off an activation literal, so that later queries on the same
    solver ignore them (cheaper than push/pop, which makes z3 re-internalise)."""
    s = problem.session
    active = z3.Bool("enumerating")
    active_lit = problem.c.atom(active)
    found: list[dict[Observable, int]] = []
    raised: dict[int, FlagWitness] = {}
    cut = False
    complete = True
    while True:
        answer = s.check([active])
        if answer is Answer.UNKNOWN:
            complete = False
            break
        if answer is Answer.UNSAT:
            break
        m = s.model()
        values = problem.state_of(m)
        found.append(values)
        for i, lit in enumerate(problem.flag_lits):
            if i not in raised and lit is not False and problem.truth(m, lit):
                raised[i] = problem.flag_witness(i, m)
        cut = cut or problem.truth(m, problem.enc.cut)
        if not values:
            break
        problem.assert_lits([problem.c.implies(active_lit, problem.blocking(values))])
    return _Enumeration(tuple(found), complete, raised, cut)


def run_smt(
    test: LitmusTest,
    es: EventStructure,
    model: Model,
    budget: Budget | None = None,
) -> TestResult:
    """Run one test under one model with Z3 (see docs/smt.md)."""
    start = time.perf_counter()
    budget = budget or Budget()
    obs = observables(test)
    problem = Problem(es, model, obs, budget)
    problem.assert_axioms()
    s = problem.session
    s.add(*symmetry_constraints(test, problem.enc, obs))
    unknown = False

    enum_result = enumerate_states(problem)
    unknown |= not enum_result.complete
    states: list[State] = []
    positive = negative = 0
    for values in enum_result.states:
        states.append(make_state(values))
        if eval_prop(test.condition.prop, values):
            positive += 1
        else:
            negative += 1

    # The flags not seen in an enumerated model: ask whether any of them can be raised; a
    # model raises at least one (each gets its witness from it) and the rest are asked
    # again, so a test that raises none costs one query, and each flag is decided exactly.
    flags = dict(enum_result.raised)
    while True:
        pending = [
            i for i, lit in enumerate(problem.flag_lits) if lit is not False and i not in flags
        ]
        if not pending:
            break
        answer = s.check([problem.guard(problem.c.lor_all(problem.flag_lits[i] for i in pending))])
        if answer is Answer.UNKNOWN:
            unknown = True
            break
        if answer is Answer.UNSAT:
            break
        m = s.model()
        for i in pending:
            if problem.truth(m, problem.flag_lits[i]):
                flags[i] = problem.flag_witness(i, m)

    cut = enum_result.cut
    if not cut and problem.enc.cut is not False:
        answer = s.check([problem.guard(problem.enc.cut)])
        cut = answer is Answer.SAT
        unknown |= answer is Answer.UNKNOWN

    verdict = (
        Verdict.UNKNOWN if unknown else herd_verdict(test.condition.quantifier, positive, negative)
    )
    return TestResult(
        name=test.name,
        model=model.name,
        engine="smt",
        quantifier=test.condition.quantifier.value,
        observables=obs,
        states=tuple(sorted(states)),
        verdict=verdict,
        positive=positive,
        negative=negative,
        flags=tuple(sorted(flags.values(), key=lambda f: f.name)),
        cut=cut,
        condition_text=condition_text(test.condition),
        seconds=time.perf_counter() - start,
        counts_executions=False,
    )


def run_test(test: LitmusTest, structure: EventStructure, model: Model, options: Any) -> TestResult:
    """The registry entry (`pisa_mm.engines`): options may carry `timeout` and `rlimit`."""
    budget = Budget(
        timeout=getattr(options, "timeout", None), rlimit=getattr(options, "rlimit", None)
    )
    return run_smt(test, structure, model, budget)
