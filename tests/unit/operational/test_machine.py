"""The view machine on hand-built litmus tests: classic shapes, scopes, spaces, agents."""

from __future__ import annotations

import pytest

from pisa_mm.errors import PisaMMError
from pisa_mm.events.kinds import Order, Scope, Space
from pisa_mm.litmus import parse_test
from pisa_mm.litmus.program import (
    Address,
    AddrSpace,
    Alu,
    AluOp,
    CmpOp,
    Collective,
    CollectiveKind,
    CommitGroup,
    Compare,
    CpAsync,
    Fence,
    Goto,
    IAtomOp,
    Imm,
    LitmusTest,
    Observable,
    Op,
    Pred,
    Reg,
    RegObs,
    Return,
    VarRef,
    WaitGroup,
)
from pisa_mm.operational.explore import explore
from pisa_mm.operational.step import Machine
from pisa_mm.outcomes.condition import observables

from .build import add, barrier, eq, fence, ld, litmus, m, r, st, thread

ACQ, REL, RLX, SC = Order.ACQ, Order.REL, Order.RLX, Order.SC
GPU, WG, SG = Scope.GPU, Scope.WG, Scope.SG
SHARED = AddrSpace.SHARED


def observed(test: LitmusTest) -> tuple[Observable, ...]:
    """The condition's observables, else every register loaded into, in thread order."""
    asked = observables(test)
    if asked:
        return asked
    out: list[Observable] = []
    for th in test.threads:
        for ins in th.body:
            dst = getattr(ins.op, "dst", None)
            if isinstance(dst, Reg) and RegObs(th.index, dst.name) not in out:
                out.append(RegObs(th.index, dst.name))
    return tuple(out)


def run(test: LitmusTest) -> tuple[set[tuple[int, ...]], set[str]]:
    res = explore(Machine(test, 2), observed(test))
    states = {tuple(v for _, v in f.values) for f in res.finals}
    return states, {f.name for f in res.flags}


def mp(
    w: Order | None,
    rd: Order | None,
    *,
    wscope: Scope = GPU,
    rscope: Scope = GPU,
    same_wg: bool = False,
) -> LitmusTest:
    return litmus(
        [
            thread(0, [st("x", 1, RLX), st("y", 1, w, wscope if w is not RLX else None)]),
            thread(
                1,
                [ld("y", "r0", rd, rscope if rd is not RLX else None), ld("x", "r1", RLX)],
                wg=0 if same_wg else 1,
            ),
        ],
        eq(r(1, "r0"), 1),
        eq(r(1, "r1"), 0),
    )


def test_mp_release_acquire_forbids_stale_read() -> None:
    states, flags = run(mp(REL, ACQ))
    assert (1, 0) not in states
    assert states == {(0, 0), (0, 1), (1, 1)}
    assert flags == set()


def test_mp_relaxed_allows_stale_read() -> None:
    states, _ = run(mp(RLX, RLX))
    assert (1, 0) in states


def test_mp_with_fences() -> None:
    test = litmus(
        [
            thread(0, [st("x", 1, RLX), fence(REL), st("y", 1, RLX)]),
            thread(1, [ld("y", "r0", RLX), fence(ACQ), ld("x", "r1", RLX)]),
        ],
    )
    states, _ = run(test)
    assert (1, 0) not in states and (1, 1) in states


def test_fence_orders_only_its_space() -> None:
    # a fence.global does not release the shared-space write before it
    def mk(spaces: frozenset[Space]) -> LitmusTest:
        return litmus(
            [
                thread(
                    0,
                    [st("s", 1, RLX, space=SHARED), Fence(spaces, REL, WG), st("y", 1, RLX)],
                    wg=0,
                    sg=0,
                ),
                thread(
                    1,
                    [ld("y", "r0", RLX), Fence(spaces, ACQ, WG), ld("s", "r1", RLX, space=SHARED)],
                    wg=0,
                    sg=1,
                ),
            ],
            shared=("s",),
        )

    only_global, _ = run(mk(frozenset({Space.GLOBAL})))
    both, _ = run(mk(frozenset({Space.GLOBAL, Space.SHARED})))
    assert (1, 0) in only_global
    assert (1, 0) not in both


