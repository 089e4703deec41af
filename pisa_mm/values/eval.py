"""Concrete evaluation of value expressions to unsigned bit patterns (0/1 for booleans)."""

from __future__ import annotations

from collections.abc import Callable, Container

from pisa_mm.hints import assert_never
from pisa_mm.values import fp
from pisa_mm.values.expr import BOOL, Apply, Const, Contribution, Expr, FpFormat, Op, ReadValue

__all__ = [
    "ASSOCIATIVE",
    "BOOL_OPS",
    "COMPARISONS",
    "FP_OPS",
    "MalformedExprError",
    "UnboundValueError",
    "apply_op",
    "check_apply",
    "evaluate",
    "map_leaves",
    "postorder",
    "to_signed",
]


class UnboundValueError(LookupError):
    """An expression mentions a read value or contribution that the caller did not bind."""


class MalformedExprError(ValueError):
    """An `Apply` node with the wrong arity or operand widths (a bug in whoever built it)."""


# Operators that take one or more operands of the node's width and fold left.
ASSOCIATIVE = frozenset({Op.ADD, Op.MUL, Op.AND, Op.OR, Op.XOR})
COMPARISONS = frozenset(
    {Op.EQ, Op.NE, Op.SLT, Op.SLE, Op.SGT, Op.SGE, Op.ULT, Op.ULE, Op.UGT, Op.UGE}
)
BOOL_OPS = frozenset({Op.BAND, Op.BOR, Op.BNOT})
FP_OPS = frozenset({Op.FADD, Op.FSUB, Op.FMIN, Op.FMAX, Op.FEQ})
_BINARY_SAME = frozenset({Op.SUB, Op.SMIN, Op.SMAX, Op.UMIN, Op.UMAX, Op.INCWRAP, Op.DECWRAP})
_SHIFTS = frozenset({Op.SHL, Op.LSHR, Op.ASHR})


def _mask(width: int) -> int:
    return (1 << width) - 1


def to_signed(value: int, width: int) -> int:
    """Two's-complement reading of an unsigned `width`-bit pattern."""
    return value - (1 << width) if value >> (width - 1) & 1 else value


def postorder(expr: Expr, known: Container[int] = frozenset()) -> list[Expr]:
    """Every node of `expr` once (by identity), operands before the nodes that use them.

    Nodes whose id is in `known` (e.g. a cache of earlier results) are left out together
    with everything below them. Iterative, so that deep chains of values need no recursion.
    """
    seen: set[int] = set()
    out: list[Expr] = []
    stack: list[tuple[Expr, bool]] = [(expr, False)]
    while stack:
        e, expanded = stack.pop()
        if expanded:
            out.append(e)
            continue
        if id(e) in seen or id(e) in known:
            continue
        seen.add(id(e))
        stack.append((e, True))
        if isinstance(e, Apply):
            stack.extend((a, False) for a in reversed(e.args) if id(a) not in seen)
    return out


def map_leaves(expr: Expr, leaf: Callable[[Expr], Expr]) -> Expr:
    """`expr` with every non-`Apply` node `e` replaced by `leaf(e)`, sharing kept.

    Iterative (over `postorder`), so that deep chains of values need no recursion.
    """
    memo: dict[int, Expr] = {}
    for e in postorder(expr):
        if isinstance(e, Apply):
            args = tuple(memo[id(a)] for a in e.args)
            same = all(x is y for x, y in zip(args, e.args, strict=True))
            memo[id(e)] = e if same else Apply(e.op, args, e.width, e.fmt)
        else:
            memo[id(e)] = leaf(e)
    return memo[id(expr)]


def _malformed(node: Apply, why: str) -> MalformedExprError:
    return MalformedExprError(f"malformed {node.op.value} node (width {node.width}): {why}")


