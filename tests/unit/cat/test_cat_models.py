"""The shipped models on hand-built executions of classic litmus shapes."""

from __future__ import annotations

from cat_executions import HOST, Builder, Execution, Place

from pisa_mm.cat.eval import EvalResult, Step, evaluate
from pisa_mm.cat.loader import load_model

WG0_SG0, WG0_SG1, WG1 = Place(0, 0, 0), Place(0, 0, 1), Place(0, 1, 1)


def run(execution: Execution, model: str = "pisa") -> EvalResult:
    return evaluate(load_model(model), execution)


def message_passing(
    *,
    reader: Place = WG1,
    flag_space: str = "GLOBAL",
    rel: tuple[str, str | None] = ("REL", "GPU"),
    acq: tuple[str, str | None] = ("ACQ", "GPU"),
    stale: bool = True,
) -> tuple[Execution, dict[str, int]]:
    """P0: st x=1; st.rel y=1 || P1: ld.acq y (reads 1); ld x (0 if stale)."""
    b = Builder({0: WG0_SG0, 1: reader})
    ix, iy = b.init("x"), b.init("y", flag_space)
    wx = b.write(0, "x")
    wy = b.write(0, "y", *rel)
    ry = b.read(1, "y", *acq)
    rx = b.read(1, "x")
    b.co(ix, wx)
    b.co(iy, wy)
    b.rf(wy, ry)
    b.rf(ix if stale else wx, rx)
    return b.build(), {"wx": wx, "wy": wy, "ry": ry, "rx": rx}


# ------------------------------------------------------------------ message passing


def test_mp_release_acquire_forbids_the_stale_read_by_coherence() -> None:
    ex, e = message_passing()
    res = run(ex)
    assert res.failed == ("coherence",)
    witness = res.witness("coherence")
    assert witness is not None
    assert witness.cycle == (Step(e["wx"], e["rx"], "hb_G"), Step(e["rx"], e["wx"], "eco"))
    assert res.explain("hb_G", e["wx"], e["rx"]) == (
        Step(e["wx"], e["wy"], "po"),
        Step(e["wy"], e["ry"], "sw_G"),
        Step(e["ry"], e["rx"], "po"),
    )


def test_mp_fresh_read_is_consistent_and_race_free() -> None:
    ex, _ = message_passing(stale=False)
    res = run(ex)
    assert res.consistent and res.flags == ()


def test_mp_workgroup_scope_across_work_groups_does_not_synchronise() -> None:
    ex, e = message_passing(rel=("REL", "WG"), acq=("ACQ", "WG"))
    res = run(ex)
    assert res.consistent
    assert res.flags == ("data-race", "heterogeneous-race")
    dr, hr = res.witness("data-race"), res.witness("heterogeneous-race")
    assert dr is not None and dr.pairs[0] == (e["wx"], e["rx"])
    assert hr is not None and hr.pairs[0] == (e["wy"], e["ry"])


def test_mp_workgroup_scope_within_a_work_group_synchronises() -> None:
    ex, _ = message_passing(reader=WG0_SG1, rel=("REL", "WG"), acq=("ACQ", "WG"))
    assert run(ex).failed == ("coherence",)


def test_mp_relaxed_flag_is_racy_but_allowed() -> None:
    ex, _ = message_passing(rel=("RLX", None), acq=("RLX", None))
    res = run(ex)
    assert res.consistent and res.flags == ("data-race",)


def fenced_mp(fence_spaces: tuple[str, ...], stale: bool = True) -> Execution:
    """P0: st x; fence.rel; st.rlx y || P1: ld.rlx y; fence.acq; ld x."""
    b = Builder({0: WG0_SG0, 1: WG1})
    ix, iy = b.init("x"), b.init("y")
    wx = b.write(0, "x")
    b.fence(0, "REL", "GPU", fence_spaces)
    wy = b.write(0, "y", "RLX")
    ry = b.read(1, "y", "RLX")
    b.fence(1, "ACQ", "GPU", fence_spaces)
    rx = b.read(1, "x")
    b.co(ix, wx)
    b.co(iy, wy)
    b.rf(wy, ry)
    b.rf(ix if stale else wx, rx)
    return b.build()


def test_fences_synchronise_the_spaces_they_cover() -> None:
    assert run(fenced_mp(("GLOBAL", "SHARED"))).failed == ("coherence",)
    assert run(fenced_mp(("GLOBAL",))).failed == ("coherence",)


def test_a_shared_fence_does_not_order_global_memory() -> None:
    res = run(fenced_mp(("SHARED",)))
    assert res.consistent and res.flags == ("data-race",)


