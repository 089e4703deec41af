"""Evaluate a cat model on one concrete execution: which checks hold, why not, and every value.

Representation (chosen for speed: the explicit engine calls this once per candidate
execution). The execution's events get dense indices 0..n-1 in the order of
`BaseRelations.events`. A set is a Python int with bit i for event i; a relation is one int of
n*n bits, bit i*n + j for the pair (i, j), so row i is `(r >> i*n) & ROW`. Union, intersection,
difference, complement and the reflexivity tests are single big-int operations; composition
and Warshall's closure are n steps each, because multiplying a column (bits i*n) by a row
(< 2**n) copies that row into every selected row without carries.

Definitions are evaluated lazily, once per call. With a `static_key`, every sub-expression that
does not depend on the dynamic built-ins (by default `rf` and `co`) is computed once and
reused for the following calls with the same key and the same events.
"""

from __future__ import annotations

import weakref
from collections import deque
from collections.abc import Callable, Collection, Hashable, Iterable, Sequence
from itertools import pairwise

from pisa_mm.cat.builtins import BUILTINS
from pisa_mm.cat.geo import Geo
from pisa_mm.cat.inline import UNION_TERMS, Inliner, Slots, chain_terms
from pisa_mm.cat.schedule import schedule
from pisa_mm.cat.support import expr_support, supports
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
    format_expr,
    names_in,
)
from pisa_mm.errors import PisaMMError
from pisa_mm.hints import Any, Protocol, assert_never
from pisa_mm.records import record

__all__ = [
    "DEFAULT_DYNAMIC",
    "BaseRelations",
    "CheckResult",
    "EvalResult",
    "Evaluator",
    "Step",
    "Witness",
    "evaluate",
]

# The built-ins that change from one candidate execution to the next of one event structure.
DEFAULT_DYNAMIC: frozenset[str] = frozenset({"rf", "co"})
# Sessions kept besides the current one (`Evaluator._switch`), on small universes only.
_SESSIONS_KEPT = 8
# How many offending pairs (or events) an `empty`/`flag` witness lists.
WITNESS_LIMIT = 8
# `Evaluator._irreflexive` keeps the last left operand of each term (to see it recur) only
# on universes whose relations have at most this many bits (8 MB: 8,192 events).
_KEPT_LEFT = 1 << 26
# Definitions this many levels deep (through other definitions) or more compute their
# dependencies bottom up before themselves (`_forcing`), instead of recursing into them.
_DEEP = 32


class BaseRelations(Protocol):
    """What an engine provides for one execution: the events that happen (the universe `_`)
    and the value of each built-in name (see `pisa_mm.cat.builtins.BUILTINS`). Ids and pairs
    outside `events` are ignored. `id` is never asked for: it is computed from `events`."""

    @property
    def events(self) -> Sequence[int]: ...

    def set(self, name: str) -> Iterable[int]: ...

    def rel(self, name: str) -> Iterable[tuple[int, int]]: ...


@record
class Step:
    """One edge of a witness: `src` is related to `dst` by `label` (a name or an expression)."""

    src: int
    dst: int
    label: str


@record
class Witness:
    """Why a check failed (or a flag was raised).

    acyclic: `cycle` is a cycle of the checked relation, one step per edge, and `events` its
    events in order. irreflexive: `cycle` goes from the offending event back to itself through
    the parts of the checked expression (a `;` chain is split into its components, a closure
    into its edges; names are not expanded: ask `EvalResult.explain` for that).
    empty/flag: `pairs` (relation) or `events` (set), the first few, sorted.
    """

    cycle: tuple[Step, ...] = ()
    pairs: tuple[tuple[int, int], ...] = ()
    events: tuple[int, ...] = ()


@record
class CheckResult:
    """`passed` means the check's test holds: the axiom is satisfied, or the flag's
    expression is empty (the flag is not raised)."""

    check: Check
    passed: bool

    @property
    def name(self) -> str:
        return self.check.name

    @property
    def raised(self) -> bool:
        """For a flag: undefined behaviour was detected."""
        return self.check.is_flag and not self.passed


_Fn = Callable[["_Ctx"], int]
# A session: its universe, its static values by slot, and per reuse group the last values
# and check results (`Evaluator._reuse`).
_Last = tuple[tuple[int | None, ...], list[int | None], dict[int, bool]]
_Session = tuple[Geo, list[int | None], list[_Last | None]]


