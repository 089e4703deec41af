"""Event-structure builder: events, paths, unrolling, dependencies, async copies, collectives."""

from __future__ import annotations

import itertools

import pytest
from events_factory import at, make_test, reg_init, span, thread, var, via

from pisa_mm.errors import PisaMMError
from pisa_mm.events.build import build, make_layout
from pisa_mm.events.kinds import Kind, Order, Scope, Space, Tag
from pisa_mm.events.model import Event, EventStructure, Location
from pisa_mm.litmus.program import (
    AddrSpace,
    Alu,
    AluOp,
    Barrier,
    CmpOp,
    Collective,
    CollectiveKind,
    CommitGroup,
    Compare,
    CpAsync,
    FAtom,
    FAtomOp,
    Fence,
    Goto,
    IAtom,
    IAtomOp,
    Imm,
    Load,
    Pred,
    Reg,
    Return,
    Store,
    VarRef,
    WaitGroup,
)
from pisa_mm.values.eval import evaluate
from pisa_mm.values.expr import BOOL, Const, Contribution, FpFormat, ReadValue

G = AddrSpace.GLOBAL


def st(name: str, value: int, order: Order | None = None, scope: Scope | None = None) -> Store:
    return Store(at(name), Imm(value), G, order, scope, 32, 1)


def ld(reg: str, name: str, order: Order | None = None, scope: Scope | None = None) -> Load:
    return Load(Reg(reg), at(name), G, order, scope, 32, 1)


def of(es: EventStructure, thread: int) -> list[Event]:
    return [e for e in es.events if e.thread == thread]


def test_mp_events_paths_and_po() -> None:
    es = build(
        make_test(
            [
                thread(0, [st("x", 1), st("y", 1, Order.REL, Scope.GPU)]),
                thread(1, [ld("r0", "y", Order.ACQ, Scope.GPU), ld("r1", "x")]),
            ]
        )
    )
    inits = [e for e in es.events if e.tag is Tag.INIT]
    assert [e.id for e in inits] == [0, 1]  # init writes first
    assert [str(next(iter(e.locs))) for e in inits] == ["@x", "@y"]
    w0, w1, x0 = of(es, 0)
    assert (w0.kind, w0.order, w0.scope) == (Kind.WRITE, Order.NA, None)
    assert (w1.order, w1.scope, w1.value) == (Order.REL, Scope.GPU, Const(1, 32))
    assert x0.kind is Kind.EXIT and x0.tag is Tag.PLAIN
    r0, r1, x1 = of(es, 1)
    assert (w0.id, w1.id) in es.po and (w0.id, x0.id) in es.po
    assert (r0.id, r1.id) in es.po and not any(a < 2 for a, _ in es.po)
    (path,) = es.threads[1].paths
    assert path.events == (r0.id, r1.id, x1.id) and not path.cut and path.guard == Const(1, BOOL)
    assert dict(path.final_regs)["r0"] == ReadValue(r0.id, 32)
    assert es.addr == es.data == es.ctrl == frozenset()
    assert es.init == tuple((Location(v, 0, None, Space.GLOBAL), 0) for v in ("x", "y"))


def test_relaxed_atomics_get_system_scope_and_shared_caps_at_workgroup() -> None:
    variables = [var("x"), var("s", Space.SHARED)]
    ops = [
        ld("r0", "x", Order.RLX),
        Store(at("s"), Imm(1), AddrSpace.SHARED, Order.REL, Scope.GPU, 32, 1),
        Fence(frozenset({Space.GLOBAL}), Order.ACQ_REL, Scope.GPU),
    ]
    es = build(make_test([thread(0, ops, wg=3)], variables))
    r, w, f, _ = of(es, 0)
    assert r.scope is Scope.SYS
    assert w.scope is Scope.WG and w.locs == {Location("s", 0, (0, 3), Space.SHARED)}
    assert f.scope is Scope.GPU and f.spaces == {Space.GLOBAL}


