"""Concrete evaluation: every operator of the value IR, laziness and error reporting."""

from __future__ import annotations

import pytest

from pisa_mm.values.eval import (
    MalformedExprError,
    UnboundValueError,
    evaluate,
    postorder,
    to_signed,
)
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


def c(value: int, width: int = 32) -> Const:
    return Const(value & ((1 << width) - 1) if width else value, width)


def ev(op: Op, *args: Expr, width: int = 32, fmt: FpFormat | None = None) -> int:
    return evaluate(Apply(op, args, width, fmt), lambda e: 0)


def no_reads(event: int) -> int:
    raise KeyError(event)


@pytest.mark.parametrize(
    ("op", "a", "b", "want"),
    [
        (Op.ADD, 0xFFFFFFFF, 2, 1),
        (Op.SUB, 0, 1, 0xFFFFFFFF),
        (Op.MUL, 0x10000, 0x10000, 0),
        (Op.MUL, 0xFFFFFFFF, 0xFFFFFFFF, 1),
        (Op.AND, 0xF0F0, 0xFF00, 0xF000),
        (Op.OR, 0xF0F0, 0xFF00, 0xFFF0),
        (Op.XOR, 0xF0F0, 0xFF00, 0x0FF0),
        (Op.SHL, 1, 31, 0x80000000),
        (Op.SHL, 1, 32, 0),
        (Op.SHL, 1, 0xFFFFFFFF, 0),
        (Op.LSHR, 0x80000000, 31, 1),
        (Op.LSHR, 0x80000000, 32, 0),
        (Op.ASHR, 0x80000000, 31, 0xFFFFFFFF),
        (Op.ASHR, 0x80000000, 100, 0xFFFFFFFF),
        (Op.ASHR, 0x40000000, 100, 0),
        (Op.ASHR, 0x80000000, 4, 0xF8000000),
        (Op.SMIN, 0xFFFFFFFF, 1, 0xFFFFFFFF),
        (Op.SMAX, 0xFFFFFFFF, 1, 1),
        (Op.UMIN, 0xFFFFFFFF, 1, 1),
        (Op.UMAX, 0xFFFFFFFF, 1, 0xFFFFFFFF),
    ],
)
def test_binary_bitvector_ops(op: Op, a: int, b: int, want: int) -> None:
    assert ev(op, c(a), c(b)) == want


@pytest.mark.parametrize(
    ("old", "src", "inc", "dec"),
    [
        # PISA 8.2: incwrap = (old >= src) ? 0 : old + 1
        #           decwrap = (old == 0 || old > src) ? src : old - 1   (unsigned)
        (0, 5, 1, 5),
        (4, 5, 5, 3),
        (5, 5, 0, 4),
        (6, 5, 0, 5),
        (0, 0, 0, 0),
        (0xFFFFFFFF, 0xFFFFFFFF, 0, 0xFFFFFFFE),
        (0xFFFFFFFE, 0xFFFFFFFF, 0xFFFFFFFF, 0xFFFFFFFD),
        (0x80000000, 1, 0, 1),  # unsigned: 0x80000000 > 1
    ],
)
def test_incwrap_decwrap(old: int, src: int, inc: int, dec: int) -> None:
    assert ev(Op.INCWRAP, c(old), c(src)) == inc
    assert ev(Op.DECWRAP, c(old), c(src)) == dec


def test_unary_and_conversions() -> None:
    assert ev(Op.NEG, c(1)) == 0xFFFFFFFF
    assert ev(Op.NEG, c(0)) == 0
    assert ev(Op.NOT, c(0)) == 0xFFFFFFFF
    assert ev(Op.ZEXT, c(0xFF, 8), width=32) == 0xFF
    assert ev(Op.SEXT, c(0xFF, 8), width=32) == 0xFFFFFFFF
    assert ev(Op.SEXT, c(0x7F, 8), width=16) == 0x7F
    assert ev(Op.SEXT, c(5, 32), width=32) == 5
    assert ev(Op.TRUNC, c(0x12345678), width=16) == 0x5678
    assert ev(Op.TRUNC, c(0x12345678), width=32) == 0x12345678


