"""Static built-in sets and relations of event structures."""

from __future__ import annotations

from events_factory import at, make_test, thread, var, via

from pisa_mm.cat.builtins import BUILTINS
from pisa_mm.events.build import build
from pisa_mm.events.kinds import Kind, Order, Scope, Space, Tag
from pisa_mm.events.model import EventStructure, Location
from pisa_mm.events.relations import (
    RELATION_NAMES,
    SET_NAMES,
    dynamic_space_sets,
    static_relations,
    static_sets,
)
from pisa_mm.litmus.program import (
    AddrSpace,
    Barrier,
    CmpOp,
    Compare,
    Fence,
    Goto,
    Imm,
    Load,
    Pred,
    Reg,
    Return,
    Store,
)

G = AddrSpace.GLOBAL


def rlx_store(name: str, order: Order = Order.RLX, scope: Scope = Scope.SYS) -> Store:
    return Store(at(name), Imm(1), G, order, scope, 32, 1)


def ids(es: EventStructure, thread: int, tag: Tag) -> list[int]:
    return [e.id for e in es.events if e.thread == thread and e.tag is tag]


def test_names_match_the_cat_builtins() -> None:
    dynamic = {"rf", "co", "loc"}
    assert set(BUILTINS) - dynamic <= set(SET_NAMES) | set(RELATION_NAMES)
    assert set(SET_NAMES) - {"_"} <= set(BUILTINS)
    assert set(RELATION_NAMES) <= set(BUILTINS)


def test_sets_by_kind_order_scope_space() -> None:
    ops = [
        rlx_store("x"),
        Load(Reg("r"), at("y"), G, Order.ACQ, Scope.WG, 32, 1),
        Fence(frozenset({Space.SHARED}), Order.ACQ_REL, Scope.GPU),
        Load(Reg("q"), via("r"), AddrSpace.GENERIC, None, None, 32, 1),
    ]
    variables = [var("x"), var("y"), var("s", Space.SHARED)]
    es = build(make_test([thread(0, ops), thread(1, [rlx_store("x")], host=True)], variables))
    sets = static_sets(es)
    assert set(sets) == set(SET_NAMES)
    # the computed address of q splits the path: first the invalid-address marker
    w, r, f, bad, q, _ = (e.id for e in es.events if e.thread == 0)
    assert sets["BADADDR"] == {bad} and bad in sets["EXIT"]
    assert sets["IW"] == {0, 1, 2} and sets["IW"] <= sets["W"] and sets["IW"] <= sets["NA"]
    assert w in sets["RLX"] and w in sets["SYS"] and r in sets["ACQ"] and r in sets["WG"]
    assert f in sets["F"] and f in sets["SHARED"] and f not in sets["GLOBAL"]
    # a fence keeps the scope written on it, even over .shared alone (model-decisions)
    assert f in sets["ACQ_REL"] and f in sets["GPU"] and f not in sets["WG"]
    assert q in sets["GENERIC"] and q in sets["NA"]
    assert q not in sets["GLOBAL"]  # computed address: a global or a shared location
    assert {w, r} <= sets["GLOBAL"]
    assert sets["HOST"] == {e.id for e in es.events if e.thread == 1}
    assert not sets["EXIT"] & sets["NA"]
    dyn = dynamic_space_sets(es, {q: Location("x", 0, None, Space.GLOBAL)})
    assert q in dyn["GLOBAL"] and f in dyn["SHARED"]


def test_int_ext_id() -> None:
    es = build(make_test([thread(0, [rlx_store("x")]), thread(1, [rlx_store("y")])]))
    rels = static_relations(es)
    assert set(rels) == set(RELATION_NAMES)
    a = next(e.id for e in es.events if e.thread == 0 and e.kind is Kind.WRITE)
    b = next(e.id for e in es.events if e.thread == 1 and e.kind is Kind.WRITE)
    assert (a, b) in rels["ext"] and (a, b) not in rels["int"]
    assert (0, a) in rels["ext"] and (a, 0) in rels["ext"]  # init writes are ext to all
    assert (a, a) in rels["id"] and (a, a) not in rels["ext"]


