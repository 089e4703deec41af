"""Relations of big universes, row by row: closure, composition and transposition that cost
about n row operations for the relations models build, not n steps over all n*n bits.

`cat.eval` keeps a relation over n events as one int of n*n bits (bit i*n + j for (i, j)).
On a few dozen events, its column-at-a-time algorithms are the fastest; on thousands, each of
their n steps shifts the whole n*n-bit int, and a closure or a composition costs n**3/64
word operations (minutes at 4,000 events). Here a relation is split into its n rows (one
pass over its bytes), worked on as n-bit ints, and joined back (log n passes):

- closure: a depth-first search over the rows finds a topological order (or a cycle); in its
  post-order, the closure of a row is that of its first uncovered successor, plus the next
  uncovered one, and so on, so that a chain (po, co) costs one step per row; a successor
  with no successors of its own costs no step, and rows alike are closed once (the init
  writes, each before every other event). A cyclic relation falls back to the caller's
  algorithm (`None`).
- composition: row i of a;b is the union of the rows of b at the bits of row i of a. When a
  row of a contains the row processed before it (the rows of an order, taken from its end),
  it starts from that row's result and adds only the rows of b at the new bits.
- transposition: the classic delta-swap transposition of a 2**k-square bit matrix (k passes
  of a few whole-int operations), on the rows re-laid with a power-of-two stride.

Every function is exact for every relation; only its cost depends on the relation's shape.
"""

from __future__ import annotations

import functools
from collections.abc import Iterable, Sequence

__all__ = [
    "acyclic",
    "closure",
    "compose",
    "from_positions",
    "insert",
    "join",
    "positions",
    "product",
    "sparse_rows",
    "split",
    "transpose",
]

# Every non-zero byte to 1: `bytes.find` then skips the zero bytes at memchr speed.
_MARK = bytes([0] + [1] * 255)


