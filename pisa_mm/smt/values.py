"""Z3 encoding of value expressions: bit-vectors per width, Bool for BOOL, IEEE via FP sorts."""

from __future__ import annotations

from collections.abc import Callable
from typing import Any, assert_never

import z3

from pisa_mm.values import fp
from pisa_mm.values.eval import ASSOCIATIVE, check_apply, postorder
from pisa_mm.values.expr import BOOL, Apply, Const, Contribution, Expr, FpFormat, Op, ReadValue

__all__ = ["ValueEncoder", "encode", "fp_sort"]

ReadFn = Callable[[int], z3.BitVecRef]
ContributionFn = Callable[[int, int], z3.BitVecRef]


def fp_sort(fmt: FpFormat) -> Any:
    """The z3 FP sort of a format (z3 counts the hidden bit in the significand, as we do)."""
    return z3.FPSort(fmt.ebits, fmt.sbits)


class ValueEncoder:
    """Encodes Exprs against fixed read/contribution callbacks, caching per Expr object.

    The cache is keyed by object identity (hashing a deep frozen tree at every node would be
    quadratic) and keeps each Expr alive so that its id is never reused while cached.
    """

    def __init__(self, read_value: ReadFn, contribution: ContributionFn | None = None) -> None:
        self._read_value = read_value
        self._contribution = contribution
        self._cache: dict[int, tuple[Expr, Any]] = {}

    def encode(self, expr: Expr) -> Any:
        """A z3 BitVecRef of expr.width bits, or a BoolRef when expr.width is BOOL."""
        hit = self._cache.get(id(expr))
        if hit is not None:
            return hit[1]
        # Operands first, without recursion: value chains may be thousands of nodes deep.
        for node in postorder(expr, self._cache):
            self._cache[id(node)] = (node, self._node(node))
        return self._cache[id(expr)][1]

    def _node(self, expr: Expr) -> Any:
        match expr:
            case Const(value=value, width=width):
                if width == BOOL:
                    if value not in (0, 1):
                        raise ValueError(f"BOOL constant {value} is neither 0 nor 1")
                    return z3.BoolVal(value == 1)
                return z3.BitVecVal(value & ((1 << width) - 1), width)
            case ReadValue(event=event, width=width):
                return self._checked(self._read_value(event), width, f"read event {event}")
            case Contribution(thread=thread, index=index, width=width):
                if self._contribution is None:
                    raise LookupError(
                        f"contribution {index} of thread P{thread} met with no callback"
                    )
                return self._checked(
                    self._contribution(thread, index),
                    width,
                    f"contribution {index} of thread P{thread}",
                )
            case Apply():
                check_apply(expr)
                return self._apply(expr)
            case _:
                assert_never(expr)

    @staticmethod
    def _checked(value: Any, width: int, what: str) -> Any:
        if not z3.is_bv(value) or value.size() != width:
            raise ValueError(f"the z3 term for {what} is not a {width}-bit bit-vector: {value}")
        return value

    def _apply(self, node: Apply) -> Any:
        op, w = node.op, node.width
        args = [self._cache[id(a)][1] for a in node.args]
        if op in ASSOCIATIVE:
            acc = args[0]
            for a in args[1:]:
                acc = _ASSOC[op](acc, a)
            return acc
        match op:
            case Op.ADD | Op.MUL | Op.AND | Op.OR | Op.XOR:
                raise AssertionError("handled above")
            case Op.SUB:
                return args[0] - args[1]
            case Op.NEG:
                return -args[0]
            case Op.NOT:
                return ~args[0]
            case Op.SHL | Op.LSHR | Op.ASHR:
                return _shift(op, args[0], args[1], w, node.args[1].width)
            case Op.SMIN:
                return z3.If(args[0] < args[1], args[0], args[1])
            case Op.SMAX:
                return z3.If(args[0] > args[1], args[0], args[1])
            case Op.UMIN:
                return z3.If(z3.ULT(args[0], args[1]), args[0], args[1])
            case Op.UMAX:
                return z3.If(z3.UGT(args[0], args[1]), args[0], args[1])
            case Op.INCWRAP:
                old, src = args
                return z3.If(z3.UGE(old, src), z3.BitVecVal(0, w), old + 1)
            case Op.DECWRAP:
                old, src = args
                return z3.If(z3.Or(old == 0, z3.UGT(old, src)), src, old - 1)
            case Op.ZEXT:
                extra = w - node.args[0].width
                return z3.ZeroExt(extra, args[0]) if extra else args[0]
            case Op.SEXT:
                extra = w - node.args[0].width
                return z3.SignExt(extra, args[0]) if extra else args[0]
            case Op.TRUNC:
                return z3.Extract(w - 1, 0, args[0]) if node.args[0].width != w else args[0]
            case Op.ITE:
                return z3.If(args[0], args[1], args[2])
            case Op.EQ:
                return args[0] == args[1]
            case Op.NE:
                return args[0] != args[1]
            case Op.SLT:
                return args[0] < args[1]
            case Op.SLE:
                return args[0] <= args[1]
            case Op.SGT:
                return args[0] > args[1]
            case Op.SGE:
                return args[0] >= args[1]
            case Op.ULT:
                return z3.ULT(args[0], args[1])
            case Op.ULE:
                return z3.ULE(args[0], args[1])
            case Op.UGT:
                return z3.UGT(args[0], args[1])
            case Op.UGE:
                return z3.UGE(args[0], args[1])
            case Op.BAND:
                return z3.And(*args) if args else z3.BoolVal(True)
            case Op.BOR:
                return z3.Or(*args) if args else z3.BoolVal(False)
            case Op.BNOT:
                return z3.Not(args[0])
            case Op.FADD | Op.FSUB | Op.FMIN | Op.FMAX | Op.FEQ:
                assert node.fmt is not None
                return _fp(op, args[0], args[1], node.fmt)
            case _:
                assert_never(op)


