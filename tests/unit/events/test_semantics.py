"""Transfer functions on constants: what a concrete machine gets from events.semantics."""

from __future__ import annotations

import pytest

from pisa_mm.events import semantics as sem
from pisa_mm.events.kinds import Order, Scope, Space
from pisa_mm.events.layout import Layout, Variable
from pisa_mm.litmus.program import (
    Address,
    AddrSpace,
    Alu,
    AluOp,
    CmpOp,
    Collective,
    CollectiveKind,
    Compare,
    IAtom,
    IAtomOp,
    Imm,
    Pred,
    Reg,
    Select,
    VarRef,
)
from pisa_mm.values.expr import BOOL, Const, Expr, Op, ReadValue

LAYOUT = Layout((Variable("x", Space.GLOBAL, 0x1000, 32, 4),))


def c32(v: int) -> Const:
    return Const(v & 0xFFFFFFFF, 32)


def run_collective(op: Collective, values: list[int], masks: list[int] | None = None) -> list[int]:
    """Every lane's result, lanes 0..n-1 contributing `values`, destination initially 99."""
    out = []
    n = len(values)
    for lane in range(n):
        regs: dict[str, Expr] = {"a": c32(values[lane]), "d": c32(99)}
        if masks is not None:
            regs["m"] = c32(masks[lane])
        result = sem.collective_result(op, regs, LAYOUT, lane, range(n), lambda j: c32(values[j]))
        assert isinstance(result, Const), result
        out.append(result.value)
    return out


def shfl(mode: str, offset: int, mask: int = 0xFFFFFFFF) -> Collective:
    return Collective(CollectiveKind.SHFL, mode, Reg("d"), (Reg("a"), Imm(offset), Imm(mask)), 32)


def test_shfl_modes_follow_pisa_7_4() -> None:
    vals = [10, 11, 12, 13]
    assert run_collective(shfl("up", 1), vals) == [10, 10, 11, 12]  # lane 0 out of bounds
    assert run_collective(shfl("dn", 1), vals) == [11, 12, 13, 13]  # lane 4 does not exist
    assert run_collective(shfl("xor", 1), vals) == [11, 10, 13, 12]
    assert run_collective(shfl("idx", 2), vals) == [12, 12, 12, 12]
    # lanes outside the mask keep their destination; reading a non-participant gives src0
    assert run_collective(shfl("up", 1, 0b0111), vals) == [10, 10, 11, 99]
    assert run_collective(shfl("dn", 1, 0b0101), vals) == [10, 99, 12, 99]


def test_shfl_segmented() -> None:
    # width-2 segments (segmask 0b11110), cval 0b00001 for dn: stay inside the pair
    vals = [10, 11, 12, 13]
    src1 = (0b11110 << 16) | (0b00001 << 8) | 1
    op = Collective(CollectiveKind.SHFL, "dn.sg", Reg("d"), (Reg("a"), Imm(src1), Imm(-1)), 32)
    assert run_collective(op, vals) == [11, 11, 13, 13]


@pytest.mark.parametrize(
    ("op", "expected"),
    [
        ("sum", 10 + 20 + 0xFFFFFFFD),
        ("smin", 0xFFFFFFFD),
        ("umax", 0xFFFFFFFD),
        ("and", 10 & 20 & 0xFFFFFFFD),
        ("absmax", 20),
    ],
)
def test_ired(op: str, expected: int) -> None:
    ired = Collective(CollectiveKind.IRED, op, Reg("d"), (Reg("a"), Imm(0xFFFFFFFF)), 32)
    assert run_collective(ired, [10, 20, -3]) == [expected & 0xFFFFFFFF] * 3


def test_ired_mask_skips_non_participants() -> None:
    ired = Collective(CollectiveKind.IRED, "smin", Reg("d"), (Reg("a"), Reg("m")), 32)
    assert run_collective(ired, [5, 1, 7], masks=[0b101] * 3) == [5, 99, 5]


