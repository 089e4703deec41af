"""Exact IEEE arithmetic on bit patterns, checked against hardware (struct/float) and by hand."""

from __future__ import annotations

import math
import struct
from fractions import Fraction

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st
from value_strategies import fp_specials

from pisa_mm.errors import PisaMMError, Span
from pisa_mm.values import fp
from pisa_mm.values.expr import FpFormat

HF, BF, F, DF = FpFormat.HF, FpFormat.BF, FpFormat.F, FpFormat.DF
_STRUCT = {HF: ("<e", "<H"), F: ("<f", "<I"), DF: ("<d", "<Q")}


def _to_float(bits: int, fmt: FpFormat) -> float:
    if fmt is BF:
        return float(struct.unpack("<f", struct.pack("<I", bits << 16))[0])
    real, raw = _STRUCT[fmt]
    return float(struct.unpack(real, struct.pack(raw, bits))[0])


def _from_float(value: float, fmt: FpFormat) -> int:
    """Hardware rounding of a double to fmt (HF, F, DF only); NaN gives the canonical NaN."""
    if math.isnan(value):
        return fp.canonical_nan(fmt)
    real, raw = _STRUCT[fmt]
    try:
        packed = struct.pack(real, value)
    except OverflowError:  # struct refuses values that round to infinity
        packed = struct.pack(real, math.copysign(math.inf, value))
    return int(struct.unpack(raw, packed)[0])


def patterns(fmt: FpFormat) -> st.SearchStrategy[int]:
    return st.one_of(st.sampled_from(fp_specials(fmt)), st.integers(0, (1 << fmt.width) - 1))


@pytest.mark.parametrize("fmt", [HF, F, DF])
@settings(max_examples=400)
@given(data=st.data())
def test_add_sub_match_hardware(fmt: FpFormat, data: st.DataObject) -> None:
    # A double holds the exact-enough sum of two HF/F values (53 >= 2p + 2), so rounding the
    # double sum once more to HF/F is the correctly rounded result.
    a, b = data.draw(patterns(fmt)), data.draw(patterns(fmt))
    fa, fb = _to_float(a, fmt), _to_float(b, fmt)
    assert fp.fadd(a, b, fmt) == _from_float(fa + fb, fmt)
    assert fp.fsub(a, b, fmt) == _from_float(fa - fb, fmt)


@pytest.mark.parametrize("fmt", list(FpFormat))
@settings(max_examples=300)
@given(data=st.data())
def test_min_max_eq_against_floats(fmt: FpFormat, data: st.DataObject) -> None:
    a, b = data.draw(patterns(fmt)), data.draw(patterns(fmt))
    fa, fb = _to_float(a, fmt), _to_float(b, fmt)
    assert fp.feq(a, b, fmt) == (fa == fb)
    lo, hi = fp.fmin(a, b, fmt), fp.fmax(a, b, fmt)
    if math.isnan(fa) and math.isnan(fb):
        assert lo == hi == fp.canonical_nan(fmt)
    elif math.isnan(fa) or math.isnan(fb):
        assert lo == hi == (b if math.isnan(fa) else a)
    else:
        assert _to_float(lo, fmt) == min(fa, fb)
        assert _to_float(hi, fmt) == max(fa, fb)
        assert {lo, hi} <= {a, b}


@pytest.mark.parametrize("fmt", list(FpFormat))
def test_signed_zero_rules(fmt: FpFormat) -> None:
    pz, nz = 0, 1 << (fmt.width - 1)
    one = fp.float_literal_to_bits("1.0", fmt)
    minus_one = fp.negate(one, fmt)
    assert fp.fadd(nz, nz, fmt) == nz
    assert fp.fadd(pz, nz, fmt) == pz
    assert fp.fadd(nz, pz, fmt) == pz
    assert fp.fadd(one, minus_one, fmt) == pz  # x + (-x) = +0 under RNE
    assert fp.fsub(one, one, fmt) == pz
    assert fp.fsub(nz, pz, fmt) == nz
    assert fp.fsub(pz, pz, fmt) == pz
    assert fp.fmin(pz, nz, fmt) == nz and fp.fmin(nz, pz, fmt) == nz
    assert fp.fmax(pz, nz, fmt) == pz and fp.fmax(nz, pz, fmt) == pz
    assert fp.feq(pz, nz, fmt)


