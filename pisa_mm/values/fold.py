"""Constant folding and simplification of value expressions, and the values they mention."""

from __future__ import annotations

from pisa_mm.values.eval import apply_op, check_apply, postorder
from pisa_mm.values.expr import (
    BOOL,
    FALSE,
    TRUE,
    Apply,
    Const,
    Contribution,
    Expr,
    Op,
    ReadValue,
)

__all__ = ["contributions", "fold", "read_events", "same_expr"]

# Every rewrite here holds for all values of the unknowns (checked by a Hypothesis test that
# evaluates before and after), so folding never changes a result. It may drop syntactic
# dependencies (`v1 * 0` becomes `0`): compute dependency relations before folding.

_REFLEXIVE_TRUE = frozenset({Op.EQ, Op.SLE, Op.SGE, Op.ULE, Op.UGE})
_REFLEXIVE_FALSE = frozenset({Op.NE, Op.SLT, Op.SGT, Op.ULT, Op.UGT})
_MAX_FLAT = 8  # operands of a flattened node
_FLATTEN = frozenset({Op.ADD, Op.MUL, Op.AND, Op.OR, Op.XOR, Op.BAND, Op.BOR})
_NEGATED = {
    Op.EQ: Op.NE,
    Op.NE: Op.EQ,
    Op.SLT: Op.SGE,
    Op.SGE: Op.SLT,
    Op.SLE: Op.SGT,
    Op.SGT: Op.SLE,
    Op.ULT: Op.UGE,
    Op.UGE: Op.ULT,
    Op.ULE: Op.UGT,
    Op.UGT: Op.ULE,
}


def _ones(width: int) -> int:
    return (1 << width) - 1


def fold(expr: Expr) -> Expr:
    """A simpler expression with the same value for every binding of reads and contributions.

    Operators whose operands are all constants are evaluated; identities (`x + 0`, `x & 0`,
    `ite(true, a, b)`, `x == x` on bit-vectors, ...) are applied; nested ADD/MUL/AND/OR/XOR
    and BAND/BOR of one width are flattened (up to 8 operands) and their constants combined.
    Sharing between subexpressions is kept. Malformed nodes raise `MalformedExprError`.
    """
    memo: dict[int, Expr] = {}
    for e in postorder(expr):
        if isinstance(e, Apply):
            check_apply(e)
            args = tuple(memo[id(a)] for a in e.args)
            same = all(x is y for x, y in zip(args, e.args, strict=True))
            memo[id(e)] = _simplify(e if same else Apply(e.op, args, e.width, e.fmt))
        else:
            memo[id(e)] = e
    return memo[id(expr)]


def same_expr(a: Expr, b: Expr) -> bool:
    """Structural equality without recursion (dataclass `==` recurses on deep chains)."""
    seen: set[tuple[int, int]] = set()
    stack = [(a, b)]
    while stack:
        x, y = stack.pop()
        if x is y or (id(x), id(y)) in seen:
            continue
        seen.add((id(x), id(y)))
        if isinstance(x, Apply) and isinstance(y, Apply):
            if (x.op, x.width, x.fmt, len(x.args)) != (y.op, y.width, y.fmt, len(y.args)):
                return False
            stack.extend(zip(x.args, y.args, strict=True))
        elif isinstance(x, Apply) or isinstance(y, Apply) or x != y:
            return False
    return True


def _const_value(e: Expr) -> int | None:
    return e.value if isinstance(e, Const) else None


def _simplify(node: Apply) -> Expr:
    """One rewrite step at `node`, whose operands are already folded."""
    op, args, w = node.op, node.args, node.width
    if op in _FLATTEN:
        return _simplify_nary(node)
    if op is Op.ITE:
        return _simplify_ite(node)
    if all(isinstance(a, Const) for a in args):
        values = [a.value for a in args if isinstance(a, Const)]
        arg_width = args[0].width if args else w
        return Const(apply_op(op, values, w, arg_width, node.fmt), w)
    a0 = args[0]
    c1 = _const_value(args[1]) if len(args) > 1 else None
    match op:
        case Op.BNOT | Op.NOT | Op.NEG if isinstance(a0, Apply) and a0.op is op:
            return a0.args[0]
        case Op.BNOT if isinstance(a0, Apply) and a0.op in _NEGATED:
            return Apply(_NEGATED[a0.op], a0.args, BOOL)
        case Op.SUB if c1 == 0:
            return a0
        case Op.SUB if same_expr(a0, args[1]):
            return Const(0, w)
        case Op.SHL | Op.LSHR | Op.ASHR if c1 == 0:
            return a0
        case Op.SHL | Op.LSHR if c1 is not None and c1 >= w:
            return Const(0, w)
        case Op.ZEXT | Op.SEXT | Op.TRUNC if a0.width == w:
            return a0
        case Op.ZEXT | Op.SEXT if isinstance(a0, Apply) and a0.op is op:
            return Apply(op, a0.args, w)
        case Op.TRUNC if isinstance(a0, Apply) and a0.op is Op.TRUNC:
            return _simplify(Apply(Op.TRUNC, a0.args, w))
        case Op.TRUNC if isinstance(a0, Apply) and a0.op in (Op.ZEXT, Op.SEXT):
            inner = a0.args[0]
            if inner.width == w:
                return inner
            if inner.width < w:
                return Apply(a0.op, (inner,), w)
            return Apply(Op.TRUNC, (inner,), w)
        case Op.SMIN | Op.SMAX | Op.UMIN | Op.UMAX if same_expr(a0, args[1]):
            return a0
        case _ if op in _REFLEXIVE_TRUE and same_expr(a0, args[1]):
            return TRUE
        case _ if op in _REFLEXIVE_FALSE and same_expr(a0, args[1]):
            return FALSE
        case Op.ULT if c1 == 0:
            return FALSE
        case Op.UGE if c1 == 0:
            return TRUE
        case Op.EQ | Op.NE:
            return _simplify_eq(node)
    return node


