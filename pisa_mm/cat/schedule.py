"""The order in which an evaluator that may stop at the first failing axiom tries them.

An execution is consistent when every axiom holds, whatever the order they are tried in; only
what a failure *reports* depends on model order (the first failing axiom), and the evaluator
completes that in model order when asked (`cat.eval.EvalResult`). So the axioms can be tried
cheapest first: one that fails cheaply (`acyclic rf | dep`) then spares the expensive ones
(the happens-before closures of a coherence axiom). The cost is estimated from the model's
syntax alone: the operations of each axiom's dynamic part (what is recomputed per execution),
through the definitions it uses, each definition counted once over the axioms already
scheduled (those tried before it have computed it). Nothing here knows an axiom by name.
"""

from __future__ import annotations

from collections.abc import Callable, Sequence

from pisa_mm.cat.syntax import (
    Binary,
    BinaryOp,
    Check,
    CheckKind,
    Empty,
    Expr,
    Name,
    Unary,
    UnaryOp,
    Universe,
)
from pisa_mm.hints import assert_never

__all__ = ["schedule"]

# Relative costs of the bit operations (cat/geo.py `Geo`): a closure or an acyclicity test
# is n steps of n*n bits, a composition up to n, a transpose n, the rest one big-int operation.
_UNARY_COST = {
    UnaryOp.PLUS: 10,
    UnaryOp.STAR: 10,
    UnaryOp.INVERSE: 3,
    UnaryOp.DOMAIN: 3,
    UnaryOp.RANGE: 3,
}
_SEQ_COST = 4
_TEST_COST = {CheckKind.ACYCLIC: 10}
# A recursive definition iterates its bodies to a fixpoint: counted as this many operations.
_REC_COST = 50
# Up to this many axioms, each step of the schedule weighs every axiom left (quadratic in
# the axioms); beyond, each is weighed once, alone.
_GREEDY_UP_TO = 16


class _Costs:
    """Per dynamic definition: the cost of its own nodes and the dynamic names it uses."""

    def __init__(
        self,
        definition: Callable[[str], Expr | None],
        dynamic: Callable[[str], bool],
    ) -> None:
        self.definition = definition
        self.dynamic = dynamic
        self.memo: dict[str, tuple[int, frozenset[str]]] = {}

    def node(self, expr: Expr) -> tuple[int, frozenset[str]]:
        """The cost of the dynamic nodes of `expr` and the dynamic names they use, in one
        post-order pass with an explicit stack (expressions may be deep): a node is dynamic
        when one of its leaves is."""
        cost, names = 0, set()
        dyn: dict[int, bool] = {}  # id(node) -> whether it is dynamic, once visited
        stack: list[tuple[Expr, bool]] = [(expr, False)]
        while stack:
            e, children_done = stack.pop()
            match e:
                case Name(name=name):
                    dyn[id(e)] = self.dynamic(name)
                    if dyn[id(e)]:
                        names.add(name)
                case Universe() | Empty():
                    dyn[id(e)] = False
                case Unary(op=op, arg=arg):
                    if not children_done:
                        stack.extend(((e, True), (arg, False)))
                        continue
                    dyn[id(e)] = dyn[id(arg)]
                    if dyn[id(e)]:
                        cost += _UNARY_COST.get(op, 1)
                case Binary(op=op, left=left, right=right):
                    if not children_done:
                        stack.extend(((e, True), (left, False), (right, False)))
                        continue
                    dyn[id(e)] = dyn[id(left)] or dyn[id(right)]
                    if dyn[id(e)]:
                        cost += _SEQ_COST if op is BinaryOp.SEQ else 1
                case _:
                    assert_never(e)
        return cost, frozenset(names)

    def name(self, name: str) -> tuple[int, frozenset[str]]:
        hit = self.memo.get(name)
        if hit is None:
            expr = self.definition(name)
            hit = self.memo[name] = (1, frozenset()) if expr is None else self.node(expr)
        return hit

    def cone(self, check: Check, done: set[str]) -> tuple[int, set[str]]:
        """The cost of `check` when the names in `done` are already computed, and the
        names it computes."""
        cost, names = self.node(check.expr)
        cost += _TEST_COST.get(check.kind, 0)
        seen: set[str] = set()
        stack = [n for n in names if n not in done]
        while stack:
            n = stack.pop()
            if n in seen:
                continue
            seen.add(n)
            own, uses = self.name(n)
            cost += own
            stack.extend(u for u in uses if u not in done and u not in seen)
        return cost, seen


def schedule(
    axioms: Sequence[Check],
    definition: Callable[[str], Expr | None],
    dynamic: Callable[[str], bool],
    recursive: Callable[[str], bool],
) -> tuple[int, ...]:
    """Indices into `axioms`, cheapest first: each step picks the axiom whose dynamic part
    costs least given what the axioms before it computed (ties: model order).
    `definition(name)` is a defined name's expression (None for a built-in), `dynamic(name)`
    whether a name changes between executions of one session, `recursive(name)` whether it
    belongs to a `let rec` group (its cost is fixed)."""

    def defined(name: str) -> Expr | None:
        return None if recursive(name) else definition(name)

    costs = _Costs(defined, dynamic)
    done: set[str] = set()
    left = list(range(len(axioms)))
    if len(left) > _GREEDY_UP_TO:  # each axiom's cost alone, not each step's: linear
        alone = [costs.cone(axioms[i], done) for i in left]
        rec = [sum(_REC_COST for n in names if recursive(n)) for _, names in alone]
        return tuple(sorted(left, key=lambda i: alone[i][0] + rec[i]))
    order: list[int] = []
    while left:
        best, best_cost, best_names = left[0], -1, set[str]()
        for i in left:
            cost, names = costs.cone(axioms[i], done)
            cost += sum(_REC_COST for n in names if recursive(n))
            if best_cost < 0 or cost < best_cost:
                best, best_cost, best_names = i, cost, names
        order.append(best)
        left.remove(best)
        done |= best_names
    return tuple(order)
