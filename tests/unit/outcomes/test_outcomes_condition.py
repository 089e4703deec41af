"""Condition evaluation, observables, state text, verdicts and herd's condition text."""

from __future__ import annotations

import pytest

from pisa_mm.errors import Span
from pisa_mm.litmus.program import (
    And,
    Atom,
    BoolConst,
    Condition,
    Implies,
    MemObs,
    Not,
    Or,
    Quantifier,
    RegObs,
)
from pisa_mm.outcomes.condition import (
    condition_observables,
    condition_text,
    eval_prop,
    make_state,
    observation,
    prop_text,
    reg_key,
    verdict,
)
from pisa_mm.outcomes.model import Verdict

SPAN = Span("t.litmus", 1, 1)
R0 = RegObs(1, "r0")
R1 = RegObs(1, "r1")
X = MemObs("x")


def atom(obs: RegObs | MemObs, value: int, negated: bool = False) -> Atom:
    return Atom(obs, value, negated, SPAN)


MP_PROP = And((atom(R0, 1), atom(R1, 0)))


def test_eval_prop_connectives() -> None:
    state = {R0: 1, R1: 0, X: 2}
    assert eval_prop(MP_PROP, state)
    assert not eval_prop(Not(MP_PROP), state)
    assert eval_prop(Or((atom(R0, 0), atom(X, 2))), state)
    assert eval_prop(atom(X, 1, negated=True), state)
    assert eval_prop(Implies(atom(R0, 0), BoolConst(False)), state)
    assert not eval_prop(Implies(atom(R0, 1), atom(R1, 1)), state)
    assert eval_prop(And(()), state) and not eval_prop(Or(()), state)


def test_observables_are_deduplicated_and_ordered() -> None:
    cond = Condition(
        Quantifier.EXISTS, And((atom(X, 1), atom(R1, 0), atom(R0, 1), atom(R1, 2))), SPAN
    )
    assert condition_observables(cond) == (R0, R1, X)


def test_state_text_follows_observable_order() -> None:
    state = make_state({X: 1, R1: 0, R0: 3})
    assert str(state) == "P1:%r0=3; P1:%r1=0; @x=1;"


def test_register_keys_match_the_builder() -> None:
    assert reg_key(RegObs(0, "r0")) == "r0"
    assert reg_key(RegObs(0, "v", 1)) == "v.y"


@pytest.mark.parametrize(
    ("quantifier", "positive", "negative", "expected"),
    [
        (Quantifier.EXISTS, 1, 3, Verdict.OK),
        (Quantifier.EXISTS, 0, 3, Verdict.NO),
        (Quantifier.NOT_EXISTS, 0, 3, Verdict.OK),
        (Quantifier.NOT_EXISTS, 1, 3, Verdict.NO),
        (Quantifier.FORALL, 4, 0, Verdict.OK),
        (Quantifier.FORALL, 4, 1, Verdict.NO),
    ],
)
def test_verdict(quantifier: Quantifier, positive: int, negative: int, expected: Verdict) -> None:
    assert verdict(quantifier, positive, negative) is expected


def test_observation_keyword() -> None:
    assert observation(0, 3) == "Never"
    assert observation(2, 1) == "Sometimes"
    assert observation(2, 0) == "Always"


def test_condition_text_is_herd_style() -> None:
    cond = Condition(Quantifier.EXISTS, MP_PROP, SPAN)
    assert condition_text(cond) == "exists (P1:%r0=1 /\\ P1:%r1=0)"
    nested = Or((MP_PROP, Not(atom(X, 2))))
    assert prop_text(nested) == "(P1:%r0=1 /\\ P1:%r1=0) \\/ ~(@x=2)"
    assert prop_text(Implies(atom(R0, 1), atom(R1, 1, negated=True))) == "P1:%r0=1 -> P1:%r1!=1"
