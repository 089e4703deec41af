"""Structural invariants of built event structures on random small programs (Hypothesis)."""

from __future__ import annotations

from events_factory import at, make_test, thread
from hypothesis import given, settings
from hypothesis import strategies as st

from pisa_mm.events.build import build
from pisa_mm.events.kinds import Kind, Order, Scope, Tag
from pisa_mm.events.semantics import free_reads
from pisa_mm.litmus.program import (
    AddrSpace,
    Alu,
    AluOp,
    CmpOp,
    Compare,
    Goto,
    IAtom,
    IAtomOp,
    Imm,
    Load,
    Op,
    Pred,
    Reg,
    Return,
    Store,
)

G = AddrSpace.GLOBAL
REGS = ("r0", "r1")
VARS = ("x", "y")


def _op(kind: int, reg: str, var: str, label: str) -> Op:
    match kind:
        case 0:
            return Load(Reg(reg), at(var), G, None, None, 32, 1)
        case 1:
            return Store(at(var), Reg(reg), G, Order.RLX, Scope.SYS, 32, 1)
        case 2:
            return Alu(AluOp.ADD, Reg(reg), (Reg(reg), Imm(1)), 32)
        case 3:
            return Compare(CmpOp.EQ, False, Pred("p"), Reg(reg), Imm(1), 32)
        case 4:
            return Goto(label, Pred("p"))
        case 5:
            return IAtom(IAtomOp.ADD, Reg(reg), at(var), Imm(1), None, G, Order.ACQ_REL,
                         Scope.GPU, 32)  # fmt: skip
        case _:
            return Return(Pred("p"))


programs = st.lists(
    st.tuples(st.integers(0, 6), st.sampled_from(REGS), st.sampled_from(VARS), st.integers(0, 5)),
    min_size=1,
    max_size=7,
)


@settings(max_examples=60, deadline=None)
@given(programs, st.integers(0, 2))
def test_invariants(spec: list[tuple[int, str, str, int]], unroll: int) -> None:
    n = len(spec)
    ops: list[tuple[Op, tuple[str, ...]]] = []
    for i, (kind, reg, var, target) in enumerate(spec):
        ops.append((_op(kind, reg, var, f"L{target % n}"), (f"L{i}",)))
    t = make_test([thread(0, ops, regs=(("p", 1), ("r0", 32), ("r1", 32)))])
    es = build(t, unroll=unroll)
    inits = [e for e in es.events if e.tag is Tag.INIT]
    assert [e.id for e in inits] == list(range(len(inits)))
    assert all(e.id == i for i, e in enumerate(es.events))
    for path in es.threads[0].paths:
        evs = [es.events[i] for i in path.events]
        assert evs[-1].kind is Kind.EXIT and all(e.kind is not Kind.EXIT for e in evs[:-1])
        for a, b in zip(path.events, path.events[1:], strict=False):
            assert (a, b) in es.po
        # guards and values only mention reads earlier on the same path
        for j, e in enumerate(evs):
            before = set(path.events[:j])
            for expr in (e.guard, e.value, e.addr):
                if expr is not None:
                    assert free_reads(expr) <= before
    for a, b in es.po | es.addr | es.data | es.ctrl:
        assert es.events[a].thread == es.events[b].thread == 0
    for a, _ in es.addr | es.data | es.ctrl:
        assert es.events[a].kind is Kind.READ
    assert all(es.events[a].kind is Kind.READ for a, _ in es.rmw)