def test_scopes_must_be_inclusive() -> None:
    narrow, flags = run(mp(REL, ACQ, wscope=WG, rscope=WG))
    assert (1, 0) in narrow  # different work-groups: workgroup scope does not reach
    assert "heterogeneous-race" in flags
    same, flags = run(mp(REL, ACQ, wscope=WG, rscope=WG, same_wg=True))
    assert (1, 0) not in same
    assert flags == set()
    mixed, _ = run(mp(REL, ACQ, wscope=GPU, rscope=WG, same_wg=True))
    assert (1, 0) not in mixed  # inclusion is mutual: each thread in the other's instance


def test_store_buffering() -> None:
    def sb(order: Order, with_fence: bool) -> set[tuple[int, ...]]:
        mid = [fence(SC)] if with_fence else []
        scope = GPU if order is SC else None
        test = litmus(
            [
                thread(0, [st("x", 1, order, scope), *mid, ld("y", "r0", order, scope)]),
                thread(1, [st("y", 1, order, scope), *mid, ld("x", "r1", order, scope)]),
            ],
        )
        return run(test)[0]

    assert (0, 0) in sb(RLX, False)
    assert (0, 0) not in sb(RLX, True)
    assert (0, 0) not in sb(SC, False)


def test_sc_fences_of_disjoint_scope_instances_do_not_meet() -> None:
    test = litmus(
        [
            thread(0, [st("x", 1, RLX), fence(SC, WG), ld("y", "r0", RLX)]),
            thread(1, [st("y", 1, RLX), fence(SC, WG), ld("x", "r1", RLX)]),
        ],
    )
    assert (0, 0) in run(test)[0]


def test_two_plus_two_writes_needs_middle_insertion() -> None:
    test = litmus(
        [
            thread(0, [st("x", 1, RLX), st("y", 2, RLX)]),
            thread(1, [st("y", 1, RLX), st("x", 2, RLX)]),
        ],
        eq(m("x"), 1),
        eq(m("y"), 1),
    )
    assert (1, 1) in run(test)[0]


def test_coherence_read_read() -> None:
    test = litmus(
        [
            thread(0, [st("x", 1, RLX)]),
            thread(1, [ld("x", "r0", RLX), ld("x", "r1", RLX)]),
        ],
    )
    states, _ = run(test)
    assert (1, 0) not in states
    assert states == {(0, 0), (0, 1), (1, 1)}


def test_load_buffering_is_not_reached() -> None:
    test = litmus(
        [
            thread(0, [ld("x", "r0", RLX), st("y", 1, RLX)]),
            thread(1, [ld("y", "r1", RLX), st("x", 1, RLX)]),
        ],
    )
    assert (1, 1) not in run(test)[0]


def test_rmw_atomicity() -> None:
    test = litmus([thread(0, [add("x", "r0", 1)]), thread(1, [add("x", "r1", 1)])])
    states, _ = run(test)
    assert states == {(0, 1), (1, 0)}


def test_failed_cas_does_not_write() -> None:
    test = litmus(
        [
            thread(0, [add("x", "r0", 5, op=IAtomOp.CAS, cmp=1)]),
            thread(1, [st("x", 1, RLX)]),
        ],
        eq(r(0, "r0"), 0),
        eq(m("x"), 0),
        variables=("x",),
    )
    states, _ = run(test)
    # (P0:r0, @x): cas sees 0 and fails, or sees 1 and writes 5 directly after it
    assert states == {(0, 1), (1, 5)}


def test_release_sequence_through_rmw() -> None:
    test = litmus(
        [
            thread(0, [st("x", 1, RLX), st("y", 1, REL, GPU)]),
            thread(1, [add("y", "r2", 1)]),
            thread(2, [ld("y", "r0", ACQ, GPU), ld("x", "r1", RLX)]),
        ],
    )
    states, _ = run(test)
    # (P1:r2, P2:r0, P2:r1): reading the RMW's 2 synchronises with P0's release
    assert all(not (s[1] == 2 and s[2] == 0) for s in states)
    assert any(s[1] == 2 for s in states)


def test_data_race_detected_only_when_unordered() -> None:
    racy = litmus([thread(0, [st("x", 1)]), thread(1, [ld("x", "r0")])])
    assert run(racy)[1] == {"data-race"}