def _simplify_eq(node: Apply) -> Expr:
    a, b = node.args
    if isinstance(a, Const) and not isinstance(b, Const):
        a, b = b, a
    if not isinstance(b, Const):
        return node
    want_equal = node.op is Op.EQ
    if a.width == BOOL:
        # (x == true) is x, (x == false) is !x; NE flips.
        keep = (b.value == 1) == want_equal
        return a if keep else _simplify(Apply(Op.BNOT, (a,), BOOL))
    if isinstance(a, Apply) and a.op is Op.ITE:
        then, other = a.args[1], a.args[2]
        if isinstance(then, Const) and isinstance(other, Const):
            # A comparison against a select of constants is a condition on the selector.
            hit_then, hit_else = then.value == b.value, other.value == b.value
            if not want_equal:
                hit_then, hit_else = not hit_then, not hit_else
            cond = a.args[0]
            if hit_then and hit_else:
                return TRUE
            if hit_then:
                return cond
            if hit_else:
                return _simplify(Apply(Op.BNOT, (cond,), BOOL))
            return FALSE
    return node


def _simplify_ite(node: Apply) -> Expr:
    cond, then, other = node.args
    if isinstance(cond, Const):
        return then if cond.value else other
    if same_expr(then, other):
        return then
    if isinstance(cond, Apply) and cond.op is Op.BNOT:
        return _simplify_ite(Apply(Op.ITE, (cond.args[0], other, then), node.width))
    if node.width == BOOL and isinstance(then, Const) and isinstance(other, Const):
        # then != other here, so this is cond or its negation.
        return cond if then.value == 1 else _simplify(Apply(Op.BNOT, (cond,), BOOL))
    return node


def _simplify_nary(node: Apply) -> Expr:
    op, w = node.op, node.width
    flat: list[Expr] = []
    for i, a in enumerate(node.args):
        # Bounded, so that a long chain ((x + y) + y) + ... stays linear to fold.
        if (
            isinstance(a, Apply)
            and a.op is op
            and a.width == w
            and len(flat) + len(a.args) + len(node.args) - i - 1 <= _MAX_FLAT
        ):
            flat.extend(a.args)
        else:
            flat.append(a)
    consts = [a.value for a in flat if isinstance(a, Const)]
    rest: list[Expr] = [a for a in flat if not isinstance(a, Const)]
    if op in (Op.BAND, Op.BOR):
        absorbing, neutral = (0, 1) if op is Op.BAND else (1, 0)
        if absorbing in consts:
            return Const(absorbing, BOOL)
        rest = _dedup(rest)
        if not rest:
            return Const(neutral, BOOL)
        if len(rest) == 1:
            return rest[0]
        return _rebuild(node, rest)
    combined = apply_op(op, consts, w, w, None) if consts else None
    if op in (Op.AND, Op.OR, Op.XOR) and not rest:
        assert combined is not None
        return Const(combined, w)
    if op in (Op.AND, Op.OR):
        rest = _dedup(rest)  # idempotent
    elif op is Op.XOR:
        rest = _cancel_pairs(rest)
    neutral_value = {Op.ADD: 0, Op.MUL: 1, Op.AND: _ones(w), Op.OR: 0, Op.XOR: 0}[op]
    absorbing_value = {Op.MUL: 0, Op.AND: 0, Op.OR: _ones(w)}.get(op)
    if combined is not None and combined == absorbing_value:
        return Const(combined, w)
    if combined is not None and combined != neutral_value:
        rest.append(Const(combined, w))
    if not rest:
        return Const(neutral_value, w)
    if len(rest) == 1:
        return rest[0]
    return _rebuild(node, rest)


def _rebuild(node: Apply, args: list[Expr]) -> Apply:
    new = tuple(args)
    if len(new) == len(node.args) and all(x is y for x, y in zip(new, node.args, strict=True)):
        return node
    return Apply(node.op, new, node.width, node.fmt)


def _dedup(args: list[Expr]) -> list[Expr]:
    out: list[Expr] = []
    for a in args:
        if not any(same_expr(a, b) for b in out):
            out.append(a)
    return out


def _cancel_pairs(args: list[Expr]) -> list[Expr]:
    out: list[Expr] = []
    for a in args:
        for i, b in enumerate(out):
            if same_expr(a, b):
                del out[i]
                break
        else:
            out.append(a)
    return out


def read_events(expr: Expr) -> frozenset[int]:
    """The read events whose values `expr` mentions (syntactically, before any folding)."""
    events: set[int] = set()
    for e in postorder(expr):
        if isinstance(e, ReadValue):
            events.add(e.event)
    return frozenset(events)


def contributions(expr: Expr) -> frozenset[tuple[int, int]]:
    """The (thread, index) collective contributions that `expr` mentions."""
    found: set[tuple[int, int]] = set()
    for e in postorder(expr):
        if isinstance(e, Contribution):
            found.add((e.thread, e.index))
    return frozenset(found)