_UNARY: dict[UnaryOp, Callable[[Geo, int], int]] = {
    UnaryOp.IDENTITY: Geo.identity,
    UnaryOp.COMPLEMENT: Geo.complement_set,  # complement_rel for relations
    UnaryOp.INVERSE: Geo.transpose,
    UnaryOp.PLUS: Geo.closure,
    UnaryOp.STAR: Geo.star,
    UnaryOp.OPT: Geo.opt,
    UnaryOp.DOMAIN: Geo.domain,
    UnaryOp.RANGE: Geo.range,
}
# The closures computed from the terms of a union on big universes.
_OF_UNION: dict[UnaryOp, Callable[[Geo, list[int]], int]] = {
    UnaryOp.PLUS: Geo.closure_of_union,
    UnaryOp.STAR: Geo.star_of_union,
}


_BINARY: dict[BinaryOp, Callable[[Geo, int, int], int]] = {
    BinaryOp.UNION: Geo.union,
    BinaryOp.INTER: Geo.inter,
    BinaryOp.DIFF: Geo.diff,
    BinaryOp.SEQ: Geo.compose,
    BinaryOp.CARTESIAN: Geo.cartesian,
}
_TEST_METHOD = {
    CheckKind.ACYCLIC: "is_acyclic",
    CheckKind.IRREFLEXIVE: "is_irreflexive",
    CheckKind.EMPTY: "is_empty",
    CheckKind.FLAG: "is_empty",
}
_TESTS: dict[CheckKind, Callable[[Geo, int], bool]] = {
    CheckKind.ACYCLIC: Geo.is_acyclic,
    CheckKind.IRREFLEXIVE: Geo.is_irreflexive,
    CheckKind.EMPTY: Geo.is_empty,
    CheckKind.FLAG: Geo.is_empty,
}


class _Ctx:
    """The state of one evaluation: values by slot (definitions, built-ins, cached nodes),
    and per reuse group (`_Group`) the results of its checks known so far."""

    __slots__ = ("base", "geo", "results", "session", "vals")

    def __init__(
        self, base: BaseRelations, geo: Geo, session: list[int | None], vals: list[int | None]
    ) -> None:
        self.base = base
        self.geo = geo
        self.session = session
        self.vals = vals
        self.results: list[dict[int, bool]] = []


@record
class _Group:
    """The values whose support (cat/support.py) is `support`, a proper part of the dynamic
    built-ins: `keys` are the slots of those built-ins, `slots` the slots of the values."""

    support: frozenset[str]
    keys: tuple[int, ...]
    slots: tuple[int, ...]


