"""Cat expressions as z3 literals over pairs: one small piece of code per operator.

Every set is a dict event -> literal and every relation a dict pair -> literal; a key that
is absent is a member that can never hold (the may-set), a literal `True` one that holds
whenever its events happen (the must-set, given the `Encoding` invariant).
"""

from __future__ import annotations

from collections import defaultdict
from collections.abc import Iterable, Mapping
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
    names_in,
)
from pisa_mm.errors import PisaMMError
from pisa_mm.events.kinds import Kind, Space
from pisa_mm.events.relations import SPACE_SETS, static_relations, static_sets
from pisa_mm.records import record
from pisa_mm.smt.encode import Encoding, acyclic_constraints
from pisa_mm.smt.lits import Circuit, Lit, lnot

Pair = tuple[int, int]
Keys = set[Pair]


@record
class SetV:
    members: dict[int, Lit]


@record
class RelV:
    pairs: dict[Pair, Lit]


@record
class OrdV:
    """A relation over memory accesses given by clock comparisons (see `Encoding.order`):
    (a, b) holds iff both happen at one location and `clock(a) ? clock(b)`, where `?` is the
    set of outcomes (LT | EQ | GT bits) in `masks[2 * kind(a) + kind(b)]` (kinds W = 0,
    R = 1). `rf`, `co`, `loc` and everything the algebra below derives from them exactly
    (`fr`, `eco`) stay in this form and become pairs only where another operator needs them.
    """

    masks: tuple[int, int, int, int]


Value = SetV | RelV
Internal = SetV | RelV | OrdV

LT, EQ, GT = 1, 2, 4
ALL = LT | EQ | GT
W_KIND, R_KIND = 0, 1
_KINDS = (W_KIND, R_KIND)


def _mirror(mask: int) -> int:
    return ((mask & LT) << 2) | (mask & EQ) | ((mask & GT) >> 2)


def _point(m1: int, m2: int) -> int:
    """Composition in the point algebra of a total order: the outcomes of (x ? z) given
    (x ?1 y) and (y ?2 z) for some y."""
    out = 0
    for r1 in (LT, EQ, GT):
        if not m1 & r1:
            continue
        for r2 in (LT, EQ, GT):
            if not m2 & r2:
                continue
            if r1 == EQ:
                out |= r2
            elif r2 == EQ or r1 == r2:
                out |= r1
            else:
                out |= ALL
    return out


def _ord_compose(x: OrdV, y: OrdV) -> tuple[tuple[int, ...], tuple[int, ...]]:
    """(sure, possible) masks of x ; y. `possible` over-approximates (the point algebra:
    any middle clock), `sure` under-approximates: it counts only middle events whose clock
    is known to exist, that of a (a itself, or the write a read reads from, when the middle
    kind is W or a is a read itself) and likewise that of b. When they agree the result is
    exact."""
    sure = [0, 0, 0, 0]
    possible = [0, 0, 0, 0]
    for ka in _KINDS:
        for kb in _KINDS:
            k = 2 * ka + kb
            for mid in _KINDS:
                m1, m2 = x.masks[2 * ka + mid], y.masks[2 * mid + kb]
                if not m1 or not m2:
                    continue
                possible[k] |= _point(m1, m2)
                if m1 & EQ and (mid == W_KIND or ka == mid):
                    sure[k] |= m2
                if m2 & EQ and (mid == W_KIND or kb == mid):
                    sure[k] |= m1
    return tuple(sure), tuple(possible)


def ord_compose(x: OrdV, y: OrdV) -> OrdV | None:
    """x ; y in clock form, or None when the clocks alone cannot say (e.g. `co ; co` needs a
    write strictly between)."""
    sure, possible = _ord_compose(x, y)
    if any(p & ~s for s, p in zip(sure, possible, strict=True)):
        return None
    return OrdV(_masks(sure))


def _masks(m: list[int] | tuple[int, ...]) -> tuple[int, int, int, int]:
    return (m[0], m[1], m[2], m[3])


