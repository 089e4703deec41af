"""Register data flow and control flow: ALU ops, compares, sel, addrof, goto, return."""

from __future__ import annotations

from pisa_mm.events.kinds import Space
from pisa_mm.litmus import isa
from pisa_mm.litmus import syntax as S
from pisa_mm.litmus.decode.context import fail
from pisa_mm.litmus.decode.operands import OperandDecoder, span_of
from pisa_mm.litmus.decode.qualifiers import Q, suggest
from pisa_mm.litmus.program import (
    AddrOf,
    Alu,
    AluOp,
    Compare,
    Goto,
    Imm,
    Reg,
    Return,
    Select,
    VarRef,
)


def alu(dec: OperandDecoder, instr: S.RawInstr, mnemonic: str, quals: list[Q]) -> Alu:
    op, nsrc, allowed = isa.ALU[mnemonic]
    width, _ = dec.int_type(quals, mnemonic, instr, allowed)
    dec.nargs(instr, 1 + nsrc, "dst, src" if nsrc == 1 else "dst, src0, src1")
    ops = instr.operands
    dst = dec.reg(ops[0], width, True, "the destination")
    srcs: list[Reg | Imm | VarRef] = []
    for i, raw in enumerate(ops[1:]):
        w = 32 if (i == 1 and op in isa.SHIFTS) else width
        srcs.append(dec.alu_src(raw, w, f"src{i}"))
    return Alu(op, dst, tuple(srcs), width)


def compare(dec: OperandDecoder, instr: S.RawInstr, mnemonic: str, quals: list[Q]) -> Compare:
    width, rest = dec.int_type(quals, mnemonic, instr, isa.INT_TYPES, tuple(isa.CMP_OPS))
    if len(rest) != 1:
        span = rest[1].span if len(rest) > 1 else instr.opcode.span
        fail(
            span,
            f"{mnemonic} needs one comparison: .eq, .ne, .lt, .le, .gt or .ge",
            "qualifier",
        )
    dec.nargs(instr, 3, "pred, src0, src1")
    ops = instr.operands
    if isinstance(ops[0], S.RawReg):
        info = dec.regs.get(ops[0].name)
        if info is not None and info.declared and not info.pred:
            fail(
                ops[0].span,
                f"{mnemonic} with a register destination is not supported; "
                "declare the destination with .pred",
                "unsupported",
            )
    dst = dec.pred(ops[0], True, "the destination")
    a = dec.src(ops[1], width, "src0")
    b = dec.src(ops[2], width, "src1")
    return Compare(isa.CMP_OPS[rest[0].text], mnemonic == "scmp", dst, a, b, width)


def select(dec: OperandDecoder, instr: S.RawInstr, quals: list[Q]) -> Select:
    width, _ = dec.int_type(quals, "sel", instr, isa.INT_TYPES)
    dec.nargs(instr, 4, "dst, src0, src1, pred")
    ops = instr.operands
    last = ops[3]
    if isinstance(last, S.RawReg) and not last.negated:
        info = dec.regs.get(last.name)
        if info is not None and info.declared and not info.pred:
            fail(
                last.span,
                "sel with a register selector is not supported; use a predicate",
                "unsupported",
            )
    dst = dec.reg(ops[0], width, True, "the destination")
    a = dec.src(ops[1], width, "src0")
    b = dec.src(ops[2], width, "src1")
    cond = dec.pred(last, False, "the selector")
    return Select(dst, cond, a, b, width)


def addrof(dec: OperandDecoder, instr: S.RawInstr, quals: list[Q]) -> AddrOf:
    width, _ = dec.int_type(quals, "addrof", instr, frozenset({32, 64}))
    dec.nargs(instr, 2, "dst, @var")
    dst_raw, var_raw = instr.operands
    if not isinstance(var_raw, S.RawVar):
        fail(span_of(var_raw), "addrof needs a memory variable (@name)", "operand")
    var = dec.var(var_raw)
    decl = dec.ctx.variables[var.name]
    bits = isa.ADDRESS_BITS[decl.space]
    if bits != width:
        where = f"the .{decl.space.value} address of @{var.name} is {bits}-bit (PISA 4.2)"
        if bits == 32:
            fail(
                var_raw.span,
                f"addrof.{width}b: {where}; write addrof.32b for it, or "
                f"addrcast.generic.{decl.space.value} %a, @{var.name} for its 64-bit generic "
                "address (PISA 3.3.1, 4.1)",
                "width",
            )
        fail(var_raw.span, f"addrof.{width}b: {where}; write addrof.{bits}b", "width")
    dst = dec.reg(dst_raw, width, True, "the destination")
    return AddrOf(dst, var, width)