def test_guarded_read_is_race_free() -> None:
    reader = [
        ld("y", "r0", ACQ, GPU),
        Compare(CmpOp.EQ, False, Pred("p"), Reg("r0"), Imm(0), 32),
        Goto("end", Pred("p")),
        ld("x", "r1"),
        Return(None),
    ]
    test = litmus(
        [thread(0, [st("x", 1), st("y", 1, REL, GPU)]), thread(1, reader, labels={4: "end"})],
    )
    states, flags = run(test)
    assert flags == set()
    assert (1, 0) not in {(s[0], s[1]) for s in states}


def test_barrier_synchronises_a_work_group() -> None:
    test = litmus(
        [
            thread(0, [st("s", 1, space=SHARED), barrier()], wg=0, sg=0),
            thread(1, [barrier(), ld("s", "r0", space=SHARED)], wg=0, sg=1),
        ],
        variables=(),
        shared=("s",),
    )
    states, flags = run(test)
    assert states == {(1,)}
    assert flags == set()


def test_barrier_divergence() -> None:
    test = litmus(
        [
            thread(0, [barrier()], wg=0, sg=0),
            thread(1, [], wg=0, sg=1),
        ],
        variables=(),
    )
    assert run(test)[1] == {"barrier-divergence"}
    exempt = litmus(
        [thread(0, [barrier()], wg=0, sg=0), thread(1, [Return(None)], wg=0, sg=1)],
        variables=(),
    )
    assert run(exempt)[1] == set()


def test_async_copy_completes_at_wait() -> None:
    copy = CpAsync(Address(VarRef("s"), None), Address(VarRef("x"), None), 4)
    body: list[Op] = [copy, CommitGroup(), WaitGroup(0), ld("s", "r0", space=SHARED)]
    test = litmus(
        [thread(0, [st("x", 7)], wg=1), thread(1, body, wg=0)],
        variables=("x",),
        shared=("s",),
    )
    states, flags = run(test)
    assert states == {(0,), (7,)}
    assert flags == {"data-race"}  # the copy's read of @x races with P0's store
    early = litmus(
        [thread(0, [copy, ld("s", "r0", space=SHARED), CommitGroup(), WaitGroup(0)])],
        variables=("x",),
        shared=("s",),
    )
    assert run(early)[1] == {"async-race"}


def test_loop_is_cut_at_the_unroll_bound() -> None:
    spin = [
        ld("x", "r0", RLX),
        Compare(CmpOp.EQ, False, Pred("p"), Reg("r0"), Imm(0), 32),
        Goto("top", Pred("p")),
    ]
    test = litmus([thread(0, [st("x", 1, RLX)]), thread(1, spin, labels={0: "top"})])
    res = explore(Machine(test, 2), observed(test))
    assert any(f.cut for f in res.finals)
    assert any(not f.cut for f in res.finals)


def test_collective_lock_step() -> None:
    ired = Collective(CollectiveKind.IRED, "sum", Reg("r1"), (Reg("r0"), Imm(0xFFFFFFFF)), 32)
    test = litmus(
        [
            thread(0, [ld("x", "r0", RLX), ired], wg=0, sg=0),
            thread(1, [ld("x", "r0", RLX), ired], wg=0, sg=0),
            thread(2, [st("x", 1, RLX)], wg=1),
        ],
        eq(r(0, "r1"), 2),
        eq(r(1, "r1"), 2),
        variables=("x",),
    )
    states, _ = run(test)
    assert states == {(0, 0), (1, 1), (2, 2)}


def test_mixed_size_access_is_rejected() -> None:
    from dataclasses import replace

    from pisa_mm.litmus.program import Load

    load = ld("x", "r0", RLX)
    assert isinstance(load, Load)
    test = litmus([thread(0, [replace(load, width=64)])], variables=("x",))
    with pytest.raises(PisaMMError, match="mixed-size"):
        run(test)


def test_barriers_meet_by_site_not_by_count() -> None:
    # P1 executes its only barrier instruction twice; P0 has two barrier instructions
    loop = [
        barrier(),
        Alu(AluOp.ADD, Reg("r0"), (Reg("r0"), Imm(1)), 32),
        Compare(CmpOp.LT, False, Pred("p"), Reg("r0"), Imm(2), 32),
        Goto("top", Pred("p")),
    ]
    test = litmus(
        [thread(0, [barrier(), barrier()], wg=0, sg=0),
         thread(1, loop, wg=0, sg=1, labels={0: "top"})],
        variables=(),
    )  # fmt: skip
    assert run(test)[1] == {"barrier-divergence"}
    same = litmus(
        [thread(0, [barrier(), barrier()], wg=0, sg=0),
         thread(1, [barrier(), barrier()], wg=0, sg=1)],
        variables=(),
    )  # fmt: skip
    assert run(same)[1] == set()