def test_rmw_orders_split_and_cas_guard() -> None:
    ops = [
        IAtom(IAtomOp.ADD, Reg("a"), at("x"), Imm(2), None, G, Order.ACQ_REL, Scope.GPU, 32),
        IAtom(IAtomOp.CAS, Reg("b"), at("y"), Imm(0), Imm(7), G, Order.REL, Scope.WG, 32),
        IAtom(IAtomOp.XCHG, Reg("c"), at("x"), Reg("a"), None, G, Order.ACQ, Scope.GPU, 32),
    ]
    es = build(make_test([thread(0, ops)]))
    r1, w1, r2, w2, r3, w3, _ = of(es, 0)
    assert (r1.order, w1.order) == (Order.ACQ, Order.REL)
    assert (r2.order, w2.order) == (Order.RLX, Order.REL)
    assert (r3.order, w3.order) == (Order.ACQ, Order.RLX)
    assert all(e.tag is Tag.RMW for e in (r1, w1, r2, w2, r3, w3))
    assert es.rmw == {(r1.id, w1.id), (r2.id, w2.id), (r3.id, w3.id)}
    # the add writes old + 2; the cas writes 7 only when it read 0
    assert evaluate(w1.value, {r1.id: 5}.__getitem__) == 7  # type: ignore[arg-type]
    assert evaluate(w2.guard, {r2.id: 0}.__getitem__) == 1
    assert evaluate(w2.guard, {r2.id: 3}.__getitem__) == 0
    assert r2.guard == Const(1, BOOL)
    # dst = old, so the xchg's value carries r1's read: a data dependency
    assert w3.value == ReadValue(r1.id, 32)
    assert (r1.id, w3.id) in es.data and (r1.id, w1.id) in es.data
    assert (r2.id, w2.id) in es.ctrl


def test_fatom_cas_uses_ieee_equality() -> None:
    ops = [FAtom(FAtomOp.CAS, FpFormat.F, Reg("a"), at("x"), Reg("c"), Reg("n"), G,
                 Order.RLX, Scope.SYS)]  # fmt: skip
    es = build(make_test([thread(0, ops)]))
    r, w, _ = of(es, 0)
    neg_zero, pos_zero = 0x80000000, 0
    assert evaluate(w.guard, {r.id: neg_zero}.__getitem__) == 1  # c = +0 initially
    assert evaluate(w.guard, {r.id: pos_zero}.__getitem__) == 1


def test_branch_gives_two_paths_with_guards_and_ctrl() -> None:
    ops = [
        ld("r0", "x"),
        Compare(CmpOp.EQ, False, Pred("p"), Reg("r0"), Imm(1), 32),
        Goto("skip", Pred("p")),
        st("y", 1),
        (st("y", 2), ("skip",)),
    ]
    es = build(make_test([thread(0, ops)]))
    paths = es.threads[0].paths
    assert len(paths) == 2
    r = of(es, 0)[0]
    writes = [e for e in of(es, 0) if e.kind is Kind.WRITE]
    assert sorted(e.value.value for e in writes) == [1, 2, 2]  # type: ignore[union-attr]
    for w in writes:
        assert (r.id, w.id) in es.ctrl
        taken = evaluate(w.guard, {r.id: 1}.__getitem__)
        assert taken == int(w.value == Const(2, 32) and len(_path_of(es, w.id).events) == 3)
    for p in paths:
        assert p.events[-1] == next(e.id for e in es.events if e.id == p.events[-1])
        assert es.events[p.events[-1]].kind is Kind.EXIT


def _path_of(es: EventStructure, eid: int):  # type: ignore[no-untyped-def]
    return next(p for t in es.threads for p in t.paths if eid in p.events)


def test_constant_branch_is_decided_statically() -> None:
    ops = [
        Compare(CmpOp.EQ, False, Pred("p"), Reg("r0"), Imm(0), 32),
        Goto("end", Pred("p")),
        st("x", 1),
    ]
    es = build(make_test([thread(0, ops, end_labels=("end",))]))
    (path,) = es.threads[0].paths
    assert [es.events[e].kind for e in path.events] == [Kind.EXIT]


