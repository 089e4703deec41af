"""Cycle syntax: edges, annotations, inferred directions, and located errors."""

from __future__ import annotations

import pytest

from pisa_mm.errors import PisaMMError
from pisa_mm.events.kinds import Order, Scope
from pisa_mm.gen.cycle import CYCLE_PATH, parse_cycle
from pisa_mm.gen.edges import DepKind, Dir, EdgeKind, FenceSpace, LocSpace, RmwKind


def test_mp_cycle_edges() -> None:
    c = parse_cycle("PodWW Rfe PodRR Fre")
    assert [e.kind for e in c.edges] == [EdgeKind.PO, EdgeKind.RF, EdgeKind.PO, EdgeKind.FR]
    assert [e.external for e in c.edges] == [False, True, False, True]
    assert [e.same_loc for e in c.edges] == [False, True, False, True]
    assert [e.src for e in c.edges] == [Dir.W, Dir.W, Dir.R, Dir.R]


def test_annotation_decorates_the_event_between_edges() -> None:
    c = parse_cycle("PodWW rel.gpu Rfe acq.wg.shared PodRR Fre")
    assert c.annots[1].order is Order.REL and c.annots[1].scope is Scope.GPU
    assert c.annots[2].order is Order.ACQ and c.annots[2].scope is Scope.WG
    assert c.annots[2].space is LocSpace.SHARED
    assert c.annots[0].order is None


def test_trailing_annotation_wraps_to_event_zero() -> None:
    c = parse_cycle("PodWR Fre PodWR Fre sc")
    assert c.annots[0].order is Order.SC


def test_fence_qualifiers_and_inferred_directions() -> None:
    c = parse_cycle("Fence.rel.global.gpu Rfe FencedRR.acq Fre")
    f = c.edges[0]
    assert f.kind is EdgeKind.FENCE and (f.src, f.dst) == (Dir.W, Dir.W)
    assert f.fence is not None
    assert (f.fence.order, f.fence.space, f.fence.scope) == (
        Order.REL,
        FenceSpace.GLOBAL,
        Scope.GPU,
    )


def test_dependencies_and_rmw_and_ws_synonym() -> None:
    c = parse_cycle("Rfe DpAddrdW Wse xchg PodWR DpCtrldR Fre")
    assert c.edges[1].dep is DepKind.ADDR
    assert c.edges[2].kind is EdgeKind.CO
    assert c.annots[3].rmw is RmwKind.XCHG


def _error(text: str) -> str:
    with pytest.raises(PisaMMError) as info:
        parse_cycle(text)
    exc = info.value
    return exc.render(exc.sources)  # type: ignore[attr-defined]


def test_unknown_edge_is_located() -> None:
    out = _error("PodWW Rfe PodRX Fre")
    first, line, caret = out.splitlines()
    assert first.startswith(f"{CYCLE_PATH}:1:11: error: unknown edge 'PodRX': expected an edge")
    assert first.endswith("[gen-cycle]")
    assert line == "PodWW Rfe PodRX Fre"
    assert caret == "          ^~~~~"


def test_kind_mismatch_names_both_edges() -> None:
    out = _error("PodWW Rfe PodWR Fre")
    assert out.splitlines()[0] == (
        "<cycle>:1:11: error: PodWR starts at a write but Rfe before it ends at a read [gen-cycle]"
    )


def test_single_external_edge_does_not_return() -> None:
    out = _error("PodWR Fre")
    assert "<cycle>:1:7: error: Fre must join two different threads" in out


def test_single_different_location_edge_does_not_return() -> None:
    out = _error("PodWR Fre PosWR Fre")
    assert "<cycle>:1:1: error: PodWR must join two different locations" in out


def test_no_communication_edge() -> None:
    assert "needs at least one communication edge" in _error("PodWW PodWW")


def test_undetermined_direction() -> None:
    assert "cannot tell whether the event between Fence and Fence" in _error("Fence Fence Rfe")


@pytest.mark.parametrize(
    ("text", "col", "needle"),
    [
        ("PodWW.gpu Rfe PodRR Fre", 1, "PodWW takes no qualifiers"),
        ("PodWW Rfe.acq PodRR Fre", 11, "Rfe takes one placement qualifier"),
        ("PodWW Rfe.wg.gpu PodRR Fre", 14, "Rfe takes one placement qualifier"),
        ("PodWR Fri.wg PodWR Fre", 11, "Fri is internal (one thread)"),
        ("FencedWW.bogus Rfe PodRR Fre", 10, "unknown fence qualifier 'bogus'"),
        ("PodWW rel.foo Rfe PodRR Fre", 11, "unknown event annotation 'foo'"),
        ("PodWW rel.acq Rfe PodRR Fre", 11, "order given twice"),
        ("PodWW Rfe xchg PodRR Fre", 11, "iatom.xchg replaces a write"),
        ("DpDatadR Fre Rfe PodRR", 1, "a data dependency ends at a write"),
        ("", 1, "empty cycle"),
    ],
)
def test_errors(text: str, col: int, needle: str) -> None:
    out = _error(text)
    assert out.startswith(f"<cycle>:1:{col}: error: ")
    assert needle in out.splitlines()[0]


def test_newlines_and_tabs_are_spaces() -> None:
    c = parse_cycle("PodWW\nRfe\tPodRR Fre")
    assert c.text == "PodWW Rfe PodRR Fre" and len(c) == 4
