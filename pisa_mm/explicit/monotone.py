"""Which axioms of a model may be checked on a partial execution (a subset of rf and co).

An axiom `acyclic E`, `irreflexive E` or `empty E` whose expression E is monotone in rf
and co (they occur only under an even number of complements and right-hand sides of `\\`)
fails on every extension of an execution on which it fails. The explicit engine uses such
axioms to cut the enumeration of rf and co early, for any model, without knowing an axiom.
"""

from __future__ import annotations

from pisa_mm.cat.syntax import (
    Binary,
    BinaryOp,
    CheckKind,
    Empty,
    Expr,
    Model,
    Name,
    RecGroup,
    Unary,
    UnaryOp,
    Universe,
)
from pisa_mm.hints import assert_never

__all__ = ["monotone_axioms"]

POS, NEG = 1, -1
Polarity = frozenset[int]
_NONE: Polarity = frozenset()


def _flip(p: Polarity) -> Polarity:
    return frozenset(-x for x in p)


class _Polarities:
    """How each defined name depends on the dynamic built-ins: {+1}, {-1}, both or not."""

    def __init__(self, model: Model, dynamic: frozenset[str]) -> None:
        self.model = model
        self.dynamic = dynamic
        self.memo: dict[str, Polarity] = {}
        self.active: set[str] = set()

    def name(self, n: str) -> Polarity:
        if n in self.dynamic:
            return frozenset({POS})
        if n in self.memo:
            return self.memo[n]
        group = self.model.recursive_group(n)
        if group is not None:
            self._group(tuple(d.name for d in group.definitions))
            return self.memo[n]
        definition = self.model.definition(n)
        if definition is None:
            return _NONE  # a built-in that does not change between candidates
        if n in self.active:  # defensive: only `let rec` may refer to itself
            return frozenset({POS, NEG})
        self.active.add(n)
        self.memo[n] = self.expr(definition.expr)
        self.active.discard(n)
        return self.memo[n]

    def _group(self, names: tuple[str, ...]) -> None:
        # Least fixpoint over the four-element lattice: terminates in a few rounds.
        for n in names:
            self.memo[n] = _NONE
        changed = True
        while changed:
            changed = False
            for n in names:
                definition = self.model.definition(n)
                assert definition is not None
                p = self.memo[n] | self.expr(definition.expr)
                if p != self.memo[n]:
                    self.memo[n] = p
                    changed = True

    def expr(self, e: Expr) -> Polarity:
        match e:
            case Name():
                return self.name(e.name)
            case Universe() | Empty():
                return _NONE
            case Unary():
                p = self.expr(e.arg)
                return _flip(p) if e.op is UnaryOp.COMPLEMENT else p
            case Binary():
                left, right = self.expr(e.left), self.expr(e.right)
                return left | (_flip(right) if e.op is BinaryOp.DIFF else right)
            case _:
                assert_never(e)


def monotone_axioms(model: Model, dynamic: frozenset[str]) -> tuple[str, ...]:
    """Names of the axioms (not flags) whose expression is monotone in `dynamic`."""
    pol = _Polarities(model, dynamic)
    # In model order, so that each definition finds those it uses done: no recursion
    # through a long chain of `let`s.
    for item in model.definitions:
        for d in item.definitions if isinstance(item, RecGroup) else (item,):
            pol.name(d.name)
    kinds = (CheckKind.ACYCLIC, CheckKind.IRREFLEXIVE, CheckKind.EMPTY)
    return tuple(c.name for c in model.axioms if c.kind in kinds and pol.expr(c.expr) <= {POS})