def test_two_copies_to_one_destination_race_unless_a_wait_separates_them() -> None:
    first = CpAsync(Address(VarRef("s"), None), Address(VarRef("x"), None), 4)
    second = CpAsync(Address(VarRef("s"), None), Address(VarRef("y"), None), 4)
    racy = litmus(
        [thread(0, [first, second, CommitGroup(), WaitGroup(0), ld("s", "r0", space=SHARED)])],
        shared=("s",),
    )
    assert run(racy)[1] == {"async-race"}
    ordered = litmus(
        [
            thread(
                0,
                [first, CommitGroup(), WaitGroup(0), second, CommitGroup(), WaitGroup(0),
                 ld("s", "r0", space=SHARED)],
            )
        ],
        shared=("s",),
    )  # fmt: skip
    assert run(ordered)[1] == set()


def test_a_work_group_passes_a_barrier_without_a_member_that_never_reaches_it() -> None:
    # P0 executes no barrier: P1's barrier does not wait for P0's load (PISA 9.1 bfewer)
    test = litmus(
        [
            thread(0, [ld("x", "r0")], wg=0, sg=0),
            thread(1, [barrier(), st("x", 1)], wg=0, sg=1),
        ],
        variables=("x",),
    )
    states, flags = run(test)
    assert states == {(0,), (1,)}
    assert flags == {"barrier-divergence", "data-race"}
    # when P0 does reach the barrier, leaving it behind is no run: no race, no divergence
    met = litmus(
        [
            thread(0, [ld("x", "r0"), barrier()], wg=0, sg=0),
            thread(1, [barrier(), st("x", 1)], wg=0, sg=1),
        ],
        variables=("x",),
    )
    assert run(met) == ({(0,)}, set())


def test_failed_cas_may_read_a_message_an_rmw_wrote_after() -> None:
    test = litmus(
        [
            thread(0, [st("x", 1), add("x", "r1", 1), st("y", 1)]),
            thread(1, [ld("y", "r0"), add("x", "r2", 1, op=IAtomOp.CAS, cmp=0)]),
        ],
        eq(r(1, "r0"), 1),
        eq(r(1, "r2"), 1),
    )
    # P1's failed cas reads P0's first store, although P0's RMW wrote directly after it
    assert (1, 1) in run(test)[0]


COPY_ELEMENTS = """PISA Copy+elements
{
  .global .32b @g[2] = {0, 5};
  .shared .32b @s[2] = {0, 0};
}
P0 @ wg 0, sg 0 {
  ld.shared.32b %r0, [@s + 4];
  st.global.32b [@g], 1;
}
P1 @ wg 0, sg 1 {
  cp.async.shared.global [@s], [@g], 8;
  cp.async.wait_all;
}
exists (P0:%r0 == 5 /\\ wg0:@s[0] == 1)
"""


def test_copy_elements_are_copied_in_any_order() -> None:
    # P0 sees element 1 copied, then writes the source of element 0 before the copy reads
    # it: aso orders each element's read before its write, not element 0 before element 1
    test = parse_test(COPY_ELEMENTS, "copy.litmus")
    states, flags = run(test)
    assert (5, 1) in states
    assert "data-race" in flags


def test_failed_cas_on_a_copy_source_is_a_read() -> None:
    copy = CpAsync(Address(VarRef("s"), None), Address(VarRef("x"), None), 4)
    cas = add("x", "r0", 1, op=IAtomOp.CAS, cmp=0)
    body: list[Op] = [st("x", 1), copy, cas, WaitGroup(0)]
    test = litmus([thread(0, body)], variables=("x",), shared=("s",))
    assert run(test)[1] == set()  # the cas sees its own 1 and fails: no write, no race
    failing = litmus([thread(0, [copy, cas, WaitGroup(0)])], variables=("x",), shared=("s",))
    assert run(failing)[1] == {"async-race"}  # the cas sees 0 and writes the source