@pytest.mark.parametrize("unroll", [0, 1, 2, 3])
def test_spin_loop_is_unrolled_and_cut(unroll: int) -> None:
    ops = [
        (ld("r0", "x"), ("loop",)),
        Compare(CmpOp.EQ, False, Pred("p"), Reg("r0"), Imm(0), 32),
        Goto("loop", Pred("p")),
        st("y", 1),
    ]
    es = build(make_test([thread(0, ops)]), unroll=unroll)
    paths = es.threads[0].paths
    assert len(paths) == unroll + 2
    assert sum(p.cut for p in paths) == 1
    cut = next(p for p in paths if p.cut)
    reads = [e for e in cut.events if es.events[e].kind is Kind.READ]
    assert len(reads) == unroll + 1
    assert es.events[cut.events[-1]].kind is Kind.EXIT
    assert es.unroll == unroll


def test_unconditional_loop_always_cut() -> None:
    ops = [(st("x", 1), ("l",)), Goto("l", None)]
    es = build(make_test([thread(0, ops)]), unroll=2)
    (path,) = es.threads[0].paths
    assert path.cut and sum(es.events[e].kind is Kind.WRITE for e in path.events) == 3


def test_return_tags_exit_and_conditional_return_branches() -> None:
    ops = [
        ld("r0", "x"),
        Compare(CmpOp.NE, False, Pred("p"), Reg("r0"), Imm(0), 32),
        Return(Pred("p")),
        st("y", 1),
        Return(None),
    ]
    es = build(make_test([thread(0, ops)]))
    paths = es.threads[0].paths
    assert len(paths) == 2 and all(p.returned for p in paths)
    assert all(es.events[p.events[-1]].tag is Tag.RETURN for p in paths)


def test_address_dependency_and_possible_locations() -> None:
    variables = [var("x"), var("y"), var("a", count=2), var("z", width=64)]
    ops = [
        ld("r0", "x"),
        Load(Reg("r1"), at("a", Reg("r0")), G, None, None, 32, 1),
        Alu(AluOp.XOR, Reg("r2"), (Reg("r0"), Reg("r0")), 32),
        Store(at("y"), Reg("r2"), G, None, None, 32, 1),
    ]
    es = build(make_test([thread(0, ops)], variables))
    r0, bad, r1, w, _ = of(es, 0)
    # the path where @a + r0 is none of r1's locations ends at an invalid-address marker
    assert bad.kind is Kind.EXIT and bad.tag is Tag.INVALID and bad.addr is not None
    assert [p.invalid for p in es.threads[0].paths] == [True, False]
    assert not isinstance(r1.addr, Const)
    assert {str(loc) for loc in r1.locs} == {"@x", "@y", "@a", "@a+4"}  # 32-bit ones only
    assert (r0.id, r1.id) in es.addr
    assert (r0.id, w.id) in es.data  # r ^ r is a false dependency, kept syntactically
    assert {str(loc) for loc, _ in es.init} >= {"@x", "@y", "@a", "@a+4"}


def test_generic_address_resolves_via_layout() -> None:
    variables = [var("x"), var("s", Space.SHARED)]
    ops = [
        Load(Reg("r0"), via("g"), AddrSpace.GENERIC, Order.ACQ, Scope.GPU, 32, 1),
        Store(via("h"), Imm(1), AddrSpace.GENERIC, None, None, 32, 1),
    ]
    inits = [reg_init(0, "g", VarRef("x")), reg_init(0, "h", VarRef("s"))]
    es = build(make_test([thread(0, ops, wg=1)], variables, inits))
    r, w, _ = of(es, 0)
    assert r.generic and r.locs == {Location("x", 0, None, Space.GLOBAL)}
    assert w.spaces == {Space.SHARED} and w.locs == {Location("s", 0, (0, 1), Space.SHARED)}


def test_shared_init_writes_per_touching_workgroup() -> None:
    variables = [var("s", Space.SHARED, init=(4,))]
    op = Store(at("s"), Imm(1), AddrSpace.SHARED, None, None, 32, 1)
    threads = [thread(0, [op], wg=0), thread(1, [op], wg=2), thread(2, [st("x", 1)], wg=5)]
    es = build(make_test(threads, [*variables, var("x")]))
    inits = {str(next(iter(e.locs))): e.value for e in es.events if e.tag is Tag.INIT}
    assert inits == {"wg0:@s": Const(4, 32), "wg2:@s": Const(4, 32), "@x": Const(0, 32)}


