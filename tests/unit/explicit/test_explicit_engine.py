"""The explicit engine end to end: states, counts, verdicts, flags, cut, and models."""

from __future__ import annotations

import pytest
from explicit_factory import (
    LB_RLX,
    MP,
    MP_GUARDED,
    RMW_CHAIN,
    SB_RLX,
    SPIN,
    TWO_WRITERS,
    rmw_chain,
    structure,
)

from pisa_mm.cat.loader import load_model
from pisa_mm.cat.syntax import Model
from pisa_mm.engines import EngineOptions, get_engine
from pisa_mm.events.build import build
from pisa_mm.events.model import EventStructure
from pisa_mm.explicit.engine import executions, run_test
from pisa_mm.outcomes.model import TestResult, Verdict

PISA = load_model("pisa")


def run(body: str, cond: str, model: str = "pisa", **kwargs: str) -> TestResult:
    test, es = structure(body, cond=cond, **kwargs)
    return run_test(test, es, load_model(model), EngineOptions())


def states(result: TestResult) -> set[str]:
    return {str(s) for s in result.states}


def test_mp_release_acquire_is_forbidden_and_racy() -> None:
    r = run(MP, "exists (P1:%r0 == 1 /\\ P1:%r1 == 0)", name="MP+rel+acq")
    assert states(r) == {
        "P1:%r0=0; P1:%r1=0;",
        "P1:%r0=0; P1:%r1=1;",
        "P1:%r0=1; P1:%r1=1;",
    }
    assert (r.verdict, r.positive, r.negative) == (Verdict.NO, 0, 3)
    assert r.quantifier == "exists" and r.engine == "explicit" and r.model == "pisa"
    (flag,) = r.flags
    assert flag.name == "data-race"
    assert len(flag.events) == 2
    assert "st.global.32b [@x], 1" in flag.description
    assert "ld.global.32b %r1, [@x]" in flag.description
    assert not r.cut


def test_counts_are_allowed_executions() -> None:
    r = run(SB_RLX, "exists (P0:%r0 == 0 /\\ P1:%r0 == 0)")
    assert len(r.states) == 4
    assert (r.verdict, r.positive, r.negative) == (Verdict.OK, 1, 3)
    assert r.counts_executions and not r.flags


def test_not_exists_and_forall() -> None:
    assert run(SB_RLX, "~exists (P0:%r0 == 0 /\\ P1:%r0 == 0)").verdict is Verdict.NO
    assert run(SB_RLX, "~exists (P0:%r0 == 2)").verdict is Verdict.OK
    assert run(SB_RLX, "forall (P0:%r0 == 0 \\/ P0:%r0 == 1)").verdict is Verdict.OK
    assert run(SB_RLX, "forall (P0:%r0 == 1)").verdict is Verdict.NO


def test_memory_observables_take_the_co_last_write() -> None:
    r = run(TWO_WRITERS, "exists (@x == 2)")
    assert states(r) == {"@x=1;", "@x=2;"}
    assert (r.positive, r.negative) == (1, 1)


def test_unwritten_location_observes_its_init_value() -> None:
    r = run(TWO_WRITERS, "exists (@y == 5)", init=".global .32b @x = 0;\n.global .32b @y = 5;")
    assert all("@y=5;" in s for s in states(r)) and r.verdict is Verdict.OK


def test_the_model_decides_load_buffering() -> None:
    cond = "exists (P0:%r0 == 1 /\\ P1:%r0 == 1)"
    assert run(LB_RLX, cond, "pisa").verdict is Verdict.OK
    assert run(LB_RLX, cond, "pisa-rc11").verdict is Verdict.NO


def test_forbidden_executions_name_their_failing_axioms() -> None:
    _, es = structure(MP)
    judged = list(executions(es, PISA, all_failures=True, prune=False))
    forbidden = [ex for ex in judged if not ex.allowed]
    assert len(judged) == 4 and len(forbidden) == 1
    assert "coherence" in forbidden[0].failed
    assert not forbidden[0].flags  # flags are only evaluated on allowed executions