@pytest.mark.parametrize("fmt", list(FpFormat))
def test_nan_rules(fmt: FpFormat) -> None:
    nan = fp.canonical_nan(fmt)
    inf = fp.float_literal_to_bits("inf", fmt)
    one = fp.float_literal_to_bits("1", fmt)
    snan_negative = fp.negate(((1 << fmt.ebits) - 1) << (fmt.sbits - 1) | 1, fmt)
    assert fp.is_nan(snan_negative, fmt)
    assert fp.fadd(snan_negative, one, fmt) == nan  # canonicalised, not propagated
    assert fp.fadd(inf, fp.negate(inf, fmt), fmt) == nan
    assert fp.fsub(inf, inf, fmt) == nan
    assert fp.fadd(inf, inf, fmt) == inf
    assert fp.fmin(snan_negative, one, fmt) == one
    assert fp.fmax(one, snan_negative, fmt) == one
    assert fp.fmin(snan_negative, snan_negative, fmt) == nan
    assert not fp.feq(nan, nan, fmt)


def test_rounding_ties_to_even_overflow_and_subnormals() -> None:
    one = 0x3F800000
    # 1 + 2^-24 is a tie between 1 and 1 + 2^-23: even mantissa (1) wins.
    half_ulp = fp.from_fraction(Fraction(1, 2**24), F)
    assert fp.fadd(one, half_ulp, F) == one
    # 1 + 2^-23 + 2^-24 ties between odd and even: rounds up to 1 + 2^-22.
    assert fp.from_fraction(1 + Fraction(3, 2**24), F) == one + 2
    largest = 0x7F7FFFFF
    assert fp.fadd(largest, largest, F) == 0x7F800000
    assert fp.fadd(fp.negate(largest, F), fp.negate(largest, F), F) == 0xFF800000
    # Just under half an ulp above the largest finite value stays finite.
    ulp = Fraction(2) ** (127 - 23)
    assert fp.from_fraction(fp.to_fraction(largest, F) + ulp / 2 - 1, F) == largest
    assert fp.from_fraction(fp.to_fraction(largest, F) + ulp / 2, F) == 0x7F800000
    # Subnormals add exactly; the smallest subnormal halves to a tie with 0 (even): +0.
    assert fp.fadd(1, 1, F) == 2
    assert fp.from_fraction(Fraction(1, 2**150), F) == 0
    assert fp.from_fraction(Fraction(-1, 2**150), F) == 0x80000000  # keeps its sign
    assert fp.from_fraction(Fraction(3, 2**151), F) == 1
    # Largest subnormal + smallest subnormal is the smallest normal.
    assert fp.fadd(0x007FFFFF, 1, F) == 0x00800000
    assert fp.fadd(0x7BFF, 0x7BFF, HF) == 0x7C00  # HF 65504 + 65504 overflows


def test_bfloat16_is_an_eight_bit_significand_ieee_format() -> None:
    one = 0x3F80
    assert fp.to_fraction(one, BF) == 1
    assert fp.fadd(one, one, BF) == 0x4000
    assert fp.fadd(one, fp.from_fraction(Fraction(1, 2**8), BF), BF) == one  # tie to even
    assert fp.fadd(one, fp.from_fraction(Fraction(3, 2**8), BF), BF) == one + 2
    assert fp.fadd(0x0001, 0x0001, BF) == 0x0002  # subnormals kept (no FTZ, PISA 3.3)
    assert fp.canonical_nan(BF) == 0x7FC0


@pytest.mark.parametrize(
    ("fmt", "nan"), [(HF, 0x7E00), (BF, 0x7FC0), (F, 0x7FC00000), (DF, 0x7FF8000000000000)]
)
def test_canonical_nan_patterns(fmt: FpFormat, nan: int) -> None:
    assert fp.canonical_nan(fmt) == nan
    assert fp.is_nan(nan, fmt) and not fp.is_inf(nan, fmt)


@pytest.mark.parametrize(
    ("text", "fmt", "bits"),
    [
        ("1.0", F, 0x3F800000),
        ("-1.0", F, 0xBF800000),
        ("0.1", F, 0x3DCCCCCD),
        ("4.2", F, 0x40866666),
        ("1e-45", F, 0x00000001),
        ("1e39", F, 0x7F800000),
        ("-0.0", HF, 0x8000),
        ("65504", HF, 0x7BFF),
        ("65520", HF, 0x7C00),  # tie between 65504 and 2^16: even is 2^16, i.e. inf
        ("0.1", DF, 0x3FB999999999999A),
        (".5", BF, 0x3F00),
        ("1.", HF, 0x3C00),
        ("+2E3", F, 0x44FA0000),
        ("INF", DF, 0x7FF0000000000000),
        ("-inf", BF, 0xFF80),
        ("NaN", HF, 0x7E00),
        ("0xBF800000", F, 0xBF800000),  # the IEEE hex form of PISA 3.2's example
        ("0x3c00", HF, 0x3C00),
    ],
)
def test_literals(text: str, fmt: FpFormat, bits: int) -> None:
    assert fp.float_literal_to_bits(text, fmt) == bits


