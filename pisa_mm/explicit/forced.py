"""Coherence pairs a model forces, read off one evaluation of its own axioms.

`explicit/candidates.py` asks, for consecutive writes a, b of one work-item to one location,
whether the model forbids every coherence order with b before a (`_forced`). Asked one pair
at a time, that is one evaluation of the pruning axioms per pair: thousands on a work-item
storing thousands of times. This module answers many pairs in one evaluation, for the
axioms whose expression has a part of the form `L ; co ; R` (found by syntax alone), and
leaves the others to the pair-by-pair questions.

Soundness, for any model. Let e be an axiom's expression, monotone in co (explicit/monotone.py),
and z(x) the sub-expression x with `co` replaced by the empty relation (every definition that
reads co rewritten alike): since x is monotone in co, x(co) contains z(x) for every co.
`bounds(e)` gives pairs (L, R) of co-free expressions such that e(co) contains
`L ; co ; R` for every co, by these rules and no others:

- `co` itself: (id, id);
- `a | b`: the bounds of a and those of b;
- `a ; b`: (L, R ; z(b)) for each bound of a, (z(a) ; L, R) for each bound of b;
- `a+`, `a*`: (z(a)* ; L, R ; z(a)*) for each bound of a (a+ contains a* ; a ; a*);
- `a?`: the bounds of a; a defined name: those of its definition;
- anything else (`&`, `\\`, `~`, `^-1`, products, `let rec` names): none (no claim made).

A coherence order with b before a contains the pair (b, a), so e(co) contains
`L ; {(b, a)} ; R`. Then `irreflexive e` fails when some x has a R x and x L b, that is when
(a, b) is in `R ; L`; `acyclic e` fails when (a, b) is in `R ; z(e)* ; L` (the path from R's
end back to L's start runs in e(co), which contains z(e)); `empty e` fails when a is in
`domain(R)` and b in `range(L)`. The question `_forced` asks is whether the pruning axioms
fail on one partial order containing (b, a) (with the same rf): whatever this module shows
forced, that question answers forced too, so the search, which asks the question for the
pairs not shown here, keeps exactly the orders it kept before. Only speed depends on how
much the syntax reveals.
"""

from __future__ import annotations

from collections.abc import Collection, Iterable

from pisa_mm.cat.eval import BaseRelations, Evaluator
from pisa_mm.cat.syntax import (
    Binary,
    BinaryOp,
    CheckKind,
    Definition,
    Empty,
    Expr,
    Model,
    Name,
    RecGroup,
    Ty,
    Unary,
    UnaryOp,
    names_in,
)
from pisa_mm.errors import Span
from pisa_mm.records import replace

__all__ = ["FORCED", "ForcedOrders", "forcing_model"]

# The name of the relation `forcing_model` adds: the pairs (a, b) of `co` (given as the pairs
# to ask about) that every allowed order keeps in that order.
FORCED = "__forced-co"
_ZERO_PREFIX = "__co0-"

Bound = tuple[Expr, Expr]


