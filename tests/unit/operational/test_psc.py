"""seq_cst in the machine: the psc graph (RC11's SC axiom per address space, exact)."""

from __future__ import annotations

from pisa_mm.events.kinds import Order, Scope, Space
from pisa_mm.litmus.program import Fence, IAtomOp, LitmusTest
from pisa_mm.operational.explore import explore
from pisa_mm.operational.step import Machine

from .build import add, eq, fence, ld, litmus, m, r, st, thread
from .test_machine import observed, run

ACQ, REL, RLX, SC = Order.ACQ, Order.REL, Order.RLX, Order.SC
GPU, WG = Scope.GPU, Scope.WG
GLOBAL, SHARED = frozenset({Space.GLOBAL}), frozenset({Space.SHARED})
BOTH = GLOBAL | SHARED


def sb_fenced(spaces: frozenset[Space]) -> LitmusTest:
    """Store buffering on global data, SC fences of `spaces`, one work-group."""
    return litmus(
        [
            thread(0, [st("x", 1, RLX), Fence(spaces, SC, WG), ld("y", "r0", RLX)], wg=0, sg=0),
            thread(1, [st("y", 1, RLX), Fence(spaces, SC, WG), ld("x", "r1", RLX)], wg=0, sg=1),
        ],
    )


def test_sc_fence_orders_only_the_spaces_it_covers() -> None:
    assert (0, 0) in run(sb_fenced(SHARED))[0]  # audit: SB+fence.shared.sc+global-data
    assert (0, 0) not in run(sb_fenced(GLOBAL))[0]
    assert (0, 0) not in run(sb_fenced(BOTH))[0]


def mp_sc_data(spaces: frozenset[Space]) -> LitmusTest:
    """SC data, relaxed flag, release/acquire fences of `spaces` (two work-groups)."""
    return litmus(
        [
            thread(0, [st("x", 1, SC, GPU), Fence(spaces, REL, GPU), st("y", 1, RLX)]),
            thread(1, [ld("y", "r0", RLX), Fence(spaces, ACQ, GPU), ld("x", "r1", SC, GPU)]),
        ],
        eq(r(1, "r0"), 1),
        eq(r(1, "r1"), 0),
    )


def test_sc_accesses_are_not_ordered_by_execution_order() -> None:
    # audit: MP+sc+fence.shared+global. Every run executes Wx before Rx, yet RC11 lets the
    # SC order put Rx first: only fr orders them, and the shared fences give no hb_G.
    assert (1, 0) in run(mp_sc_data(SHARED))[0]
    assert (1, 0) not in run(mp_sc_data(BOTH))[0]  # now Wx hb_G Rx: coherence


def test_sc_and_release_stores_mix_as_in_rc11() -> None:
    # audit: 2+2W+sc+rel. No psc edge leaves the release store's co-successor.
    test = litmus(
        [
            thread(0, [st("x", 1, SC, GPU), st("y", 2, SC, GPU)]),
            thread(1, [st("y", 1, REL, GPU), st("x", 2, SC, GPU)]),
        ],
        eq(m("x"), 1),
        eq(m("y"), 1),
    )
    assert (1, 1) in run(test)[0]
    all_sc = litmus(
        [
            thread(0, [st("x", 1, SC, GPU), st("y", 2, SC, GPU)]),
            thread(1, [st("y", 1, SC, GPU), st("x", 2, SC, GPU)]),
        ],
        eq(m("x"), 1),
        eq(m("y"), 1),
    )
    assert (1, 1) not in run(all_sc)[0]


def rwc(first: Order) -> LitmusTest:
    return litmus(
        [
            thread(0, [st("x", 1, SC, GPU)]),
            thread(1, [ld("x", "r0", first, GPU), ld("y", "r1", SC, GPU)]),
            thread(2, [st("y", 1, SC, GPU), ld("x", "r2", SC, GPU)]),
        ],
        eq(r(1, "r0"), 1),
        eq(r(1, "r1"), 0),
        eq(r(2, "r2"), 0),
    )


def test_rwc_with_one_acquire_read_is_allowed() -> None:
    # audit: RWC+sc+acq; with every access SC it is forbidden
    assert (1, 0, 0) in run(rwc(ACQ))[0]
    assert (1, 0, 0) not in run(rwc(SC))[0]


def test_iriw_sc_is_forbidden_and_relaxed_allowed() -> None:
    def iriw(order: Order) -> LitmusTest:
        scope = None if order is RLX else GPU
        return litmus(
            [
                thread(0, [st("x", 1, order, scope)]),
                thread(1, [st("y", 1, order, scope)]),
                thread(2, [ld("x", "r0", order, scope), ld("y", "r1", order, scope)]),
                thread(3, [ld("y", "r2", order, scope), ld("x", "r3", order, scope)]),
            ],
            eq(r(2, "r0"), 1),
            eq(r(2, "r1"), 0),
            eq(r(3, "r2"), 1),
            eq(r(3, "r3"), 0),
        )

    assert (1, 0, 1, 0) not in run(iriw(SC))[0]
    assert (1, 0, 1, 0) in run(iriw(RLX))[0]


def test_sc_orders_only_scope_inclusive_events() -> None:
    # workgroup-scope SC accesses of two work-groups: psc relates nothing, SB is allowed
    narrow = litmus(
        [
            thread(0, [st("x", 1, SC, WG), ld("y", "r0", SC, WG)]),
            thread(1, [st("y", 1, SC, WG), ld("x", "r1", SC, WG)]),
        ],
    )
    states, flags = run(narrow)
    assert (0, 0) in states
    assert "heterogeneous-race" in flags


def test_sc_rmw_chain_stays_exact() -> None:
    # an SC fence between an RMW and a load still orders them against the other side
    test = litmus(
        [
            thread(0, [add("x", "r0", 1, REL, GPU), fence(SC), ld("y", "r1", RLX)]),
            thread(1, [st("y", 1, RLX), fence(SC), ld("x", "r2", RLX)]),
        ],
        eq(r(0, "r1"), 0),
        eq(r(1, "r2"), 0),
        variables=("x", "y"),
    )
    assert (0, 0) not in run(test)[0]
    cas = add("x", "r0", 1, RLX, op=IAtomOp.CAS, cmp=5)  # fails: a lone read
    failed = litmus(
        [
            thread(0, [st("x", 1, RLX), fence(SC), ld("y", "r1", RLX)]),
            thread(1, [st("y", 1, RLX), fence(SC), cas]),
        ],
        eq(r(0, "r1"), 0),
        eq(r(1, "r0"), 0),
    )
    assert (0, 0) not in run(failed)[0]


def test_reductions_lose_nothing() -> None:
    tests = [sb_fenced(SHARED), sb_fenced(BOTH), mp_sc_data(SHARED), rwc(ACQ), rwc(SC)]
    for test in tests:
        obs = observed(test)
        full = explore(Machine(test, 2), obs, reduce=False)
        reduced = explore(Machine(test, 2), obs)
        assert reduced.finals == full.finals
        assert reduced.flags == full.flags
        assert reduced.states <= full.states