_ASSOC: dict[Op, Callable[[Any, Any], Any]] = {
    Op.ADD: lambda a, b: a + b,
    Op.MUL: lambda a, b: a * b,
    Op.AND: lambda a, b: a & b,
    Op.OR: lambda a, b: a | b,
    Op.XOR: lambda a, b: a ^ b,
}


def _shift(op: Op, value: Any, amount: Any, width: int, amount_width: int) -> Any:
    """SMT-LIB shifts already give 0 (or sign fill) for amounts >= width; match the widths."""
    if amount_width < width:
        amount = z3.ZeroExt(width - amount_width, amount)
    elif amount_width > width:
        low = z3.Extract(width - 1, 0, amount)
        in_range = z3.ULT(amount, z3.BitVecVal(width, amount_width))
        big = _shift(op, value, z3.BitVecVal(width, width), width, width)
        return z3.If(in_range, _shift(op, value, low, width, width), big)
    if op is Op.SHL:
        return value << amount
    if op is Op.LSHR:
        return z3.LShR(value, amount)
    return value >> amount  # z3's >> on bit-vectors is the arithmetic shift


def _fp(op: Op, a_bits: Any, b_bits: Any, fmt: FpFormat) -> Any:
    """FP ops on bit patterns; a NaN result is the canonical quiet NaN, as in values.fp."""
    sort = fp_sort(fmt)
    a = z3.fpBVToFP(a_bits, sort)
    b = z3.fpBVToFP(b_bits, sort)
    nan_bits = z3.BitVecVal(fp.canonical_nan(fmt), fmt.width)
    if op is Op.FEQ:
        return z3.fpEQ(a, b)
    if op in (Op.FADD, Op.FSUB):
        rne = z3.RNE()
        r = z3.fpAdd(rne, a, b) if op is Op.FADD else z3.fpSub(rne, a, b)
        # fpToIEEEBV is unspecified on NaN, hence the guard.
        return z3.If(z3.fpIsNaN(r), nan_bits, z3.fpToIEEEBV(r))
    # minNum/maxNum built by hand: z3's fpMin/fpMax leave min(-0, +0) unspecified. The
    # result is one of the operands' own bit patterns, so no FP-to-bits conversion is needed.
    sign_a = z3.Extract(fmt.width - 1, fmt.width - 1, a_bits) == 1
    if op is Op.FMIN:
        strictly_better = z3.fpLT(a, b)
        other_better = z3.fpLT(b, a)
        tie_a = sign_a  # equal values: prefer -0 (ties of nonzero values have equal bits)
    else:
        strictly_better = z3.fpGT(a, b)
        other_better = z3.fpGT(b, a)
        tie_a = z3.Not(sign_a)
    a_nan, b_nan = z3.fpIsNaN(a), z3.fpIsNaN(b)
    ordered = z3.If(
        strictly_better, a_bits, z3.If(other_better, b_bits, z3.If(tie_a, a_bits, b_bits))
    )
    return z3.If(
        z3.And(a_nan, b_nan),
        nan_bits,
        z3.If(a_nan, b_bits, z3.If(b_nan, a_bits, ordered)),
    )


def encode(
    expr: Expr,
    read_value: ReadFn,
    contribution: ContributionFn | None = None,
) -> Any:
    """The z3 term of `expr` (BitVecRef, or BoolRef for BOOL); see `ValueEncoder` to share a
    cache across many expressions."""
    return ValueEncoder(read_value, contribution).encode(expr)