def test_release_sequence_through_an_rmw() -> None:
    """P0: st x; st.rel y=1 || P1: rmw.rlx y 1->2 || P2: ld.acq y (2); ld x (stale)."""
    b = Builder({0: WG0_SG0, 1: WG1, 2: Place(0, 2, 2)})
    ix, iy = b.init("x"), b.init("y")
    wx = b.write(0, "x")
    wy = b.write(0, "y", "REL", "GPU")
    r1 = b.read(1, "y", "RLX", tags={"RMW"})
    w1 = b.write(1, "y", "RLX", tags={"RMW"})
    ry = b.read(2, "y", "ACQ", "GPU")
    rx = b.read(2, "x")
    b.relate("rmw", (r1, w1))
    b.co(ix, wx)
    b.co(iy, wy, w1)
    b.rf(wy, r1)
    b.rf(w1, ry)
    b.rf(ix, rx)
    assert run(b.build()).failed == ("coherence",)


# ------------------------------------------------------------------ atomicity, SC, thin air


def test_two_rmws_reading_the_same_write_break_atomicity() -> None:
    b = Builder({0: WG0_SG0, 1: WG1})
    ix = b.init("x")
    r0, w0 = b.read(0, "x", "RLX", tags={"RMW"}), b.write(0, "x", "RLX", tags={"RMW"})
    r1, w1 = b.read(1, "x", "RLX", tags={"RMW"}), b.write(1, "x", "RLX", tags={"RMW"})
    b.relate("rmw", (r0, w0), (r1, w1))
    b.co(ix, w0, w1)
    b.rf(ix, r0)
    b.rf(ix, r1)
    assert run(b.build()).failed == ("atomicity",)


def store_buffering(order: str, scope: str, reader: Place = WG1) -> Execution:
    """P0: st x; ld y (0) || P1: st y; ld x (0), every access with `order`."""
    b = Builder({0: WG0_SG0, 1: reader})
    ix, iy = b.init("x"), b.init("y")
    wx, ry = b.write(0, "x", order, scope), b.read(0, "y", order, scope)
    wy, rx = b.write(1, "y", order, scope), b.read(1, "x", order, scope)
    b.co(ix, wx)
    b.co(iy, wy)
    b.rf(iy, ry)
    b.rf(ix, rx)
    return b.build()


def test_sb_seq_cst_is_forbidden_by_sc() -> None:
    res = run(store_buffering("SC", "GPU"))
    assert res.failed == ("sc",)
    w = res.witness("sc")
    assert w is not None and len(w.events) == 4


def test_sb_seq_cst_at_workgroup_scope_across_work_groups_is_allowed() -> None:
    res = run(store_buffering("SC", "WG"))
    # Allowed, but the WG-scoped atomics of two work-groups race heterogeneously.
    assert res.consistent and res.flags == ("heterogeneous-race",)


def test_sb_release_acquire_is_allowed() -> None:
    res = run(store_buffering("RLX", "SYS"))
    assert res.consistent


def test_sb_with_seq_cst_fences_is_forbidden() -> None:
    b = Builder({0: WG0_SG0, 1: WG1})
    ix, iy = b.init("x"), b.init("y")
    wx = b.write(0, "x", "RLX")
    b.fence(0, "SC", "GPU")
    ry = b.read(0, "y", "RLX")
    wy = b.write(1, "y", "RLX")
    b.fence(1, "SC", "GPU")
    rx = b.read(1, "x", "RLX")
    b.co(ix, wx)
    b.co(iy, wy)
    b.rf(iy, ry)
    b.rf(ix, rx)
    assert run(b.build()).failed == ("sc",)


def load_buffering(with_deps: bool) -> Execution:
    """P0: ld x (1); st y=1 || P1: ld y (1); st x=1 (relaxed)."""
    b = Builder({0: WG0_SG0, 1: WG1})
    ix, iy = b.init("x"), b.init("y")
    rx, wy = b.read(0, "x", "RLX"), b.write(0, "y", "RLX")
    ry, wx = b.read(1, "y", "RLX"), b.write(1, "x", "RLX")
    b.co(ix, wx)
    b.co(iy, wy)
    b.rf(wx, rx)
    b.rf(wy, ry)
    if with_deps:
        b.relate("data", (rx, wy), (ry, wx))
    return b.build()


def test_load_buffering_allowed_by_pisa_forbidden_by_pisa_rc11() -> None:
    assert run(load_buffering(False)).consistent
    assert run(load_buffering(False), "pisa-rc11").failed == ("no-thin-air",)


