"""Exact IEEE binary arithmetic on bit patterns (HF, BF, F, DF), rounding to nearest even."""

from __future__ import annotations

import re

from pisa_mm.errors import PisaMMError, Span
from pisa_mm.hints import TYPE_CHECKING
from pisa_mm.values.expr import FpFormat

# fractions and decimal (4 ms of start-up) are imported by the functions that use them: only
# tests with floating-point values need them
if TYPE_CHECKING:
    from decimal import Decimal
    from fractions import Fraction

__all__ = [
    "bits_to_float_text",
    "canonical_nan",
    "fadd",
    "feq",
    "float_literal_to_bits",
    "fmax",
    "fmin",
    "from_fraction",
    "fsub",
    "is_inf",
    "is_nan",
    "is_zero",
    "negate",
    "sign_bit",
    "to_fraction",
]

# Every operation works on unsigned bit patterns of fmt.width bits. A NaN *result* is always
# the canonical quiet NaN (sign 0, exponent all ones, only the top fraction bit set): PISA 3.4
# leaves the choice among several NaN inputs open and z3 leaves the bits of a NaN unspecified,
# so both implementations agree on this one pattern (docs/values.md).


def _frac_bits(fmt: FpFormat) -> int:
    return fmt.sbits - 1


def _bias(fmt: FpFormat) -> int:
    return (1 << (fmt.ebits - 1)) - 1


def _exp_field(bits: int, fmt: FpFormat) -> int:
    return (bits >> _frac_bits(fmt)) & ((1 << fmt.ebits) - 1)


def _fraction_field(bits: int, fmt: FpFormat) -> int:
    return bits & ((1 << _frac_bits(fmt)) - 1)


def _check_bits(bits: int, fmt: FpFormat) -> None:
    if not 0 <= bits < (1 << fmt.width):
        raise ValueError(f"{bits:#x} is not a {fmt.width}-bit pattern for format {fmt.value[0]}")


def canonical_nan(fmt: FpFormat) -> int:
    """The canonical quiet NaN of `fmt`: positive, exponent all ones, top fraction bit only."""
    exp_ones = ((1 << fmt.ebits) - 1) << _frac_bits(fmt)
    return exp_ones | (1 << (_frac_bits(fmt) - 1))


def _inf(fmt: FpFormat, negative: bool) -> int:
    return (int(negative) << (fmt.width - 1)) | (((1 << fmt.ebits) - 1) << _frac_bits(fmt))


def _zero(fmt: FpFormat, negative: bool) -> int:
    return int(negative) << (fmt.width - 1)


def sign_bit(bits: int, fmt: FpFormat) -> int:
    """The sign bit (1 for negative, including -0, -inf and NaNs with the sign set)."""
    return (bits >> (fmt.width - 1)) & 1


def is_nan(bits: int, fmt: FpFormat) -> bool:
    """Exponent all ones and a nonzero fraction (quiet or signalling, any payload)."""
    return _exp_field(bits, fmt) == (1 << fmt.ebits) - 1 and _fraction_field(bits, fmt) != 0


def is_inf(bits: int, fmt: FpFormat) -> bool:
    return _exp_field(bits, fmt) == (1 << fmt.ebits) - 1 and _fraction_field(bits, fmt) == 0


def is_zero(bits: int, fmt: FpFormat) -> bool:
    return bits & ((1 << (fmt.width - 1)) - 1) == 0


def negate(bits: int, fmt: FpFormat) -> int:
    """Flip the sign bit (IEEE negate: exact, also on NaNs)."""
    return bits ^ (1 << (fmt.width - 1))


def to_fraction(bits: int, fmt: FpFormat) -> Fraction:
    """The exact value of a finite pattern; -0 gives 0 (ask `sign_bit` for the sign)."""
    from fractions import Fraction

    exp = _exp_field(bits, fmt)
    frac = _fraction_field(bits, fmt)
    if exp == (1 << fmt.ebits) - 1:
        raise ValueError(f"{bits:#x} is not finite in format {fmt.value[0]}")
    if exp == 0:  # subnormal or zero: no hidden bit, exponent emin
        mant, e = frac, 1 - _bias(fmt)
    else:
        mant, e = frac | (1 << _frac_bits(fmt)), exp - _bias(fmt)
    shift = e - _frac_bits(fmt)
    value = Fraction(mant << shift) if shift >= 0 else Fraction(mant, 1 << -shift)
    return -value if sign_bit(bits, fmt) else value


