"""Integer and float immediates as bit patterns (PISA 3.2)."""

from __future__ import annotations

import math

from pisa_mm.litmus import syntax as S
from pisa_mm.litmus.decode.context import fail
from pisa_mm.litmus.program import Imm
from pisa_mm.values.expr import FpFormat
from pisa_mm.values.fp import float_literal_to_bits


def int_bits(raw: S.RawInt, width: int, what: str = "operand") -> int:
    """An integer literal as a `width`-bit pattern: decimal sign-extends, hex zero-extends."""
    text = raw.text
    if len(text) < 19 and text.isascii() and text.isdigit():
        value = int(text)  # the common case: a plain decimal, as `raw.value` reads it
        ok = value < (1 << width)
    elif (value := raw.value) >= 0 and raw.is_hex:
        ok = value < (1 << width)
    else:
        ok = -(1 << (width - 1)) <= value < (1 << width)
    if not ok:
        fail(raw.span, f"immediate {raw.text} does not fit the {width}-bit {what}", "immediate")
    return value & ((1 << width) - 1)


def fp_imm(raw: S.RawInt | S.RawFloat, fmt: FpFormat) -> Imm:
    """A float operand of fatom: a decimal converted to `fmt`, or an IEEE pattern of its size."""
    name = fmt.value[0]
    if isinstance(raw, S.RawInt) and raw.is_hex:
        digits = raw.text.lstrip("+-")[2:]
        if raw.text.startswith("-") or len(digits) != fmt.width // 4:
            fail(
                raw.span,
                f"hexadecimal float {raw.text} must have exactly {fmt.width // 4} hex digits "
                f"for .{name} (PISA 3.2: no conversion of IEEE patterns)",
                "immediate",
            )
        return Imm(int(digits, 16), raw.span)
    try:
        value = float(raw.text)
    except ValueError:  # the grammar only lets numbers through; keep the message anyway
        fail(raw.span, f"bad number {raw.text}", "immediate")
    if math.isinf(value):
        fail(raw.span, f"float literal {raw.text} is out of range", "immediate")
    bits = float_literal_to_bits(raw.text, fmt, raw.span)
    if bits & ~(1 << (fmt.width - 1)) == ((1 << fmt.ebits) - 1) << (fmt.sbits - 1):
        fail(raw.span, f"float literal {raw.text} overflows .{name}", "immediate")
    return Imm(bits, raw.span)
