"""`pisa_mm.gen.search`: the candidates of `diff --search`, smallest first, each gen's test."""

from __future__ import annotations

from pisa_mm.gen.cycle import parse_cycle
from pisa_mm.gen.params import OrderScheme, Placement
from pisa_mm.gen.search import STEPS, Candidate, candidates
from pisa_mm.gen.shapes import SHAPES
from pisa_mm.gen.sweep import Source, Summary, Sweep
from pisa_mm.litmus import parse_test

SWEEP = Sweep(orders=(OrderScheme.RLX, OrderScheme.REL_ACQ))


def _all(names: list[str], size: int, sweep: Sweep = SWEEP) -> list[Candidate]:
    sources = [Source(n, parse_cycle(SHAPES[n])) for n in names]
    return list(candidates(sources, sweep, size, Summary()))


def test_smallest_first_then_step_then_gen_order() -> None:
    got = _all(["MP", "CoRR", "WRC"], 5)
    keys = [(c.size, c.step) for c in got]
    assert keys == sorted(keys)  # sizes grow; within a size the steps come in order
    assert {c.size for c in got} == {3, 4, 5}
    assert got[0].source == SHAPES["CoRR"] and got[0].step == 0
    # size 5: WRC as given, then MP with a same-location access inserted
    five = [c for c in got if c.size == 5]
    assert five[0].source == SHAPES["WRC"]
    assert any(c.step == 2 and "PosWW" in c.source for c in five)


def test_deterministic_and_without_duplicates() -> None:
    a = _all(["MP", "SB"], 5)
    b = _all(["MP", "SB"], 5)
    assert [c.generated.text for c in a] == [c.generated.text for c in b]
    names = [c.generated.test.name for c in a]
    assert len(names) == len(set(names))


def test_each_candidate_is_a_valid_test_whose_source_regenerates_it() -> None:
    for c in _all(["SB"], 4)[::7]:
        test = parse_test(c.generated.text, "c.litmus", strict=True)
        assert dict(test.metadata)["cycle"]  # gen's metadata, as `gen --cycle` writes it
        assert len(parse_cycle(c.source)) == c.size


def test_one_event_annotated_varies_orders_scopes_and_spaces() -> None:
    one_wg = Sweep(orders=SWEEP.orders, placements=(Placement.SAME_WG,))  # shared needs it
    sources = {c.source for c in _all(["MP"], 4, one_wg) if c.step == 1}
    assert "rel PodWW Rfe PodRR Fre" in sources  # an order
    assert "wg PodWW Rfe PodRR Fre" in sources  # a scope
    assert "PodWW shared Rfe PodRR Fre" in sources  # a location's space
    assert STEPS[1] == "one event annotated"


def test_nothing_beyond_the_size() -> None:
    assert _all(["IRIW"], 5) == []
    assert all(c.size <= 4 for c in _all(["MP", "CoWW"], 4))
