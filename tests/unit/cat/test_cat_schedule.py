"""The order fail_fast tries axioms in (cat/schedule.py) and what a failure still reports."""

from __future__ import annotations

from cat_executions import Execution

from pisa_mm.cat.eval import Evaluator
from pisa_mm.cat.loader import load_model_source

EVENTS = (10, 20, 30)
# An expensive axiom first (two closures and compositions of rf and co), a cheap one last.
MODEL = """
let hb = (po | rf)+
let eco = (rf | co | rf^-1 ; co)+
irreflexive hb ; eco as costly
empty rf ; [W] as cheap
"""


def execution(rf: set[tuple[int, int]], co: set[tuple[int, int]]) -> Execution:
    sets = {"R": frozenset({20}), "W": frozenset({10, 30}), "M": frozenset(EVENTS)}
    rels = {"po": frozenset({(10, 20)}), "rf": frozenset(rf), "co": frozenset(co)}
    return Execution(EVENTS, sets, rels)


def test_cheapest_axiom_is_tried_first() -> None:
    ev = Evaluator(load_model_source(MODEL))
    assert [ev.checks[i].name for i in ev._schedule] == ["cheap", "costly"]


def test_shared_definitions_count_once() -> None:
    # `b` reuses `a` (already computed by the axiom tried before it): then it costs less
    # than `c`, which shares nothing, although alone it costs more.
    m = load_model_source(
        "let a = (rf ; co)+\nacyclic a as first\nacyclic (a | rf) as b\n"
        "acyclic (co ; rf ; co ; rf)+ as c"
    )
    ev = Evaluator(m)
    assert [ev.checks[i].name for i in ev._schedule] == ["first", "b", "c"]


def test_a_failure_still_reports_the_first_failing_axiom_in_model_order() -> None:
    ev = Evaluator(load_model_source(MODEL))
    # rf ends at a write (cheap fails) and hb ; eco is reflexive (costly fails too)
    ex = execution(rf={(20, 20), (10, 30)}, co={(10, 30)})
    fast, full = ev.evaluate(ex, fail_fast=True), ev.evaluate(ex)
    assert not fast.consistent and not full.consistent
    assert full.failed == ("costly", "cheap")
    assert fast.failed == ("costly",)  # as in model order, though `cheap` was tried first
    assert [r.name for r in fast.results] == ["costly"]
    assert fast.flags == ()


def test_a_failure_of_a_later_axiom_alone() -> None:
    ev = Evaluator(load_model_source(MODEL))
    ex = execution(rf={(10, 30)}, co=set())  # only `cheap` fails
    res = ev.evaluate(ex, fail_fast=True)
    assert res.failed == ("cheap",)
    assert [(r.name, r.passed) for r in res.results] == [("costly", True), ("cheap", False)]


def test_consistent_executions_evaluate_every_check() -> None:
    ev = Evaluator(load_model_source(MODEL + "flag ~empty rf as reads"))
    res = ev.evaluate(execution(rf={(10, 20)}, co={(10, 30)}), fail_fast=True)
    assert res.consistent and res.failed == ()
    assert [r.name for r in res.results] == ["costly", "cheap", "reads"]
    assert res.flags == ("reads",)
