"""iatom (PISA 8.2) and fatom (PISA 8.1): spaces, orders, operations and widths."""

from __future__ import annotations

from pisa_mm.events.kinds import Order, Scope
from pisa_mm.litmus import isa
from pisa_mm.litmus import syntax as S
from pisa_mm.litmus.decode.context import fail
from pisa_mm.litmus.decode.immediates import fp_imm
from pisa_mm.litmus.decode.operands import OperandDecoder
from pisa_mm.litmus.decode.qualifiers import MemQ, Q, classify, only
from pisa_mm.litmus.program import (
    AddrSpace,
    FAtom,
    IAtom,
    IAtomOp,
    Imm,
    Reg,
)
from pisa_mm.values.expr import FpFormat


def atomic_space(dec: OperandDecoder, m: MemQ, instr: S.RawInstr, mnemonic: str) -> AddrSpace:
    if m.space is None:
        fail(
            instr.opcode.span,
            f"{mnemonic} needs an address space: .global, .shared or .generic",
            "qualifier",
        )
    space = isa.SPACES[m.space.text]
    if space not in isa.ATOMIC_SPACES:
        fail(m.space.span, f"{mnemonic} cannot access .{space.value} memory", "space")
    dec.host_space(space, m.space)
    return space


def atomic_order(dec: OperandDecoder, m: MemQ, mnemonic: str) -> None:
    if m.order is not None and m.order.text not in ("relaxed", "release", "acquire", "acq_rel"):
        fail(
            m.order.span,
            f"{mnemonic} does not allow .{m.order.text}: the orders are .relaxed, .release, "
            ".acquire and .acq_rel (PISA 8)",
            "order",
        )


def iatom(dec: OperandDecoder, instr: S.RawInstr) -> IAtom:
    op, width, space, order, scope, nsrc = dec.qualified(instr, _iatom)
    shape = ", ".join(["dst", "[addr]", "src0", "src1"][: 2 + nsrc])
    dec.nargs(instr, 2 + nsrc, shape)
    ops = instr.operands
    dst = dec.reg(ops[0], width, True, "the destination")
    addr = dec.address(ops[1])
    src0 = dec.src(ops[2], width, "src0") if nsrc >= 1 else None
    src1 = dec.src(ops[3], width, "src1") if nsrc >= 2 else None
    return IAtom(op, dst, addr, src0, src1, space, order, scope, width)


def _iatom(
    dec: OperandDecoder, instr: S.RawInstr, quals: list[Q]
) -> tuple[IAtomOp, int, AddrSpace, Order, Scope, int]:
    """The qualifier checks of an iatom (PISA 8.2): operation, width, space, order, scope
    and its number of sources."""
    m = classify("iatom", quals, isa.IATOM_OPS)
    only("iatom", m, {"space", "order", "scope", "type", "op", "cc"})
    space = atomic_space(dec, m, instr, "iatom")
    atomic_order(dec, m, "iatom")
    if m.op is None:
        fail(instr.opcode.span, "iatom needs an operation such as .add or .cas", "qualifier")
    op = isa.IATOM_OPS[m.op.text]
    width = dec.width_of(m, instr, "iatom")
    assert m.type is not None
    if width == 8:
        fail(m.type.span, ".8b is allowed only for non-atomic accesses", "type")
    allowed = isa.iatom_widths(space, op)
    if width not in allowed:
        ok = ", ".join(f".{w}b" for w in sorted(allowed))
        fail(
            m.type.span,
            f"iatom.{op.value} on .{space.value} does not support .{width}b (PISA 8.2 allows {ok})",
            "type",
        )
    dec.atomic_cc(m, space)
    order, scope = dec.order_scope(m, "iatom", True)
    return op, width, space, order, scope, isa.iatom_sources(op)


def fatom(dec: OperandDecoder, instr: S.RawInstr, quals: list[Q]) -> FAtom:
    m = classify("fatom", quals, isa.FATOM_OPS, fp=True)
    only("fatom", m, {"space", "order", "scope", "type", "op", "cc"})
    space = atomic_space(dec, m, instr, "fatom")
    atomic_order(dec, m, "fatom")
    if m.op is None:
        fail(instr.opcode.span, "fatom needs an operation such as .add or .cas", "qualifier")
    op = isa.FATOM_OPS[m.op.text]
    if m.type is None:
        fail(instr.opcode.span, "fatom needs a type: .hf, .bf, .f or .df", "type")
    fmt = isa.FTYPES[m.type.text]
    allowed = isa.fatom_formats(space, op)
    if fmt not in allowed:
        fail(
            m.type.span,
            f"fatom.{op.value} on .{space.value} does not support .{m.type.text} "
            "(.df only for .add/.sub on .global, PISA 8.1)",
            "type",
        )
    dec.atomic_cc(m, space)
    order, scope = dec.order_scope(m, "fatom", True)
    cas = op.value == "cas"
    dec.nargs(instr, 4 if cas else 3, "dst, [addr], src0, src1" if cas else "dst, [addr], src0")
    ops = instr.operands
    dst = dec.reg(ops[0], fmt.width, True, "the destination")
    addr = dec.address(ops[1])
    src0 = fsrc(dec, ops[2], fmt, "src0")
    src1 = fsrc(dec, ops[3], fmt, "src1") if cas else None
    return FAtom(op, fmt, dst, addr, src0, src1, space, order, scope)


def fsrc(dec: OperandDecoder, raw: S.RawOperand, fmt: FpFormat, what: str) -> Reg | Imm:
    if isinstance(raw, S.RawInt | S.RawFloat):
        return fp_imm(raw, fmt)
    return dec.reg(raw, fmt.width, False, what)
