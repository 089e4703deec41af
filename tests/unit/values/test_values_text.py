"""Readable text of value expressions."""

from __future__ import annotations

import pytest

from pisa_mm.values.expr import (
    BOOL,
    FALSE,
    TRUE,
    Apply,
    Const,
    Contribution,
    Expr,
    FpFormat,
    Op,
    ReadValue,
)
from pisa_mm.values.text import const_text, to_text

v3 = ReadValue(3, 32)
v4 = ReadValue(4, 32)


@pytest.mark.parametrize(
    ("expr", "text"),
    [
        (Apply(Op.ADD, (v3, Const(1, 32)), 32), "(v3 + 1)"),
        (Apply(Op.ADD, (v3, v4, Const(2, 32)), 32), "(v3 + v4 + 2)"),
        (Apply(Op.SUB, (Apply(Op.MUL, (v3, v4), 32), v3), 32), "((v3 * v4) - v3)"),
        (Apply(Op.ASHR, (v3, Const(4, 32)), 32), "(v3 >>s 4)"),
        (Apply(Op.ULT, (v3, v4), BOOL), "(v3 <u v4)"),
        (Apply(Op.SGE, (v3, v4), BOOL), "(v3 >=s v4)"),
        (Apply(Op.BNOT, (Apply(Op.EQ, (v3, v4), BOOL),), BOOL), "!(v3 == v4)"),
        (Apply(Op.NOT, (v3,), 32), "~v3"),
        (Apply(Op.ITE, (TRUE, v3, v4), 32), "(true ? v3 : v4)"),
        (Apply(Op.INCWRAP, (v3, Const(10, 32)), 32), "incwrap(v3, 10)"),
        (Apply(Op.ZEXT, (ReadValue(1, 16),), 32), "zext32(v1)"),
        (Apply(Op.TRUNC, (v3,), 16), "trunc16(v3)"),
        (Apply(Op.BAND, (), BOOL), "true"),
        (Apply(Op.BOR, (), BOOL), "false"),
        (Apply(Op.BAND, (TRUE, FALSE), BOOL), "(true && false)"),
        (Const(0xFFFFFFFF, 32), "0xffffffff"),
        (Const(65535, 32), "65535"),
        (Contribution(2, 0, 32), "contrib(P2, 0)"),
        (Apply(Op.FADD, (v3, Const(0x3FC00000, 32)), 32, FpFormat.F), "fadd.f(v3, 1.5)"),
        (
            Apply(Op.FEQ, (ReadValue(1, 16), Const(0xFE00, 16)), BOOL, FpFormat.HF),
            "feq.hf(v1, nan(0xfe00))",
        ),
        (Apply(Op.FMIN, (v3, Const(0x80000000, 32)), 32, FpFormat.F), "fmin.f(v3, -0.0)"),
    ],
)
def test_text(expr: Expr, text: str) -> None:
    assert to_text(expr) == text


def test_naming_callbacks() -> None:
    expr = Apply(Op.ADD, (v3, Contribution(1, 2, 32)), 32)
    text = to_text(expr, read_name=lambda e: f"r{e}", contribution_name=lambda t, i: f"P{t}.c{i}")
    assert text == "(r3 + P1.c2)"


def test_shared_constant_prints_per_context() -> None:
    # The same Const object prints as an integer outside and as a float inside an FP node.
    one = Const(0x3F800000, 32)
    expr = Apply(Op.ADD, (one, Apply(Op.FADD, (one, one), 32, FpFormat.F)), 32)
    assert to_text(expr) == "(0x3f800000 + fadd.f(1.0, 1.0))"


def test_const_text() -> None:
    assert const_text(1, BOOL) == "true"
    assert const_text(0, BOOL) == "false"
    assert const_text(65536, 32) == "0x10000"
