"""Event ids moved past the init writes once the builder (events/build.py) has counted them:
its events, expressions and pairs are recorded with ids from 0."""

from __future__ import annotations

from collections.abc import Iterable

from pisa_mm.events.model import Event
from pisa_mm.values.eval import postorder
from pisa_mm.values.expr import Apply, Const, Expr, ReadValue

__all__ = ["Shift", "shift_pairs"]


class Shift:
    """Expressions with every read id moved past the `n` init writes. Guards, values and
    addresses share their nodes across events and paths, so each node is rebuilt once per
    structure (`memo`, by identity; `keep` holds the originals so that no id is reused)."""

    def __init__(self, n: int) -> None:
        self.n = n
        self.memo: dict[int, Expr] = {}
        self.keep: list[Expr] = []

    def __call__(self, expr: Expr) -> Expr:
        if isinstance(expr, Const):
            return expr
        memo = self.memo
        hit = memo.get(id(expr))
        if hit is not None:
            return hit
        for e in postorder(expr, memo):
            new: Expr = e
            if isinstance(e, ReadValue):
                new = ReadValue(e.event + self.n, e.width)
            elif isinstance(e, Apply):
                args = tuple(memo[id(a)] for a in e.args)
                if any(x is not y for x, y in zip(args, e.args, strict=True)):
                    new = Apply(e.op, args, e.width, e.fmt)
            memo[id(e)] = new
            self.keep.append(e)
        return memo[id(expr)]

    def event(self, fields: dict[str, object]) -> Event:
        """The Event of fields recorded by the builder, its ids shifted."""
        n = self.n
        fields["id"] += n  # type: ignore[operator]
        parent = fields["parent"]
        if parent is not None:
            fields["parent"] = parent + n  # type: ignore[operator]
        for key in ("addr", "value"):
            expr = fields[key]
            if expr is not None:
                fields[key] = self(expr)  # type: ignore[arg-type]
        fields["guard"] = self(fields["guard"])  # type: ignore[arg-type]
        return Event(**fields)  # type: ignore[arg-type]  # Event's fields, checked by Event


def shift_pairs(pairs: Iterable[tuple[int, int]], n: int) -> frozenset[tuple[int, int]]:
    return frozenset((a + n, b + n) for a, b in pairs)