def test_barrier_relations() -> None:
    p = Pred("p")
    ret = [Compare(CmpOp.EQ, False, p, Reg("r"), Imm(0), 32), Return(p)]
    t0 = thread(0, [Barrier(), Barrier()], wg=0, sg=0)
    t1 = thread(1, [Barrier(), Barrier()], wg=0, sg=1)
    t2 = thread(2, [Barrier()], wg=0, sg=2)
    t3 = thread(3, [*ret, Barrier()], wg=0, sg=3)  # returns before any barrier
    t4 = thread(4, [Barrier()], wg=1)
    es = build(make_test([t0, t1, t2, t3, t4]))
    rels = static_relations(es)
    a0, a1 = ids(es, 0, Tag.ARRIVE), ids(es, 1, Tag.ARRIVE)
    d0, d1 = ids(es, 0, Tag.DEPART), ids(es, 1, Tag.DEPART)
    (a4,) = ids(es, 4, Tag.ARRIVE)
    assert (a0[0], d1[0]) in rels["bsync"] and (a0[0], d0[0]) in rels["bsync"]
    assert (a0[0], d1[1]) not in rels["bsync"] and (a4, d0[0]) not in rels["bsync"]
    assert (a0[1], a1[1]) in rels["binst"] and (a0[1], a0[1]) not in rels["binst"]
    assert (a0[0], a4) not in rels["binst"]
    # the j-th barrier instruction of each body is "the same barrier" (bodies differ)
    assert (a0[0], a1[0]) in rels["sinstr"] and (a0[0], a1[1]) not in rels["sinstr"]
    assert (a0[0], ids(es, 0, Tag.DEPART)[0]) in rels["sinstr"]
    exit2 = next(e.id for e in es.events if e.thread == 2 and e.kind is Kind.EXIT)
    assert (a0[1], exit2) in rels["bfewer"] and (a0[0], exit2) not in rels["bfewer"]
    exits3 = [e.id for e in es.events if e.thread == 3 and e.kind is Kind.EXIT]
    ret3 = next(x for x in exits3 if es.events[x].tag is Tag.RETURN)
    assert (a0[0], ret3) in rels["bfewer"]
    assert ret3 in static_sets(es)["RET"]


def test_scope_relations_and_incl() -> None:
    sg = Scope.SG
    t0 = thread(0, [rlx_store("x", Order.REL, Scope.WG)], wg=0, sg=0)
    t1 = thread(1, [rlx_store("x", Order.REL, Scope.WG)], wg=0, sg=1)
    t2 = thread(2, [rlx_store("x", Order.REL, Scope.GPU)], wg=1)
    t3 = thread(3, [rlx_store("x")], host=True)
    t4 = thread(4, [Fence(frozenset({Space.GLOBAL}), Order.ACQ_REL, sg)], wg=0, sg=0)
    es = build(make_test([t0, t1, t2, t3, t4], [var("x")]))
    rels = static_relations(es)
    w = [next(e.id for e in es.events if e.thread == t and e.kind is not Kind.EXIT)
         for t in range(5)]  # fmt: skip
    assert (w[0], w[1]) in rels["incl"]  # same work-group, WG scope
    assert (w[0], w[2]) not in rels["incl"]  # w0's WG instance does not hold P2
    assert (w[2], w[3]) not in rels["incl"]  # the host is outside P2's GPU scope
    assert (w[0], w[4]) in rels["incl"] and (w[1], w[4]) not in rels["incl"]
    assert (w[0], w[1]) in rels["same-wg"] and (w[0], w[1]) not in rels["same-sg"]
    assert (w[0], w[2]) in rels["same-gpu"] and not any(w[3] in p for p in rels["same-gpu"])
    assert not any(0 in p for p in rels["incl"])  # init writes are not atomics


def test_sinstr_tells_barrier_instructions_apart() -> None:
    p = Pred("p")
    branchy = [
        Load(Reg("r"), at("x"), G, None, None, 32, 1),
        Compare(CmpOp.EQ, False, p, Reg("r"), Imm(0), 32),
        Goto("second", p),
        Barrier(),
        Goto("end", None),
        (Barrier(), ("second",)),
    ]
    t0 = thread(0, branchy, wg=0, sg=0, end_labels=("end",))
    t1 = thread(1, [Barrier()], wg=0, sg=1)
    es = build(make_test([t0, t1]))
    rels = static_relations(es)
    (a1,) = ids(es, 1, Tag.ARRIVE)
    first, second = sorted(ids(es, 0, Tag.ARRIVE), key=lambda e: es.events[e].instr or 0)
    assert es.events[first].barrier_site == 0 and es.events[second].barrier_site == 1
    assert (first, a1) in rels["binst"] and (first, a1) in rels["sinstr"]
    assert (second, a1) in rels["binst"] and (second, a1) not in rels["sinstr"]
    add = {e.id for e in es.events if e.thread == 0 and e.kind is Kind.READ}
    assert add and all((r, first) in rels["ctrl"] for r in add)


def test_unscoped_holds_the_events_of_relaxed_instructions_only() -> None:
    from pisa_mm.litmus import parse_test

    test = parse_test(
        """PISA U
{ .global .32b @x = 0; }
P0 @ wg 0 {
  st.global.relaxed.32b [@x], 1;
  iatom.global.relaxed.add.32b %r0, [@x], 1;
  iatom.global.acquire.system.add.32b %r1, [@x], 1;
  iatom.global.release.system.cas.32b %r2, [@x], 5, 7;
  ld.global.acquire.system.32b %r3, [@x];
}
exists (P0:%r0 == 0)
""",
        "u.litmus",
    )
    es = build(test)
    evs = [e for e in es.events if e.thread == 0 and e.kind in (Kind.READ, Kind.WRITE)]
    st, r0, w0, _r1, w1, r2, _w2, _ld = evs
    # relaxed halves of scoped RMWs (w1, r2) are RLX at system scope but not UNSCOPED
    assert {w1.order, r2.order} == {Order.RLX} and w1.scope is r2.scope is Scope.SYS
    assert static_sets(es)["UNSCOPED"] == {st.id, r0.id, w0.id}