def _floor_log2(a: Fraction) -> int:
    """floor(log2(a)) for a > 0."""
    n, d = a.numerator, a.denominator
    e = n.bit_length() - d.bit_length()
    at_least = n >= (d << e) if e >= 0 else (n << -e) >= d
    return e if at_least else e - 1


def from_fraction(value: Fraction, fmt: FpFormat, negative_zero: bool = False) -> int:
    """Round an exact rational to `fmt`, nearest with ties to even (PISA 3.2 default `.re`).

    Overflow gives an infinity, gradual underflow gives subnormals. An exact zero becomes -0
    when `negative_zero` is set; a nonzero value that rounds to zero keeps its own sign.
    """
    from fractions import Fraction

    negative = value < 0
    a = -value if negative else value
    if a == 0:
        return _zero(fmt, negative_zero)
    p = fmt.sbits
    emin, emax = 1 - _bias(fmt), _bias(fmt)
    e = max(_floor_log2(a), emin)
    shift = e - (p - 1)
    scaled = a / (Fraction(1 << shift) if shift >= 0 else Fraction(1, 1 << -shift))
    mant = round(scaled)  # Fraction.__round__ rounds half to even
    if mant == 1 << p:  # rounding carried into the next binade
        mant >>= 1
        e += 1
    if e > emax:
        return _inf(fmt, negative)
    sign = int(negative) << (fmt.width - 1)
    if mant < 1 << (p - 1):  # subnormal (or zero): exponent field 0, e is emin here
        return sign | mant
    return sign | ((e + _bias(fmt)) << _frac_bits(fmt)) | (mant - (1 << (p - 1)))


def fadd(a: int, b: int, fmt: FpFormat) -> int:
    """IEEE addition: the exact sum rounded once (RNE); NaN results are canonical."""
    _check_bits(a, fmt)
    _check_bits(b, fmt)
    if is_nan(a, fmt) or is_nan(b, fmt):
        return canonical_nan(fmt)
    a_inf, b_inf = is_inf(a, fmt), is_inf(b, fmt)
    if a_inf and b_inf:
        return a if sign_bit(a, fmt) == sign_bit(b, fmt) else canonical_nan(fmt)
    if a_inf:
        return a
    if b_inf:
        return b
    total = to_fraction(a, fmt) + to_fraction(b, fmt)
    # An exact zero sum is -0 only for (-0) + (-0); x + (-x) is +0 under round-to-nearest.
    both_negative = sign_bit(a, fmt) == 1 and sign_bit(b, fmt) == 1
    return from_fraction(total, fmt, negative_zero=both_negative)


def fsub(a: int, b: int, fmt: FpFormat) -> int:
    """IEEE subtraction, a + (-b)."""
    _check_bits(b, fmt)
    return fadd(a, negate(b, fmt), fmt)


def _min_max(a: int, b: int, fmt: FpFormat, want_min: bool) -> int:
    _check_bits(a, fmt)
    _check_bits(b, fmt)
    a_nan, b_nan = is_nan(a, fmt), is_nan(b, fmt)
    if a_nan and b_nan:
        return canonical_nan(fmt)
    if a_nan:
        return b
    if b_nan:
        return a
    if is_zero(a, fmt) and is_zero(b, fmt):
        # minNum/maxNum leave the sign of a zero result open; we order -0 below +0.
        a_neg = sign_bit(a, fmt) == 1
        return a if a_neg == want_min else b
    if is_inf(a, fmt) or is_inf(b, fmt):
        a_key = _order_key(a, fmt)
        b_key = _order_key(b, fmt)
    else:
        a_key = (0, to_fraction(a, fmt))
        b_key = (0, to_fraction(b, fmt))
    if a_key == b_key:
        return a  # equal nonzero values have equal bit patterns
    a_smaller = a_key < b_key
    return a if a_smaller == want_min else b


def _order_key(bits: int, fmt: FpFormat) -> tuple[int, Fraction]:
    from fractions import Fraction

    if is_inf(bits, fmt):
        return (-1 if sign_bit(bits, fmt) else 1, Fraction(0))
    return (0, to_fraction(bits, fmt))


def fmin(a: int, b: int, fmt: FpFormat) -> int:
    """IEEE 754-2008 minNum: a NaN operand yields the other; both NaN: canonical NaN; -0 < +0."""
    return _min_max(a, b, fmt, want_min=True)


