"""The concrete evaluator: each operator, each check kind, witnesses and the API."""

from __future__ import annotations

import pytest
from cat_executions import Execution

from pisa_mm.cat.eval import Evaluator, Step, Witness, evaluate
from pisa_mm.cat.loader import load_model_source
from pisa_mm.errors import PisaMMError

# Events need not be dense or sorted: 10 20 30 40.
EVENTS = (40, 10, 30, 20)


def execution(**rels: set[tuple[int, int]]) -> Execution:
    sets = {"R": frozenset({10, 30}), "W": frozenset({20, 40}), "M": frozenset(EVENTS)}
    return Execution(EVENTS, sets, {k: frozenset(v) for k, v in rels.items()})


def value(expr: str, ex: Execution | None = None) -> frozenset[object]:
    m = load_model_source(f"let v = {expr}")
    result = evaluate(m, ex or execution(po={(10, 20), (20, 30), (10, 30)}, rf={(20, 30)}))
    return frozenset(result.value("v"))


@pytest.mark.parametrize(
    ("expr", "expected"),
    [
        ("R", {10, 30}),
        ("_", {10, 20, 30, 40}),
        ("~R", {20, 40}),
        ("R | W", {10, 20, 30, 40}),
        ("M & R", {10, 30}),
        ("M \\ R", {20, 40}),
        ("0 | R", {10, 30}),
        ("domain(po)", {10, 20}),
        ("range(po)", {20, 30}),
        ("po", {(10, 20), (20, 30), (10, 30)}),
        ("po^-1", {(20, 10), (30, 20), (30, 10)}),
        ("rf ; po^-1", {(20, 20), (20, 10)}),
        ("[R]", {(10, 10), (30, 30)}),
        ("[R] ; po", {(10, 20), (10, 30)}),
        ("po ; [R]", {(10, 30), (20, 30)}),
        ("R * W", {(10, 20), (10, 40), (30, 20), (30, 40)}),
        ("rf | po", {(10, 20), (20, 30), (10, 30)}),
        ("po \\ rf", {(10, 20), (10, 30)}),
        ("po & rf", {(20, 30)}),
        ("0", set()),
        ("id", {(e, e) for e in EVENTS}),
        ("rf?", {(20, 30)} | {(e, e) for e in EVENTS}),
        ("(po \\ (po ; po))+", {(10, 20), (20, 30), (10, 30)}),
        ("(po \\ (po ; po))*", {(10, 20), (20, 30), (10, 30)} | {(e, e) for e in EVENTS}),
        ("~(R * _)", {(a, b) for a in (20, 40) for b in EVENTS}),
    ],
)
def test_operators(expr: str, expected: set[object]) -> None:
    assert value(expr) == frozenset(expected)


def test_pairs_and_ids_outside_the_universe_are_ignored() -> None:
    ex = execution(po={(10, 20), (10, 99), (99, 10)})
    assert value("po", ex) == {(10, 20)}


def test_let_rec_is_the_least_fixpoint() -> None:
    m = load_model_source("let rec tc = rf | (tc ; tc)\nlet plus = rf+")
    res = evaluate(m, execution(rf={(10, 20), (20, 30), (30, 40)}))
    assert len(res.value("tc")) == 6
    assert res.value("tc") == res.value("plus")


def test_let_rec_mutual() -> None:
    m = load_model_source("let rec even = id | (rf ; odd) and odd = rf ; even")
    res = evaluate(m, execution(rf={(10, 20), (20, 30), (30, 40)}))
    assert res.rel_value("odd") == {(10, 20), (20, 30), (30, 40), (10, 40)}
    assert (10, 30) in res.rel_value("even") and (10, 20) not in res.rel_value("even")


def checks_model() -> str:
    return (
        "acyclic rf | po as cyc\n"
        "irreflexive rf ; po as irr\n"
        "empty rf & po as emp\n"
        "flag ~empty W as writes\n"
    )


def test_check_results_and_witnesses() -> None:
    m = load_model_source(checks_model())
    ex = execution(rf={(20, 10)}, po={(10, 20), (20, 10)})
    res = evaluate(m, ex)
    assert not res.consistent
    assert res.failed == ("cyc", "irr", "emp")
    assert res.flags == ("writes",)
    assert [r.passed for r in res.results] == [False, False, False, False]
    assert res.witness("cyc") == Witness(
        cycle=(Step(10, 20, "po"), Step(20, 10, "rf")), events=(10, 20)
    )
    assert res.witness("irr") == Witness(
        cycle=(Step(20, 10, "rf"), Step(10, 20, "po")), events=(20, 10)
    )
    assert res.witness("emp") == Witness(pairs=((20, 10),))
    assert res.witness("writes") == Witness(events=(20, 40))


