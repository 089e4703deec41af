"""Float-typed locations and registers: those an fatom uses with a format (PISA 8.1).

Float literals (`1.5`) are allowed in init values and conditions only for them, converted to
that format as fatom operands are (PISA 3.2); final states print their values as floats.
A location or register that fatoms use with two formats (`.hf` and `.bf`) is not float-typed.
"""

from __future__ import annotations

from collections.abc import Iterable

from pisa_mm.litmus import syntax as S
from pisa_mm.litmus.decode.context import fail
from pisa_mm.litmus.decode.immediates import fp_imm
from pisa_mm.litmus.program import FAtom, Instruction, Reg, VarRef
from pisa_mm.values.expr import FpFormat

Formats = dict[str, set[FpFormat]]


def register_formats(body: Iterable[Instruction]) -> Formats:
    """The formats each register is used with as an fatom destination or source."""
    out: Formats = {}
    for ins in body:
        if isinstance(ins.op, FAtom):
            for r in (ins.op.dst, ins.op.src0, ins.op.src1):
                if isinstance(r, Reg) and r.elem is None:
                    out.setdefault(r.name, set()).add(ins.op.fmt)
    return out


def variable_formats(body: Iterable[Instruction], static: dict[str, VarRef], out: Formats) -> None:
    """Add the formats of the fatoms whose address is statically a variable to `out`."""
    for ins in body:
        if not isinstance(ins.op, FAtom):
            continue
        base = ins.op.addr.base
        ref = base if isinstance(base, VarRef) else None
        if isinstance(base, Reg) and base.elem is None:
            ref = static.get(base.name)
        if ref is not None:
            out.setdefault(ref.name, set()).add(ins.op.fmt)


def single(formats: Formats) -> dict[str, FpFormat]:
    """The float-typed names: those used with exactly one format."""
    return {name: next(iter(fs)) for name, fs in formats.items() if len(fs) == 1}


def float_bits(raw: S.RawFloat, fmt: FpFormat | None, what: str) -> int:
    """The bit pattern of a float literal for `what`, which must be float-typed."""
    if fmt is None:
        fail(
            raw.span,
            f"float literal {raw.text} for {what}, which is not float-typed (a location or "
            "register is float-typed when fatoms use it with one format); write its bit "
            "pattern in hex",
            "immediate",
        )
    return fp_imm(raw, fmt).value
