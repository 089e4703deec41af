"""`query`: witnesses of allowed outcomes, and refutations of forbidden ones."""

from __future__ import annotations

from smt_factory import MP_COND, MP_REL_ACQ, MP_RLX, SB_COND, SB_SC, structure

from pisa_mm.cat.loader import load_model
from pisa_mm.litmus.program import LitmusTest
from pisa_mm.outcomes.condition import prop_text
from pisa_mm.report.dot import execution_dot
from pisa_mm.report.explain import hb_edges, render_query, violation_steps
from pisa_mm.smt.query import Allowed, QueryResult, query
from pisa_mm.smt.solver import Budget


def _query(body: str, cond: str, budget: Budget | None = None) -> tuple[LitmusTest, QueryResult]:
    test, es = structure(body, cond=cond)
    return test, query(test, es, load_model("pisa"), test.condition.prop, budget)


def test_an_allowed_outcome_has_a_witness_with_that_final_state() -> None:
    _, q = _query(MP_RLX, MP_COND)
    assert q.answer is Allowed.YES and q.witness is not None
    cand = q.witness.candidate
    assert q.witness.result.consistent
    read_values = sorted(cand.values[r] for _, r in cand.rf if r in cand.values)
    assert read_values == [0, 1]


def test_a_forbidden_outcome_names_its_minimal_correction_sets() -> None:
    _, q = _query(MP_REL_ACQ, MP_COND)
    assert q.answer is Allowed.NO and q.why_not is not None
    assert q.why_not.corrections == (("coherence",),)
    (v,) = q.why_not.violations
    assert v.failed == ("coherence",)


def test_store_buffering_needs_the_sc_axiom_dropped() -> None:
    _, q = _query(SB_SC, SB_COND)
    assert q.answer is Allowed.NO and q.why_not is not None
    assert ("sc",) in q.why_not.corrections
    assert all("sc" in v.failed for v in q.why_not.violations)


def test_an_outcome_no_candidate_reaches_has_no_corrections() -> None:
    _, q = _query(MP_RLX, "exists (P1:%r0 == 5)")
    assert q.answer is Allowed.NO and q.why_not is not None
    assert q.why_not.corrections == () and q.why_not.violations == ()


def test_unknown_when_the_solver_gives_up() -> None:
    _, q = _query(MP_REL_ACQ, MP_COND, Budget(rlimit=1))
    assert q.answer is Allowed.UNKNOWN


def test_the_violating_cycle_goes_through_hb_and_fr() -> None:
    test, es = structure(MP_REL_ACQ, cond=MP_COND)
    model = load_model("pisa")
    q = query(test, es, model, test.condition.prop)
    assert q.why_not is not None
    (v,) = q.why_not.violations
    steps = violation_steps(v.result, model, "coherence")
    assert steps[0].src == steps[-1].dst
    labels = " ".join(s.label for s in steps)
    assert "sw" in labels and "fr" in labels
    text = render_query(es, prop_text(test.condition.prop), model, q)
    assert "forbidden" in text and "{coherence}" in text and "st.global.release.gpu.32b" in text


def test_witness_report_and_dot_show_rf_and_hb() -> None:
    body = MP_REL_ACQ
    test, es = structure(body, cond="exists (P1:%r0 == 1 /\\ P1:%r1 == 1)")
    model = load_model("pisa")
    q = query(test, es, model, test.condition.prop)
    assert q.witness is not None
    hb = hb_edges(q.witness.result, model, es)
    assert any(pairs for pairs in hb.values())  # the release/acquire synchronisation
    text = render_query(es, prop_text(test.condition.prop), model, q)
    assert "allowed" in text and "-rf->" in text and "hb_G" in text
    dot = execution_dot(es, q.witness.candidate, title="MP", relations=hb)
    assert dot.startswith('digraph "MP" {') and dot.rstrip().endswith("}")
    assert "subgraph cluster_P0" in dot and "subgraph cluster_P1" in dot
    assert 'label="rf' in dot and 'label="po"' in dot and "hb_G" in dot  # rf may share a label