def fmax(a: int, b: int, fmt: FpFormat) -> int:
    """IEEE 754-2008 maxNum: a NaN operand yields the other; both NaN: canonical NaN; +0 > -0."""
    return _min_max(a, b, fmt, want_min=False)


def feq(a: int, b: int, fmt: FpFormat) -> bool:
    """IEEE equality: NaN equals nothing (itself included), -0 equals +0."""
    _check_bits(a, fmt)
    _check_bits(b, fmt)
    if is_nan(a, fmt) or is_nan(b, fmt):
        return False
    if is_zero(a, fmt) and is_zero(b, fmt):
        return True
    return a == b


_DECIMAL = re.compile(r"[+-]?(?:\d+(?:\.\d*)?|\.\d+)(?:[eE][+-]?\d+)?")
_SPECIAL = re.compile(r"([+-]?)(inf|infinity|nan)", re.IGNORECASE)
_HEX = re.compile(r"0[xX][0-9a-fA-F]+")


def float_literal_to_bits(text: str, fmt: FpFormat, span: Span | None = None) -> int:
    """The bit pattern of a floating-point immediate in format `fmt` (PISA 3.2 Immediate Values).

    A decimal literal is first taken as a double (correctly rounded, RNE) and that double is
    then rounded to `fmt` (RNE), as PISA 3.2 prescribes ("treated as a double-precision value,
    which is converted to type of an operand"). A hexadecimal literal is an IEEE bit pattern
    and must fit in the format's width. `inf`, `-inf` and `nan` (canonical) are accepted.
    """
    name = fmt.value[0]
    if _HEX.fullmatch(text):
        bits = int(text, 16)
        if bits >> fmt.width:
            raise PisaMMError.at(
                span,
                f"hexadecimal floating-point literal {text} does not fit the {fmt.width} bits "
                f"of .{name}",
                "float-literal",
            )
        return bits
    special = _SPECIAL.fullmatch(text)
    if special is not None:
        if special.group(2).lower() == "nan":
            return canonical_nan(fmt)
        return _inf(fmt, special.group(1) == "-")
    if not _DECIMAL.fullmatch(text):
        raise PisaMMError.at(
            span, f"{text!r} is not a floating-point literal for .{name}", "float-literal"
        )
    as_double = float(text)  # correctly rounded decimal -> binary64, overflow to inf
    return _from_double(as_double, fmt)


def _from_double(value: float, fmt: FpFormat) -> int:
    from fractions import Fraction

    if value != value:
        return canonical_nan(fmt)
    if value in (float("inf"), float("-inf")):
        return _inf(fmt, value < 0)
    negative_zero = value == 0 and str(value).startswith("-")
    return from_fraction(Fraction(value), fmt, negative_zero=negative_zero)


def bits_to_float_text(bits: int, fmt: FpFormat) -> str:
    """The shortest decimal that reads back (via `float_literal_to_bits`) to the same bits.

    Infinities print as `inf`/`-inf`, the canonical NaN as `nan` and any other NaN as
    `nan(0x...)` with its full bit pattern, so that reports never hide a payload.
    """
    from decimal import localcontext

    _check_bits(bits, fmt)
    if is_nan(bits, fmt):
        return "nan" if bits == canonical_nan(fmt) else f"nan({bits:#x})"
    if is_inf(bits, fmt):
        return "-inf" if sign_bit(bits, fmt) else "inf"
    if is_zero(bits, fmt):
        return "-0.0" if sign_bit(bits, fmt) else "0.0"
    exact = to_fraction(bits, fmt)
    # Every HF/BF/F/DF value is a double exactly; find the fewest significant digits that
    # round back to the same pattern, then let repr() choose the layout of that double.
    exact_decimal = _exact_decimal(exact)
    for digits in range(1, 18):
        with localcontext() as ctx:
            ctx.prec = digits
            candidate = +exact_decimal
        text = repr(float(candidate))
        if float_literal_to_bits(text, fmt) == bits:
            return text
    return repr(float(exact))


def _exact_decimal(value: Fraction) -> Decimal:
    """A dyadic rational written exactly as a Decimal (denominators are powers of two)."""
    from decimal import Decimal, localcontext

    n, d = value.numerator, value.denominator
    k = d.bit_length() - 1  # d == 2**k
    with localcontext() as ctx:
        ctx.prec = 2000
        return Decimal(n * 5**k).scaleb(-k)
