"""Folding keeps every value and simplifies what it claims to; dependency queries."""

from __future__ import annotations

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st
from value_strategies import any_width, bindings, exprs

from pisa_mm.values.eval import evaluate
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
from pisa_mm.values.fold import contributions, fold, read_events, same_expr
from pisa_mm.values.text import to_text

x = ReadValue(1, 32)
y = ReadValue(2, 32)
b = Apply(Op.EQ, (x, Const(0, 32)), BOOL)


def c(value: int, width: int = 32) -> Const:
    return Const(value, width)


@settings(max_examples=200, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(data=st.data())
def test_folding_preserves_values(data: st.DataObject) -> None:
    width = data.draw(any_width())
    expr = data.draw(exprs(width, 4))
    binding = data.draw(bindings())
    folded = fold(expr)
    assert folded.width == expr.width
    assert evaluate(folded, binding.read, binding.contribution) == evaluate(
        expr, binding.read, binding.contribution
    )
    assert fold(folded) == folded  # idempotent: one pass reaches the fixed point


@settings(max_examples=200, deadline=None)
@given(data=st.data())
def test_closed_expressions_fold_to_constants(data: st.DataObject) -> None:
    width = data.draw(any_width())
    expr = data.draw(exprs(width, 3))
    if read_events(expr) or contributions(expr):
        return
    folded = fold(expr)
    assert isinstance(folded, Const)
    assert folded.value == evaluate(expr, lambda e: 0)


@pytest.mark.parametrize(
    ("expr", "want"),
    [
        (Apply(Op.ADD, (x, c(0)), 32), x),
        (Apply(Op.ADD, (c(1), x, c(2)), 32), Apply(Op.ADD, (x, c(3)), 32)),
        (Apply(Op.ADD, (Apply(Op.ADD, (x, c(1)), 32), c(0xFFFFFFFF)), 32), x),
        (Apply(Op.MUL, (x, c(0)), 32), c(0)),
        (Apply(Op.MUL, (x, c(1)), 32), x),
        (Apply(Op.AND, (x, c(0xFFFFFFFF)), 32), x),
        (Apply(Op.AND, (x, c(0)), 32), c(0)),
        (Apply(Op.AND, (x, x), 32), x),
        (Apply(Op.OR, (x, c(0xFFFFFFFF)), 32), c(0xFFFFFFFF)),
        (Apply(Op.XOR, (x, y, x), 32), y),
        (Apply(Op.XOR, (x, x), 32), c(0)),
        (Apply(Op.SUB, (x, x), 32), c(0)),
        (Apply(Op.SUB, (x, c(0)), 32), x),
        (Apply(Op.NOT, (Apply(Op.NOT, (x,), 32),), 32), x),
        (Apply(Op.SHL, (x, c(32)), 32), c(0)),
        (Apply(Op.LSHR, (x, c(0)), 32), x),
        (Apply(Op.ZEXT, (x,), 32), x),
        (Apply(Op.TRUNC, (Apply(Op.ZEXT, (x,), 64),), 32), x),
        (Apply(Op.TRUNC, (Apply(Op.SEXT, (x,), 64),), 16), Apply(Op.TRUNC, (x,), 16)),
        (Apply(Op.UMAX, (x, x), 32), x),
        (Apply(Op.EQ, (x, x), BOOL), TRUE),
        (Apply(Op.ULT, (x, x), BOOL), FALSE),
        (Apply(Op.ULT, (x, c(0)), BOOL), FALSE),
        (Apply(Op.UGE, (x, c(0)), BOOL), TRUE),
        (Apply(Op.ITE, (TRUE, x, y), 32), x),
        (Apply(Op.ITE, (b, x, x), 32), x),
        (Apply(Op.ITE, (b, TRUE, FALSE), BOOL), b),
        (Apply(Op.ITE, (b, FALSE, TRUE), BOOL), Apply(Op.NE, (x, c(0)), BOOL)),
        (Apply(Op.BAND, (TRUE, b, TRUE), BOOL), b),
        (Apply(Op.BAND, (b, FALSE), BOOL), FALSE),
        (Apply(Op.BAND, (b, Apply(Op.BAND, (b, TRUE), BOOL)), BOOL), b),
        (Apply(Op.BOR, (FALSE, FALSE), BOOL), FALSE),
        (Apply(Op.BNOT, (Apply(Op.BNOT, (b,), BOOL),), BOOL), b),
        (Apply(Op.BNOT, (Apply(Op.ULT, (x, y), BOOL),), BOOL), Apply(Op.UGE, (x, y), BOOL)),
        (Apply(Op.EQ, (b, TRUE), BOOL), b),
        (
            Apply(Op.EQ, (Apply(Op.ITE, (b, c(1), c(2)), 32), c(2)), BOOL),
            Apply(Op.NE, (x, c(0)), BOOL),
        ),
        (Apply(Op.EQ, (Apply(Op.ITE, (b, c(1), c(2)), 32), c(1)), BOOL), b),
        (Apply(Op.NE, (Apply(Op.ITE, (b, c(1), c(2)), 32), c(3)), BOOL), TRUE),
        (Apply(Op.FADD, (c(0x3F800000), c(0x3F800000)), 32, FpFormat.F), c(0x40000000)),
    ],
)
def test_rewrites(expr: Expr, want: Expr) -> None:
    assert fold(expr) == want


def test_fp_identities_are_not_applied() -> None:
    # x == x is false for NaN, and x + 0.0 changes -0.0: FP nodes fold only when constant.
    feq = Apply(Op.FEQ, (x, x), BOOL, FpFormat.F)
    fadd = Apply(Op.FADD, (x, c(0)), 32, FpFormat.F)
    assert fold(feq) == feq
    assert fold(fadd) == fadd


def test_unchanged_nodes_are_returned_as_is() -> None:
    expr = Apply(Op.ADD, (x, y), 32)
    assert fold(expr) is expr
    assert fold(x) is x


def test_read_events_and_contributions() -> None:
    expr = Apply(
        Op.ITE,
        (b, Apply(Op.MUL, (y, c(0)), 32), Contribution(3, 1, 32)),
        32,
    )
    assert read_events(expr) == {1, 2}  # syntactic: y * 0 still mentions y
    assert contributions(expr) == {(3, 1)}
    assert read_events(fold(expr)) == {1}


def test_read_events_of_deep_chains() -> None:
    node: Expr = ReadValue(0, 32)
    for i in range(1, 5000):
        node = Apply(Op.ADD, (node, ReadValue(i % 7, 32)), 32)
    assert read_events(node) == set(range(7))


def test_deep_chains_fold_and_print_without_recursion() -> None:
    node: Expr = ReadValue(0, 32)
    for _ in range(20000):
        node = Apply(Op.ADD, (node, c(1)), 32)
    assert fold(node) == Apply(Op.ADD, (ReadValue(0, 32), c(20000)), 32)
    assert to_text(node).startswith("(" * 20000 + "v0 + 1)")


def test_equal_deep_chains_built_apart_are_recognised() -> None:
    def chain() -> Expr:
        node: Expr = ReadValue(0, 32)
        for _ in range(20000):
            node = Apply(Op.ADD, (node, y), 32)
        return node

    assert fold(Apply(Op.SUB, (chain(), chain()), 32)) == c(0)
    assert fold(Apply(Op.EQ, (chain(), chain()), BOOL)) == TRUE
    assert not same_expr(chain(), Apply(Op.ADD, (chain(), c(0)), 32))