class _Bounds:
    """`z` and `bounds` of the module docstring, over one model, memoised by name."""

    def __init__(self, model: Model) -> None:
        self.model = model
        self.reads_co: dict[str, bool] = {}
        self.zeroed: dict[str, Definition] = {}  # name -> its co-free rewriting
        self.name_bounds: dict[str, list[Bound]] = {}
        self.recursive = {
            d.name
            for item in model.definitions
            if isinstance(item, RecGroup)
            for d in item.definitions
        }
        for item in model.definitions:  # model order: each name's uses are done first
            group = item.definitions if isinstance(item, RecGroup) else (item,)
            used = set().union(*(names_in(d.expr) for d in group))
            reads = "co" in used or any(self.reads_co.get(n, False) for n in used)
            for d in group:
                self.reads_co[d.name] = reads

    def depends(self, e: Expr) -> bool:
        return any(n == "co" or self.reads_co.get(n, False) for n in names_in(e))

    def z(self, e: Expr) -> Expr | None:
        """e with co empty (None when a `let rec` name reading co is in the way)."""
        if not self.depends(e):
            return e
        match e:
            case Name(name="co", span=span):
                return Empty(span, Ty.REL)
            case Name(name=name, span=span):
                if name in self.recursive:
                    return None
                hit = self.zeroed.get(name)
                if hit is None:
                    d = self.model.definition(name)
                    assert d is not None  # only defined names read co
                    body = self.z(d.expr)
                    if body is None:
                        return None
                    hit = self.zeroed[name] = Definition(_ZERO_PREFIX + name, body, d.ty, d.span)
                return Name(hit.name, span)
            case Unary(op=op, arg=arg, span=span):
                inner = self.z(arg)
                return None if inner is None else Unary(op, inner, span)
            case Binary(op=op, left=left, right=right, span=span):
                a, b = self.z(left), self.z(right)
                return None if a is None or b is None else Binary(op, a, b, span)
            case _:
                return e

    def bounds(self, e: Expr) -> list[Bound]:
        if not self.depends(e):
            return []
        match e:
            case Name(name="co", span=span):
                return [(Name("id", span), Name("id", span))]
            case Name(name=name):
                if name in self.recursive:
                    return []
                hit = self.name_bounds.get(name)
                if hit is None:
                    d = self.model.definition(name)
                    assert d is not None
                    hit = self.name_bounds[name] = self.bounds(d.expr)
                return hit
            case Unary(op=UnaryOp.OPT, arg=arg):
                return self.bounds(arg)
            case Unary(op=UnaryOp.PLUS | UnaryOp.STAR, arg=arg, span=span):
                za = self.z(arg)
                if za is None:
                    return []
                star = Unary(UnaryOp.STAR, za, span)
                return [(_seq(star, lo, span), _seq(hi, star, span)) for lo, hi in self.bounds(arg)]
            case Binary(op=BinaryOp.UNION, left=left, right=right):
                return self.bounds(left) + self.bounds(right)
            case Binary(op=BinaryOp.SEQ, left=left, right=right, span=span):
                out: list[Bound] = []
                zb = self.z(right)
                if zb is not None:
                    out += [(lo, _seq(hi, zb, span)) for lo, hi in self.bounds(left)]
                za = self.z(left)
                if za is not None:
                    out += [(_seq(za, lo, span), hi) for lo, hi in self.bounds(right)]
                return out
            case _:
                return []


def _seq(a: Expr, b: Expr, span: Span) -> Expr:
    return Binary(BinaryOp.SEQ, a, b, span)


def _union(parts: Iterable[Expr], span: Span) -> Expr | None:
    out: Expr | None = None
    for p in parts:
        out = p if out is None else Binary(BinaryOp.UNION, out, p, span)
    return out


def forcing_model(model: Model, axioms: Collection[str]) -> Model | None:
    """`model` with one more definition, FORCED: the pairs of co (when co is given as the
    pairs to ask about) that the named axioms force in that order (module docstring), or
    None when their syntax shows none."""
    b = _Bounds(model)
    parts: list[Expr] = []
    for check in model.axioms:
        if check.name not in axioms:
            continue
        span = check.span
        bounds = b.bounds(check.expr)
        if not bounds:
            continue
        if check.kind is CheckKind.IRREFLEXIVE:
            parts += [_seq(hi, lo, span) for lo, hi in bounds]
        elif check.kind is CheckKind.ACYCLIC:
            ze = b.z(check.expr)
            if ze is None:
                continue
            star = Unary(UnaryOp.STAR, ze, span)
            parts += [_seq(hi, _seq(star, lo, span), span) for lo, hi in bounds]
        elif check.kind is CheckKind.EMPTY:
            parts += [
                Binary(
                    BinaryOp.CARTESIAN,
                    Unary(UnaryOp.DOMAIN, hi, span),
                    Unary(UnaryOp.RANGE, lo, span),
                    span,
                )
                for lo, hi in bounds
            ]
    first = next((c.span for c in model.axioms if c.name in axioms), None)
    whole = None if first is None else _union(parts, first)
    if whole is None or first is None:
        return None
    forced = Binary(BinaryOp.INTER, whole, Name("co", first), first)
    definitions = (
        *model.definitions,
        *b.zeroed.values(),
        Definition(FORCED, forced, Ty.REL, first),
    )
    types = {**model.types, FORCED: Ty.REL}
    types.update((d.name, d.ty) for d in b.zeroed.values())
    return replace(model, definitions=definitions, checks=(), types=types)


class ForcedOrders:
    """The evaluator of FORCED for one model and one set of dynamic built-ins."""

    def __init__(self, model: Model, dynamic: frozenset[str]) -> None:
        self.evaluator = Evaluator(model, dynamic=dynamic)

    def pairs(self, base: BaseRelations, static_key: object) -> frozenset[tuple[int, int]]:
        """The pairs of `base`'s co that every allowed order keeps in that order."""
        result = self.evaluator.evaluate(base, static_key=("forced", static_key))
        return result.rel_value(FORCED)