class Evaluator:
    """A model compiled for repeated concrete evaluation.

    `checks` keeps only the named checks (all by default). `dynamic` names the built-ins that
    may change between calls that share a `static_key` (see `evaluate`).
    """

    def __init__(
        self,
        model: Model,
        *,
        checks: Collection[str] | None = None,
        dynamic: Collection[str] = DEFAULT_DYNAMIC,
    ) -> None:
        self.model = model
        selected = model.checks if checks is None else model.with_checks(checks).checks
        self.dynamic = frozenset(dynamic)
        self._nslots = 0
        # Defined or built-in name -> (function reading its value, whether it is static).
        self._readers: dict[str, tuple[_Fn, bool]] = {}
        # The slots of the defined names and of the dynamic built-ins (for `_Group`).
        self._def_slots: dict[str, int] = {}
        self._inputs: dict[str, tuple[int, _Fn]] = {}
        self._fn_of: dict[int, _Fn] = {}  # id(expression node) -> its compiled function
        # Where the compiled values live, for the generated functions (cat/inline.py).
        self._slots = Slots(fns=self._fn_of)
        self._inliner = Inliner(self._slots, model.type_of, _static_cache, model.path)
        self._compile_definitions()
        tests = [self._check_test(c) for c in selected]
        self._groups, group_of = self._reuse_groups(selected)
        tests = [
            _known(k, g, t) if g is not None else t
            for k, (g, t) in enumerate(zip(group_of, tests, strict=True))
        ]
        self._axioms = [(c, t) for c, t in zip(selected, tests, strict=True) if not c.is_flag]
        self._flags = [(c, t) for c, t in zip(selected, tests, strict=True) if c.is_flag]
        # The order `fail_fast` tries the axioms in: cheapest first (cat/schedule.py).
        recursive = {
            d.name
            for item in model.definitions
            if isinstance(item, RecGroup)
            for d in item.definitions
        }
        self._schedule = schedule(
            [c for c, _ in self._axioms],
            lambda n: d.expr if (d := model.definition(n)) is not None else None,
            lambda n: n in self.dynamic or (n in self._readers and not self._readers[n][1]),
            recursive.__contains__,
        )
        self._key: Hashable | None = None
        self._geo: Geo | None = None
        self._session: list[int | None] = []
        # Per group: the key of the last evaluation of this session, its values and its
        # checks' results (see `_reuse`).
        self._last: list[_Last | None] = [None] * len(self._groups)
        # The sessions left for another static key (`_switch`), oldest first.
        self._sessions: dict[Hashable, _Session] = {}

    # ---------------------------------------------------------------- public

    @property
    def checks(self) -> tuple[Check, ...]:
        return tuple(c for c, _ in self._axioms) + tuple(c for c, _ in self._flags)

    def evaluate(
        self,
        base: BaseRelations,
        *,
        static_key: Hashable | None = None,
        fail_fast: bool = False,
    ) -> EvalResult:
        """Evaluate every selected check on the execution `base`.

        Axioms come first (in model order), then flags. With `fail_fast`, evaluation stops at
        the first failing axiom and flags are evaluated only for consistent executions.
        `static_key`: pass the same hashable value for executions whose built-ins other than
        `dynamic` are the same (e.g. one per event structure and choice of paths); values
        that depend only on those are then computed once.
        """
        events = tuple(base.events)
        geo = self._geo
        if static_key is None or static_key != self._key or geo is None or geo.events != events:
            kept = self._switch(static_key)
            if kept is not None and kept[0].events == events:
                geo, session, self._last = kept
            else:
                geo = Geo(events)
                session = [None] * self._nslots
                self._last = [None] * len(self._groups)
            # Without a key, no session: the next call with one starts or takes back its own.
            self._key, self._geo, self._session = static_key, geo, session
        else:
            session = self._session
        ctx = _Ctx(base, geo, session, session.copy())
        if self._groups:
            self._reuse(ctx)
        if fail_fast:
            # Cheapest first; on a failure, which axiom failed first in model order is
            # settled only if asked (`EvalResult._complete`).
            axioms = self._axioms
            known: list[bool | None] = [None] * len(axioms)
            for i in self._schedule:
                if not axioms[i][1](ctx):
                    known[i] = False
                    return EvalResult(self, ctx, [], False, known)
                known[i] = True
            passed = [True] * len(axioms)
            consistent = True
        else:
            passed = [bool(test(ctx)) for _, test in self._axioms]
            consistent = all(passed)
        if consistent or not fail_fast:
            passed.extend(bool(test(ctx)) for _, test in self._flags)
        return EvalResult(self, ctx, passed, consistent)

    def _switch(self, static_key: Hashable | None) -> _Session | None:
        """Leave the current session for that of `static_key`: the current one is kept (on
        a small universe, with the last few others) and the one of `static_key`, if kept,
        taken back. The candidates of one choice of paths may alternate between sets of
        events (a compare-and-swap that succeeds or not by the value it reads), each one a
        session whose static values need not be computed twice."""
        sessions = self._sessions
        geo = self._geo
        if self._key is not None and geo is not None and not geo.big:
            if len(sessions) >= _SESSIONS_KEPT:
                del sessions[next(iter(sessions))]
            sessions[self._key] = (geo, self._session, self._last)
        return None if static_key is None else sessions.pop(static_key, None)

    def _reuse(self, ctx: _Ctx) -> None:
        """Take from the session's previous evaluation the values (and check results) of each
        group whose dynamic built-ins have the same value in both: candidates that share rf
        share every value computed from rf alone. The dynamic built-ins are read first."""
        vals = ctx.vals
        for slot, reader in self._inputs.values():
            if vals[slot] is None:
                reader(ctx)
        results = ctx.results
        last = self._last
        for k, group in enumerate(self._groups):
            key = tuple([vals[s] for s in group.keys])
            before = last[k]
            if before is not None and before[0] == key:
                old = before[1]
                for s in group.slots:
                    v = old[s]
                    if v is not None:
                        vals[s] = v
                known = before[2]
            else:
                known = {}
            results.append(known)
            last[k] = (key, vals, known)

    # ---------------------------------------------------------------- compilation

    def _reuse_groups(self, checks: Sequence[Check]) -> tuple[list[_Group], list[int | None]]:
        """The groups of values by support, for the supports that are a proper part of the
        dynamic built-ins the model reads, and the group of each check (None: none)."""
        read = frozenset(self._inputs)
        if len(read) < 2:
            return [], [None] * len(checks)
        of_name = supports(self.model, self.dynamic)
        by_support: dict[frozenset[str], list[int]] = {}
        for name, slot in self._def_slots.items():
            sup = of_name.get(name, frozenset())
            if sup and sup < read:
                by_support.setdefault(sup, []).append(slot)
        for check in checks:
            sup = expr_support(check.expr, of_name, self.dynamic)
            if sup and sup < read:
                by_support.setdefault(sup, [])
        groups = []
        for sup, slots in by_support.items():
            keys = tuple(self._inputs[n][0] for n in sorted(sup))
            groups.append(_Group(sup, keys, tuple(slots)))
        index = {g.support: k for k, g in enumerate(groups)}
        group_of = [index.get(expr_support(c.expr, of_name, self.dynamic)) for c in checks]
        return groups, group_of

    def _new_slot(self) -> int:
        self._nslots += 1
        return self._nslots - 1

    def _compile_definitions(self) -> None:
        # How many definitions deep each one is, what it uses and where its value lives: a
        # definition deeper than _DEEP computes its dependencies bottom up first (see
        # `_forcing`), so that a chain of thousands of `let`s never recurses that deep.
        depth: dict[str, int] = {}
        deps: dict[str, tuple[str, ...]] = {}
        slot_of: dict[str, int] = {}
        raw: dict[str, _Fn] = {}
        for item in self.model.definitions:
            group = item.definitions if isinstance(item, RecGroup) else (item,)
            own = {d.name for d in group}
            used = tuple(sorted({n for d in group for n in names_in(d.expr) if n in depth} - own))
            level = 1 + max((depth[n] for n in used), default=0)
            if isinstance(item, Definition):
                fn, static = self._compile(item.expr)
                if isinstance(item.expr, Unary | Binary):
                    fn = self._inliner.function(item.expr, static=static)
                slots = [self._new_slot()]
                self._readers[item.name] = (_slot_reader(slots[0], fn, static), static)
            else:
                slots = self._compile_rec_group(item)
            for d, slot in zip(group, slots, strict=True):
                depth[d.name], deps[d.name], slot_of[d.name] = level, used, slot
                self._def_slots[d.name] = slot
                raw[d.name] = self._readers[d.name][0]
                if level > _DEEP:
                    forcing = _forcing(d.name, raw, deps, slot_of)
                    self._readers[d.name] = (forcing, self._readers[d.name][1])
                    self._slots.calls[d.name] = forcing
                elif isinstance(item, Definition):
                    self._slots.names[d.name] = (slot, raw[d.name])
                else:
                    self._slots.calls[d.name] = raw[d.name]

    def _compile_rec_group(self, group: RecGroup) -> list[int]:
        slots = [self._new_slot() for _ in group.definitions]
        bodies: list[_Fn] = []

        def fixpoint(c: _Ctx) -> None:
            # Kleene iteration from empty; the checker made sure every body is monotone.
            vals = c.vals
            for slot in slots:
                vals[slot] = 0
            while True:
                new = [body(c) for body in bodies]
                if all(v == vals[s] for v, s in zip(new, slots, strict=True)):
                    return
                for v, s in zip(new, slots, strict=True):
                    vals[s] = v

        # Readers first: the bodies refer to the group's names. Never static: the bodies read
        # the slots while iterating.
        for d, slot in zip(group.definitions, slots, strict=True):
            self._readers[d.name] = (_rec_reader(slot, fixpoint), False)
        bodies.extend(self._compile(d.expr)[0] for d in group.definitions)
        return slots

    def _check_test(self, check: Check) -> Callable[[_Ctx], bool]:
        fn, static = self._compile(check.expr)
        holds = _TESTS[check.kind]
        if not static and isinstance(check.expr, Unary | Binary):
            inlined = self._inliner.function(check.expr, f"geo.{_TEST_METHOD[check.kind]}({{}})")
            if check.kind is CheckKind.IRREFLEXIVE:
                return self._irreflexive(check.expr, inlined)
            return inlined

        def test(c: _Ctx) -> bool:
            return holds(c.geo, fn(c))

        return test

    def _irreflexive(self, expr: Expr, inlined: Callable[[_Ctx], bool]) -> Callable[[_Ctx], bool]:
        """`irreflexive e`, which on a big universe tests each term `a ; b` of e's unions as
        `a^-1 & b` empty (x a y b x for some y) once a is the value of the previous
        evaluation: its transposition is then memoised, where composing a with b (eco,
        which changes with every candidate) costs n row operations per candidate."""
        # per term: a's function, b's, and [a, a^-1, the universe] of the last evaluation
        parts: list[tuple[_Fn, _Fn | None, list[Any]]] = []
        for term in chain_terms(expr, BinaryOp.UNION):
            factors = chain_terms(term, BinaryOp.SEQ)
            if len(factors) < 2:
                parts.append((self._fn_of[id(term)], None, [None, None, None]))
                continue
            head = factors[0]
            for f in factors[1:-1]:
                head = Binary(BinaryOp.SEQ, head, f, f.span)
            fa = self._fn_of[id(head)] if len(factors) == 2 else self._compile(head)[0]
            parts.append((fa, self._fn_of[id(factors[-1])], [None, None, None]))

        def test(c: _Ctx) -> bool:
            geo = c.geo
            if not geo.big or geo.n * geo.n > _KEPT_LEFT:
                return inlined(c)
            for left, right, last in parts:
                a = left(c)
                if right is None:
                    if a & geo.diag:
                        return False
                    continue
                if not a:
                    continue
                b = right(c)
                seen = last[0]
                if seen is a or seen == a:
                    if last[2] is not geo:  # a^-1 of the same bits on another universe
                        last[1], last[2] = geo.transpose(a), geo
                    if last[1] & b:
                        return False
                    continue
                if geo.compose(a, b) & geo.diag:
                    return False
                last[0], last[2] = a, None
            return True

        return test

    def _compile(self, expr: Expr) -> tuple[_Fn, bool]:
        """The function computing `expr`, and whether it is static (no dynamic built-in)."""
        fn, static = self._compile_node(expr)
        if static and isinstance(expr, Unary | Binary):
            slot = self._new_slot()
            fn = _static_cache(slot, fn)
            self._slots.nodes[id(expr)] = (slot, fn)
        self._fn_of[id(expr)] = fn
        return fn, static

    def _compile_node(self, expr: Expr) -> tuple[_Fn, bool]:
        match expr:
            case Name(name=name):
                return self._compile_name(name)
            case Universe():
                return (lambda c: c.geo.rowmask), True
            case Empty():
                return (lambda c: 0), True
            case Unary(op=op, arg=arg):
                return self._compile_unary(op, arg)
            case Binary(op=op, left=left, right=right):
                return self._compile_binary(op, left, right)
            case _:
                assert_never(expr)

    def _compile_name(self, name: str) -> tuple[_Fn, bool]:
        known = self._readers.get(name)
        if known is not None:
            return known
        if name == "id":
            self._readers[name] = ((lambda c: c.geo.diag), True)
        else:
            # A built-in: fetched from the engine once per call (or per static session).
            static = name not in self.dynamic
            getter = _builtin_getter(name)
            slot = self._new_slot()
            self._readers[name] = (_slot_reader(slot, getter, static), static)
            self._slots.names[name] = (slot, self._readers[name][0])
            if not static:
                self._inputs[name] = (slot, self._readers[name][0])
        return self._readers[name]

    def _compile_unary(self, op: UnaryOp, arg: Expr) -> tuple[_Fn, bool]:
        f, static = self._compile(arg)
        method = _UNARY[op]
        if op is UnaryOp.COMPLEMENT and self.model.type_of(arg) is Ty.REL:
            method = Geo.complement_rel
        if op in _OF_UNION and not static:
            terms = chain_terms(arg, BinaryOp.UNION)
            if 1 < len(terms) <= UNION_TERMS:
                return self._closure_of_union(method, _OF_UNION[op], f, terms), static

        def g(c: _Ctx) -> int:
            return method(c.geo, f(c))

        return g, static

    def _closure_of_union(
        self,
        method: Callable[[Geo, int], int],
        of_union: Callable[[Geo, list[int]], int],
        whole: _Fn,
        terms: list[Expr],
    ) -> _Fn:
        """`(a | b | ...)+` (or `*`): on a big universe, from the values of the terms
        (`Geo.closure_of_union`); each term was compiled with the union."""
        parts = [self._fn_of[id(t)] for t in terms]

        def g(c: _Ctx) -> int:
            geo = c.geo
            if not geo.big:
                return method(geo, whole(c))
            return of_union(geo, [p(c) for p in parts])

        return g

    def _compile_binary(self, op: BinaryOp, left: Expr, right: Expr) -> tuple[_Fn, bool]:
        if op is BinaryOp.SEQ:
            # `[S] ; r` and `r ; [S]` are masks, not compositions (the common case in models).
            if isinstance(left, Unary) and left.op is UnaryOp.IDENTITY:
                return self._masked(left, right, rows=True)
            if isinstance(right, Unary) and right.op is UnaryOp.IDENTITY:
                return self._masked(right, left, rows=False)
        f, fs = self._compile(left)
        g, gs = self._compile(right)
        method = _BINARY[op]
        h: _Fn
        if op is BinaryOp.UNION:

            def h(c: _Ctx) -> int:
                return f(c) | g(c)

        else:
            # An empty left operand makes the result empty: skip the right one (lazily
            # evaluated definitions behind it may then never be computed).
            def h(c: _Ctx) -> int:
                a = f(c)
                return method(c.geo, a, g(c)) if a else 0

        return h, fs and gs

    def _masked(self, identity: Unary, rel_expr: Expr, *, rows: bool) -> tuple[_Fn, bool]:
        s, ss = self._compile(identity.arg)
        r, rs = self._compile(rel_expr)
        # Witnesses may still ask for the value of `[S]` itself.
        self._fn_of[id(identity)] = lambda c: c.geo.identity(s(c))
        # The mask depends on the set only: cache it separately when the set is static.
        method = Geo.rows if rows else Geo.cols

        def compute_mask(c: _Ctx) -> int:
            return method(c.geo, s(c))

        mask: _Fn = compute_mask
        if ss:
            slot = self._new_slot()
            mask = _static_cache(slot, compute_mask)
            self._slots.masks[(id(identity), rows)] = (slot, mask)

        def h(c: _Ctx) -> int:
            m = mask(c)
            return r(c) & m if m else 0

        return h, ss and rs


