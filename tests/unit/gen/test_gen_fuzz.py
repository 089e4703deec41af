"""Hypothesis: any cycle text gives a test that parses, a skip, or a located PisaMMError."""

from __future__ import annotations

from hypothesis import given, settings
from hypothesis import strategies as st

from pisa_mm.errors import PisaMMError
from pisa_mm.gen.build import Skip, build_test
from pisa_mm.gen.cycle import parse_cycle
from pisa_mm.gen.params import FenceChoice, FenceKind, OrderScheme, Params, Placement, SpaceChoice
from pisa_mm.gen.render import render
from pisa_mm.litmus import parse_test

WORDS = [
    "PodWW", "PodWR", "PodRW", "PodRR", "PosWW", "PosWR", "PosRW", "PosRR",
    "Rfe", "Rfi", "Fre", "Fri", "Coe", "Coi", "Wse", "Rfe.wg", "Fre.gpu", "Coe.sys", "Rfe.sg",
    "Fence", "FencedWW.sc", "FencesRR.acq.wg", "Fence.rel.global", "Fence.sg",
    "DpAddrdR", "DpAddrdW", "DpDatadW", "DpCtrldW", "DpCtrldR", "DpAddrsR",
    "rel", "acq.gpu", "sc.wg", "weak", "rlx", "xchg", "cas.acq", "add.rel.sys", "shared",
    "generic", "acq_rel.wg", "Bogus", "rel.rel", "Po",
]  # fmt: skip


@settings(max_examples=300, deadline=None)
@given(
    st.lists(st.sampled_from(WORDS), min_size=1, max_size=8),
    st.sampled_from(list(OrderScheme)),
    st.sampled_from(list(SpaceChoice)),
    st.sampled_from(list(Placement)),
    st.sampled_from([FenceChoice(k) for k in FenceKind]),
)
def test_cycles_never_crash(
    words: list[str],
    orders: OrderScheme,
    space: SpaceChoice,
    placement: Placement,
    fence: FenceChoice,
) -> None:
    text = " ".join(words)
    try:
        cycle = parse_cycle(text)
        test = build_test(cycle, Params(orders, space=space, placement=placement, fence=fence))
    except Skip:
        return
    except PisaMMError as exc:
        assert exc.diagnostics[0].code == "gen-cycle"
        return
    parse_test(render(test, text), "fuzz.litmus", strict=True)
