"""Every cat operator: the Z3 literals agree with the concrete evaluator on every candidate.

The candidates are enumerated by the solver itself with no axiom asserted (blocking each
execution's shape: paths, rf, co), so this also checks that the Z3 encoding has exactly the
explicit engine's candidate executions.
"""

from __future__ import annotations

import pytest
import z3
from smt_factory import (
    CAS_FAIL,
    LB_DATA,
    MP_REL_ACQ,
    POINTER,
    POINTER_INIT,
    SPIN,
    TWO_PLUS_TWO_W,
    structure,
)

from pisa_mm.cat.loader import load_model, load_model_source
from pisa_mm.cat.syntax import CheckKind, Model, Ty
from pisa_mm.events.model import EventStructure
from pisa_mm.explicit.candidates import Candidate, candidates
from pisa_mm.smt.engine import Problem
from pisa_mm.smt.query import decode, judge
from pisa_mm.smt.relations import EQ, GT, LT, OrdV, RelV, SetV, ord_closure, ord_compose
from pisa_mm.smt.solver import Answer, Budget

OPERATORS = r"""
"every operator"
include "stdlib.cat"
let u = rf | co
let i = po & loc
let d = po \ rf
let s = rf ; po
let inv = rf^-1
let idn = [W]
let cart = R * W
let cmp = ~po
let cmpset = ~W
let dom = domain(co)
let rng = range(rf)
let plus = (po | rf)+
let star = (rf | co)*
let opt = rf?
let zero = 0
let uni = _ \ IW
let setops = (R | W) & ~IW \ F
let rec r1 = rf | (r1 ; po)
let rec ev = [W] | (od ; rf) and od = ev ; po
let deep = (([W] ; (po | rf)+ ; [R]) \ fr^-1) ; eco?
acyclic po as trivial
"""


# Relations over rf, co and loc: some stay in clock form (fr, eco, co ; rf, rf^-1 ; rf, the
# pointwise operators), others need pairs (co ; co needs a write in between, rf ; rf^-1 a
# reader); the restricted evaluation of & and \ is exercised by `atom` and `nonco`.
CLOCKS = r"""
"clock forms"
include "stdlib.cat"
let fr2 = rf^-1 ; co
let eco2 = (rf | co | fr2)+
let ecoq = eco2?
let same-src = rf^-1 ; rf
let readers = rf ; rf^-1
let coco = co ; co
let cor = co ; rf
let frco = fr2 ; co
let nonco = loc \ co
let co-loc = co & loc
let back = (co | rf)^-1
let chain = (rf^-1 ; co ; rf)+
let zigzag = (co ; co^-1)+
let atom = rmw & (fr2 ; co)
let po-eco = [M] ; po ; eco2?
let mixed = (co | po)+
acyclic po as trivial
"""


def _model() -> Model:
    return load_model_source(OPERATORS, "ops.cat", name="ops")


def _clocks() -> Model:
    return load_model_source(CLOCKS, "clocks.cat", name="clocks")


RMW_READERS = """
P0 @ wg 0 {
  iatom.global.relaxed.add.32b %r0, [@x], 1;
}
P1 @ wg 1 {
  st.global.relaxed.32b [@x], 5;
  ld.global.relaxed.32b %r1, [@x];
}
P2 @ wg 2 {
  ld.global.relaxed.32b %r2, [@x];
}
"""

CASES = {
    "mp": (MP_REL_ACQ, {}),
    "rmw-readers": (RMW_READERS, {}),
    "lb-data": (LB_DATA, {}),
    "cas-fail": (CAS_FAIL, {}),
    "spin": (SPIN, {}),
    "pointer": (POINTER, {"init": POINTER_INIT}),
    "2+2w": (TWO_PLUS_TWO_W, {}),
}


Found = dict[str, frozenset[object]]


