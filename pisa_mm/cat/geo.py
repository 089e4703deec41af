"""One universe of a concrete evaluation (`Geo`): its dense indexing, bit masks, and the
operations on relations as ints of n*n bits, with the memos that make them cheap.

`cat.eval.Evaluator` computes every value of a model through these operations. On small
universes (the litmus tests a suite runs by the thousand) they are column-at-a-time bit
tricks over a few machine words, memoised by value for the whole process; on big ones
(hundreds to thousands of events) they go row by row (cat/rows.py), and the values the
candidates of one test share are known by identity, since each pass over n*n bits costs.
Every operation is exact for every relation; only its cost depends on the relation's shape.
"""

from __future__ import annotations

import functools
import operator
from collections.abc import Callable, Iterable, Iterator, Sequence

from pisa_mm.cat import rows as big
from pisa_mm.cat.compact import SHAPES, Apart, Blocks, Classes, Forest, Orders, Rows
from pisa_mm.hints import Any, TypeVar, assert_never, cast

__all__ = ["Geo", "bits_of"]

# Universes of at most this many events build their bit matrices (at most 1,024 bits) by
# or-ing into an int (`Geo.rel_bits`).
_SMALL = 32
# Universes of more than this many events close, compose and transpose relations row by row
# (cat/rows.py): the column-at-a-time algorithms shift all n*n bits at each of their n steps.
_BIG = 96
# Entries of each memo (`Geo.closures`, `Geo.composed`, `Geo.shapes`): many on a small
# universe, a few on a big one (each value is n*n bits; hashing one is a pass over it).
_MEMO_LIMIT = 4096
# Entries of the memos shared by the small universes of every size (`_shared_memos`):
# at most about 10 MB of values of 32 events.
_SHARED_LIMIT = 4 * _MEMO_LIMIT
_BIG_MEMO_LIMIT = 8
# Relations of at most this many pairs are taken pair by pair on big universes.
_FEW = 16
# Entries of a small universe's memo of the bits of the pair collections it was given, by
# identity (`Geo.rel_bits`): an engine passes the same rf to each coherence order of it.
_GIVEN_KEPT = 64
# `Geo.closure_of_union` inserts the pairs of at most this many events into a closure.
_INSERTED = 64
# Relations whose rows `Geo.split` keeps (the last ones split or joined).
_ROWS_KEPT = 16
# On the biggest universes, the memos and the kept rows of `Geo` hold fewer entries, so that
# each holds about this many bytes at most (each entry is n*n bits: 72 MB at the 24,000
# events of 8,000 work-items), and never fewer than 2.
_KEPT_BYTES = 1 << 28


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
    if sum([len(a) + len(b) + len(c) for a, b, c in shared]) > _SHARED_LIMIT:
        for memos in shared:
            for m in memos:
                m.clear()
    hit = _SHARED.get(n)
    if hit is None:
        hit = _SHARED[n] = ({}, {}, {})
    return hit


# The bits of the shapes (`Geo.shape_bits`) of the small universes, per universe (its events
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