def ord_closure(x: OrdV) -> OrdV | None:
    """x+ in clock form, or None. A grows by the sure part of A ; A from x; it stays inside
    x+, and once the possible part of A ; A lies in A, A is transitive, so A = x+."""
    a = x.masks
    while True:
        sure, possible = _ord_compose(OrdV(a), OrdV(a))
        grown = _masks([m | s for m, s in zip(a, sure, strict=True)])
        if grown == a:
            break
        a = grown
    if any(p & ~m for m, p in zip(a, possible, strict=True)):
        return None
    return OrdV(a)


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
    """Translates the expressions of one model over one `Encoding`, memoising names.

    Internally a relation may stay in clock form (`OrdV`); `value` and the entry points
    always hand out pairs.
    """

    def __init__(self, enc: Encoding, model: Model) -> None:
        self.enc = enc
        self.c = enc.c
        self.model = model
        es = enc.es
        self._static_sets = static_sets(es)
        self._static_rels = static_relations(es)
        self._names: dict[str, Internal] = {}
        self._defs: dict[str, Definition] = {}
        self._groups: dict[str, RecGroup] = {}
        self._order: dict[str, int] = {}  # definition name -> its position in the model
        for item in model.definitions:
            if isinstance(item, RecGroup):
                for d in item.definitions:
                    self._groups[d.name] = item
                    self._order[d.name] = len(self._order)
            else:
                self._defs[item.name] = item
                self._order[item.name] = len(self._order)
        self.universe = SetV({e.id: enc.exec[e.id] for e in es.events})
        self._kind = {
            e.id: W_KIND if e.kind is Kind.WRITE else R_KIND
            for e in es.events
            if e.kind in (Kind.READ, Kind.WRITE)
        }
        self._same_pairs: dict[Pair, Lit] | None = None
        self._orders: dict[Pair, tuple[Lit, Lit, Lit]] = {}
        self._ord_cache: dict[OrdV, dict[Pair, Lit]] = {}

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
                diagonal = {(e, e) for e in self.universe.members}
                pairs = self._restricted(expr, {}, diagonal)
                return self.c.land_all(lnot(lit) for lit in pairs.values())
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
        """The value of `expr`, relations as pairs."""
        return self._pairs(self._value(expr, env))

    def _value(self, expr: Expr, env: Mapping[str, Internal]) -> Internal:
        match expr:
            case Name(name=name):
                return self._name(name, env)
            case Universe():
                return self.universe
            case Empty(ty=ty):
                return SetV({}) if ty is Ty.SET else RelV({})
            case Unary(op=op, arg=arg):
                return self._unary(op, self._value(arg, env))
            case Binary(op=BinaryOp.INTER | BinaryOp.DIFF as op, left=left, right=right):
                # the right side only where the left one may hold (both ways for &)
                if op is BinaryOp.INTER and _is_seq(left) and not _is_seq(right):
                    left, right = right, left
                x = self._value(left, env)
                if isinstance(x, RelV):
                    y: Internal = RelV(self._restricted(right, env, set(x.pairs)))
                else:
                    y = self._value(right, env)
                return self._binary(op, x, y)
            case Binary(op=op, left=left, right=right):
                return self._binary(op, self._value(left, env), self._value(right, env))
            case _:
                assert_never(expr)

    def _restricted(self, expr: Expr, env: Mapping[str, Internal], keys: Keys) -> dict[Pair, Lit]:
        """The pairs of relation `expr` among `keys` (a superset of what is needed), without
        building the others where an operator allows: a sequence asks its right operand only
        for pairs that can continue a pair of its left one. Names are evaluated in full
        (and memoised) and then filtered."""
        match expr:
            case Binary(op=BinaryOp.SEQ, left=left, right=right):
                x = self._value(left, env)
                if isinstance(x, OrdV):
                    y = self._value(right, env)
                    if isinstance(y, OrdV):
                        z = ord_compose(x, y)
                        if z is not None:
                            return self._ord_pairs(z, keys)
                    xp, yp = self._ord_pairs(x), self._pairs_of(y)
                else:
                    assert isinstance(x, RelV)
                    xp = x.pairs
                    succ: dict[int, list[int]] = defaultdict(list)
                    for a, m in xp:
                        succ[a].append(m)
                    # Asking for `need` costs one pair per (key, successor): past the n * n
                    # pairs of the whole right operand (dense keys: 250 threads took 260 s
                    # here), evaluating it in full is cheaper.
                    width = sum(len(succ.get(a, ())) for a, _ in keys)
                    if width > len(self.universe.members) ** 2:
                        yp = self._pairs_of(self._value(right, env))
                    else:
                        need = {(m, b) for a, b in keys for m in succ.get(a, ())}
                        yp = self._restricted(right, env, need)
                return compose(self.c, xp, yp, keys)
            case Binary(op=BinaryOp.UNION, left=left, right=right):
                return _merge(
                    self.c,
                    [
                        *self._restricted(left, env, keys).items(),
                        *self._restricted(right, env, keys).items(),
                    ],
                )
            case Binary(op=BinaryOp.INTER | BinaryOp.DIFF as op, left=left, right=right):
                if op is BinaryOp.INTER and _is_seq(left) and not _is_seq(right):
                    left, right = right, left
                xp = self._restricted(left, env, keys)
                yp = self._restricted(right, env, set(xp))
                return _inter(self.c, xp, yp) if op is BinaryOp.INTER else _diff(self.c, xp, yp)
            case Unary(op=UnaryOp.INVERSE, arg=arg):
                inner = self._restricted(arg, env, {(b, a) for a, b in keys})
                return {(b, a): lit for (a, b), lit in inner.items()}
            case Unary(op=UnaryOp.OPT, arg=arg):
                out = self._restricted(arg, env, keys)
                for e, happens in self.universe.members.items():
                    if (e, e) in keys:
                        out[(e, e)] = self.c.lor(out.get((e, e), False), happens)
                return out
            case _:
                v = self._value(expr, env)
                if isinstance(v, OrdV):
                    return self._ord_pairs(v, keys)
                assert isinstance(v, RelV)
                return {p: lit for p, lit in v.pairs.items() if p in keys}

    def _name(self, name: str, env: Mapping[str, Internal]) -> Internal:
        if name in env:
            return env[name]
        hit = self._names.get(name)
        if hit is not None:
            return hit
        d = self._defs.get(name)
        if d is not None:
            if not env:
                self._prepare(name)
            v = self._value(d.expr, env)
        elif name in self._groups:
            self._rec_group(self._groups[name], env)
            v = self._names[name]
        else:
            v = self._builtin(name)
        if not env or name not in self._groups:
            self._names[name] = v
        return v

    def _prepare(self, name: str) -> None:
        """Translate first, in model order, the definitions `name` depends on that are not
        translated yet: each then finds its own dependencies done, so a chain of thousands
        of `let`s never recurses through the chain."""
        todo: set[str] = set()
        stack = [name]
        while stack:
            n = stack.pop()
            item = self._groups.get(n)
            exprs = [d.expr for d in item.definitions] if item else [self._defs[n].expr]
            for e in exprs:
                for m in names_in(e):
                    known = m in self._defs or (m in self._groups and self._groups[m] is not item)
                    if known and m not in self._names and m not in todo and m != n:
                        todo.add(m)
                        stack.append(m)
        for m in sorted(todo, key=self._order.__getitem__):
            if m in self._names:
                continue
            if m in self._defs:
                self._names[m] = self._value(self._defs[m].expr, {})
            else:
                self._rec_group(self._groups[m], {})

    def _rec_group(self, group: RecGroup, outer: Mapping[str, Internal]) -> None:
        """Least fixpoint by unfolding from empty: each step is exact, and a concrete chain
        grows by at least one pair per step until it stops, so `|may-fixpoint| + 1` steps
        reach the fixpoint of every execution."""
        self._prepare(group.definitions[0].name)
        cur: dict[str, Value] = {
            d.name: SetV({}) if d.ty is Ty.SET else RelV({}) for d in group.definitions
        }
        steps = 0
        stable_keys = False
        while True:
            env = dict(outer) | cur
            nxt = {d.name: self._pairs(self._value(d.expr, env)) for d in group.definitions}
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

    def _builtin(self, name: str) -> Internal:
        enc = self.enc
        if name == "rf":
            return OrdV((0, EQ, 0, 0))
        if name == "co":
            return OrdV((LT, 0, 0, 0))
        if name == "loc":
            return OrdV((ALL, ALL, ALL, ALL))
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

    # ------------------------------------------------------------ clock form to pairs

    def _pairs(self, v: Internal) -> Value:
        return RelV(self._ord_pairs(v)) if isinstance(v, OrdV) else v

    def _pairs_of(self, v: Internal) -> dict[Pair, Lit]:
        p = self._pairs(v)
        assert isinstance(p, RelV)
        return p.pairs

    def _same(self) -> dict[Pair, Lit]:
        """Every pair of accesses that may happen at one location (a == b included)."""
        if self._same_pairs is None:
            enc = self.enc
            acc = [e for e in enc.es.events if e.id in self._kind]
            out: dict[Pair, Lit] = {}
            for a in acc:
                for b in acc:
                    if a.id == b.id:
                        lit = enc.exec[a.id]
                    elif not (a.locs & b.locs):
                        continue
                    else:
                        lit = enc.same(a.id, b.id)
                    if lit is not False:
                        out[(a.id, b.id)] = lit
            self._same_pairs = out
        return self._same_pairs

    def _ord_pairs(self, v: OrdV, keys: Keys | None = None) -> dict[Pair, Lit]:
        if keys is None:
            hit = self._ord_cache.get(v)
            if hit is None:
                hit = self._ord_cache[v] = self._ord_build(v, self._same().items())
            return dict(hit)
        same = self._same()
        return self._ord_build(v, ((p, same[p]) for p in keys if p in same))

    def _ord_build(self, v: OrdV, pairs: Iterable[tuple[Pair, Lit]]) -> dict[Pair, Lit]:
        enc, kind = self.enc, self._kind
        out: dict[Pair, Lit] = {}
        for (a, b), same in pairs:
            ka, kb = kind[a], kind[b]
            mask = v.masks[2 * ka + kb]
            if not mask:
                continue
            if a == b:
                lit: Lit = same if mask & EQ else False
            elif mask == ALL:
                lit = same
            elif mask == LT and ka == kb == W_KIND:
                lit = enc.co.get((a, b), False)  # implies same
            elif mask == EQ and ka != kb:
                lit = enc.rf.get((a, b) if ka == W_KIND else (b, a), False)  # implies same
            else:
                order = self._orders.get((a, b))
                if order is None:
                    order = self._orders[(a, b)] = enc.order(a, b)
                lt, eq, gt = order
                parts = [x for bit, x in ((LT, lt), (EQ, eq), (GT, gt)) if mask & bit]
                if len(parts) == 1:
                    lit = self.c.land(same, parts[0])
                else:  # two outcomes: not the third (exactly one holds on one location)
                    (missing,) = (x for bit, x in ((LT, lt), (EQ, eq), (GT, gt)) if not mask & bit)
                    lit = self.c.land(same, lnot(missing))
            if lit is not False:
                out[(a, b)] = lit
        return out

    # ------------------------------------------------------------ operators

    def _unary(self, op: UnaryOp, v: Internal) -> Internal:
        enc = self.enc
        if isinstance(v, OrdV):
            if op is UnaryOp.INVERSE:
                m = v.masks
                return OrdV((_mirror(m[0]), _mirror(m[2]), _mirror(m[1]), _mirror(m[3])))
            if op is UnaryOp.PLUS:
                closed = ord_closure(v)
                if closed is not None:
                    return closed
            v = self._pairs(v)
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
                assert isinstance(v, RelV)
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

    def _binary(self, op: BinaryOp, x: Internal, y: Internal) -> Internal:
        if isinstance(x, OrdV) and isinstance(y, OrdV):
            pointwise = {
                BinaryOp.UNION: lambda p, q: p | q,
                BinaryOp.INTER: lambda p, q: p & q,
                BinaryOp.DIFF: lambda p, q: p & ~q,
            }.get(op)
            if pointwise is not None:
                m = [pointwise(p, q) for p, q in zip(x.masks, y.masks, strict=True)]
                return OrdV(_masks(m))
            if op is BinaryOp.SEQ:
                z = ord_compose(x, y)
                if z is not None:
                    return z
        x, y = self._pairs(x), self._pairs(y)
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


def compose(
    c: Circuit, x: dict[Pair, Lit], y: dict[Pair, Lit], keys: Keys | None = None
) -> dict[Pair, Lit]:
    """x ; y: the middle event ranges only over pairs both may-sets allow (and only pairs
    in `keys` are built, when given)."""
    by_src: dict[int, list[tuple[int, Lit]]] = defaultdict(list)
    for (m, b), lit in y.items():
        by_src[m].append((b, lit))
    acc: dict[Pair, list[Lit]] = defaultdict(list)
    for (a, m), l1 in x.items():
        for b, l2 in by_src.get(m, ()):
            if keys is not None and (a, b) not in keys:
                continue
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


def _is_seq(expr: Expr) -> bool:
    return isinstance(expr, Binary) and expr.op is BinaryOp.SEQ


def _keys(v: Value) -> frozenset[Any]:
    return frozenset(v.members) if isinstance(v, SetV) else frozenset(v.pairs)


def _all_const(v: Value) -> bool:
    lits = v.members.values() if isinstance(v, SetV) else v.pairs.values()
    return all(lit is True for lit in lits)


def _ident(name: str) -> str:
    return "".join(c if c.isalnum() else "_" for c in name)