def check_apply(node: Apply) -> None:
    """Raise `MalformedExprError` unless `node` has the arity and widths its operator needs.

    BAND and BOR take any number of BOOL operands (none: TRUE resp. FALSE); ADD, MUL, AND,
    OR and XOR take one or more; a shift amount may have any bit-vector width; EQ and NE
    also compare two BOOLs; ZEXT/SEXT widen or keep, TRUNC narrows or keeps.
    """
    op, args, width = node.op, node.args, node.width
    widths = [a.width for a in args]
    if (node.fmt is not None) != (op in FP_OPS):
        raise _malformed(node, "fmt must be set exactly on FADD, FSUB, FMIN, FMAX and FEQ")
    if op in BOOL_OPS:
        if width != BOOL or any(w != BOOL for w in widths):
            raise _malformed(node, "boolean operators take and give BOOL")
        if op is Op.BNOT and len(args) != 1:
            raise _malformed(node, "BNOT takes one operand")
        return
    if op in COMPARISONS:
        if width != BOOL or len(args) != 2 or widths[0] != widths[1]:
            raise _malformed(node, "a comparison takes two operands of one width and gives BOOL")
        if widths[0] == BOOL and op not in (Op.EQ, Op.NE):
            raise _malformed(node, "only EQ and NE compare BOOL operands")
        return
    if op is Op.ITE:
        if len(args) != 3 or widths[0] != BOOL or widths[1] != width or widths[2] != width:
            raise _malformed(node, "ITE takes (BOOL, then, else) with branches of its width")
        return
    if op in FP_OPS:
        assert node.fmt is not None
        want = BOOL if op is Op.FEQ else node.fmt.width
        if width != want or len(args) != 2 or any(w != node.fmt.width for w in widths):
            raise _malformed(node, f"needs two {node.fmt.width}-bit operands")
        return
    if width == BOOL:
        raise _malformed(node, "this operator gives a bit-vector, not BOOL")
    if op in ASSOCIATIVE:
        if not args or any(w != width for w in widths):
            raise _malformed(node, "needs one or more operands of the node's width")
    elif op in (Op.NEG, Op.NOT):
        if widths != [width]:
            raise _malformed(node, "takes one operand of the node's width")
    elif op in _BINARY_SAME:
        if widths != [width, width]:
            raise _malformed(node, "takes two operands of the node's width")
    elif op in _SHIFTS:
        if len(args) != 2 or widths[0] != width or widths[1] == BOOL:
            raise _malformed(node, "takes a value of the node's width and a bit-vector amount")
    elif op in (Op.ZEXT, Op.SEXT):
        if len(args) != 1 or not BOOL < widths[0] <= width:
            raise _malformed(node, "extends one bit-vector to a width at least its own")
    elif op is Op.TRUNC:
        if len(args) != 1 or widths[0] < width:
            raise _malformed(node, "truncates one bit-vector to a width at most its own")
    else:
        raise _malformed(node, "unknown operator")


def apply_op(op: Op, args: list[int], width: int, arg_width: int, fmt: FpFormat | None) -> int:
    """The value of `op` on already evaluated operands (unsigned patterns; BOOL as 0/1).

    `arg_width` is the width of the first operand, which comparisons, extensions and TRUNC
    need. The caller has checked the node (`check_apply`).
    """
    m = _mask(width) if width != BOOL else 1
    match op:
        case Op.ADD:
            return sum(args) & m
        case Op.SUB:
            return (args[0] - args[1]) & m
        case Op.MUL:
            acc = 1
            for a in args:
                acc = (acc * a) & m
            return acc
        case Op.NEG:
            return -args[0] & m
        case Op.AND:
            acc = m
            for a in args:
                acc &= a
            return acc
        case Op.OR:
            acc = 0
            for a in args:
                acc |= a
            return acc
        case Op.XOR:
            acc = 0
            for a in args:
                acc ^= a
            return acc
        case Op.NOT:
            return ~args[0] & m
        case Op.SHL:
            return (args[0] << args[1]) & m if args[1] < width else 0
        case Op.LSHR:
            return args[0] >> args[1] if args[1] < width else 0
        case Op.ASHR:
            shift = min(args[1], width - 1)  # past width-1 every bit is the sign
            return (to_signed(args[0], width) >> shift) & m
        case Op.SMIN:
            return min(args, key=lambda v: to_signed(v, width))
        case Op.SMAX:
            return max(args, key=lambda v: to_signed(v, width))
        case Op.UMIN:
            return min(args)
        case Op.UMAX:
            return max(args)
        case Op.INCWRAP:
            old, src = args
            return 0 if old >= src else (old + 1) & m
        case Op.DECWRAP:
            old, src = args
            return src if old == 0 or old > src else old - 1
        case Op.ZEXT:
            return args[0]
        case Op.SEXT:
            return to_signed(args[0], arg_width) & m
        case Op.TRUNC:
            return args[0] & m
        case Op.ITE:
            return args[1] if args[0] else args[2]
        case Op.EQ:
            return int(args[0] == args[1])
        case Op.NE:
            return int(args[0] != args[1])
        case Op.SLT:
            return int(to_signed(args[0], arg_width) < to_signed(args[1], arg_width))
        case Op.SLE:
            return int(to_signed(args[0], arg_width) <= to_signed(args[1], arg_width))
        case Op.SGT:
            return int(to_signed(args[0], arg_width) > to_signed(args[1], arg_width))
        case Op.SGE:
            return int(to_signed(args[0], arg_width) >= to_signed(args[1], arg_width))
        case Op.ULT:
            return int(args[0] < args[1])
        case Op.ULE:
            return int(args[0] <= args[1])
        case Op.UGT:
            return int(args[0] > args[1])
        case Op.UGE:
            return int(args[0] >= args[1])
        case Op.BAND:
            return int(all(args))
        case Op.BOR:
            return int(any(args))
        case Op.BNOT:
            return 1 - args[0]
        case Op.FADD | Op.FSUB | Op.FMIN | Op.FMAX | Op.FEQ:
            assert fmt is not None
            return _apply_fp(op, args[0], args[1], fmt)
        case _:
            assert_never(op)