def _known(index: int, group: int, test: Callable[[_Ctx], bool]) -> Callable[[_Ctx], bool]:
    """The test of check `index`, whose result is kept in its group's results: an earlier
    evaluation with the same dynamic built-ins it reads may have found it already."""

    def known(c: _Ctx) -> bool:
        results = c.results[group]
        hit = results.get(index)
        if hit is None:
            hit = results[index] = test(c)
        return hit

    return known


def _forcing(
    name: str, raw: dict[str, _Fn], deps: dict[str, tuple[str, ...]], slot_of: dict[str, int]
) -> _Fn:
    """The reader of a deep definition: first compute, with an explicit stack, every
    definition it depends on (transitively) that has no value yet, deepest first; each of
    them then finds the values it needs already there."""
    mine, slot = raw[name], slot_of[name]

    def read(c: _Ctx) -> int:
        vals = c.vals
        if vals[slot] is None:
            stack = [name]
            while stack:
                top = stack[-1]
                pending = [d for d in deps[top] if vals[slot_of[d]] is None]
                if pending:
                    stack.extend(pending)
                    continue
                stack.pop()
                if vals[slot_of[top]] is None:
                    raw[top](c)
        return mine(c)

    return read


def _slot_reader(slot: int, compute: _Fn, static: bool) -> _Fn:
    if static:
        return _static_cache(slot, compute)

    def read(c: _Ctx) -> int:
        v = c.vals[slot]
        if v is None:
            v = c.vals[slot] = compute(c)
        return v

    return read