def split(r: int, n: int, stride: int | None = None) -> list[int]:
    """The n rows of r (row i: bits i*stride .. i*stride + n - 1; stride n by default)."""
    step = n if stride is None else stride
    data = r.to_bytes((n * step + 7) // 8 + 1, "little")
    mask = (1 << n) - 1
    from_bytes = int.from_bytes
    rows = []
    for i in range(n):
        start = i * step
        chunk = data[start >> 3 : ((start + n + 7) >> 3) + 1]
        rows.append((from_bytes(chunk, "little") >> (start & 7)) & mask)
    return rows


def join(rows: Sequence[int], n: int, stride: int | None = None) -> int:
    """The relation whose row i is rows[i]: merged pairwise, each value shifted relative to
    its first row (log n passes of n*n bits, where shifting each row into place alone would
    copy n**3 bits)."""
    step = n if stride is None else stride
    level = [(i, row) for i, row in enumerate(rows) if row]
    if step == n and len(level) * 8 >= len(rows) > 8:
        out = _join_bytes(rows, n)
        if out is not None:
            return out
    while len(level) > 1:
        merged = []
        for k in range(0, len(level) - 1, 2):
            (i, a), (j, b) = level[k], level[k + 1]
            merged.append((i, a | b << ((j - i) * step)))
        if len(level) % 2:
            merged.append(level[-1])
        level = merged
    return level[0][1] << (level[0][0] * step) if level else 0


def _join_bytes(rows: Sequence[int], n: int) -> int | None:
    """`join` of rows that are not mostly empty: eight rows of n bits make n bytes, so each
    group of eight is packed as a small int and the groups' bytes are concatenated, one pass
    over n*n bits where the pairwise merge makes log n. None when a row is wider than n bits
    (the merge then ORs it into the next rows)."""
    # Written in place: a list of the groups' bytes and their concatenation would hold
    # the relation twice more at its peak (72 MB each at 24,000 events).
    data = bytearray(n * ((len(rows) + 7) // 8))
    for g in range(0, len(rows), 8):
        acc = 0
        for j, row in enumerate(rows[g : g + 8]):
            if row:
                acc |= row << (j * n)
        if acc.bit_length() > 8 * n:
            return None
        start = g // 8 * n
        data[start : start + n] = acc.to_bytes(n, "little")
    return int.from_bytes(data, "little")


def from_positions(positions: Iterable[int], nbits: int) -> int:
    """The int with exactly the given bits set (each position below nbits): bits set in a
    buffer and converted once, since `bits |= 1 << k` copies the int at every step (a few
    bits are or-ed: the buffer alone is a pass over nbits)."""
    listed = positions if isinstance(positions, list) else list(positions)
    if len(listed) <= _FEW_BITS:
        out = 0
        for k in listed:
            out |= 1 << k
        return out
    buf = bytearray((nbits + 7) // 8)
    for k in listed:
        buf[k >> 3] |= 1 << (k & 7)
    return int.from_bytes(buf, "little")


# `from_positions` ors at most this many bits into an int, not into a buffer.
_FEW_BITS = 4


def positions(r: int, count: int | None = None) -> list[int]:
    """The positions of the bits of r, increasing. Given its bit count, a few bits are taken
    from the top (`bit_length` reads the last digit only: two passes over r per bit);
    otherwise its bytes are searched for the next non-zero one, where taking the lowest bit
    off r would copy all of it at each bit."""
    if count == 1:
        return [r.bit_length() - 1]  # rf of one read: no pass at all
    if count is not None and count <= _FEW_BITS:
        out: list[int] = []
        while r:
            top = r.bit_length() - 1
            out.append(top)
            r ^= 1 << top
        out.reverse()
        return out
    data = r.to_bytes((r.bit_length() + 7) // 8, "little")
    marks = data.translate(_MARK)
    out = []
    pos = marks.find(1)
    while pos >= 0:
        byte, at = data[pos], pos * 8
        while byte:
            low = byte & -byte
            out.append(at + low.bit_length() - 1)
            byte ^= low
        pos = marks.find(1, pos + 1)
    return out


def _nonempty(rows: Sequence[int]) -> int:
    """The set of the indices of the rows that are not empty."""
    return sum(1 << i for i, row in enumerate(rows) if row)


def _post_order(rows: Sequence[int]) -> list[int] | None:
    """The events in a depth-first post-order (every successor before its predecessors),
    or None when the relation has a cycle. Iterative; a row operation per step. Events with
    an empty row are left out: on no cycle, they add nothing to a closure."""
    unvisited = _nonempty(rows)
    order: list[int] = []
    while unvisited:
        low = unvisited & -unvisited
        unvisited ^= low
        root = low.bit_length() - 1
        if rows[root] & low:
            return None
        stack, on_path = [root], low
        while stack:
            v = stack[-1]
            nxt = rows[v] & unvisited
            if nxt:
                low = nxt & -nxt
                # An edge back to the path (or to itself) closes a cycle. Edges from a
                # vertex to its ancestors are all there when it is entered.
                if rows[low.bit_length() - 1] & (on_path | low):
                    return None
                unvisited ^= low
                on_path |= low
                stack.append(low.bit_length() - 1)
            else:
                stack.pop()
                on_path ^= 1 << v
                order.append(v)
    return order


def acyclic(rows: Sequence[int]) -> bool:
    return _post_order(rows) is not None


def closure(rows: Sequence[int]) -> list[int] | None:
    """The rows of the transitive closure, or None when the relation is cyclic."""
    order = _post_order(rows)
    if order is None:
        return None
    closed = [0] * len(rows)
    # The events whose closed row is not empty: a successor outside it adds only itself.
    sources = 0
    # A closed row depends only on the row (its successors are finished): rows alike (each
    # init write before every other event) are closed once.
    done: dict[int, int] = {}
    for v in order:
        row = rows[v]
        acc = done.get(row)
        if acc is None:
            acc, rest = row, row & sources
            while rest:
                low = rest & -rest
                # Its successors are finished: their closure is complete, and every
                # successor of v that it covers needs no step of its own.
                below = closed[low.bit_length() - 1]
                acc |= below
                rest = (rest ^ low) & ~below
            done[row] = acc
        closed[v] = acc
        sources |= 1 << v
    return closed


def insert(
    closed: Sequence[int], cols: Sequence[int], edges: dict[int, int]
) -> list[tuple[int, int]]:
    """What adding the pairs of `edges` (source -> row of its targets) to the transitively
    closed relation `closed` (`cols`: its columns) adds to its closure: products of a set
    of events and a row, (who, row) for the pairs who x row; `closed` with them is the
    closure of the union.

    One source u at a time, the relation stays closed: x reaches y through a new pair from
    u exactly when x is u or reaches u, and y is a target of u or is reached from one. Only
    the last new pair of a path matters, so a path through several (a cycle too) is covered
    when its last source is inserted. Every step is on sets of n bits: the events reaching
    u are u's column and the sources of the products that reach u; a row is its row in
    `closed` and the products it is a source of. A source costs its targets' rows not
    already covered (the targets of fr from one read lie on one co chain: one step)."""
    added: list[tuple[int, int]] = []
    for u, targets in edges.items():
        reach, rest = targets, targets
        while rest:
            low = rest & -rest
            v = low.bit_length() - 1
            below = closed[v]
            for who, row in added:
                if who & low:
                    below |= row
            reach |= below
            rest = (rest ^ low) & ~below
        bit = 1 << u
        above = cols[u] | bit
        for who, row in added:
            if row & bit:
                above |= who
        added.append((above, reach))
    return added


# `product` lays down at most this many runs of consecutive events by shifting; beyond, it
# joins the rows.
_RUNS = 16


def product(who: int, row: int, n: int) -> int:
    """The relation over n events whose row i is `row` for each i in the set `who`, the
    others empty. Its runs of consecutive events (a read reached from every write before
    it) are laid down by log(run) doublings each: a few passes over n*n bits where `join`
    makes a step per row."""
    if not who or not row:
        return 0
    if (who & ~(who << 1)).bit_count() > _RUNS:
        return join([row if who >> i & 1 else 0 for i in range(n)], n)
    out = 0
    while who:
        start = (who & -who).bit_length() - 1
        tail = who >> start
        length = (~tail & (tail + 1)).bit_length() - 1
        out |= _repeat(row, length, n) << (start * n)
        who &= ~(((1 << length) - 1) << start)
    return out


def _repeat(row: int, times: int, n: int) -> int:
    """`times` copies of an n-bit row, one after the other at stride n (doubling)."""
    out, done = row, 1
    while 2 * done <= times:
        out |= out << (done * n)
        done *= 2
    if done < times:
        out |= _repeat(row, times - done, n) << (done * n)
    return out


def sparse_rows(r: int, n: int, limit: int) -> dict[int, int] | None:
    """The non-empty rows of r (row index -> row), or None when more than `limit` are not
    empty. Its bytes are searched for the next non-zero one, then from the next row on: a
    relation of a few rows costs a pass over its n*n bits, not n row extractions."""
    data = r.to_bytes((n * n + 7) // 8 + 1, "little")
    marks = data.translate(_MARK)
    mask = (1 << n) - 1
    out: dict[int, int] = {}
    pos = marks.find(1)
    while pos >= 0:
        after = pos + 1
        # The byte may hold the end of one row and the start of the next: both are read.
        for i in range(pos * 8 // n, min(n, (pos * 8 + 7) // n + 1)):
            start = i * n
            chunk = data[start >> 3 : ((start + n + 7) >> 3) + 1]
            row = (int.from_bytes(chunk, "little") >> (start & 7)) & mask
            if row and i not in out:
                if len(out) == limit:
                    return None
                out[i] = row
            after = max(after, (start + n) >> 3)
        pos = marks.find(1, after)
    return out


def compose(left: Sequence[int], right: Sequence[int], budget: int) -> list[int] | None:
    """The rows of left;right, or None when that would take more than `budget` row unions
    (a dense, unstructured left operand: the caller's column algorithm is then cheaper)."""
    n = len(left)
    useful = _nonempty(right)  # the bits j whose row of `right` is not empty
    out = [0] * n
    if not useful:
        return out
    # Rows of an order taken from its end contain each other: go the way they grow.
    down = sum(1 for i in range(n - 1) if not left[i + 1] & ~left[i])
    up = sum(1 for i in range(n - 1) if not left[i] & ~left[i + 1])
    indices = range(n - 1, -1, -1) if down >= up else range(n)
    prev_row, prev_out, steps = 0, 0, 0
    for i in indices:
        row = left[i] & useful
        if prev_row and not prev_row & ~row:
            rest, acc = row & ~prev_row, prev_out
        else:
            rest, acc = row, 0
        steps += rest.bit_count()
        if steps > budget:
            return None
        while rest:
            low = rest & -rest
            acc |= right[low.bit_length() - 1]
            rest ^= low
        out[i] = acc
        prev_row, prev_out = row, acc
    return out


@functools.cache
def _swap_masks(size: int) -> tuple[tuple[int, int], ...]:
    """For a size x size bit matrix (size a power of two, at least 8; row stride size): per
    half-width s, the delta s*(size-1) and the mask of the bits (i, j) with bit s of i clear
    and bit s of j set, which swap with (i+s, j-s). Built as bytes: s rows of the column
    pattern, s empty rows, repeated. Asked only up to `_BLOCK` (cached, they hold
    log2(size) x size**2 bits: 1.9 GB at the 24,000 events of 8,000 work-items)."""
    out = []
    s = size >> 1
    width = size // 8
    while s:
        columns = sum(1 << j for j in range(size) if j & s).to_bytes(width, "little")
        block = columns * s + bytes(width * s)
        out.append((s * (size - 1), int.from_bytes(block * (size // (2 * s)), "little")))
        s >>= 1
    return tuple(out)


# Universes of more than this many events are transposed block by block: padded to a power
# of two as a whole, the matrix and its temporaries would take several times n*n bits.
_BLOCK = 2048


def transpose(r: int, n: int) -> int:
    """The inverse of the relation r over n events."""
    if n > _BLOCK:
        return join(_transpose_rows(split(r, n), n), n)
    size = max(8, 1 << (n - 1).bit_length())
    return join(split(_swap(join(split(r, n), n, size), size), n, size), n)


def _swap(m: int, size: int) -> int:
    """The transpose of the size x size bit matrix m (row stride size)."""
    for delta, mask in _swap_masks(size):
        t = ((m >> delta) ^ m) & mask
        m ^= t ^ (t << delta)
    return m


def _transpose_rows(rows: Sequence[int], n: int) -> list[int]:
    """The rows of the transpose, a `_BLOCK`-square block at a time: block (I, J) of the
    rows, transposed, is block (J, I) of the result (memory: the rows in and out, and
    one block)."""
    b = _BLOCK
    out = [0] * n
    low = (1 << b) - 1
    for top in range(0, n, b):
        band = rows[top : top + b]
        if not any(band):
            continue
        for left in range(0, n, b):
            block = [(row >> left) & low for row in band]
            if not any(block):
                continue
            # Rows of b bits at stride b (a multiple of 8): one slice of bytes each.
            data = _swap(join(block, b, b), b).to_bytes(b * b // 8, "little")
            width = b // 8
            for k in range(min(b, n - left)):
                col = int.from_bytes(data[k * width : (k + 1) * width], "little")
                if col:
                    out[left + k] |= col << top
    return out