def _shapes(es: EventStructure, model: Model) -> list[tuple[Candidate, Found]]:
    """(candidate, {name: smt value}) for every candidate execution found by the solver."""
    problem = Problem(es, model, (), Budget(), with_flags=False)
    values = {}
    for name in model.types:
        definition = model.definition(name)
        if definition is not None:
            values[name] = problem.tr.value(definition.expr, {})
    enc = problem.enc
    s = problem.session
    shape = [
        problem.z3(lit)
        for lit in (*enc.rf.values(), *enc.co.values(), *enc.exec)
        if lit is not True and lit is not False
    ]
    out = []
    while s.check() is Answer.SAT:
        m = s.model()
        cand = decode(problem, m)
        got: Found = {}
        for n, v in values.items():
            if isinstance(v, SetV):
                got[n] = frozenset(e for e, lit in v.members.items() if problem.truth(m, lit))
            else:
                assert isinstance(v, RelV)
                got[n] = frozenset(p for p, lit in v.pairs.items() if problem.truth(m, lit))
        out.append((cand, got))
        if not shape:
            break
        s.add(z3.Or([lit != m.eval(lit, model_completion=True) for lit in shape]))
    return out


@pytest.mark.parametrize("case", sorted(CASES))
@pytest.mark.parametrize("which", ["operators", "clocks"])
def test_operators_agree_with_the_concrete_evaluator(case: str, which: str) -> None:
    body, kwargs = CASES[case]
    _, es = structure(body, **kwargs)
    model = _model() if which == "operators" else _clocks()
    shapes = _shapes(es, model)
    assert shapes
    for cand, got in shapes:
        result = judge(es, model, cand)
        for name, value in got.items():
            expected = (
                result.set_value(name) if model.types[name] is Ty.SET else result.rel_value(name)
            )
            assert value == expected, (case, name, cand)


@pytest.mark.parametrize("case", sorted(CASES))
def test_candidates_are_the_explicit_engines(case: str) -> None:
    body, kwargs = CASES[case]
    _, es = structure(body, **kwargs)
    mine = {(c.rf, c.co_pairs(), c.events) for c, _ in _shapes(es, _model())}
    theirs = {(c.rf, c.co_pairs(), c.events) for c in candidates(es)}
    assert mine == theirs


@pytest.mark.parametrize("case", sorted(CASES))
def test_axioms_and_flags_agree_with_the_concrete_evaluator(case: str) -> None:
    """The shipped model's irreflexive and empty checks (their relations evaluated only
    where needed) and its flags hold in exactly the candidates where the concrete evaluator
    says so. (An acyclic check's literal is about ranks the solver may choose, so it means
    something only where asserted: the engine tests cover those.)"""
    body, kwargs = CASES[case]
    _, es = structure(body, **kwargs)
    model = load_model("pisa")
    problem = Problem(es, model, (), Budget())
    s = problem.session
    enc = problem.enc
    shape = [
        problem.z3(lit)
        for lit in (*enc.rf.values(), *enc.co.values(), *enc.exec)
        if lit is not True and lit is not False
    ]
    seen = 0
    while s.check() is Answer.SAT:
        m = s.model()
        cand = decode(problem, m)
        result = judge(es, model, cand)
        for check, lit in zip(problem.axioms, problem.axiom_lits, strict=True):
            if check.kind is CheckKind.ACYCLIC:
                continue
            assert problem.truth(m, lit) is (check.name not in result.failed), (case, check.name)
        for check, lit in zip(problem.flags, problem.flag_lits, strict=True):
            assert problem.truth(m, lit) is (check.name in result.flags), (case, check.name)
        seen += 1
        if not shape:
            break
        s.add(z3.Or([lit != m.eval(lit, model_completion=True) for lit in shape]))
    assert seen == len(list(candidates(es)))


def test_clock_algebra_derives_fr_and_eco_and_refuses_what_needs_a_middle_event() -> None:
    rf, co = OrdV((0, EQ, 0, 0)), OrdV((LT, 0, 0, 0))
    rf_inv = OrdV((0, 0, EQ, 0))
    fr = ord_compose(rf_inv, co)
    assert fr == OrdV((0, 0, LT, 0))  # read -> write: clock(r) < clock(w)
    union = OrdV((LT, EQ, LT, 0))  # rf | co | fr
    # eco: w -> w' co, w -> r at or before its source, r -> w fr, r -> r' a later source
    assert ord_closure(union) == OrdV((LT, LT | EQ, LT, LT))
    assert ord_compose(co, co) is None  # needs a write strictly between
    assert ord_compose(rf, rf_inv) is None  # needs a reader of the write
    assert ord_compose(rf_inv, rf) == OrdV((0, 0, 0, EQ))  # reads of one write
    assert ord_closure(OrdV((LT | GT, 0, 0, 0))) is None  # co | co^-1 closes onto id