def test_redfirstidx() -> None:
    op = Collective(CollectiveKind.REDFIRSTIDX, "", Reg("d"), (Reg("m"),), 32)
    assert run_collective(op, [0, 0, 0], masks=[0b110] * 3) == [1, 1, 1]
    assert run_collective(op, [0, 0], masks=[0b1100] * 2) == [32, 32]  # no active lane set


def test_alu_compare_select_fold_to_constants() -> None:
    regs: dict[str, Expr] = {"a": c32(7), "b": c32(-2), "p": Const(1, BOOL)}
    add = Alu(AluOp.ADD, Reg("r"), (Reg("a"), Reg("b")), 32)
    assert sem.alu(add, regs, LAYOUT) == c32(5)
    asr = Alu(AluOp.ASR, Reg("r"), (Reg("b"), Imm(1)), 32)
    assert sem.alu(asr, regs, LAYOUT) == c32(-1)
    addr = Alu(AluOp.MOV, Reg("r"), (VarRef("x"),), 64)
    assert sem.alu(addr, regs, LAYOUT) == Const(0x1000, 64)
    lt = Compare(CmpOp.LT, True, Pred("q"), Reg("b"), Reg("a"), 32)
    assert sem.compare(lt, regs, LAYOUT) == Const(1, BOOL)
    ult = Compare(CmpOp.LT, False, Pred("q"), Reg("b"), Reg("a"), 32)
    assert sem.compare(ult, regs, LAYOUT) == Const(0, BOOL)
    sel = Select(Reg("r"), Pred("p", negated=True), Reg("a"), Imm(3), 32)
    assert sem.select(sel, regs, LAYOUT) == c32(3)


def test_address_with_signed_register_offset() -> None:
    regs: dict[str, Expr] = {"o": c32(-4)}
    addr = Address(VarRef("x"), Reg("o"))
    assert sem.address(regs, Address(VarRef("x"), Imm(8)), LAYOUT) == Const(0x1008, 64)
    assert sem.address(regs, addr, LAYOUT) == Const(0x0FFC, 64)


@pytest.mark.parametrize(
    ("op", "old", "src0", "src1", "writes", "new"),
    [
        (IAtomOp.INCWRAP, 5, 5, None, True, 0),
        (IAtomOp.DECWRAP, 0, 9, None, True, 9),
        (IAtomOp.DEC, 0, None, None, True, 0xFFFFFFFF),
        (IAtomOp.CAS, 3, 3, 8, True, 8),
        (IAtomOp.CAS, 4, 3, 8, False, 8),
        (IAtomOp.UMIN, 4, 0xFFFFFFFF, None, True, 4),
    ],
)
def test_rmw_write(
    op: IAtomOp, old: int, src0: int | None, src1: int | None, writes: bool, new: int
) -> None:
    instr = IAtom(
        op, Reg("d"), Address(VarRef("x"), None),
        None if src0 is None else Imm(src0), None if src1 is None else Imm(src1),
        AddrSpace.GLOBAL, Order.RLX, Scope.SYS, 32,
    )  # fmt: skip
    cond, value = sem.rmw_write(instr, c32(old), {}, LAYOUT)
    assert cond == Const(int(writes), BOOL) and value == c32(new)


def test_rmw_orders() -> None:
    assert sem.rmw_orders(Order.ACQ_REL) == (Order.ACQ, Order.REL)
    assert sem.rmw_orders(Order.REL) == (Order.RLX, Order.REL)
    assert sem.rmw_orders(Order.ACQ) == (Order.ACQ, Order.RLX)
    assert sem.rmw_orders(Order.RLX) == (Order.RLX, Order.RLX)


def test_mk_simplifies_booleans_but_keeps_syntactic_dependencies() -> None:
    v = ReadValue(3, 32)
    p = sem.mk(Op.EQ, (v, c32(1)), BOOL)
    assert sem.conj(Const(1, BOOL), p) == p
    assert sem.conj(p, sem.conj(p, p)) == p
    assert sem.neg(sem.neg(p)) == p
    assert sem.mk(Op.XOR, (v, v), 32) != c32(0)  # a false dependency stays visible
    assert sem.free_reads(sem.mk(Op.XOR, (v, v), 32)) == {3}