def _static_cache(slot: int, compute: _Fn) -> _Fn:
    def read(c: _Ctx) -> int:
        v = c.vals[slot]
        if v is None:
            v = c.vals[slot] = c.session[slot] = compute(c)
        return v

    return read


def _rec_reader(slot: int, fixpoint: Callable[[_Ctx], None]) -> _Fn:
    def read(c: _Ctx) -> int:
        v = c.vals[slot]
        if v is None:
            fixpoint(c)
            v = c.vals[slot]
            assert v is not None
        return v

    return read


def _builtin_getter(name: str) -> _Fn:
    if BUILTINS[name].ty is Ty.SET:

        def get_set(c: _Ctx) -> int:
            return c.geo.set_bits(c.base.set(name))

        return get_set

    def get_rel(c: _Ctx) -> int:
        return c.geo.rel_bits(c.base.rel(name))

    return get_rel


class EvalResult:
    """The outcome of one evaluation: check results, witnesses and values, computed lazily."""

    __slots__ = ("_ctx", "_ev", "_known", "_passed_list", "consistent")

    def __init__(
        self,
        ev: Evaluator,
        ctx: _Ctx,
        passed: list[bool],
        consistent: bool,
        known: list[bool | None] | None = None,
    ) -> None:
        self._ev = ev
        self._ctx = ctx
        self._passed_list = passed
        # A fail_fast evaluation that stopped out of model order: per axiom, its result
        # or None if untried; `_passed` completes it when asked.
        self._known = known
        self.consistent = consistent  # every evaluated axiom holds

    @property
    def _passed(self) -> list[bool]:
        """The results of the axioms in model order up to the first failing one (all of
        them when none fails, or without fail_fast), then those of the flags (evaluated
        only when no axiom fails, or without fail_fast)."""
        known = self._known
        if known is not None:
            passed: list[bool] = []
            for (_, test), ok in zip(self._ev._axioms, known, strict=True):
                if ok is None:
                    ok = bool(test(self._ctx))
                passed.append(ok)
                if not ok:
                    break
            self._passed_list, self._known = passed, None
        return self._passed_list

    @property
    def results(self) -> tuple[CheckResult, ...]:
        """The evaluated checks (with `fail_fast`, those up to the first failure)."""
        # Axioms then flags; zip stops where a fail_fast evaluation stopped.
        order = self._ev.checks
        return tuple(CheckResult(c, p) for c, p in zip(order, self._passed, strict=False))

    @property
    def failed(self) -> tuple[str, ...]:
        """Names of the axioms that do not hold."""
        # Straight from the booleans: engines ask this for every candidate execution.
        axioms = self._ev._axioms
        return tuple(c.name for (c, _), p in zip(axioms, self._passed, strict=False) if not p)

    @property
    def flags(self) -> tuple[str, ...]:
        """Names of the flags raised."""
        raised = self._passed[len(self._ev._axioms) :]
        if all(raised):  # most executions raise none: no generator
            return ()
        return tuple(c.name for (c, _), p in zip(self._ev._flags, raised, strict=False) if not p)

    def result(self, name: str) -> CheckResult | None:
        """The result of the check `name`, or None if it was not evaluated."""
        for r in self.results:
            if r.name == name:
                return r
        self._ev.model.check(name)  # a PisaMMError if the model has no such check
        return None

    # ---------------------------------------------------------------- values

    def value(self, name: str) -> frozenset[int] | frozenset[tuple[int, int]]:
        """The value of a defined or built-in name in this execution."""
        if self._type(name) is Ty.SET:
            return self.set_value(name)
        return self.rel_value(name)

    def set_value(self, name: str) -> frozenset[int]:
        if self._type(name) is not Ty.SET:
            raise TypeError(f"'{name}' is a relation")
        return frozenset(self._ctx.geo.members(self._bits(name)))

    def rel_value(self, name: str) -> frozenset[tuple[int, int]]:
        if self._type(name) is not Ty.REL:
            raise TypeError(f"'{name}' is a set")
        return frozenset(self._ctx.geo.pairs(self._bits(name)))

    def _type(self, name: str) -> Ty:
        ty = self._ev.model.types.get(name)
        if ty is None:
            if name in BUILTINS:
                return BUILTINS[name].ty
            raise PisaMMError.at(None, f"model has no name '{name}'", "cat-name")
        return ty

    def _bits(self, name: str) -> int:
        reader = self._ev._readers.get(name)
        if reader is not None:
            return reader[0](self._ctx)
        if name == "id":
            return self._ctx.geo.diag
        return _builtin_getter(name)(self._ctx)  # a built-in the model itself does not use

    def _expr_bits(self, expr: Expr) -> int:
        return self._ev._fn_of[id(expr)](self._ctx)

    # ---------------------------------------------------------------- witnesses

    def witness(self, name: str) -> Witness | None:
        """Why check `name` failed (a flag: why it was raised); None if it passed."""
        check = self._ev.model.check(name)
        r = self.result(name)
        if r is None or r.passed:
            return None
        g = self._ctx.geo
        value = self._expr_bits(check.expr)
        match check.kind:
            case CheckKind.ACYCLIC:
                cycle = self._cycle(value)
                edges = pairwise([*cycle, cycle[0]])
                steps = [s for a, b in edges for s in self._steps(check.expr, a, b)]
                return self._cycle_witness(steps)
            case CheckKind.IRREFLEXIVE:
                i = _first_bit(value & g.diag) // (g.n + 1)
                steps = self._steps(check.expr, i, i) or [Step(i, i, format_expr(check.expr))]
                return self._cycle_witness(steps)
            case CheckKind.EMPTY | CheckKind.FLAG:
                if self._ev.model.type_of(check.expr) is Ty.SET:
                    return Witness(events=tuple(sorted(g.members(value)))[:WITNESS_LIMIT])
                return Witness(pairs=tuple(sorted(g.pairs(value)))[:WITNESS_LIMIT])
            case _:
                assert_never(check.kind)

    def explain(self, name_or_expr: str | Expr, src: int, dst: int) -> tuple[Step, ...]:
        """Why `src` is related to `dst` by a defined name (or an expression of the model),
        one level down: its definition's `;` chains split, closures unrolled into edges, names
        left as they are. Empty if the pair is not in the relation."""
        g = self._ctx.geo
        if isinstance(name_or_expr, str):
            definition = self._ev.model.definition(name_or_expr)
            if definition is None:
                return (Step(src, dst, name_or_expr),)
            expr = definition.expr
        else:
            expr = name_or_expr
        i, j = g.index.get(src), g.index.get(dst)
        if i is None or j is None or not g.has(self._expr_bits(expr), i, j):
            return ()
        steps = self._steps(expr, i, j)
        return tuple(Step(g.events[s.src], g.events[s.dst], s.label) for s in steps)

    def _cycle_witness(self, steps: list[Step]) -> Witness:
        ev = self._ctx.geo.events
        cycle = tuple(Step(ev[s.src], ev[s.dst], s.label) for s in steps)
        return Witness(cycle=cycle, events=tuple(s.src for s in cycle))

    def _cycle(self, r: int) -> list[int]:
        """A shortest cycle of r through the first event that lies on a cycle (indices)."""
        g = self._ctx.geo
        start = _first_bit(g.closure(r) & g.diag) // (g.n + 1)
        path = self._path(r, start, start)
        assert path is not None
        return path[:-1]

    def _path(self, r: int, i: int, j: int) -> list[int] | None:
        """A shortest path of r edges from i to j (at least one edge), as indices i..j."""
        g = self._ctx.geo
        parent: dict[int, int] = {}
        queue = deque([i])
        while queue:
            a = queue.popleft()
            row = g.row(r, a)
            while row:
                low = row & -row
                b = low.bit_length() - 1
                row ^= low
                if b in parent:
                    continue
                parent[b] = a
                if b == j:
                    path = [j]
                    while path[-1] != i or len(path) == 1:
                        path.append(parent[path[-1]])
                    return path[::-1]
                queue.append(b)
        return None

    def _steps(self, expr: Expr, i: int, j: int) -> list[Step]:
        """Steps (on indices) from i to j through `expr`, assuming (i, j) is in it."""
        g = self._ctx.geo
        match expr:
            case Name(name=name):
                return [Step(i, j, name)]
            case Unary(op=UnaryOp.IDENTITY):
                return []
            case Unary(op=UnaryOp.OPT | UnaryOp.STAR) if i == j:
                return []
            case Unary(op=UnaryOp.OPT, arg=arg):
                return self._steps(arg, i, j)
            case Unary(op=UnaryOp.PLUS | UnaryOp.STAR, arg=arg):
                path = self._path(self._expr_bits(arg), i, j)
                assert path is not None
                return [s for a, b in pairwise(path) for s in self._steps(arg, a, b)]
            case Unary(op=UnaryOp.INVERSE, arg=arg):
                back = self._steps(arg, j, i)
                return [Step(s.dst, s.src, f"{s.label}^-1") for s in reversed(back)]
            case Binary(op=BinaryOp.UNION, left=left, right=right):
                side = left if g.has(self._expr_bits(left), i, j) else right
                return self._steps(side, i, j)
            case Binary(op=BinaryOp.INTER | BinaryOp.DIFF, left=left):
                # The right operand filters (ext, loc, scope-ok...): the path is the left's.
                return self._steps(left, i, j)
            case Binary(op=BinaryOp.SEQ, left=left, right=right):
                mid = g.row(self._expr_bits(left), i) & _column(g, self._expr_bits(right), j)
                k = _first_bit(mid)
                return self._steps(left, i, k) + self._steps(right, k, j)
            case _:
                return [Step(i, j, format_expr(expr))]


def _first_bit(x: int) -> int:
    assert x, "no bit set"
    return (x & -x).bit_length() - 1


def _column(g: Geo, r: int, j: int) -> int:
    """Column j of r as a set (bit i when (i, j) is in r)."""
    return g.domain(r & g.cols(1 << j))


_CACHE: weakref.WeakKeyDictionary[Model, dict[tuple[str, ...] | None, Evaluator]]
_CACHE = weakref.WeakKeyDictionary()


def evaluate(
    model: Model,
    base: BaseRelations,
    *,
    checks: Collection[str] | None = None,
    fail_fast: bool = False,
) -> EvalResult:
    """Evaluate `model` on one execution (compiling it once per model and check selection).

    For many executions of one event structure, use an `Evaluator` and its `static_key`."""
    key = None if checks is None else tuple(sorted(checks))
    per_model = _CACHE.setdefault(model, {})
    evaluator = per_model.get(key)
    if evaluator is None:
        evaluator = per_model[key] = Evaluator(model, checks=checks)
    return evaluator.evaluate(base, fail_fast=fail_fast)
