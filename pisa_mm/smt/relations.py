"""Cat expressions as z3 literals over pairs: one small piece of code per operator.

Every set is a dict event -> literal and every relation a dict pair -> literal; a key that
is absent is a member that can never hold (the may-set), a literal `True` one that holds
whenever its events happen (the must-set, given the `Encoding` invariant).
"""

from __future__ import annotations

from collections import defaultdict
from collections.abc import Iterable, Mapping
from dataclasses import dataclass
from typing import Any, assert_never

from pisa_mm.cat.syntax import (
    Binary,
    BinaryOp,
    Check,
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
    Universe,
)
from pisa_mm.errors import PisaMMError
from pisa_mm.events.kinds import Kind, Space
from pisa_mm.events.relations import SPACE_SETS, static_relations, static_sets
from pisa_mm.smt.encode import Encoding, acyclic_constraints
from pisa_mm.smt.lits import Circuit, Lit, lnot

Pair = tuple[int, int]


@dataclass(frozen=True, slots=True)
class SetV:
    members: dict[int, Lit]


@dataclass(frozen=True, slots=True)
class RelV:
    pairs: dict[Pair, Lit]


Value = SetV | RelV


def _merge(c: Circuit, items: Iterable[tuple[Any, Lit]]) -> dict[Any, Lit]:
    """Group literals by key and OR them (absent and False keys dropped)."""
    acc: dict[Any, list[Lit]] = defaultdict(list)
    for key, lit in items:
        if lit is not False:
            acc[key].append(lit)
    out: dict[Any, Lit] = {}
    for key, lits in acc.items():
        lit = lits[0] if len(lits) == 1 else c.lor_all(lits)
        if lit is not False:
            out[key] = lit
    return out