def test_nary_operators() -> None:
    assert ev(Op.ADD, c(1), c(2), c(0xFFFFFFFF)) == 2
    assert ev(Op.ADD, c(7)) == 7
    assert ev(Op.AND, c(0b111), c(0b110), c(0b011)) == 0b010
    assert ev(Op.BAND, width=BOOL) == 1
    assert ev(Op.BOR, width=BOOL) == 0
    assert ev(Op.BAND, TRUE, TRUE, FALSE, width=BOOL) == 0
    assert ev(Op.BOR, FALSE, FALSE, TRUE, width=BOOL) == 1


@pytest.mark.parametrize(
    ("op", "want"),
    [
        (Op.EQ, 0),
        (Op.NE, 1),
        (Op.SLT, 1),  # -1 < 1 signed
        (Op.SLE, 1),
        (Op.SGT, 0),
        (Op.SGE, 0),
        (Op.ULT, 0),  # 0xffff > 1 unsigned
        (Op.ULE, 0),
        (Op.UGT, 1),
        (Op.UGE, 1),
    ],
)
def test_comparisons_signed_and_unsigned(op: Op, want: int) -> None:
    assert ev(op, c(0xFFFF, 16), c(1, 16), width=BOOL) == want


def test_comparisons_on_equal_values_and_booleans() -> None:
    for op, want in [(Op.SLE, 1), (Op.SLT, 0), (Op.UGE, 1), (Op.UGT, 0)]:
        assert ev(op, c(9), c(9), width=BOOL) == want
    assert ev(Op.EQ, TRUE, TRUE, width=BOOL) == 1
    assert ev(Op.NE, TRUE, FALSE, width=BOOL) == 1
    assert ev(Op.BNOT, TRUE, width=BOOL) == 0


def test_ite_and_reads() -> None:
    r1, r2 = ReadValue(1, 32), ReadValue(2, 32)
    cond = Apply(Op.EQ, (r1, c(0)), BOOL)
    expr = Apply(Op.ITE, (cond, Apply(Op.ADD, (r2, c(1)), 32), r2), 32)
    assert evaluate(expr, {1: 0, 2: 41}.__getitem__) == 42
    assert evaluate(expr, {1: 3, 2: 41}.__getitem__) == 41


def test_fp_operators_through_evaluate() -> None:
    f = FpFormat.F
    one, two = c(0x3F800000), c(0x40000000)
    assert ev(Op.FADD, one, one, fmt=f) == 0x40000000
    assert ev(Op.FSUB, one, two, fmt=f) == 0xBF800000
    assert ev(Op.FMIN, one, two, fmt=f) == 0x3F800000
    assert ev(Op.FMAX, c(0x7FC00000), two, fmt=f) == 0x40000000
    assert ev(Op.FEQ, c(0), c(0x80000000), width=BOOL, fmt=f) == 1
    assert ev(Op.FEQ, c(0x7FC00000), c(0x7FC00000), width=BOOL, fmt=f) == 0


def test_read_values_are_taken_modulo_their_width() -> None:
    assert evaluate(ReadValue(0, 16), lambda e: -1) == 0xFFFF
    assert evaluate(Contribution(1, 0, 8), lambda e: 0, lambda t, i: 0x1FF) == 0xFF


def test_unbound_read_is_reported() -> None:
    expr = Apply(Op.ADD, (ReadValue(7, 32), c(1)), 32)
    with pytest.raises(UnboundValueError, match="event 7 is not bound"):
        evaluate(expr, no_reads)
    with pytest.raises(UnboundValueError, match="event 7"):
        evaluate(expr, [0, 1].__getitem__)  # IndexError is a LookupError too