def test_empty_witness_lists_sorted_pairs() -> None:
    m = load_model_source("empty rf as no-rf")
    res = evaluate(m, execution(rf={(40, 30), (20, 10), (20, 30)}))
    assert res.witness("no-rf") == Witness(pairs=((20, 10), (20, 30), (40, 30)))


def test_passing_checks_have_no_witness() -> None:
    m = load_model_source(checks_model())
    res = evaluate(m, execution(po={(10, 20)}))
    assert res.consistent and res.failed == ()
    assert res.witness("cyc") is None


def test_fail_fast_stops_at_the_first_failed_axiom() -> None:
    m = load_model_source(checks_model())
    ex = execution(rf={(20, 10)}, po={(10, 20), (20, 10)})
    res = Evaluator(m).evaluate(ex, fail_fast=True)
    assert [r.name for r in res.results] == ["cyc"]
    assert res.result("irr") is None  # not evaluated
    assert res.flags == ()  # flags are only evaluated for consistent executions


def test_selecting_checks() -> None:
    m = load_model_source(checks_model())
    res = evaluate(m, execution(rf={(20, 10)}, po={(10, 20)}), checks=["emp", "writes"])
    assert [r.name for r in res.results] == ["emp", "writes"]
    with pytest.raises(PisaMMError, match="no check named 'nope'"):
        Evaluator(m, checks=["nope"])


def test_static_key_reuses_static_values_but_not_dynamic_ones() -> None:
    m = load_model_source("let x = po ; rf\nacyclic x as ok")
    ev = Evaluator(m)
    first = ev.evaluate(execution(po={(10, 20)}, rf={(20, 30)}), static_key="s")
    second = ev.evaluate(execution(po={(10, 20)}, rf={(20, 10)}), static_key="s")
    assert first.rel_value("x") == {(10, 30)}
    assert second.rel_value("x") == {(10, 10)}
    assert second.failed == ("ok",)
    # Same key, different universe: recomputed, not reused.
    other = Execution((10, 20), {}, {"po": frozenset({(10, 20)}), "rf": frozenset()})
    assert ev.evaluate(other, static_key="s").value("x") == frozenset()


def test_static_values_are_reused_under_the_same_key() -> None:
    calls: list[str] = []

    class Counting(Execution):
        def rel(self, name: str) -> frozenset[tuple[int, int]]:
            calls.append(name)
            return super().rel(name)

    m = load_model_source("acyclic po ; rf as ok")
    ev = Evaluator(m)
    ex = Counting(EVENTS, {}, {"po": frozenset({(10, 20)}), "rf": frozenset()})
    for _ in range(3):
        ev.evaluate(ex, static_key=1)
    assert calls.count("po") == 1 and calls.count("rf") == 3


def test_values_of_names_the_model_does_not_use() -> None:
    m = load_model_source("let a = po")
    res = evaluate(m, execution(po={(10, 20)}, rf={(20, 30)}))
    assert res.rel_value("rf") == {(20, 30)}
    assert res.set_value("R") == {10, 30}
    with pytest.raises(TypeError):
        res.set_value("a")
    with pytest.raises(PisaMMError):
        res.value("nope")


def test_explain_unrolls_a_closure_one_level() -> None:
    m = load_model_source("let hb = (po | rf)+")
    res = evaluate(m, execution(po={(10, 20)}, rf={(20, 30)}))
    assert res.explain("hb", 10, 30) == (Step(10, 20, "po"), Step(20, 30, "rf"))
    assert res.explain("hb", 30, 10) == ()


def test_relations_given_by_shape_have_the_bits_of_their_pairs() -> None:
    from pisa_mm.cat.compact import Classes, Orders
    from pisa_mm.cat.geo import Geo

    for n in (5, 40, 70):  # both sides of the small-universe threshold
        geo = Geo(tuple(range(0, 2 * n, 2)))  # ids 0, 2, 4...: odd ids lie outside
        orders = Orders(
            ((tuple(range(0, n, 3)), frozenset({n + 1, n + 2, 1})), ((3, 1), frozenset()))
        )
        classes = Classes((frozenset(range(0, n, 2)), frozenset({1, 3, 5})))
        for rel in (orders, classes, Orders(()), Classes(())):
            assert geo.rel_bits(rel) == geo.rel_bits(list(rel))
    assert set(Orders((((1, 2, 3), frozenset({9})),))) == {
        (1, 2),
        (1, 3),
        (2, 3),
        (1, 9),
        (2, 9),
        (3, 9),
    }