def _apply_fp(op: Op, a: int, b: int, fmt: FpFormat) -> int:
    if op is Op.FADD:
        return fp.fadd(a, b, fmt)
    if op is Op.FSUB:
        return fp.fsub(a, b, fmt)
    if op is Op.FMIN:
        return fp.fmin(a, b, fmt)
    if op is Op.FMAX:
        return fp.fmax(a, b, fmt)
    return int(fp.feq(a, b, fmt))


def evaluate(
    expr: Expr,
    read_value: Callable[[int], int],
    contribution: Callable[[int, int], int] | None = None,
) -> int:
    """The value of `expr`: an unsigned pattern of its width, or 0/1 for a BOOL expression.

    `read_value(event)` gives the value read by a read event and `contribution(thread, index)`
    a collective contribution; values they return are taken modulo 2**width. A lookup that
    raises LookupError (or a Contribution with no `contribution` callback) raises
    `UnboundValueError` naming the value. ITE evaluates only the branch taken, and BAND/BOR
    stop at the first deciding operand, so values on untaken branches need no binding.
    """
    # The common small cases (a constant, a read value, an operator over those) first,
    # without the stack; same checks, same order of lookups, same errors.
    if isinstance(expr, Const | ReadValue):
        return _leaf(expr, read_value)
    if (
        isinstance(expr, Apply)
        and expr.op not in _LAZY
        and all(isinstance(a, Const | ReadValue) for a in expr.args)
    ):
        check_apply(expr)
        args = [_leaf(a, read_value) for a in expr.args if isinstance(a, Const | ReadValue)]
        arg_width = expr.args[0].width if expr.args else expr.width
        return apply_op(expr.op, args, expr.width, arg_width, expr.fmt)
    memo: dict[int, int] = {}

    def contrib(node: Contribution) -> int:
        if contribution is None:
            raise UnboundValueError(
                f"contribution {node.index} of thread P{node.thread} is not bound "
                "(no contribution callback given)"
            )
        try:
            value = contribution(node.thread, node.index)
        except LookupError as exc:
            raise UnboundValueError(
                f"contribution {node.index} of thread P{node.thread} is not bound"
            ) from exc
        return value & _mask(node.width)

    # An explicit stack instead of recursion: value chains may be thousands of nodes deep.
    # A node stays on the stack until the operands it needs are in `memo`.
    stack: list[Expr] = [expr]
    checked: set[int] = set()
    while stack:
        e = stack[-1]
        key = id(e)
        if key in memo:
            stack.pop()
            continue
        match e:
            case Const() | ReadValue():
                memo[key] = _leaf(e, read_value)
            case Contribution():
                memo[key] = contrib(e)
            case Apply():
                if key not in checked:  # once: a node is revisited after each operand
                    check_apply(e)
                    checked.add(key)
                pending = _next_needed(e, memo)
                if pending is not None:
                    stack.append(pending)
                    continue
                memo[key] = _finish(e, memo)
            case _:
                assert_never(e)
        stack.pop()
    return memo[id(expr)]


# Operators that evaluate only some operands (`_next_needed`).
_LAZY = frozenset({Op.ITE, Op.BAND, Op.BOR})


def _leaf(e: Const | ReadValue, read_value: Callable[[int], int]) -> int:
    """A constant's or a read value's value, as `evaluate` computes it."""
    if isinstance(e, Const):
        if e.width == BOOL and e.value not in (0, 1):
            raise MalformedExprError(f"BOOL constant {e.value} is neither 0 nor 1")
        return e.value if e.width == BOOL else e.value & _mask(e.width)
    try:
        value = read_value(e.event)
    except LookupError as exc:
        raise UnboundValueError(f"the value read by event {e.event} is not bound") from exc
    return value & _mask(e.width)


def _next_needed(e: Apply, memo: dict[int, int]) -> Expr | None:
    """The next operand `e` needs that is not evaluated yet, or None when `e` can be computed.

    ITE needs its condition and then only the branch taken; BAND/BOR need their operands in
    order up to the first deciding one.
    """
    op, args = e.op, e.args
    if op is Op.ITE:
        cond = memo.get(id(args[0]))
        if cond is None:
            return args[0]
        branch = args[1] if cond else args[2]
        return None if id(branch) in memo else branch
    if op is Op.BAND or op is Op.BOR:
        deciding = 0 if op is Op.BAND else 1
        for a in args:
            value = memo.get(id(a))
            if value is None:
                return a
            if value == deciding:
                return None
        return None
    for a in args:
        if id(a) not in memo:
            return a
    return None


def _finish(e: Apply, memo: dict[int, int]) -> int:
    """The value of `e` once `_next_needed` reports nothing missing."""
    op, args = e.op, e.args
    if op is Op.ITE:
        return memo[id(args[1])] if memo[id(args[0])] else memo[id(args[2])]
    if op is Op.BAND or op is Op.BOR:
        deciding = 0 if op is Op.BAND else 1
        if any(memo.get(id(a)) == deciding for a in args):
            return deciding
        return 1 - deciding
    arg_width = args[0].width if args else e.width
    return apply_op(op, [memo[id(a)] for a in args], e.width, arg_width, e.fmt)