# addrcast.to.from (PISA 4.1): the spaces each direction converts from and to.
_FROM_SPECIFIC = {
    "global": Space.GLOBAL,
    "shared": Space.SHARED,
    "private": Space.PRIVATE,
    "const": Space.CONST,
}
_TO_SPECIFIC = {"global": Space.GLOBAL, "shared": Space.SHARED, "private": Space.PRIVATE}
_CAST_FORMS = (
    "addrcast.generic.SPACE %g, src (SPACE .global, .shared, .private or .const) or "
    "addrcast.SPACE.generic %a, %g (SPACE .global, .shared or .private)"
)


def _cast_space(q: Q, spaces: dict[str, Space], what: str) -> Space:
    if q.text not in spaces:
        names = ", ".join(f".{s}" for s in spaces)
        hint = suggest(q.text, spaces)
        fail(q.span, f"{what} {names}, not .{q.text}{hint} (PISA 4.1)", "qualifier")
    return spaces[q.text]


def addrcast(dec: OperandDecoder, instr: S.RawInstr, quals: list[Q]) -> Alu:
    """`addrcast.to.from dst, src0` (PISA 4.1) between a specific and a 64-bit generic address.

    The checker's generic address of a variable is its specific address zero-extended (the
    representation is implementation-defined, PISA 4.1, and a round trip keeps the value), so
    a cast is a move that zero-extends to 64 bits or truncates to the specific size.
    """
    typed = [q for q in quals if q.text in isa.WIDTHS]
    if typed:
        fail(
            typed[0].span, "addrcast takes no type: generic addresses are 64-bit (PISA 4.1)", "type"
        )
    if len(quals) != 2:
        fail(
            instr.opcode.span,
            f"addrcast takes .to and .from: {_CAST_FORMS} (PISA 4.1)",
            "qualifier",
        )
    to, frm = quals
    dec.nargs(instr, 2, "dst, src0")
    dst_raw, src_raw = instr.operands
    if to.text == "generic":
        space = _cast_space(frm, _FROM_SPECIFIC, "addrcast.generic converts from")
        dst = dec.reg(dst_raw, 64, True, "the destination")
        if isinstance(src_raw, S.RawVar):
            var = dec.var(src_raw)
            actual = dec.ctx.variables[var.name].space
            if actual is not space:
                fail(
                    src_raw.span,
                    f"@{var.name} is .{actual.value}, but this addrcast converts from "
                    f".{frm.text} (PISA 4.1: the space of src0 must match .from)",
                    "space",
                )
            return Alu(AluOp.MOV, dst, (var,), 64)
        src = dec.reg(src_raw, isa.ADDRESS_BITS[space], False, "src0")
        return Alu(AluOp.MOV, dst, (src,), 64)
    if frm.text != "generic":
        fail(
            instr.opcode.span,
            f"addrcast converts to or from .generic: {_CAST_FORMS} (PISA 4.1)",
            "qualifier",
        )
    if to.text == "const":
        fail(
            to.span,
            "a generic address of .const memory is cast back with addrcast.global.generic "
            "(PISA 4.1)",
            "qualifier",
        )
    bits = isa.ADDRESS_BITS[_cast_space(to, _TO_SPECIFIC, "addrcast from .generic converts to")]
    dst = dec.reg(dst_raw, bits, True, "the destination")
    src = dec.reg(src_raw, 64, False, "src0")
    return Alu(AluOp.MOV, dst, (src,), bits)


def branch(dec: OperandDecoder, instr: S.RawInstr, mnemonic: str, quals: list[Q]) -> Goto | Return:
    names = [q.text for q in quals]
    if names not in ([], ["cond"]):
        bad = next((q for q in quals if q.text != "cond"), quals[-1])
        hint = "" if bad.text == "cond" else suggest(bad.text, ["cond"])
        fail(bad.span, f"unknown qualifier '.{bad.text}' for {mnemonic}{hint}", "qualifier")
    cond_form = names == ["cond"]
    ops = instr.operands
    if mnemonic == "return":
        if len(ops) > int(cond_form):
            fail(
                span_of(ops[-1]),
                "return values are not supported in litmus threads",
                "unsupported",
            )
        dec.nargs(instr, int(cond_form), "pred" if cond_form else "none")
        return Return(dec.pred(ops[0], False, "the condition") if cond_form else None)
    dec.nargs(instr, 2 if cond_form else 1, "pred, label" if cond_form else "label")
    target = ops[-1]
    if not isinstance(target, S.RawIdent):
        fail(span_of(target), "expected a label", "operand")
    cond = dec.pred(ops[0], False, "the condition") if cond_form else None
    return Goto(target.name, cond, target.span)