def test_vector_load_makes_one_read_per_element() -> None:
    variables = [var("a", count=4, init=(1, 2, 3, 4))]
    ops = [Load(Reg("v"), at("a"), G, None, None, 32, 4)]
    es = build(make_test([thread(0, ops, vectors=(("v", 4),), regs=(("v", 32),))], variables))
    reads = [e for e in of(es, 0) if e.kind is Kind.READ]
    assert [str(next(iter(e.locs))) for e in reads] == ["@a", "@a+4", "@a+8", "@a+12"]
    regs = dict(es.threads[0].paths[0].final_regs)
    assert regs["v.x"] == ReadValue(reads[0].id, 32) and regs["v.w"] == ReadValue(reads[3].id, 32)


def test_barrier_events() -> None:
    threads = [thread(i, [Barrier(), Barrier()], wg=0, sg=i) for i in range(2)]
    es = build(make_test(threads))
    evs = of(es, 0)
    assert [(e.tag, e.order, e.scope, e.barrier_index) for e in evs[:4]] == [
        (Tag.ARRIVE, Order.REL, Scope.WG, 0),
        (Tag.DEPART, Order.ACQ, Scope.WG, 0),
        (Tag.ARRIVE, Order.REL, Scope.WG, 1),
        (Tag.DEPART, Order.ACQ, Scope.WG, 1),
    ]
    assert evs[0].spaces == {Space.GLOBAL, Space.SHARED}


def test_async_copy_events_and_aso() -> None:
    variables = [var("g", count=2, init=(5, 6)), var("s", Space.SHARED, count=2)]
    ops = [
        st("x", 1),
        CpAsync(at("s"), at("g"), 8),
        CommitGroup(),
        st("y", 1),
        WaitGroup(0),
        Load(Reg("r0"), at("s", 4), AddrSpace.SHARED, None, None, 32, 1),
    ]
    es = build(make_test([thread(0, ops)], [*variables, var("x"), var("y")]))
    evs = of(es, 0)
    wx = evs[0]
    ra0, wa0, ra1, wa1 = evs[1:5]
    wy, rs, _ = evs[5:]
    assert all(e.tag is Tag.ASYNC and e.order is Order.NA for e in (ra0, wa0, ra1, wa1))
    assert wa0.value == ReadValue(ra0.id, 32)
    assert {str(next(iter(e.locs))) for e in (wa0, wa1)} == {"wg0:@s", "wg0:@s+4"}
    assert not any(ra0.id in pair or wa1.id in pair for pair in es.po)
    assert (wx.id, wy.id) in es.po and (wy.id, rs.id) in es.po
    for a in (ra0, wa0, ra1, wa1):
        assert (wx.id, a.id) in es.aso and (a.id, rs.id) in es.aso
        assert (a.id, wy.id) not in es.aso and (wy.id, a.id) not in es.aso
        assert a.parent == wx.id
    assert (ra0.id, wa0.id) in es.aso and (ra0.id, wa1.id) not in es.aso
    assert (wx.id, rs.id) in es.aso  # transitive
    assert wx.parent is None and wy.parent == wx.id  # async events are not po parents
    (path,) = es.threads[0].paths
    assert path.events == tuple(e.id for e in evs)


def test_async_copy_with_mixed_widths_is_rejected() -> None:
    variables = [var("g", width=32), var("s", Space.SHARED, width=16, count=2)]
    with pytest.raises(PisaMMError, match="mixed widths"):
        build(make_test([thread(0, [CpAsync(at("s"), at("g"), 4)])], variables))


def test_ired_collective_contributions() -> None:
    def body(value: int) -> list:  # type: ignore[type-arg]
        return [
            Alu(AluOp.MOV, Reg("a"), (Imm(value),), 32),
            Collective(CollectiveKind.IRED, "sum", Reg("d"), (Reg("a"), Imm(0xFFFFFFFF)), 32),
        ]

    threads = [thread(i, body(10 + i), wg=0, sg=0) for i in range(3)]
    es = build(make_test(threads))
    assert [t.placement.lane for t in es.threads] == [0, 1, 2]
    coll = [e for e in es.events if e.kind is Kind.COLLECTIVE]
    assert [(e.thread, e.collective_index, e.value) for e in coll] == [
        (i, 0, Const(10 + i, 32)) for i in range(3)
    ]
    d = dict(es.threads[1].paths[0].final_regs)["d"]

    def contribution(t: int, k: int) -> int:
        return 10 + t

    assert evaluate(d, lambda e: 0, contribution) == 33
    assert Contribution(0, 0, 32) in _leaves(d) and Contribution(1, 0, 32) not in _leaves(d)