def test_executions_cut_by_the_unroll_bound_are_counted_not_final_states() -> None:
    test, _ = structure(SPIN, cond="exists (P1:%r0 == 1)")
    for unroll in (0, 2):
        r = run_test(test, build(test, unroll=unroll), PISA, EngineOptions(unroll=unroll))
        # the one cut execution reads 0 every time (from init): it is counted, not a state;
        # the complete ones read 1 after 0..unroll reads of 0
        assert r.cut == 1
        assert states(r) == {"P1:%r0=1;"} and (r.positive, r.negative) == (unroll + 1, 0)
        assert r.verdict is Verdict.OK
    test, _ = structure(SPIN, cond="exists (P1:%r0 == 0)")
    r = run_test(test, build(test, unroll=2), PISA, EngineOptions(unroll=2))
    assert r.verdict is Verdict.NO and r.cut == 1  # a still-spinning P1 is not finished


def test_registered_in_the_engine_registry() -> None:
    assert get_engine("explicit") is run_test


def _allowed(es: EventStructure, model: Model, prune: bool) -> set[tuple[object, ...]]:
    return {
        (ex.candidate.path_indices, ex.candidate.rf, ex.candidate.co_pairs())
        for ex in executions(es, model, prune=prune)
        if ex.allowed
    }


@pytest.mark.parametrize(
    "body",
    [MP, SB_RLX, LB_RLX, TWO_WRITERS, SPIN, MP_GUARDED, RMW_CHAIN],
    ids=["MP", "SB", "LB", "2W", "spin", "MP-guarded", "rmw-chain"],
)
@pytest.mark.parametrize("model", ["pisa", "pisa-rc11"])
def test_pruning_keeps_exactly_the_allowed_executions(body: str, model: str) -> None:
    _, es = structure(body)
    m = load_model(model)
    assert _allowed(es, m, prune=True) == _allowed(es, m, prune=False)


def test_pruning_makes_long_rmw_chains_tractable() -> None:
    # without pruning: 13! coherence orders times 13**13 rf choices
    r = run(rmw_chain(12), "exists (P0:%r11 == 11)")
    # P1's add lands before, between or after P0's twelve: 13 executions
    assert (r.positive, r.negative) == (1, 12)


STORES_AND_WRITER = """
P0 @ wg 0 {
  st.global.32b [@x], 1;
  st.global.32b [@x], 2;
  st.global.32b [@x], 3;
  st.global.32b [@x], 4;
}
P1 @ wg 1 {
  st.global.32b [@x], 5;
  ld.global.32b %r0, [@x];
}
"""


@pytest.mark.parametrize("model", ["pisa", "pisa-rc11"])
def test_pruning_of_forced_coherence_keeps_exactly_the_allowed_executions(model: str) -> None:
    # P0's four stores: the model's coherence axiom orders them (candidates.py `_forced`),
    # and P1's store may land anywhere among them.
    _, es = structure(STORES_AND_WRITER)
    m = load_model(model)
    pruned = _allowed(es, m, prune=True)
    assert pruned == _allowed(es, m, prune=False)
    orders = {frozenset(co) for _, _, co in pruned}
    assert len(orders) == 5  # the five places of P1's store among P0's


def test_many_stores_in_one_thread_search_one_coherence_order() -> None:
    # 40 stores: 40! orders, of which the model's own axioms leave one.
    body = "P0 @ wg 0 {\n" + "".join(f"  st.global.32b [@x], {i};\n" for i in range(40))
    body += "}\nP1 @ wg 1 {\n  ld.global.32b %r0, [@x];\n}\n"
    _, es = structure(body)
    allowed = [ex for ex in executions(es, load_model("pisa")) if ex.allowed]
    assert len(allowed) == 41  # the load reads the init or one of the 40 stores
    assert len({ex.candidate.co_pairs() for ex in allowed}) == 1