class Translator:
    """Translates the expressions of one model over one `Encoding`, memoising names."""

    def __init__(self, enc: Encoding, model: Model) -> None:
        self.enc = enc
        self.c = enc.c
        self.model = model
        es = enc.es
        self._static_sets = static_sets(es)
        self._static_rels = static_relations(es)
        self._names: dict[str, Value] = {}
        self._defs: dict[str, Definition] = {}
        self._groups: dict[str, RecGroup] = {}
        for item in model.definitions:
            if isinstance(item, RecGroup):
                for d in item.definitions:
                    self._groups[d.name] = item
            else:
                self._defs[item.name] = item
        self.universe = SetV({e.id: enc.exec[e.id] for e in es.events})

    # ------------------------------------------------------------ entry points

    def rel(self, expr: Expr, env: Mapping[str, Value] | None = None) -> dict[Pair, Lit]:
        v = self.value(expr, env or {})
        assert isinstance(v, RelV)
        return v.pairs

    def set(self, expr: Expr, env: Mapping[str, Value] | None = None) -> dict[int, Lit]:
        v = self.value(expr, env or {})
        assert isinstance(v, SetV)
        return v.members

    def check_formula(self, check: Check) -> Lit:
        """The literal that holds iff the axiom holds (flags: iff the flag is *not* raised)."""
        expr = check.expr
        match check.kind:
            case CheckKind.ACYCLIC:
                while isinstance(expr, Unary) and expr.op is UnaryOp.PLUS:
                    expr = expr.arg  # acyclic(r+) = acyclic(r)
                return self._acyclic(self.rel(expr), check.name)
            case CheckKind.IRREFLEXIVE:
                if isinstance(expr, Unary) and expr.op is UnaryOp.PLUS:
                    return self._acyclic(self.rel(expr.arg), check.name)
                pairs = self.rel(expr)
                return self.c.land_all(lnot(lit) for (a, b), lit in pairs.items() if a == b)
            case CheckKind.EMPTY | CheckKind.FLAG:
                return lnot(self.nonempty(expr))
            case _:
                assert_never(check.kind)

    def nonempty(self, expr: Expr) -> Lit:
        v = self.value(expr, {})
        lits = v.members.values() if isinstance(v, SetV) else v.pairs.values()
        return self.c.lor_all(lits)

    def _acyclic(self, pairs: dict[Pair, Lit], name: str) -> Lit:
        parts = acyclic_constraints(self.c, pairs, _ident(name))
        return self.c.land_all(parts)

    # ------------------------------------------------------------ expressions

    def value(self, expr: Expr, env: Mapping[str, Value]) -> Value:
        match expr:
            case Name(name=name):
                return self._name(name, env)
            case Universe():
                return self.universe
            case Empty(ty=ty):
                return SetV({}) if ty is Ty.SET else RelV({})
            case Unary(op=op, arg=arg):
                return self._unary(op, self.value(arg, env))
            case Binary(op=op, left=left, right=right):
                return self._binary(op, self.value(left, env), self.value(right, env))
            case _:
                assert_never(expr)

    def _name(self, name: str, env: Mapping[str, Value]) -> Value:
        if name in env:
            return env[name]
        hit = self._names.get(name)
        if hit is not None:
            return hit
        d = self._defs.get(name)
        if d is not None:
            v = self._named(name, self.value(d.expr, env))
        elif name in self._groups:
            self._rec_group(self._groups[name], env)
            v = self._names[name]
        else:
            v = self._builtin(name)
        if not env or name not in self._groups:
            self._names[name] = v
        return v

    def _named(self, name: str, v: Value) -> Value:
        """A definition's value; the circuit shares its literals among all uses."""
        del name
        return v

    def _rec_group(self, group: RecGroup, outer: Mapping[str, Value]) -> None:
        """Least fixpoint by unfolding from empty: each step is exact, and a concrete chain
        grows by at least one pair per step until it stops, so `|may-fixpoint| + 1` steps
        reach the fixpoint of every execution."""
        cur: dict[str, Value] = {
            d.name: SetV({}) if d.ty is Ty.SET else RelV({}) for d in group.definitions
        }
        steps = 0
        stable_keys = False
        while True:
            env = dict(outer) | cur
            nxt = {d.name: self._named(d.name, self.value(d.expr, env)) for d in group.definitions}
            steps += 1
            same_keys = all(_keys(nxt[n]) == _keys(cur[n]) for n in cur)
            constant = all(_all_const(nxt[n]) for n in nxt)
            cur = nxt
            if same_keys and constant:
                break  # the same constants again: a fixpoint
            stable_keys = stable_keys or same_keys
            if stable_keys and steps > sum(len(_keys(v)) for v in cur.values()):
                break
        for n, v in cur.items():
            self._names[n] = v

    def _builtin(self, name: str) -> Value:
        enc = self.enc
        if name == "rf":
            return RelV({p: lit for p, lit in enc.rf.items() if lit is not False})
        if name == "co":
            return RelV(dict(enc.co))
        if name == "loc":
            return RelV(self._loc())
        if name in SPACE_SETS:
            return SetV(self._space_set(SPACE_SETS[name]))
        if name in self._static_sets:
            return SetV({e: enc.exec[e] for e in self._static_sets[name]})
        if name in self._static_rels:
            out: dict[Pair, Lit] = {}
            for a, b in self._static_rels[name]:
                lit = enc.both(a, b)
                if lit is not False:
                    out[(a, b)] = lit
            return RelV(out)
        raise PisaMMError.at(None, f"the smt engine does not know the built-in '{name}'", "smt")

    def _loc(self) -> dict[Pair, Lit]:
        enc = self.enc
        acc = [e for e in enc.es.events if e.kind in (Kind.READ, Kind.WRITE)]
        out: dict[Pair, Lit] = {}
        for a in acc:
            for b in acc:
                if not (a.locs & b.locs):
                    continue
                lit = self.c.land(enc.both(a.id, b.id), enc.loc(a.id, b.id))
                if lit is not False:
                    out[(a.id, b.id)] = lit
        return out

    def _space_set(self, space: Space) -> dict[int, Lit]:
        enc = self.enc
        out: dict[int, Lit] = {}
        for e in enc.es.events:
            if e.kind is Kind.FENCE:
                if space in e.spaces:
                    out[e.id] = enc.exec[e.id]
            elif e.kind in (Kind.READ, Kind.WRITE) and space in e.spaces:
                lit = self.c.land(
                    enc.exec[e.id],
                    self.c.lor_all(x for loc, x in enc.at[e.id].items() if loc.space is space),
                )
                if lit is not False:
                    out[e.id] = lit
        return out

    # ------------------------------------------------------------ operators

    def _unary(self, op: UnaryOp, v: Value) -> Value:
        enc = self.enc
        match op:
            case UnaryOp.IDENTITY:
                assert isinstance(v, SetV)
                return RelV({(e, e): lit for e, lit in v.members.items()})
            case UnaryOp.COMPLEMENT:
                if isinstance(v, SetV):
                    return SetV(
                        _drop_false(
                            (e, self.c.land(x, lnot(v.members.get(e, False))))
                            for e, x in self.universe.members.items()
                        )
                    )
                ids = list(self.universe.members)
                return RelV(
                    _drop_false(
                        ((a, b), self.c.land(enc.both(a, b), lnot(v.pairs.get((a, b), False))))
                        for a in ids
                        for b in ids
                    )
                )
            case UnaryOp.INVERSE:
                assert isinstance(v, RelV)
                return RelV({(b, a): lit for (a, b), lit in v.pairs.items()})
            case UnaryOp.PLUS:
                assert isinstance(v, RelV)
                return RelV(self.closure(v.pairs))
            case UnaryOp.STAR:
                assert isinstance(v, RelV)
                return RelV(self._with_identity(self.closure(v.pairs)))
            case UnaryOp.OPT:
                assert isinstance(v, RelV)
                return RelV(self._with_identity(v.pairs))
            case UnaryOp.DOMAIN:
                assert isinstance(v, RelV)
                return SetV(_merge(self.c, [(a, lit) for (a, _), lit in v.pairs.items()]))
            case UnaryOp.RANGE:
                assert isinstance(v, RelV)
                return SetV(_merge(self.c, [(b, lit) for (_, b), lit in v.pairs.items()]))
            case _:
                assert_never(op)

    def _with_identity(self, pairs: dict[Pair, Lit]) -> dict[Pair, Lit]:
        out = dict(pairs)
        for e, x in self.universe.members.items():
            out[(e, e)] = self.c.lor(out.get((e, e), False), x)
        return out

    def _binary(self, op: BinaryOp, x: Value, y: Value) -> Value:
        match op:
            case BinaryOp.UNION:
                if isinstance(x, SetV) and isinstance(y, SetV):
                    return SetV(_merge(self.c, [*x.members.items(), *y.members.items()]))
                assert isinstance(x, RelV) and isinstance(y, RelV)
                return RelV(_merge(self.c, [*x.pairs.items(), *y.pairs.items()]))
            case BinaryOp.INTER:
                if isinstance(x, SetV) and isinstance(y, SetV):
                    return SetV(_inter(self.c, x.members, y.members))
                assert isinstance(x, RelV) and isinstance(y, RelV)
                return RelV(_inter(self.c, x.pairs, y.pairs))
            case BinaryOp.DIFF:
                if isinstance(x, SetV) and isinstance(y, SetV):
                    return SetV(_diff(self.c, x.members, y.members))
                assert isinstance(x, RelV) and isinstance(y, RelV)
                return RelV(_diff(self.c, x.pairs, y.pairs))
            case BinaryOp.SEQ:
                assert isinstance(x, RelV) and isinstance(y, RelV)
                return RelV(compose(self.c, x.pairs, y.pairs))
            case BinaryOp.CARTESIAN:
                assert isinstance(x, SetV) and isinstance(y, SetV)
                return RelV(
                    _drop_false(
                        ((a, b), self.c.land(la, lb))
                        for a, la in x.members.items()
                        for b, lb in y.members.items()
                    )
                )
            case _:
                assert_never(op)

    def closure(self, pairs: dict[Pair, Lit]) -> dict[Pair, Lit]:
        """Exact transitive closure.

        When the pairs that hold whenever their events happen (S, e.g. po) are closed under
        composition, a path of R = S | D is S-runs joined by D-edges, and a run of S is one
        S-edge: R+ = S | S? ; (D ; S?)+. Only the (usually few) dynamic edges are closed by
        squaring then. Otherwise the whole relation is squared.
        """
        both = self.enc.both
        static = {p: lit for p, lit in pairs.items() if _same(lit, both(*p))}
        if not static or not _closed(static):
            return self._square(pairs)
        dynamic = {p: lit for p, lit in pairs.items() if p not in static}
        if not dynamic:
            return dict(pairs)
        s_opt = self._with_identity(static)
        tail = self._square(compose(self.c, dynamic, s_opt))
        return _merge(self.c, [*static.items(), *compose(self.c, s_opt, tail).items()])

    def _square(self, pairs: dict[Pair, Lit]) -> dict[Pair, Lit]:
        """Iterative squaring: after k rounds C holds every path of at most 2^k edges, and a
        simple path (or cycle) has at most one edge per distinct source event."""
        sources = len({a for a, _ in pairs})
        cur = dict(pairs)
        covered = 1
        while covered < sources:
            step = _merge(self.c, [*cur.items(), *compose(self.c, cur, cur).items()])
            covered *= 2
            if step.keys() == cur.keys() and all(lit is True for lit in step.values()):
                break  # all constant and nothing new: already closed
            cur = step
        return cur