def test_decimal_literals_go_through_double_first() -> None:
    # 1 + 2^-11 + 2^-60 is just above the HF tie between 1 and 1 + 2^-10; as a double it is
    # exactly the tie (the 2^-60 is lost), which then rounds to even: 1.0 (PISA 3.2).
    text = str(Fraction(1) + Fraction(1, 2**11) + Fraction(1, 2**60))
    numerator, denominator = (int(x) for x in text.split("/"))
    decimal_text = _exact_decimal_text(Fraction(numerator, denominator))
    assert fp.float_literal_to_bits(decimal_text, HF) == 0x3C00
    assert fp.from_fraction(Fraction(numerator, denominator), HF) == 0x3C01


def _exact_decimal_text(value: Fraction) -> str:
    k = value.denominator.bit_length() - 1
    digits = str(value.numerator * 5**k)
    return digits[:-k] + "." + digits[-k:]


@pytest.mark.parametrize("text", ["", "1.0f", "0x", "--1", "1e", "nanx", "0x1.8p1", "1_000"])
def test_bad_literals_raise_with_span(text: str) -> None:
    span = Span("t.litmus", 3, 7)
    with pytest.raises(PisaMMError) as info:
        fp.float_literal_to_bits(text, F, span)
    assert info.value.diagnostics[0].span == span
    assert "floating-point literal" in info.value.diagnostics[0].message


def test_hex_literal_too_wide() -> None:
    with pytest.raises(PisaMMError, match=r"does not fit the 16 bits of \.hf"):
        fp.float_literal_to_bits("0x3F800000", HF)


@pytest.mark.parametrize("fmt", list(FpFormat))
@settings(max_examples=300)
@given(data=st.data())
def test_text_round_trips(fmt: FpFormat, data: st.DataObject) -> None:
    bits = data.draw(patterns(fmt))
    text = fp.bits_to_float_text(bits, fmt)
    if fp.is_nan(bits, fmt):
        assert text.startswith("nan")
        return
    assert fp.float_literal_to_bits(text, fmt) == bits


@pytest.mark.parametrize(
    ("bits", "fmt", "text"),
    [
        (0x3DCCCCCD, F, "0.1"),
        (0x3F800000, F, "1.0"),
        (0x80000000, F, "-0.0"),
        (0x7F800000, F, "inf"),
        (0xFC00, HF, "-inf"),
        (0x7E00, HF, "nan"),
        (0x7E01, HF, "nan(0x7e01)"),
        (0x3E00, HF, "1.5"),
        (0x00000001, F, "1e-45"),
        (0x3FB999999999999A, DF, "0.1"),
    ],
)
def test_text(bits: int, fmt: FpFormat, text: str) -> None:
    assert fp.bits_to_float_text(bits, fmt) == text


def test_out_of_range_patterns_are_rejected() -> None:
    with pytest.raises(ValueError, match="16-bit"):
        fp.fadd(1 << 16, 0, HF)


def _double_to_bf(value: float) -> int:
    """Round a double to bfloat16 via binary32: both roundings are RNE and, for the sum of
    two bfloat16 values, the first one is innocuous (24 >= 2 * 8 + 2)."""
    f_bits = _from_float(value, F)
    if fp.is_nan(f_bits, F):
        return fp.canonical_nan(BF)
    # RNE on the low 16 bits; a carry runs into the exponent and up to infinity as it should.
    return (f_bits + 0x7FFF + ((f_bits >> 16) & 1)) >> 16


@settings(max_examples=400)
@given(data=st.data())
def test_bfloat16_add_sub_match_binary32_hardware(data: st.DataObject) -> None:
    a, b = data.draw(patterns(BF)), data.draw(patterns(BF))
    fa, fb = _to_float(a, BF), _to_float(b, BF)
    assert fp.fadd(a, b, BF) == _double_to_bf(fa + fb)
    assert fp.fsub(a, b, BF) == _double_to_bf(fa - fb)


@pytest.mark.parametrize("a", [0x3C00, 0x03FF, 0xFBFF, 0x8000])
def test_half_add_is_exact_against_every_operand(a: int) -> None:
    fa = _to_float(a, HF)
    for b in range(0, 1 << 16, 7):  # a stride through every exponent and sign
        assert fp.fadd(a, b, HF) == _from_float(fa + _to_float(b, HF), HF), hex(b)


@pytest.mark.slow
@pytest.mark.parametrize("fmt", [HF, BF])
def test_sixteen_bit_add_exhaustive_in_one_operand(fmt: FpFormat) -> None:
    oracle = _double_to_bf if fmt is BF else (lambda v: _from_float(v, HF))
    for a in fp_specials(fmt):
        fa = _to_float(a, fmt)
        for b in range(1 << 16):
            assert fp.fadd(a, b, fmt) == oracle(fa + _to_float(b, fmt)), (hex(a), hex(b))
