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

import functools
import operator
import weakref
from collections import deque
from collections.abc import Callable, Collection, Hashable, Iterable, Iterator, Sequence
from itertools import pairwise

from pisa_mm.cat import rows as big
from pisa_mm.cat.builtins import BUILTINS
from pisa_mm.cat.compact import SHAPES, Apart, Blocks, Classes, Forest, Orders, Rows
from pisa_mm.cat.inline import Inliner, Slots
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
from pisa_mm.hints import Any, Protocol, TypeVar, assert_never, cast
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
# How many offending pairs (or events) an `empty`/`flag` witness lists.
WITNESS_LIMIT = 8
# Universes of at most this many events build their bit matrices (at most 1,024 bits) by
# or-ing into an int (`_Geo.rel_bits`).
_SMALL = 32
# Universes of more than this many events close, compose and transpose relations row by row
# (cat/rows.py): the column-at-a-time algorithms shift all n*n bits at each of their n steps.
_BIG = 96
# Entries of each memo (`_Geo.closures`, `_Geo.composed`, `_Geo.shapes`): many on a small
# universe, a few on a big one (each value is n*n bits; hashing one is a pass over it).
_MEMO_LIMIT = 4096
# Entries of the memos shared by the small universes of every size (`_shared_memos`):
# at most about 10 MB of values of 32 events.
_SHARED_LIMIT = 4 * _MEMO_LIMIT
_BIG_MEMO_LIMIT = 8
# Relations of at most this many pairs are taken pair by pair on big universes.
_FEW = 16
# Entries of a small universe's memo of the bits of the pair collections it was given, by
# identity (`_Geo.rel_bits`): an engine passes the same rf to each coherence order of it.
_GIVEN_KEPT = 64
# Relations whose rows `_Geo.split` keeps (the last ones split or joined).
_ROWS_KEPT = 16
# On the biggest universes, the memos and the kept rows of `_Geo` hold fewer entries, so that
# each holds about this many bytes at most (each entry is n*n bits: 72 MB at the 24,000
# events of 8,000 work-items), and never fewer than 2.
_KEPT_BYTES = 1 << 28
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
_K = TypeVar("_K")
_V = TypeVar("_V")


@functools.cache
def _masks(n: int) -> tuple[int, int, int, int, tuple[int, ...]]:
    """For n events: the row mask, the column mask (bits i*n), the diagonal, the full
    relation, and for each byte value v the column vector of its bits (bit k -> bit k*n)."""
    colmask = big.from_positions(range(0, n * n, n), n * n)
    diag = big.from_positions(range(0, n * n, n + 1), n * n)
    spread8 = tuple(sum(1 << (k * n) for k in range(8) if v >> k & 1) for v in range(256))
    return (1 << n) - 1, colmask, diag, (1 << (n * n)) - 1, spread8


# The pair collections whose emptiness is tested cheaply (no ABC isinstance).
_SIZED = frozenset({frozenset, set, tuple, list})
# The pair collections that never change (frozen records for the shapes).
_IMMUTABLE = frozenset({frozenset, tuple}) | SHAPES
_Memos = tuple[dict[int, int], dict[tuple[int, int], int], dict[int, int]]
_SHARED: dict[int, _Memos] = {}


def _shared_memos(n: int) -> _Memos:
    """The closures, compositions and transposes memoised for the small universes of n
    events, in this process (each memo bounded by _MEMO_LIMIT, as a universe's own; all
    of them cleared when they hold more than _SHARED_LIMIT entries together)."""
    shared = list(_SHARED.values())  # one copy: another thread may add a size
    if sum(len(m) for memos in shared for m in memos) > _SHARED_LIMIT:
        for memos in shared:
            for m in memos:
                m.clear()
    hit = _SHARED.get(n)
    if hit is None:
        hit = _SHARED[n] = ({}, {}, {})
    return hit


# The bits of the shapes (`_Geo.shape_bits`) of the small universes, per universe (its events
# in order: the bits depend on them alone), for this many universes at most.
_SHAPES_KEPT = 256
_SHAPES: dict[tuple[int, ...], dict[Rows, int]] = {}


