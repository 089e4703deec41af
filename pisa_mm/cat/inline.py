"""Python source for the dynamic part of a cat expression: one function, not a closure per node.

`cat.eval.Evaluator` compiles every node of a model to a closure; evaluating a definition
then costs a Python call per node, which dominates on the small executions the explicit
engine judges by the thousand. For each definition and check that depends on a dynamic
built-in, the evaluator also asks this module for one generated function computing the
whole expression inline, with the closures' exact semantics: the same bit operations, the
same order, the same short cuts (an empty left operand of `;`, `&`, `\\`, `*` skips the
right one; an empty `[S]` mask skips the relation), and every value that has a slot (names,
static sub-expressions, static masks) read from the evaluation's slots, or computed by its
closure, which stores it there. Only the generated function's own intermediate values have
no slot, as with the closures. Sub-expressions nested deeper than `MAX_DEPTH` are left to
their closures, so the generated source stays far from Python's parser limits.
"""

from __future__ import annotations

from collections.abc import Callable

from pisa_mm.cat.syntax import Binary, BinaryOp, Empty, Expr, Name, Ty, Unary, UnaryOp, Universe
from pisa_mm.codecache import compiled
from pisa_mm.hints import Any, assert_never
from pisa_mm.records import field, record

__all__ = ["MAX_DEPTH", "UNION_TERMS", "Inliner", "Slots", "chain_terms"]

MAX_DEPTH = 24
# The closure of a union of at most this many terms is computed from the terms on big
# universes (`Geo.closure_of_union`); of more, from the union's value.
UNION_TERMS = 8

_UNARY_METHOD = {
    UnaryOp.IDENTITY: "identity",
    UnaryOp.INVERSE: "transpose",
    UnaryOp.PLUS: "closure",
    UnaryOp.STAR: "star",
    UnaryOp.OPT: "opt",
    UnaryOp.DOMAIN: "domain",
    UnaryOp.RANGE: "range",
}
_BINARY_METHOD = {BinaryOp.SEQ: "compose", BinaryOp.CARTESIAN: "cartesian"}
_OF_UNION = {UnaryOp.PLUS: "closure_of_union", UnaryOp.STAR: "star_of_union"}


def chain_terms(expr: Expr, op: BinaryOp) -> list[Expr]:
    """The operands of a chain of `op` (nested either way), left to right (iteratively: a
    model's union of thousands of terms is one deep tree)."""
    terms: list[Expr] = []
    stack = [expr]
    while stack:
        e = stack.pop()
        if isinstance(e, Binary) and e.op is op:
            stack += (e.right, e.left)
        else:
            terms.append(e)
    return terms


@record(frozen=False)
class Slots:
    """What the evaluator knows of its compiled values, by which the generated code reads
    them: `names` name -> (slot, reader) for names whose value lives in a slot, `calls`
    name -> reader for the others (`id` is the universe's diagonal); `nodes` id(node) ->
    (slot, closure) for static sub-expressions; `masks` (id of the `[S]` node, rows) ->
    (slot, closure) for static masks; `fns` id(node) -> closure for any compiled node."""

    names: dict[str, tuple[int, Callable[[Any], int]]] = field(default_factory=dict)
    calls: dict[str, Callable[[Any], int]] = field(default_factory=dict)
    nodes: dict[int, tuple[int, Callable[[Any], int]]] = field(default_factory=dict)
    masks: dict[tuple[int, bool], tuple[int, Callable[[Any], int]]] = field(default_factory=dict)
    fns: dict[int, Callable[[Any], int]] = field(default_factory=dict)