def test_collective_dependency_crosses_lanes() -> None:
    t0 = thread(0, [ld("a", "x"),
                    Collective(CollectiveKind.SHFL, "idx", Reg("d"),
                               (Reg("a"), Imm(1), Imm(0xFFFFFFFF)), 32)], wg=0, sg=0)  # fmt: skip
    t1 = thread(1, [Alu(AluOp.MOV, Reg("a"), (Imm(0),), 32),
                    Collective(CollectiveKind.SHFL, "idx", Reg("d"),
                               (Reg("a"), Imm(0), Imm(0xFFFFFFFF)), 32),
                    Store(at("y"), Reg("d"), G, None, None, 32, 1)], wg=0, sg=0)  # fmt: skip
    es = build(make_test([t0, t1]))
    r = of(es, 0)[0]
    w = next(e for e in of(es, 1) if e.kind is Kind.WRITE)
    assert w.value == Contribution(0, 0, 32)  # lane 1 reads lane 0's value
    assert (r.id, w.id) in es.data


def _leaves(expr):  # type: ignore[no-untyped-def]
    from pisa_mm.values.expr import Apply

    if isinstance(expr, Apply):
        return {leaf for a in expr.args for leaf in _leaves(a)}
    return {expr}


@pytest.mark.parametrize(
    ("variables", "op", "message"),
    [
        ([var("x", width=64)], ld("r", "x"), "mixed-size"),
        ([var("x"), var("y")], Load(Reg("r"), at("x", 2), G, None, None, 32, 1), "misaligned"),
        ([var("x")], Load(Reg("r"), at("x", 64), G, None, None, 32, 1), "outside every"),
        (
            [var("x"), var("s", Space.SHARED)],
            Load(Reg("r"), at("s"), G, None, None, 32, 1),
            "only global",
        ),
    ],
)
def test_bad_accesses_raise(variables: list, op: Load, message: str) -> None:  # type: ignore[type-arg]
    with pytest.raises(PisaMMError, match=message) as info:
        build(make_test([thread(0, [op])], variables))
    assert info.value.diagnostics[0].span == span(10)


def test_layout_is_disjoint_and_aligned() -> None:
    layout = make_layout(
        [
            var("x"),
            var("a", count=5),
            var("s", Space.SHARED),
            var("c", Space.CONST, width=64),
            var("p", Space.PRIVATE, thread=0),
        ]
    )
    bases = {v.name: v.base for v in layout.variables}
    assert bases["x"] == 0x1000 and bases["s"] == 0x100000 and bases["p"] == 0x200000
    assert all(v.base % 16 == 0 for v in layout.variables)
    spans = sorted((v.base, v.base + v.size) for v in layout.variables)
    assert all(a[1] <= b[0] for a, b in itertools.pairwise(spans))


def test_private_variables_are_per_work_item() -> None:
    variables = [var("p", Space.PRIVATE, thread=0), var("p", Space.PRIVATE, thread=1)]
    op = Store(at("p"), Imm(1), AddrSpace.PRIVATE, None, None, 32, 1)
    es = build(make_test([thread(0, [op]), thread(1, [op])], variables))
    assert {str(loc) for loc, _ in es.init} == {"P0:@p", "P1:@p"}


def test_host_thread_placement() -> None:
    es = build(make_test([thread(0, [st("x", 1)], host=True), thread(1, [st("y", 1)])]))
    assert es.threads[0].placement.host and es.threads[0].placement.lane is None
    assert es.threads[1].placement.wg == 1 and es.threads[1].placement.lane == 0


def test_register_init_widths_and_undeclared_registers() -> None:
    ops = [Alu(AluOp.ADD, Reg("r1"), (Reg("r0"), Imm(1)), 16)]
    es = build(make_test([thread(0, ops)], inits=[reg_init(0, "r0", 0x1FFFF)]))
    regs = dict(es.threads[0].paths[0].final_regs)
    assert regs["r1"] == Const(0, 16)  # 0xffff + 1 in 16 bits
