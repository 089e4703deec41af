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

from pisa_mm.cat.loader import load_model_source
from pisa_mm.cat.syntax import Model, Ty
from pisa_mm.events.model import EventStructure
from pisa_mm.explicit.candidates import Candidate, candidates
from pisa_mm.smt.engine import Problem
from pisa_mm.smt.query import decode, judge
from pisa_mm.smt.relations import RelV, SetV
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


def _model() -> Model:
    return load_model_source(OPERATORS, "ops.cat", name="ops")


CASES = {
    "mp": (MP_REL_ACQ, {}),
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
def test_operators_agree_with_the_concrete_evaluator(case: str) -> None:
    body, kwargs = CASES[case]
    _, es = structure(body, **kwargs)
    model = _model()
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
