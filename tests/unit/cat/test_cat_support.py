"""Supports (cat/support.py) and the values an evaluation takes from the one before it."""

from __future__ import annotations

from collections.abc import Iterable
from dataclasses import dataclass

from cat_executions import Execution

from pisa_mm.cat.compact import Blocks, Classes, Rows
from pisa_mm.cat.eval import Evaluator
from pisa_mm.cat.loader import load_model_source
from pisa_mm.cat.support import expr_support, supports

EVENTS = (10, 20, 30, 40)
MODEL = """
let hb = (po | rf)+
let fr = rf^-1 ; co
let rec chain = rf | (chain ; po)
let eco = (rf | co | fr)+
acyclic hb as causality
irreflexive hb ; eco as coherence
empty chain & co as apart
flag ~empty hb & ext as unordered
"""
DYNAMIC = frozenset({"rf", "co"})


def execution(rf: set[tuple[int, int]], co: set[tuple[int, int]]) -> Execution:
    sets = {"R": frozenset({20, 40}), "W": frozenset({10, 30}), "M": frozenset(EVENTS)}
    rels = {
        "po": frozenset({(10, 20), (30, 40)}),
        "rf": frozenset(rf),
        "co": frozenset(co),
        "ext": frozenset((a, b) for a in EVENTS for b in EVENTS if (a < 25) != (b < 25)),
    }
    return Execution(EVENTS, sets, rels)


def test_supports_follow_the_names_transitively() -> None:
    model = load_model_source(MODEL)
    got = supports(model, DYNAMIC)
    assert got["hb"] == {"rf"}
    assert got["fr"] == got["eco"] == {"rf", "co"}
    assert got["chain"] == {"rf"}  # a `let rec` group: its bodies' support
    by_check = {c.name: expr_support(c.expr, got, DYNAMIC) for c in model.checks}
    assert by_check == {
        "causality": {"rf"},
        "coherence": {"rf", "co"},
        "apart": {"rf", "co"},
        "unordered": {"rf"},
    }


def test_a_static_definition_has_no_support() -> None:
    model = load_model_source("let p = po ; po\nacyclic p | rf as a")
    assert supports(model, DYNAMIC)["p"] == frozenset()


def test_values_reused_between_executions_that_share_rf_are_those_computed_afresh() -> None:
    # One session (one static key), rf kept while co changes, then rf changed: every
    # result equals that of an evaluator that never saw the executions before.
    rf_a, rf_b = {(10, 20), (30, 40)}, {(30, 20), (10, 40)}
    runs = [
        (rf_a, {(10, 30)}),
        (rf_a, {(30, 10)}),
        (rf_b, {(30, 10)}),
        (rf_b, {(10, 30)}),
        (rf_a, {(10, 30)}),
    ]
    model = load_model_source(MODEL)
    shared = Evaluator(model)
    for rf, co in runs:
        ex = execution(rf, co)
        for fail_fast in (True, False):
            reused = shared.evaluate(ex, static_key="session", fail_fast=fail_fast)
            fresh = Evaluator(model).evaluate(ex, static_key="session", fail_fast=fail_fast)
            assert reused.consistent == fresh.consistent
            assert reused.failed == fresh.failed
            assert reused.flags == fresh.flags
            for name in ("hb", "fr", "eco", "chain"):
                assert reused.rel_value(name) == fresh.rel_value(name)


@dataclass
class Shaped:
    """A BaseRelations whose relations are given by their shapes."""

    events: tuple[int, ...]
    rels: dict[str, Rows]

    def set(self, name: str) -> Iterable[int]:
        return self.events if name == "M" else ()

    def rel(self, name: str) -> Iterable[tuple[int, int]]:
        return self.rels.get(name, ())


def test_blocks_and_classes_give_their_pairs() -> None:
    blocks = Blocks(((frozenset({10, 20}), frozenset({30})), (frozenset({40}), frozenset({10}))))
    assert set(blocks) == {(10, 30), (20, 30), (40, 10)}
    model = load_model_source("let b = incl\nlet c = loc\nempty b & c as none")
    rels: dict[str, Rows] = {
        "incl": blocks,
        "loc": Classes((frozenset({10, 30}), frozenset({20}))),
    }
    res = Evaluator(model).evaluate(Shaped(EVENTS, rels))
    assert res.rel_value("b") == set(blocks)
    assert res.rel_value("c") == {(10, 10), (10, 30), (30, 10), (30, 30), (20, 20)}
    assert res.consistent is False