def test_load_buffering_with_dependencies_is_thin_air() -> None:
    assert run(load_buffering(True)).failed == ("no-thin-air",)


# ------------------------------------------------------------------ the variants


def test_ownspace_atomics_order_only_their_own_space() -> None:
    ex, _ = message_passing(
        reader=WG0_SG1, flag_space="SHARED", rel=("REL", "WG"), acq=("ACQ", "WG")
    )
    assert run(ex).failed == ("coherence",)
    res = run(ex, "pisa-ownspace")
    assert res.consistent and res.flags == ("data-race",)


def test_samescope_needs_equal_scope_labels() -> None:
    ex, _ = message_passing(reader=WG0_SG1, rel=("REL", "GPU"), acq=("ACQ", "WG"))
    assert run(ex).failed == ("coherence",)
    res = run(ex, "pisa-samescope")
    assert res.consistent and res.flags == ("data-race", "heterogeneous-race")


def test_host_and_device_synchronise_only_at_system_scope() -> None:
    ex, _ = message_passing(reader=HOST, rel=("REL", "GPU"), acq=("ACQ", "SYS"))
    res = run(ex)
    assert res.consistent and "heterogeneous-race" in res.flags
    ex, _ = message_passing(reader=HOST, rel=("REL", "SYS"), acq=("ACQ", "SYS"))
    assert run(ex).failed == ("coherence",)


# ------------------------------------------------------------------ barriers, async, private


def barrier_mp(stale: bool, exits: bool = False, returned: bool = False) -> Execution:
    """P0: st.shared s; barrier || P1: barrier; ld.shared s; (optionally a third work-item
    that never reaches the barrier)."""
    b = Builder({0: WG0_SG0, 1: WG0_SG1, 2: Place(0, 0, 2)})
    i = b.init("s", "SHARED")
    w = b.write(0, "s")
    a0, d0 = b.barrier(0)
    a1, d1 = b.barrier(1)
    r = b.read(1, "s")
    b.relate("bsync", (a0, d0), (a0, d1), (a1, d0), (a1, d1))
    b.relate("binst", (a0, a1), (a1, a0))
    b.relate("sinstr", (a0, a1), (a1, a0), (d0, d1), (d1, d0))
    b.co(i, w)
    b.rf(i if stale else w, r)
    if exits:
        x = b.exit(2, returned=returned)
        b.relate("bfewer", (a0, x), (a1, x))
    return b.build()


def test_barrier_orders_the_work_group() -> None:
    assert run(barrier_mp(stale=True)).failed == ("coherence",)
    res = run(barrier_mp(stale=False))
    assert res.consistent and res.flags == ()


def test_barrier_divergence() -> None:
    assert run(barrier_mp(stale=False, exits=True)).flags == ("barrier-divergence",)
    assert run(barrier_mp(stale=False, exits=True, returned=True)).flags == ()


def test_different_barrier_instructions_diverge() -> None:
    b = Builder({0: WG0_SG0, 1: WG0_SG1})
    a0, _ = b.barrier(0)
    a1, _ = b.barrier(1)
    b.relate("binst", (a0, a1), (a1, a0))  # same instance, not the same instruction
    assert run(b.build()).flags == ("barrier-divergence",)


def async_copy(waited: bool) -> Execution:
    """P0: cp.async s <- g; [wait;] ld.shared s."""
    b = Builder({0: WG0_SG0})
    ig, i_s = b.init("g"), b.init("s", "SHARED")
    rg = b.read(0, "g", tags={"ASYNC"})
    ws = b.write(0, "s", tags={"ASYNC"})
    r = b.read(0, "s")
    b.relate("aso", (rg, ws))
    if waited:
        b.relate("aso", (rg, r), (ws, r))
    b.co(i_s, ws)
    b.rf(ws if waited else i_s, r)
    b.rf(ig, rg)
    return b.build()


def test_async_copy_race() -> None:
    res = run(async_copy(waited=False))
    assert res.consistent and res.flags == ("async-race",)
    res = run(async_copy(waited=True))
    assert res.consistent and res.flags == ()


def test_private_locations_are_coherent_in_program_order() -> None:
    b = Builder({0: WG0_SG0})
    i = b.init("p", "PRIVATE")
    w = b.write(0, "p")
    r = b.read(0, "p")
    b.co(i, w)
    b.rf(i, r)
    res = run(b.build())
    assert res.failed == ("coherence",)
    witness = res.witness("coherence")
    assert witness is not None and witness.events == (w, r)
