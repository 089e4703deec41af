"""Fences (PISA 9.2), the work-group barrier and the sub-group collectives (PISA 7)."""

from __future__ import annotations

from pisa_mm.events.kinds import Order, Scope, Space
from pisa_mm.litmus import isa
from pisa_mm.litmus import syntax as S
from pisa_mm.litmus.decode.context import fail
from pisa_mm.litmus.decode.operands import OperandDecoder
from pisa_mm.litmus.decode.qualifiers import Q, classify, only
from pisa_mm.litmus.program import (
    AddrSpace,
    Barrier,
    Collective,
    CollectiveKind,
    Fence,
    Imm,
    Pred,
    Reg,
)


def fence(dec: OperandDecoder, instr: S.RawInstr) -> Fence:
    made = dec.qualified(instr, _fence)
    dec.nargs(instr, 0, "none")  # checked in its place by `_fence` when it ran
    return made


def _fence(dec: OperandDecoder, instr: S.RawInstr, quals: list[Q]) -> Fence:
    """The fence of these qualifiers (PISA 9.2), its operands counted in between."""
    m = classify("fence", quals)
    only("fence", m, {"space", "order", "scope"})
    dec.nargs(instr, 0, "none")
    both = frozenset({Space.GLOBAL, Space.SHARED})
    if m.scope is not None and m.scope.text == "subgroup":
        extra = m.space or m.order
        if extra is not None:
            fail(
                extra.span,
                "fence.subgroup takes no address space or memory order (PISA 9.2)",
                "qualifier",
            )
        dec.no_host("fence.subgroup")
        return Fence(both, Order.ACQ_REL, Scope.SG)
    if m.scope is None:
        fail(
            instr.opcode.span,
            "fence needs a memory scope: .workgroup, .gpu (or .system with .global)",
            "scope",
        )
    space = isa.SPACES[m.space.text] if m.space is not None else None
    if space not in isa.FENCE_SCOPES:
        assert m.space is not None
        fail(m.space.span, f"fence cannot order .{m.space.text} memory", "space")
    if m.scope.text not in isa.FENCE_SCOPES[space]:
        form = f"fence.{space.value}" if space is not None else "fence"
        fail(
            m.scope.span,
            f"{form} allows only .workgroup or .gpu; .system needs fence.global (PISA 9.2)",
            "scope",
        )
    order = Order.ACQ_REL
    if m.order is not None:
        if m.order.text not in isa.FENCE_ORDERS:
            fail(
                m.order.span,
                f"fence does not allow .{m.order.text}: the orders are .acquire, .release, "
                ".acq_rel and .seq_cst",
                "order",
            )
        order = isa.ORDERS[m.order.text]
    scope = isa.SCOPES[m.scope.text]
    if dec.host and scope is not Scope.SYS:
        fail(
            m.scope.span,
            f"host threads share only the .system scope, not .{m.scope.text}",
            "host",
        )
    if space is AddrSpace.GLOBAL:
        spaces = frozenset({Space.GLOBAL})
    elif space is AddrSpace.SHARED:
        spaces = frozenset({Space.SHARED})
    else:
        spaces = both
    return Fence(spaces, order, scope)


def barrier(dec: OperandDecoder, instr: S.RawInstr, quals: list[Q]) -> Barrier:
    if [q.text for q in quals] != ["workgroup"]:
        fail(instr.opcode.span, "the barrier is written barrier.workgroup", "qualifier")
    dec.nargs(instr, 0, "none")
    dec.no_host("barrier.workgroup")
    return Barrier()


def collective(dec: OperandDecoder, instr: S.RawInstr, mnemonic: str, quals: list[Q]) -> Collective:
    ops = instr.operands
    if mnemonic == "shfl":
        width, rest = dec.int_type(quals, mnemonic, instr, frozenset({32}), (*isa.SHFL_OPS, "sg"))
        kinds = [q.text for q in rest if q.text != "sg"]
        if len(kinds) != 1 or len(rest) - len(kinds) > 1:
            fail(
                instr.opcode.span,
                "shfl needs one operation (.up, .dn, .xor, .idx) and at most one .sg",
                "qualifier",
            )
        op = kinds[0] + (".sg" if len(rest) == 2 else "")
        dec.nargs(instr, 4, "dst, src0, src1, src2")
        dst = dec.reg(ops[0], 32, True, "the destination")
        src0 = dec.reg(ops[1], 32, False, "src0")
        srcs: tuple[Reg | Imm | Pred, ...] = (
            src0,
            dec.src(ops[2], 32, "src1"),
            dec.src(ops[3], 32, "src2"),
        )
        return Collective(CollectiveKind.SHFL, op, dst, srcs, width)
    if mnemonic == "ired":
        width, rest = dec.int_type(quals, mnemonic, instr, frozenset({16, 32}), tuple(isa.IRED_OPS))
        if len(rest) != 1:
            fail(instr.opcode.span, "ired needs one operation such as .sum", "qualifier")
        dec.nargs(instr, 3, "dst, src0, src1")
        dst = dec.reg(ops[0], width, True, "the destination")
        src0 = dec.reg(ops[1], width, False, "src0")
        srcs = (src0, dec.src(ops[2], 32, "src1"))
        return Collective(CollectiveKind.IRED, rest[0].text, dst, srcs, width)
    width, _ = dec.int_type(quals, mnemonic, instr, frozenset({32}))
    dec.nargs(instr, 2, "dst, src0")
    dst = dec.reg(ops[0], 32, True, "the destination")
    return Collective(CollectiveKind.REDFIRSTIDX, "", dst, (dec.src(ops[1], 32, "src0"),), 32)
