"""Register data flow and control flow: ALU ops, compares, sel, addrof, goto, return."""

from __future__ import annotations

from pisa_mm.litmus import isa
from pisa_mm.litmus import syntax as S
from pisa_mm.litmus.decode.context import fail
from pisa_mm.litmus.decode.operands import OperandDecoder, span_of
from pisa_mm.litmus.decode.qualifiers import Q
from pisa_mm.litmus.program import (
    AddrOf,
    Alu,
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
    dst = dec.reg(dst_raw, width, True, "the destination")
    var = dec.var(var_raw)
    dec.address_width(var, width, var_raw.span)
    return AddrOf(dst, var, width)


def branch(dec: OperandDecoder, instr: S.RawInstr, mnemonic: str, quals: list[Q]) -> Goto | Return:
    names = [q.text for q in quals]
    if names not in ([], ["cond"]):
        fail(quals[0].span, f"unknown qualifier '.{quals[0].text}' for {mnemonic}", "qualifier")
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
