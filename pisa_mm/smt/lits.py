"""Boolean circuits built in Python and handed to z3 only where asserted.

Translating a cat model creates many literals that no axiom ends up using, and z3's Python
API is slow to build terms (it coerces every argument). So formulas are first built here as
a hash-consed and-inverter DAG: a literal is a Python bool (decided statically) or a non-zero
int (a node, negative for its negation). `Circuit.to_z3` converts only what is asserted,
each node once, through z3's C API.
"""

from __future__ import annotations

from collections.abc import Iterable
from typing import Any

import z3

Lit = bool | int


class Circuit:
    def __init__(self) -> None:
        # node k (k >= 1): a z3 leaf term, or the AND of child literals
        self._leaf: dict[int, Any] = {}
        self._children: dict[int, tuple[int, ...]] = {}
        self._ands: dict[tuple[int, ...], int] = {}
        self._atoms: dict[int, int] = {}  # z3 ast id -> node
        self._z3: dict[int, Any] = {}
        self._neg: dict[int, Any] = {}
        self._next = 1
        self.ctx = z3.main_ctx()

    def __len__(self) -> int:
        return self._next - 1

    # ------------------------------------------------------------ building

    def atom(self, term: Any) -> Lit:
        """The literal of a z3 Boolean term."""
        if z3.is_true(term):
            return True
        if z3.is_false(term):
            return False
        key = term.get_id()
        node = self._atoms.get(key)
        if node is None:
            node = self._next
            self._next += 1
            self._leaf[node] = term
            self._atoms[key] = node
        return node

    def var(self, name: str) -> int:
        lit = self.atom(z3.Bool(name))
        assert isinstance(lit, int)
        return lit

    def land(self, *xs: Lit) -> Lit:
        if len(xs) == 2:  # the common case, without building a set
            a, b = xs
            if a is True:
                return b
            if b is True or a is False:
                return a
            if b is False:
                return False
            assert isinstance(a, int) and isinstance(b, int)
            if a == b:
                return a
            if a == -b:
                return False
            key = (a, b) if a < b else (b, a)
            node = self._ands.get(key)
            if node is None:
                node = self._next
                self._next += 1
                self._children[node] = key
                self._ands[key] = node
            return node
        return self.land_all(xs)

    def land_all(self, xs: Iterable[Lit]) -> Lit:
        seen: set[int] = set()
        for x in xs:
            if x is True:
                continue
            if x is False:
                return False
            assert isinstance(x, int)
            if -x in seen:
                return False
            seen.add(x)
        if not seen:
            return True
        if len(seen) == 1:
            return next(iter(seen))
        key = tuple(sorted(seen))
        node = self._ands.get(key)
        if node is None:
            node = self._next
            self._next += 1
            self._children[node] = key
            self._ands[key] = node
        return node

    def lor(self, *xs: Lit) -> Lit:
        if len(xs) == 2:
            return lnot(self.land(lnot(xs[0]), lnot(xs[1])))
        return self.lor_all(xs)

    def lor_all(self, xs: Iterable[Lit]) -> Lit:
        negs: list[Lit] = []
        for x in xs:
            if x is True:
                return True
            if x is not False:
                negs.append(-x)
        return lnot(self.land_all(negs))

    def implies(self, a: Lit, b: Lit) -> Lit:
        return self.lor(lnot(a), b)

    def iff(self, a: Lit, b: Lit) -> Lit:
        return self.land(self.implies(a, b), self.implies(b, a))

    # ------------------------------------------------------------ to z3

    def to_z3(self, lit: Lit) -> Any:
        if lit is True or lit is False:
            return z3.BoolVal(lit, self.ctx)
        node = abs(lit)
        if node not in self._z3:
            self._convert(node)
        return self._z3[node] if lit > 0 else self._negation(node)

    def _convert(self, root: int) -> None:
        stack = [root]
        while stack:
            node = stack[-1]
            if node in self._z3:
                stack.pop()
                continue
            leaf = self._leaf.get(node)
            if leaf is not None:
                self._z3[node] = leaf
                stack.pop()
                continue
            kids = self._children[node]
            missing = [abs(k) for k in kids if abs(k) not in self._z3]
            if missing:
                stack.extend(missing)
                continue
            stack.pop()
            ref = self.ctx.ref()
            args = (z3.Ast * len(kids))()
            for i, k in enumerate(kids):
                args[i] = (self._z3[k] if k > 0 else self._negation(-k)).as_ast()
            self._z3[node] = z3.BoolRef(z3.Z3_mk_and(ref, len(kids), args), self.ctx)

    def _negation(self, node: int) -> Any:
        term = self._neg.get(node)
        if term is None:
            pos = self._z3[node]
            term = z3.BoolRef(z3.Z3_mk_not(self.ctx.ref(), pos.as_ast()), self.ctx)
            self._neg[node] = term
        return term

    def value(self, model: Any, lit: Lit) -> bool:
        """The truth of a literal in a z3 model (unconstrained leaves count as false)."""
        if lit is True or lit is False:
            return lit
        return bool(z3.is_true(model.eval(self.to_z3(lit), model_completion=True)))


def lnot(x: Lit) -> Lit:
    if x is True:
        return False
    if x is False:
        return True
    return -x