class Geo:
    """The dense indexing of one universe and the bit masks that go with it."""

    __slots__ = (
        "big",
        "clock",
        "closures",
        "colmask",
        "composed",
        "counts",
        "diag",
        "events",
        "full_rel",
        "given",
        "index",
        "known",
        "memo_limit",
        "n",
        "rowmask",
        "rows_kept",
        "rows_of",
        "shapes",
        "sparse",
        "splits",
        "spread8",
        "transposed",
        "unions",
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
        # The bit counts of the last few values counted on a big universe, by identity.
        self.counts: dict[int, tuple[int, int]] = {}
        # The terms of the last few unions closed on a big universe, and their closures,
        # by the identities of the terms.
        self.unions: dict[tuple[int, ...], tuple[tuple[int, ...], int]] = {}
        # (id of a memo, id of a key) -> (key, value), for the keys of `memo` found twice.
        self.known: dict[tuple[int, int], tuple[Any, Any]] = {}
        # The rows of the last few relations of a few rows made by composition, by identity.
        self.sparse: dict[int, tuple[int, dict[int, int]]] = {}

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
            if type(pairs) in SHAPES:
                # `_shape_bits` memoised by value, `_memo` inlined: once per session for
                # each static shape (po, ext, int, incl...), most often a hit.
                rel, shapes = cast(Rows, pairs), self.shapes
                known = shapes.get(rel)
                if known is None:
                    if len(shapes) >= self.memo_limit:
                        shapes.clear()
                    known = shapes[rel] = self._shape_bits(rel)
                bits = known
            else:
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
        # rf of a candidate with one read: no n*n-bit buffer for its pair
        listed = [
            i * n + j
            for a, b in pairs
            if (i := index.get(a)) is not None and (j := index.get(b)) is not None
        ]
        return self.counted(big.from_positions(listed, n * n), len(set(listed)))

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
                    for i in bits_of(among):
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
                    for i in bits_of(self.set_bits(left)):
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
        # A key found before is known by identity (co, hb: the same objects in every
        # candidate) before it is hashed (a pass over its n*n bits).
        ident = (id(memo), id(key))
        seen = _recall(self.known, ident, key)
        if seen is not None:
            return cast(_V, seen)
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
            self._remember(self.known, ident, key, entry[0])
        return cast(_V, entry[0])

    def count(self, r: int) -> int:
        """r.bit_count(), remembered by identity for the last few values of a big universe:
        a pass over n*n bits, which decides the algorithm of most operations, and the
        values the candidates share (co, hb, their closures) are asked again and again."""
        c = _recall(self.counts, id(r), r)
        if c is None:
            c = r.bit_count()
            self.counted(r, c)
        return c

    def counted(self, r: int, c: int) -> int:
        """r, whose bit count c its maker knew (a few pairs): `count` will not make a pass
        over r for it."""
        self._remember(self.counts, id(r), r, c)
        return r

    def split(self, r: int) -> list[int]:
        """The rows of r (not to be modified: they may be shared)."""
        hit = _recall(self.rows_of, id(r), r)
        if hit is not None:
            return hit
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
        self._remember(self.rows_of, id(r), r, rows)

    def _remember(
        self, cache: dict[Any, tuple[Any, Any]], key: Any, obj: object, value: Any
    ) -> None:
        """Remember `value` for the object `obj` under `key` (its id, or ids with it), for
        `_recall`: the last `rows_kept` of them, each kept alive with its object, so that
        the id in its key stays its own while it is here."""
        if len(cache) >= self.rows_kept:
            del cache[next(iter(cache))]
        cache[key] = (obj, value)

    def spread(self, s: int) -> int:
        """Set bit i -> relation bit i*n (a column vector), a byte at a time."""
        if self.big:
            n = self.n
            return big.from_positions((i * n for i in bits_of(s)), n * n)
        if s < 256:
            return self.spread8[s]
        out, shift, step, table = 0, 0, 8 * self.n, self.spread8
        while s:
            out |= table[s & 255] << shift
            s >>= 8
            shift += step
        return out

    def identity(self, s: int) -> int:
        if self.big:
            n = self.n
            return big.from_positions((i * n + i for i in bits_of(s)), n * n)
        return self.rows(s) & self.diag

    def rows(self, s: int) -> int:
        """The relation with full rows for the events of s: `[s] ; r` is `r & rows(s)`."""
        if self.big:
            return self.cartesian(s, self.rowmask)
        return self.spread(s) * self.rowmask

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
            if self.count(a) <= _FEW:  # before the identity tests: each is a pass over b
                return self._compose_few_left(a, b)
            diag = self.diag
            if b & diag == diag:
                return a | self.compose(a, b ^ diag)
            if a & diag == diag:
                return b | self.compose(a ^ diag, b)
            if self.count(b) <= _FEW:
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
        for pos in big.positions(b, self.count(b)):
            j, k = divmod(pos, n)
            col = (a >> j) & colmask
            if col:
                out |= col << k
        return out

    def _compose_few_left(self, a: int, b: int) -> int:
        """a;b for a few pairs (i, j) in a (rf^-1, rmw): their rows of b, moved to their
        rows (whole-int steps, or b's rows when it is split already), not a split of a.
        Not memoised: a hit would cost a pass over a and b for the key."""
        n = self.n
        split = _recall(self.rows_of, id(b), b)
        rowmask, moved = self.rowmask, 0
        rows: dict[int, int] = {}
        for k in big.positions(a, self.count(a)):
            i, j = divmod(k, n)
            row = split[j] if split is not None else (b >> (j * n)) & rowmask
            rows[i] = rows.get(i, 0) | row
        for i, row in rows.items():
            moved |= row << (i * n)
        self._remember(self.sparse, id(moved), moved, rows)
        return self.counted(moved, sum(row.bit_count() for row in rows.values()))

    def _compose_big(self, a: int, b: int) -> int:
        n = self.n
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
            if self.count(r) <= _FEW:
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

    def closure_of_union(self, parts: list[int]) -> int:
        """The closure of the union of `parts`. On a big universe, when all parts but the
        largest add pairs from a few events only (eco = (rf | co | fr)+: one read's rf and
        fr beside a co that every candidate shares), those pairs are inserted into the
        largest part's closure (memoised by value: computed once for the candidates that
        share it), at the cost of the rows they change, not of a closure over all n rows."""
        memo = self.closures
        if not self.big or memo is None:
            return self.closure(functools.reduce(operator.or_, parts))
        # The same values as a recent time (hb of a candidate whose sw is empty): the same
        # closure, found without a pass over them.
        key = tuple(map(id, parts))
        unions = self.unions
        hit = unions.get(key)
        if hit is not None and all(a is b for a, b in zip(parts, hit[0], strict=True)):
            return hit[1]
        counts = [self.count(p) for p in parts]
        if sum(counts) <= _FEW:
            return self._closure_few(functools.reduce(operator.or_, parts))
        largest = counts.index(max(counts))
        closed = self._closure_inserted(parts[largest], parts[:largest] + parts[largest + 1 :])
        self._remember(unions, key, tuple(parts), closed)
        return closed

    def _closure_inserted(self, base: int, others: list[int]) -> int:
        """The closure of base | others: the pairs of the others inserted into base's
        closure (those already there change nothing) when they come from a few events."""
        edges: dict[int, int] = {}
        for other in others:
            rows = self._sparse_rows(other)
            if rows is None or len(edges) + len(rows) > _INSERTED:
                return self.closure(functools.reduce(operator.or_, others, base))
            for i, row in rows.items():
                edges[i] = edges.get(i, 0) | row
        closed = self.closure(base)
        if not edges:
            return closed
        # The columns too: both memoised with the closure, which the candidates share.
        cols = self.split(self.memo(self.transposed, closed, self._transpose_big))
        n = self.n
        for who, row in big.insert(self.split(closed), cols, edges):
            closed |= big.product(who, row, n)
        return closed

    def _sparse_rows(self, r: int) -> dict[int, int] | None:
        """The non-empty rows of r when at most `_INSERTED` (else None): known for the few-
        pair compositions (fr from one read), taken bit by bit for a few pairs (rf), else
        found in its bytes."""
        known = _recall(self.sparse, id(r), r)
        if known is not None:
            return known
        n = self.n
        if self.count(r) <= _FEW:
            rows: dict[int, int] = {}
            for k in big.positions(r, self.count(r)):
                i, j = divmod(k, n)
                rows[i] = rows.get(i, 0) | 1 << j
            return rows
        return big.sparse_rows(r, n, _INSERTED)

    def star_of_union(self, parts: list[int]) -> int:
        return self.closure_of_union(parts) | self.diag

    def _closure_few(self, r: int) -> int:
        """The closure of a few pairs (a partial coherence order, rf edges) on a big
        universe: over their own events, never splitting n rows."""
        succ = self._few_successors(r)
        n = self.n
        return big.from_positions((i * n + j for i, ts in succ.items() for j in ts), n * n)

    def _few_successors(self, r: int) -> dict[int, set[int]]:
        """The closure of a few pairs, as the successors of each of their sources."""
        n = self.n
        succ: dict[int, set[int]] = {}
        for pos in big.positions(r, self.count(r)):
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
        return succ

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
        if self.big:
            if self.count(r) > 8:
                return self.memo(self.transposed, r, self._transpose_big)
            listed = big.positions(r, self.count(r))
            out = 0
            for k in listed:
                i, j = divmod(k, n)
                out |= 1 << (j * n + i)
            return self.counted(out, len(listed))
        if self.closures is not None and r.bit_count() >= n:
            # Dense (hb^-1), memoised as closures are: candidates share their hb.
            return _memo(self.transposed, r, self._transpose, self.memo_limit)
        return self._transpose(r)

    def _transpose_big(self, r: int) -> int:
        return big.transpose(r, self.n)

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
            for i in bits_of(s):
                rows[i] = t
            return self.join(rows)
        return self.spread(s) * t

    def is_acyclic(self, r: int) -> bool:
        if self.big:
            if self.count(r) <= _FEW:
                return not any(i in ts for i, ts in self._few_successors(r).items())
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
                out.extend((ev[i], ev[j]) for j in bits_of(row))
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


def bits_of(s: int) -> Iterator[int]:
    """The positions of the bits of s, increasing."""
    while s:
        low = s & -s
        yield low.bit_length() - 1
        s ^= low


def _recall(cache: dict[Any, tuple[Any, _V]], key: Any, obj: object) -> _V | None:
    """What `Geo._remember` keeps under `key` for the object `obj` itself, or None."""
    hit = cache.get(key)
    return hit[1] if hit is not None and hit[0] is obj else None


def _memo(memo: dict[_K, _V], key: _K, compute: Callable[[_K], _V], limit: int) -> _V:
    hit = memo.get(key)
    if hit is None:
        if len(memo) >= limit:
            memo.clear()
        hit = memo[key] = compute(key)
    return hit
