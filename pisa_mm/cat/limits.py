"""How big and deep a cat expression may be: chains of one operator are balanced, nesting
past MAX_DEPTH and expansions past MAX_NODES are located [cat-depth] errors."""

from __future__ import annotations

from collections.abc import Collection

from lark import Token, Tree

from pisa_mm.cat.syntax import Binary, BinaryOp, Expr, Unary
from pisa_mm.errors import PisaMMError, Span

__all__ = ["BALANCE_FROM", "MAX_DEPTH", "MAX_NODES", "balanced", "check_depth", "check_size"]

# Nesting deeper than this (parentheses, `~`, operators of different kinds) is refused: no
# real model comes near it, and it keeps every recursive pass over expressions (here and in
# the engines) far from Python's recursion limit. Long chains of one associative operator
# (`a | b | ...`, `;`, `&`, `\`) do not nest: they are built by `balanced`.
MAX_DEPTH = 100
# Expression nodes one statement may expand to (functions substitute their arguments).
MAX_NODES = 200_000
# Chains with more operands than this are built as balanced trees (depth log n).
BALANCE_FROM = 16


def balanced(op: BinaryOp, values: list[Expr], span: Span) -> Expr:
    """A balanced tree of `op` over `values` (associative), every node spanning the chain."""
    level = values
    while len(level) > 1:
        nxt: list[Expr] = [
            Binary(op, a, b, span) for a, b in zip(level[::2], level[1::2], strict=False)
        ]
        if len(level) % 2:
            nxt.append(level[-1])
        level = nxt
    return level[0]


def check_depth(tree: Tree[Token], filename: str, chains: Collection[str]) -> None:
    """Refuse nesting past MAX_DEPTH before any recursive pass. Chains of one operator do
    not count (they are balanced); everything else, parentheses included, does."""
    stack: list[tuple[Tree[Token], int]] = [(tree, 0)]
    while stack:
        node, depth = stack.pop()
        if depth > MAX_DEPTH:
            meta = node.meta
            span = Span(filename, meta.line, meta.column, meta.end_line, meta.end_column)
            raise PisaMMError.at(
                span,
                f"expression nested more than {MAX_DEPTH} levels deep (parentheses, '~', "
                "operators); split it with 'let'",
                "cat-depth",
            )
        for child in node.children:
            if isinstance(child, Tree):
                same_chain = child.data == node.data and node.data in chains
                stack.append((child, depth if same_chain else depth + 1))


def check_size(expr: Expr, span: Span) -> None:
    """Depth and size of an expression after substitution (shared nodes counted per use)."""
    memo: dict[int, tuple[int, int]] = {}
    stack: list[tuple[Expr, bool]] = [(expr, False)]
    while stack:
        e, ready = stack.pop()
        if id(e) in memo:
            continue
        kids: tuple[Expr, ...] = ()
        if isinstance(e, Unary):
            kids = (e.arg,)
        elif isinstance(e, Binary):
            kids = (e.left, e.right)
        if not ready and kids:
            stack.append((e, True))
            stack.extend((k, False) for k in kids)
            continue
        depth = 1 + max((memo[id(k)][0] for k in kids), default=0)
        size = 1 + sum(memo[id(k)][1] for k in kids)
        if depth > MAX_DEPTH * 2 or size > MAX_NODES:
            what = "deep" if depth > MAX_DEPTH * 2 else "large"
            raise PisaMMError.at(
                span,
                f"expression too {what} once its functions are expanded (at most "
                f"{MAX_DEPTH * 2} levels and {MAX_NODES} nodes)",
                "cat-depth",
            )
        memo[id(e)] = (depth, size)