def _shared_shapes(events: tuple[int, ...]) -> dict[Rows, int]:
    """The shape memo of the small universe `events`, shared in this process: the tests of
    one suite share their program orders, threads and scopes (each memo bounded by
    _MEMO_LIMIT, as a universe's own; all of them dropped past _SHAPES_KEPT universes)."""
    hit = _SHAPES.get(events)
    if hit is None:
        if len(_SHAPES) >= _SHAPES_KEPT:
            _SHAPES.clear()
        hit = _SHAPES[events] = {}
    return hit


class _Geo:
    """The dense indexing of one universe and the bit masks that go with it."""

    __slots__ = (
        "big",
        "clock",
        "closures",
        "colmask",
        "composed",
        "diag",
        "events",
        "full_rel",
        "given",
        "index",
        "memo_limit",
        "n",
        "rowmask",
        "rows_kept",
        "rows_of",
        "shapes",
        "splits",
        "spread8",
        "transposed",
    )

    def __init__(self, events: tuple[int, ...]) -> None:
        n = len(events)
        self.events = events
        self.n = n
        self.index = {e: i for i, e in enumerate(events)}
        if len(self.index) != n:
            raise ValueError("BaseRelations.events has duplicates")
        if n > _BIG:
            # Each mask is n*n bits (72 MB at 24,000 events): the column mask and the full
            # relation are made when first used (`__getattr__`), and none is kept past this
            # universe (`_masks` keeps those of small ones for the next candidates).
            self.rowmask = (1 << n) - 1
            self.diag = big.from_positions(range(0, n * n, n + 1), n * n)
            # `spread` builds the column vectors of big universes itself
            self.spread8: tuple[int, ...] = ()
        else:
            self.rowmask, self.colmask, self.diag, self.full_rel, self.spread8 = _masks(n)
        # On small universes, closures and compositions are memoised by value: the
        # candidates of one session share many (hb of two spaces alike, the same sw under
        # different co). On big ones too, and transpositions and shapes (the same co in
        # every candidate), a few of each. Bounded: cleared when full.
        small = n <= _SMALL
        self.big = n > _BIG
        self.clock = 0  # for the memos of a big universe (`memo`)
        kept = max(2, _KEPT_BYTES // max(1, n * n // 8))
        self.memo_limit = min(_BIG_MEMO_LIMIT, kept) if self.big else _MEMO_LIMIT
        self.rows_kept = min(_ROWS_KEPT, kept)
        self.closures: dict[int, int] | None = None
        self.composed: dict[tuple[int, int], int] | None = None
        if small:
            # Shared by every universe of n events: a value's closure, composition or
            # transpose depends on n alone, and the tests of one suite share many of them.
            self.closures, self.composed, self.transposed = _shared_memos(n)
        else:
            self.transposed = {}
            if self.big:
                self.closures, self.composed = {}, {}
        self.shapes: dict[Rows, int] = _shared_shapes(events) if small else {}
        self.given: dict[int, tuple[object, int]] | None = {} if small else None
        self.splits: dict[int, list[int]] = {}
        # The rows of the last few relations split or joined (cat/rows.py), by identity:
        # one value is often the operand of several operations (hb in three checks).
        self.rows_of: dict[int, tuple[int, list[int]]] = {}

    def __getattr__(self, name: str) -> int:
        # Called only for a slot not set yet: the big masks `__init__` leaves to first use.
        n = self.n
        if name == "colmask":
            value = big.from_positions(range(0, n * n, n), n * n)
        elif name == "full_rel":
            value = (1 << (n * n)) - 1
        else:
            raise AttributeError(name)
        setattr(self, name, value)
        return value

    # Bits are set in a bytearray and converted once: `bits |= 1 << k` on an int copies
    # it, which makes a relation of m pairs over n events cost m * n * n / 64.
    def set_bits(self, ids: Iterable[int]) -> int:
        index = self.index
        if self.n <= _SMALL:
            bits = 0
            for e in ids:
                i = index.get(e)
                if i is not None:
                    bits |= 1 << i
            return bits
        buf = bytearray((self.n + 7) // 8)
        for e in ids:
            i = index.get(e)
            if i is not None:
                buf[i >> 3] |= 1 << (i & 7)
        return int.from_bytes(buf, "little")

    def rel_bits(self, pairs: Iterable[tuple[int, int]]) -> int:
        given = self.given
        if given is not None and type(pairs) in _IMMUTABLE:
            # By identity, the object kept alive with its bits (its id is not reused while
            # it is here): a hit costs no hash of a shape's fields, no pass over the pairs.
            hit = given.get(id(pairs))
            if hit is not None and hit[0] is pairs:
                return hit[1]
            bits = self._rel_bits(pairs)
            if len(given) >= _GIVEN_KEPT:
                given.clear()
            given[id(pairs)] = (pairs, bits)
            return bits
        return self._rel_bits(pairs)

    def _rel_bits(self, pairs: Iterable[tuple[int, int]]) -> int:
        if type(pairs) in SHAPES:
            return self.shape_bits(pairs)  # type: ignore[arg-type]
        if type(pairs) in _SIZED and not pairs:
            return 0  # no rf yet (a partial candidate), no rmw: no n*n-bit buffer
        index, n = self.index, self.n
        if n <= _SMALL:
            # A few machine words: or-ing into the int is cheaper than the buffer.
            bits = 0
            for a, b in pairs:
                i, j = index.get(a), index.get(b)
                if i is not None and j is not None:
                    bits |= 1 << (i * n + j)
            return bits
        buf = bytearray((n * n + 7) // 8)
        for a, b in pairs:
            i, j = index.get(a), index.get(b)
            if i is not None and j is not None:
                k = i * n + j
                buf[k >> 3] |= 1 << (k & 7)
        return int.from_bytes(buf, "little")

    def shape_bits(self, rel: Rows) -> int:
        """The bits of a relation given by its shape (cat/compact.py): a row per event,
        each built in n/64 word steps, and no pair listed. Memoised by value: the
        candidates of one session share their co orders, and loc when it is dynamic."""
        return self.memo(self.shapes, rel, self._shape_bits)

    def _shape_bits(self, rel: Rows) -> int:
        if self.n <= _SMALL and isinstance(rel, Classes | Apart | Blocks):
            return self._small_products(rel)
        index = self.index
        rows = [0] * self.n
        match rel:
            case Classes(classes=classes) | Apart(classes=classes):
                for group in classes:
                    bits = self.set_bits(group)
                    for e in group:
                        i = index.get(e)
                        if i is not None:
                            rows[i] = bits
                if isinstance(rel, Apart):
                    # Every other event of `events` outside one's own class.
                    among = self.set_bits(rel.events)
                    apart = [0] * self.n
                    for i in _bits_of(among):
                        apart[i] = among & ~rows[i] & ~(1 << i)
                    rows = apart
            case Orders(chains=chains):
                for order, after in chains:
                    tail = self.set_bits(after)
                    for e in reversed(order):
                        i = index.get(e)
                        if i is not None:
                            rows[i] |= tail
                            tail |= 1 << i
            case Blocks(blocks=blocks):
                for left, right in blocks:
                    bits = self.set_bits(right)
                    for i in _bits_of(self.set_bits(left)):
                        rows[i] |= bits
            case Forest(parents=parents):
                # Descendants, deepest first: each node adds its own to its parent's.
                below = [0] * len(parents)
                for e in sorted(range(len(parents)), key=_depths(parents).__getitem__)[::-1]:
                    p = parents[e]
                    if p is not None:
                        i = index.get(e)
                        below[p] |= below[e] if i is None else below[e] | 1 << i
                for e, i in index.items():
                    if 0 <= e < len(parents):
                        rows[i] = below[e]
            case _:
                assert_never(rel)
        if self.n <= _SMALL:
            # A few machine words: shifting each row into place is cheaper than merging.
            n, bits = self.n, 0
            for i, row in enumerate(rows):
                if row:
                    bits |= row << (i * n)
            return bits
        return self.join(rows)

    def _small_products(self, rel: Classes | Apart | Blocks) -> int:
        """The shapes made of products (classes, blocks), on a small universe: one
        cartesian product per class or block."""
        cartesian = self.cartesian
        bits = 0
        if isinstance(rel, Blocks):
            for left, right in rel.blocks:
                bits |= cartesian(self.set_bits(left), self.set_bits(right))
            return bits
        for group in rel.classes:
            s = self.set_bits(group)
            bits |= cartesian(s, s)
        if isinstance(rel, Apart):
            # Every other event of `events` outside one's own class.
            among = self.set_bits(rel.events)
            return cartesian(among, among) & ~bits & ~self.diag
        return bits

    def memo(self, memo: dict[_K, _V], key: _K, compute: Callable[[_K], _V]) -> _V:
        """`compute(key)`, memoised in `memo`. On a big universe the memo holds a few values
        and drops the least recently used one: a value every candidate shares (hb when sw is
        empty) stays while each candidate's own ones come and go."""
        if not self.big:
            return _memo(memo, key, compute, self.memo_limit)
        # Each entry is [value, when last used]: a hit hashes its key once (n*n bits).
        aged = cast(dict[_K, list[Any]], memo)
        self.clock += 1
        entry = aged.get(key)
        if entry is None:
            if len(aged) >= self.memo_limit:
                del aged[min(aged.items(), key=lambda kv: kv[1][1])[0]]
            entry = aged[key] = [compute(key), self.clock]
        else:
            entry[1] = self.clock
        return cast(_V, entry[0])

    def split(self, r: int) -> list[int]:
        """The rows of r (not to be modified: they may be shared)."""
        hit = self.rows_of.get(id(r))
        if hit is not None and hit[0] is r:
            return hit[1]
        # By value too: a value every candidate recomputes alike (`[M] ; hb` when sw is
        # empty) is split once, for the price of hashing it.
        n = self.n
        rows = self.memo(self.splits, r, lambda x: big.split(x, n))
        self._keep_rows(r, rows)
        return rows

    def join(self, rows: list[int]) -> int:
        r = big.join(rows, self.n)
        self._keep_rows(r, rows)
        return r

    def _keep_rows(self, r: int, rows: list[int]) -> None:
        # Keeps r alive with its rows, so that its id is not reused while it is here.
        cache = self.rows_of
        if len(cache) >= self.rows_kept:
            del cache[next(iter(cache))]
        cache[id(r)] = (r, rows)

    def spread(self, s: int) -> int:
        """Set bit i -> relation bit i*n (a column vector), a byte at a time."""
        if self.big:
            n = self.n
            return big.from_positions((i * n for i in _bits_of(s)), n * n)
        out, shift, step, table = 0, 0, 8 * self.n, self.spread8
        while s:
            out |= table[s & 255] << shift
            s >>= 8
            shift += step
        return out

    def identity(self, s: int) -> int:
        if self.big:
            n = self.n
            return big.from_positions((i * n + i for i in _bits_of(s)), n * n)
        return self.rows(s) & self.diag

    def rows(self, s: int) -> int:
        """The relation with full rows for the events of s: `[s] ; r` is `r & rows(s)`."""
        return self.cartesian(s, self.rowmask)

    def cols(self, s: int) -> int:
        """The relation with full columns for the events of s: `r ; [s]` is `r & cols(s)`."""
        return s * self.colmask

    def compose(self, a: int, b: int) -> int:
        if not a or not b:
            return 0
        memo = self.composed
        if self.big:
            # `r ; x?` and `x? ; r` (eco?, hb?): the identity part is r itself, and what is
            # left is often a few pairs, composed without splitting anything.
            diag = self.diag
            if b & diag == diag:
                return a | self.compose(a, b ^ diag)
            if a & diag == diag:
                return b | self.compose(a ^ diag, b)
            if b.bit_count() <= _FEW:
                return self._compose_few_right(a, b)
            if memo is None:
                return self._compose_big(a, b)
            return self.memo(memo, (a, b), lambda ab: self._compose_big(*ab))
        if memo is None:
            return self._compose(a, b)
        # `_memo` inlined: this runs several times per candidate, most often a hit.
        key = (a, b)
        hit = memo.get(key)
        if hit is None:
            if len(memo) >= self.memo_limit:
                memo.clear()
            hit = memo[key] = self._compose(a, b)
        return hit

    def _compose_few_right(self, a: int, b: int) -> int:
        """a;b for a few pairs (j, k) in b: column j of a, moved to column k (a few whole-int
        operations each, where splitting a costs n row operations)."""
        n, colmask, out = self.n, self.colmask, 0
        for pos in _bits_of(b):
            j, k = divmod(pos, n)
            col = (a >> j) & colmask
            if col:
                out |= col << k
        return out

    def _compose_big(self, a: int, b: int) -> int:
        n = self.n
        if a.bit_count() <= _FEW:
            # A few pairs (rf^-1, rmw): their rows of b, moved to their rows (whole-int
            # steps, or b's rows when it is split already), not a split of a.
            hit = self.rows_of.get(id(b))
            rowmask, moved = self.rowmask, 0
            for k in _bits_of(a):
                i, j = divmod(k, n)
                row = hit[1][j] if hit is not None and hit[0] is b else (b >> (j * n)) & rowmask
                moved |= row << (i * n)
            return moved
        # Up to 64 row unions per row: past that the column algorithm's n steps are cheaper.
        out = big.compose(self.split(a), self.split(b), 64 * n)
        return self._compose(a, b) if out is None else self.join(out)

    def _compose(self, a: int, b: int) -> int:
        n, rowmask, colmask = self.n, self.rowmask, self.colmask
        out = 0
        # Sparse operands (rf, rmw, a few pairs): one step per pair beats n column steps.
        if a.bit_count() < n:
            while a:
                low = a & -a
                i, j = divmod(low.bit_length() - 1, n)
                out |= ((b >> (j * n)) & rowmask) << (i * n)
                a ^= low
            return out
        if b.bit_count() < n:
            while b:
                low = b & -b
                j, k = divmod(low.bit_length() - 1, n)
                out |= ((a >> j) & colmask) << k
                b ^= low
            return out
        for j in range(n):
            col = (a >> j) & colmask
            if col:
                row = (b >> (j * n)) & rowmask
                if row:
                    out |= col * row
        return out

    def closure(self, r: int) -> int:
        memo = self.closures
        if self.big:
            if r.bit_count() <= _FEW:
                return self._closure_few(r)
            if memo is None or not r:
                return self._closure_big(r)
            return self.memo(memo, r, self._closure_big)
        if memo is None or not r:
            return self._closure(r)
        hit = memo.get(r)
        if hit is None:
            if len(memo) >= self.memo_limit:
                memo.clear()
            hit = memo[r] = self._closure(r)
        return hit

    def _closure_few(self, r: int) -> int:
        """The closure of a few pairs (a partial coherence order, rf edges) on a big
        universe: over their own events, never splitting n rows."""
        n = self.n
        succ: dict[int, set[int]] = {}
        for pos in _bits_of(r):
            i, j = divmod(pos, n)
            succ.setdefault(i, set()).add(j)
        changed = True
        while changed:  # at most _FEW pairs: a few rounds of a few steps
            changed = False
            for targets in succ.values():
                more = set().union(*(succ.get(t, ()) for t in targets)) - targets
                if more:
                    targets |= more
                    changed = True
        return big.from_positions((i * n + j for i, ts in succ.items() for j in ts), n * n)

    def _closure_big(self, r: int) -> int:
        closed = big.closure(self.split(r))
        # A cyclic relation (an inconsistent candidate, mostly): Warshall's closure.
        return self._closure(r) if closed is None else self.join(closed)

    def _closure(self, r: int) -> int:
        n, rowmask, colmask = self.n, self.rowmask, self.colmask
        for k in range(n):
            col = (r >> k) & colmask
            if col:
                row = (r >> (k * n)) & rowmask
                if row:
                    r |= col * row
        return r

    def transpose(self, r: int) -> int:
        n = self.n
        if self.big and r.bit_count() > 8:
            return self.memo(self.transposed, r, lambda x: big.transpose(x, n))
        if self.closures is not None and r.bit_count() >= n:
            # Dense (hb^-1), memoised as closures are: candidates share their hb.
            return _memo(self.transposed, r, self._transpose, self.memo_limit)
        return self._transpose(r)

    def _transpose(self, r: int) -> int:
        n = self.n
        if r.bit_count() < n:
            # Sparse (rf, rmw): one step per pair.
            out = 0
            while r:
                low = r & -r
                i, j = divmod(low.bit_length() - 1, n)
                out |= 1 << (j * n + i)
                r ^= low
            return out
        # Row i becomes column i: spread it into a column vector and shift it by i.
        out, rowmask = 0, self.rowmask
        for i in range(n):
            row = (r >> (i * n)) & rowmask
            if row:
                out |= self.spread(row) << i
        return out

    def domain(self, r: int) -> int:
        n, rowmask = self.n, self.rowmask
        if n > _SMALL:
            return sum(1 << i for i, row in enumerate(self.split(r)) if row)
        return sum(1 << i for i in range(n) if (r >> (i * n)) & rowmask)

    def range(self, r: int) -> int:
        n, rowmask = self.n, self.rowmask
        if n > _SMALL:
            return functools.reduce(operator.or_, self.split(r), 0)
        out = 0
        for i in range(n):
            out |= (r >> (i * n)) & rowmask
        return out

    def star(self, r: int) -> int:
        return self.closure(r) | self.diag

    def opt(self, r: int) -> int:
        return r | self.diag

    def complement_set(self, s: int) -> int:
        return self.rowmask ^ s

    def complement_rel(self, r: int) -> int:
        return self.full_rel ^ r

    def union(self, a: int, b: int) -> int:
        return a | b

    def inter(self, a: int, b: int) -> int:
        return a & b

    def diff(self, a: int, b: int) -> int:
        return a & ~b

    def cartesian(self, s: int, t: int) -> int:
        if self.big:
            if not s or not t:
                return 0
            rows = [0] * self.n
            for i in _bits_of(s):
                rows[i] = t
            return self.join(rows)
        return self.spread(s) * t

    def is_acyclic(self, r: int) -> bool:
        if self.big:
            if r.bit_count() <= _FEW:
                return not self._closure_few(r) & self.diag
            return big.acyclic(self.split(r))
        return not (self.closure(r) & self.diag)

    def is_irreflexive(self, r: int) -> bool:
        return not (r & self.diag)

    def is_empty(self, r: int) -> bool:
        return not r

    def row(self, r: int, i: int) -> int:
        return (r >> (i * self.n)) & self.rowmask

    def has(self, r: int, i: int, j: int) -> bool:
        return bool((r >> (i * self.n + j)) & 1)

    def pairs(self, r: int) -> list[tuple[int, int]]:
        out: list[tuple[int, int]] = []
        n, ev = self.n, self.events
        if n > _SMALL:
            for i, row in enumerate(self.split(r)):
                out.extend((ev[i], ev[j]) for j in _bits_of(row))
            return out
        while r:
            low = r & -r
            i, j = divmod(low.bit_length() - 1, n)
            out.append((ev[i], ev[j]))
            r ^= low
        return out

    def members(self, s: int) -> list[int]:
        out, ev = [], self.events
        while s:
            low = s & -s
            out.append(ev[low.bit_length() - 1])
            s ^= low
        return out


def _depths(parents: Sequence[int | None]) -> list[int]:
    """The depth of each node of a forest (roots 0), each chain walked once."""
    depth: list[int | None] = [None] * len(parents)
    for e in range(len(parents)):
        chain = []
        node: int | None = e
        while node is not None and depth[node] is None:
            chain.append(node)
            node = parents[node]
        d = -1 if node is None else depth[node]
        assert d is not None
        for c in reversed(chain):
            d += 1
            depth[c] = d
    return [d or 0 for d in depth]


def _terms(expr: Expr, op: BinaryOp) -> list[Expr]:
    """The operands of a chain of `op` (nested either way), left to right."""
    if isinstance(expr, Binary) and expr.op is op:
        return _terms(expr.left, op) + _terms(expr.right, op)
    return [expr]


def _bits_of(s: int) -> Iterator[int]:
    """The positions of the bits of s, increasing."""
    while s:
        low = s & -s
        yield low.bit_length() - 1
        s ^= low


def _memo(memo: dict[_K, _V], key: _K, compute: Callable[[_K], _V], limit: int) -> _V:
    hit = memo.get(key)
    if hit is None:
        if len(memo) >= limit:
            memo.clear()
        hit = memo[key] = compute(key)
    return hit


_UNARY: dict[UnaryOp, Callable[[_Geo, int], int]] = {
    UnaryOp.IDENTITY: _Geo.identity,
    UnaryOp.COMPLEMENT: _Geo.complement_set,  # complement_rel for relations
    UnaryOp.INVERSE: _Geo.transpose,
    UnaryOp.PLUS: _Geo.closure,
    UnaryOp.STAR: _Geo.star,
    UnaryOp.OPT: _Geo.opt,
    UnaryOp.DOMAIN: _Geo.domain,
    UnaryOp.RANGE: _Geo.range,
}
_BINARY: dict[BinaryOp, Callable[[_Geo, int, int], int]] = {
    BinaryOp.UNION: _Geo.union,
    BinaryOp.INTER: _Geo.inter,
    BinaryOp.DIFF: _Geo.diff,
    BinaryOp.SEQ: _Geo.compose,
    BinaryOp.CARTESIAN: _Geo.cartesian,
}
_TEST_METHOD = {
    CheckKind.ACYCLIC: "is_acyclic",
    CheckKind.IRREFLEXIVE: "is_irreflexive",
    CheckKind.EMPTY: "is_empty",
    CheckKind.FLAG: "is_empty",
}
_TESTS: dict[CheckKind, Callable[[_Geo, int], bool]] = {
    CheckKind.ACYCLIC: _Geo.is_acyclic,
    CheckKind.IRREFLEXIVE: _Geo.is_irreflexive,
    CheckKind.EMPTY: _Geo.is_empty,
    CheckKind.FLAG: _Geo.is_empty,
}


class _Ctx:
    """The state of one evaluation: values by slot (definitions, built-ins, cached nodes),
    and per reuse group (`_Group`) the results of its checks known so far."""

    __slots__ = ("base", "geo", "results", "session", "vals")

    def __init__(
        self, base: BaseRelations, geo: _Geo, session: list[int | None], vals: list[int | None]
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
        self._geo: _Geo | None = None
        self._session: list[int | None] = []
        # Per group: the key of the last evaluation of this session, its values and its
        # checks' results (see `_reuse`).
        self._last: list[tuple[tuple[int | None, ...], list[int | None], dict[int, bool]] | None]
        self._last = [None] * len(self._groups)

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
            geo = _Geo(events)
            session: list[int | None] = [None] * self._nslots
            self._last = [None] * len(self._groups)
            if static_key is not None:
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
        parts: list[tuple[_Fn, _Fn | None, list[int | None]]] = []
        for term in _terms(expr, BinaryOp.UNION):
            factors = _terms(term, BinaryOp.SEQ)
            if len(factors) < 2:
                parts.append((self._fn_of[id(term)], None, [None]))
                continue
            head = factors[0]
            for f in factors[1:-1]:
                head = Binary(BinaryOp.SEQ, head, f, f.span)
            fa = self._fn_of[id(head)] if len(factors) == 2 else self._compile(head)[0]
            parts.append((fa, self._fn_of[id(factors[-1])], [None]))

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
                    if geo.transpose(a) & b:
                        return False
                elif geo.compose(a, b) & geo.diag:
                    return False
                last[0] = a
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
            method = _Geo.complement_rel

        def g(c: _Ctx) -> int:
            return method(c.geo, f(c))

        return g, static

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
        method = _Geo.rows if rows else _Geo.cols

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


def _column(g: _Geo, r: int, j: int) -> int:
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