class Inliner:
    """Generates one function `f(c) -> int` (c: the evaluator's context, with `vals` and
    `geo`) for an expression whose closures are already compiled."""

    def __init__(
        self,
        slots: Slots,
        type_of: Callable[[Expr], Ty],
        cache: Callable[[int, Callable[[Any], int]], Callable[[Any], int]],
        model: str = "",
    ) -> None:
        self.slots = slots
        # the group of the generated code in pisa_mm/codecache.py: one per model
        self.group = f"cat inline {model}"
        self.type_of = type_of
        self.cache = cache  # (slot, compute) -> a reader that stores into the static slot
        self._static: dict[int, Callable[[Any], int]] = {}

    def function(
        self, expr: Expr, wrap: str = "{}", *, static: bool = False
    ) -> Callable[[Any], Any]:
        """The generated function of `expr`; `wrap` is a format string applied to the
        expression's text (e.g. a check's test). A `static` expression (computed once per
        session) is inlined whole; a dynamic one reads its static sub-expressions from their
        slots, each computed by a generated function of its own on first use."""
        env: dict[str, Any] = {}
        body = wrap.format(self._expr(expr, env, 0, static))
        # The source depends on the expression and its slots only (no counter of this
        # process), so that every process generates the same text for the same model and
        # finds its code in the cache (pisa_mm/codecache.py).
        source = f"def _inline(c):\n    vals = c.vals\n    geo = c.geo\n    return {body}\n"
        code = compiled(source, self.group, "<cat inline>")
        exec(code, env)  # our own source, generated from the model's syntax tree
        fn: Callable[[Any], Any] = env["_inline"]
        return fn

    def _bind(self, env: dict[str, Any], value: object) -> str:
        name = f"_k{len(env)}"
        env[name] = value
        return name

    def _tmp(self, env: dict[str, Any]) -> str:
        # a fresh local for a walrus; `env` counts names so that they never clash
        name = f"_t{len(env)}"
        env[name] = None
        return name

    def _slot(self, env: dict[str, Any], slot: int, reader: Callable[[Any], int]) -> str:
        t = self._tmp(env)
        return f"({t} if ({t} := vals[{slot}]) is not None else {self._bind(env, reader)}(c))"

    def _static_reader(self, expr: Expr, slot: int) -> Callable[[Any], int]:
        hit = self._static.get(id(expr))
        if hit is None:
            hit = self._static[id(expr)] = self.cache(slot, self.function(expr, static=True))
        return hit

    def _expr(self, expr: Expr, env: dict[str, Any], depth: int, static: bool) -> str:
        s = self.slots
        hit = None if static else s.nodes.get(id(expr))
        if hit is not None:
            slot = hit[0]
            if depth > MAX_DEPTH:
                return self._slot(env, *hit)
            return self._slot(env, slot, self._static_reader(expr, slot))
        if depth > MAX_DEPTH:
            return f"{self._bind(env, s.fns[id(expr)])}(c)"
        match expr:
            case Name(name=name):
                if name == "id":
                    return "geo.diag"
                known = s.names.get(name)
                if known is not None:
                    return self._slot(env, *known)
                return f"{self._bind(env, s.calls[name])}(c)"
            case Universe():
                return "geo.rowmask"
            case Empty():
                return "0"
            case Unary(op=op, arg=arg):
                if op in _OF_UNION and not static:
                    terms = chain_terms(arg, BinaryOp.UNION)
                    if 1 < len(terms) <= UNION_TERMS and s.nodes.get(id(arg)) is None:
                        return self._of_union(op, terms, env, depth)
                inner = self._expr(arg, env, depth + 1, static)
                if op is UnaryOp.COMPLEMENT:
                    full = "geo.full_rel" if self.type_of(arg) is Ty.REL else "geo.rowmask"
                    return f"({full} ^ {inner})"
                return f"geo.{_UNARY_METHOD[op]}({inner})"
            case Binary(op=op, left=left, right=right):
                return self._binary(op, left, right, env, depth, static)
            case _:
                assert_never(expr)

    def _of_union(self, op: UnaryOp, terms: list[Expr], env: dict[str, Any], depth: int) -> str:
        """`(a | b | ...)+` or `*`: on a big universe from its terms' values, in order, as
        the union evaluates them (`Geo.closure_of_union`); else as any closure."""
        values = [self._expr(t, env, depth + 1, False) for t in terms]
        method = _UNARY_METHOD[op]
        union = " | ".join(values)
        return f"(geo.{_OF_UNION[op]}([{', '.join(values)}]) if geo.big else geo.{method}({union}))"

    def _binary(
        self,
        op: BinaryOp,
        left: Expr,
        right: Expr,
        env: dict[str, Any],
        depth: int,
        static: bool,
    ) -> str:
        if op is BinaryOp.SEQ:
            if isinstance(left, Unary) and left.op is UnaryOp.IDENTITY:
                return self._masked(left, right, env, depth, static, rows=True)
            if isinstance(right, Unary) and right.op is UnaryOp.IDENTITY:
                return self._masked(right, left, env, depth, static, rows=False)
        a = self._expr(left, env, depth + 1, static)
        b = self._expr(right, env, depth + 1, static)
        if op is BinaryOp.UNION:
            return f"({a} | {b})"
        t = self._tmp(env)
        match op:
            case BinaryOp.INTER:
                value = f"{t} & {b}"
            case BinaryOp.DIFF:
                value = f"{t} & ~{b}"
            case BinaryOp.SEQ | BinaryOp.CARTESIAN:
                value = f"geo.{_BINARY_METHOD[op]}({t}, {b})"
            case _:
                raise AssertionError(op)
        return f"({value} if ({t} := {a}) else 0)"

    def _masked(
        self,
        identity: Unary,
        rel: Expr,
        env: dict[str, Any],
        depth: int,
        static: bool,
        *,
        rows: bool,
    ) -> str:
        hit = None if static else self.slots.masks.get((id(identity), rows))
        if hit is not None:
            mask = self._slot(env, *hit)
        else:
            s = self._expr(identity.arg, env, depth + 1, static)
            mask = f"geo.{'rows' if rows else 'cols'}({s})"
        r = self._expr(rel, env, depth + 1, static)
        t = self._tmp(env)
        return f"({r} & {t} if ({t} := {mask}) else 0)"
