"""Readable text for value expressions, e.g. `(v3 + 1)` or `fadd.f(v2, 1.5)`."""

from __future__ import annotations

from collections.abc import Callable
from typing import assert_never

from pisa_mm.values.eval import postorder
from pisa_mm.values.expr import BOOL, Apply, Const, Contribution, Expr, FpFormat, Op, ReadValue
from pisa_mm.values.fp import bits_to_float_text

__all__ = ["ELIDED", "const_text", "elide", "to_text"]

# What stands for the middle of an elided text (`to_text`'s `limit`).
ELIDED = " \N{HORIZONTAL ELLIPSIS} "

# Infix operators print fully parenthesised, so no precedence table is needed to read them.
_INFIX = {
    Op.ADD: "+",
    Op.SUB: "-",
    Op.MUL: "*",
    Op.AND: "&",
    Op.OR: "|",
    Op.XOR: "^",
    Op.SHL: "<<",
    Op.LSHR: ">>",
    Op.ASHR: ">>s",
    Op.EQ: "==",
    Op.NE: "!=",
    Op.SLT: "<s",
    Op.SLE: "<=s",
    Op.SGT: ">s",
    Op.SGE: ">=s",
    Op.ULT: "<u",
    Op.ULE: "<=u",
    Op.UGT: ">u",
    Op.UGE: ">=u",
    Op.BAND: "&&",
    Op.BOR: "||",
}
_PREFIX = {Op.NEG: "-", Op.NOT: "~", Op.BNOT: "!"}
_CALL = {Op.SMIN, Op.SMAX, Op.UMIN, Op.UMAX, Op.INCWRAP, Op.DECWRAP}
_CONVERSIONS = {Op.ZEXT, Op.SEXT, Op.TRUNC}

# Up to this bound constants print in decimal; larger ones in hex, where bit patterns such
# as 0xffffffff (-1 in 32 bits) are easier to recognise.
_DECIMAL_LIMIT = 1 << 16


def const_text(value: int, width: int) -> str:
    """`true`/`false` for BOOL; decimal below 65536, lower-case hex above."""
    if width == BOOL:
        return "true" if value else "false"
    return str(value) if value < _DECIMAL_LIMIT else f"{value:#x}"


def _default_read(event: int) -> str:
    return f"v{event}"


def _default_contribution(thread: int, index: int) -> str:
    return f"contrib(P{thread}, {index})"


def elide(text: str, limit: int) -> str:
    """`text`, or its first and last `limit // 2` characters around ELIDED."""
    if len(text) <= limit:
        return text
    half = limit // 2
    return text[:half] + ELIDED + text[-half:]


def to_text(
    expr: Expr,
    read_name: Callable[[int], str] | None = None,
    contribution_name: Callable[[int, int], str] | None = None,
    *,
    limit: int | None = None,
    memo: dict[int, tuple[Expr, str]] | None = None,
) -> str:
    """Readable text of `expr`. A ReadValue prints as `v<event>` unless `read_name` names it
    (e.g. after the register it was loaded into); constant operands of an FP operator print as
    decimal floats in its format.

    With `limit`, the text of every sub-expression longer than `limit` characters is elided
    in its middle (`elide`): a chain of dependent operations can give a value whose text is
    quadratic or exponential in the program (`iadd %r2, %r1, %r1` repeated doubles it) while
    its DAG stays small. `memo` (id -> node and its text) shares the texts of nodes between
    calls made with the same names and limit; it holds the nodes, so their ids stay theirs."""
    name_read = read_name or _default_read
    name_contribution = contribution_name or _default_contribution
    shared: dict[int, tuple[Expr, str]] = {} if memo is None else memo
    texts = _Texts(shared)

    def operand(e: Expr, fmt: FpFormat | None) -> str:
        if fmt is not None and isinstance(e, Const):
            return bits_to_float_text(e.value, fmt)
        return texts[id(e)]

    def apply_text(e: Apply) -> str:
        op, args = e.op, e.args
        if e.fmt is not None:
            inner = ", ".join(operand(a, e.fmt) for a in args)
            return f"{op.value}.{e.fmt.value[0]}({inner})"
        parts = [texts[id(a)] for a in args]
        if op in _INFIX:
            if not parts:
                return const_text(int(op is Op.BAND), BOOL)
            if len(parts) == 1:
                return parts[0]
            return "(" + f" {_INFIX[op]} ".join(parts) + ")"
        if op in _PREFIX:
            return f"{_PREFIX[op]}{parts[0]}"
        if op is Op.ITE:
            return f"({parts[0]} ? {parts[1]} : {parts[2]})"
        if op in _CONVERSIONS:
            return f"{op.value}{e.width}({parts[0]})"
        if op in _CALL:
            return f"{op.value}({', '.join(parts)})"
        raise ValueError(f"no text for operator {op.value}")

    for e in postorder(expr, shared):
        match e:
            case Const(value=value, width=width):
                text = const_text(value, width)
            case ReadValue(event=event):
                text = name_read(event)
            case Contribution(thread=thread, index=index):
                text = name_contribution(thread, index)
            case Apply():
                text = apply_text(e)
            case _:
                assert_never(e)
        shared[id(e)] = (e, text if limit is None else elide(text, limit))
    return texts[id(expr)]


class _Texts:
    """The texts of a memo (id -> node and its text), read by id."""

    __slots__ = ("memo",)

    def __init__(self, memo: dict[int, tuple[Expr, str]]) -> None:
        self.memo = memo

    def __getitem__(self, key: int) -> str:
        return self.memo[key][1]