def test_unbound_contribution_is_reported() -> None:
    expr = Contribution(2, 1, 32)
    with pytest.raises(UnboundValueError, match=r"contribution 1 of thread P2.*no contribution"):
        evaluate(expr, no_reads)
    with pytest.raises(UnboundValueError, match="contribution 1 of thread P2 is not bound"):
        evaluate(expr, no_reads, lambda t, i: [][t])


def test_untaken_branches_need_no_binding() -> None:
    unbound = Apply(Op.EQ, (ReadValue(9, 32), c(0)), BOOL)
    assert evaluate(Apply(Op.ITE, (FALSE, ReadValue(9, 32), c(5)), 32), no_reads) == 5
    assert evaluate(Apply(Op.BAND, (FALSE, unbound), BOOL), no_reads) == 0
    assert evaluate(Apply(Op.BOR, (TRUE, unbound), BOOL), no_reads) == 1


def test_shared_subexpressions_are_evaluated_once() -> None:
    calls: list[int] = []

    def read(event: int) -> int:
        calls.append(event)
        return 1

    node: Expr = ReadValue(0, 32)
    for _ in range(200):  # a DAG whose tree unfolding has 2**200 leaves
        node = Apply(Op.ADD, (node, node), 32)
    assert evaluate(node, read) == (1 << 200) & 0xFFFFFFFF
    assert calls == [0]


@pytest.mark.parametrize(
    "expr",
    [
        Apply(Op.ADD, (Const(1, 16), Const(1, 32)), 32),
        Apply(Op.ADD, (), 32),
        Apply(Op.SUB, (Const(1, 32),), 32),
        Apply(Op.EQ, (Const(1, 16), Const(1, 32)), BOOL),
        Apply(Op.SLT, (TRUE, FALSE), BOOL),
        Apply(Op.EQ, (Const(1, 32), Const(1, 32)), 32),
        Apply(Op.ITE, (Const(1, 32), Const(1, 32), Const(1, 32)), 32),
        Apply(Op.BAND, (Const(1, 32),), BOOL),
        Apply(Op.BNOT, (TRUE, TRUE), BOOL),
        Apply(Op.ZEXT, (Const(1, 32),), 16),
        Apply(Op.TRUNC, (Const(1, 16),), 32),
        Apply(Op.SHL, (Const(1, 32), TRUE), 32),
        Apply(Op.FADD, (Const(1, 32), Const(1, 32)), 32),
        Apply(Op.ADD, (Const(1, 32), Const(1, 32)), 32, FpFormat.F),
        Apply(Op.FADD, (Const(1, 16), Const(1, 16)), 16, FpFormat.F),
        Apply(Op.FEQ, (Const(1, 32), Const(1, 32)), 32, FpFormat.F),
        Apply(Op.NEG, (Const(1, 32),), BOOL),
        Const(2, BOOL),
    ],
)
def test_malformed_expressions_are_rejected(expr: Expr) -> None:
    with pytest.raises(MalformedExprError):
        evaluate(expr, no_reads)


def test_to_signed() -> None:
    assert to_signed(0xFF, 8) == -1
    assert to_signed(0x7F, 8) == 127
    assert to_signed(0x80, 8) == -128


def test_deep_chains_need_no_recursion() -> None:
    node: Expr = ReadValue(0, 32)
    for i in range(20000):
        node = Apply(
            Op.ITE, (Apply(Op.ULT, (node, c(i)), BOOL), Apply(Op.ADD, (node, c(1)), 32), node), 32
        )
    assert evaluate(node, lambda e: 0) == 19999  # v < i holds from i = 1 on


def test_postorder_lists_operands_first_and_skips_known_nodes() -> None:
    v0 = ReadValue(0, 32)
    shared = Apply(Op.ADD, (v0, c(1)), 32)
    top = Apply(Op.MUL, (shared, v0, shared), 32)
    assert [id(e) for e in postorder(top)] == [id(e) for e in (v0, shared.args[1], shared, top)]
    assert [id(e) for e in postorder(top, {id(shared)})] == [id(v0), id(top)]