def _same(a: Lit, b: Lit) -> bool:
    if isinstance(a, bool) or isinstance(b, bool):
        return a is b
    return a == b


def _closed(pairs: dict[Pair, Lit]) -> bool:
    """The may-set is closed under composition (then, with literals `both`, so is R)."""
    succ: dict[int, list[int]] = defaultdict(list)
    for a, b in pairs:
        succ[a].append(b)
    return all((a, c) in pairs for a, b in pairs for c in succ.get(b, ()))


def compose(c: Circuit, x: dict[Pair, Lit], y: dict[Pair, Lit]) -> dict[Pair, Lit]:
    """x ; y: the middle event ranges only over pairs both may-sets allow."""
    by_src: dict[int, list[tuple[int, Lit]]] = defaultdict(list)
    for (m, b), lit in y.items():
        by_src[m].append((b, lit))
    acc: dict[Pair, list[Lit]] = defaultdict(list)
    for (a, m), l1 in x.items():
        for b, l2 in by_src.get(m, ()):
            lit = c.land(l1, l2)
            if lit is not False:
                acc[(a, b)].append(lit)
    out: dict[Pair, Lit] = {}
    for p, lits in acc.items():
        lit = c.lor_all(lits)
        if lit is not False:
            out[p] = lit
    return out


def _inter(c: Circuit, x: dict[Any, Lit], y: dict[Any, Lit]) -> dict[Any, Lit]:
    if len(x) > len(y):
        x, y = y, x
    return _drop_false((k, c.land(lit, y[k])) for k, lit in x.items() if k in y)


def _diff(c: Circuit, x: dict[Any, Lit], y: dict[Any, Lit]) -> dict[Any, Lit]:
    return _drop_false((k, c.land(lit, lnot(y.get(k, False)))) for k, lit in x.items())


def _drop_false(items: Iterable[tuple[Any, Lit]]) -> dict[Any, Lit]:
    return {k: lit for k, lit in items if lit is not False}


def _keys(v: Value) -> frozenset[Any]:
    return frozenset(v.members) if isinstance(v, SetV) else frozenset(v.pairs)


def _all_const(v: Value) -> bool:
    lits = v.members.values() if isinstance(v, SetV) else v.pairs.values()
    return all(lit is True for lit in lits)


def _ident(name: str) -> str:
    return "".join(c if c.isalnum() else "_" for c in name)
