"""The row-by-row algorithms of big universes (cat/rows.py) agree with the dense ones."""

from __future__ import annotations

import random

import pytest

from pisa_mm.cat import geo as cat_geo
from pisa_mm.cat import rows
from pisa_mm.cat.compact import Apart, Classes, Forest, Orders, Rows


def _bits(pairs: set[tuple[int, int]], n: int) -> int:
    return sum(1 << (i * n + j) for i, j in pairs)


def _closure(pairs: set[tuple[int, int]]) -> set[tuple[int, int]]:
    out = set(pairs)
    while True:
        new = {(a, d) for a, b in out for c, d in out if b == c} - out
        if not new:
            return out
        out |= new


def _random_relation(rng: random.Random, n: int) -> set[tuple[int, int]]:
    """A random relation: sparse or dense, acyclic (under a random numbering) or not."""
    density = rng.choice([0.02, 0.1, 0.4])
    perm = list(range(n))
    rng.shuffle(perm)
    acyclic = rng.random() < 0.6
    return {
        (perm[i], perm[j]) if acyclic else (i, j)
        for i in range(n)
        for j in range(n)
        if rng.random() < density and (not acyclic or i < j)
    }


def _chain(n: int, down: bool) -> set[tuple[int, int]]:
    return {(j, i) if down else (i, j) for i in range(n) for j in range(i + 1, n)}


@pytest.mark.parametrize("seed", range(40))
def test_rows_match_the_definitions(seed: int) -> None:
    rng = random.Random(seed)
    n = rng.randint(1, 30)
    a = _random_relation(rng, n)
    b = _random_relation(rng, n)
    ra = rows.split(_bits(a, n), n)
    assert rows.join(ra, n) == _bits(a, n)
    cyclic = any(x == y for x, y in _closure(a))
    closed = rows.closure(ra)
    assert rows.acyclic(ra) is not cyclic
    assert (closed is None) is cyclic
    if closed is not None:
        assert rows.join(closed, n) == _bits(_closure(a), n)
    for left in (a, _chain(n, False), _chain(n, True)):
        composed = rows.compose(rows.split(_bits(left, n), n), rows.split(_bits(b, n), n), n * n)
        assert composed is not None
        expected = {(x, z) for x, y in left for y2, z in b if y == y2}
        assert rows.join(composed, n) == _bits(expected, n)
    assert rows.transpose(_bits(a, n), n) == _bits({(y, x) for x, y in a}, n)


@pytest.mark.parametrize("seed", range(20))
def test_block_transposition_equals_the_definition(
    seed: int, monkeypatch: pytest.MonkeyPatch
) -> None:
    # Blocks of 8 events: universes of 9 to 40 events are transposed block by block, with
    # a last block of every width, the way 8,000 work-items are with blocks of 2,048.
    monkeypatch.setattr(rows, "_BLOCK", 8)
    rng = random.Random(seed)
    n = rng.randint(9, 40)
    a = _random_relation(rng, n)
    assert rows.transpose(_bits(a, n), n) == _bits({(y, x) for x, y in a}, n)


def test_compose_gives_up_past_its_budget() -> None:
    n = 20
    dense = rows.split((1 << (n * n)) - 1, n)
    assert rows.compose(dense, dense, 10) is None


def _geos(n: int, monkeypatch: pytest.MonkeyPatch) -> tuple[cat_geo.Geo, cat_geo.Geo]:
    events = tuple(range(3, 3 + 2 * n, 2))  # ids are not indices
    small = cat_geo.Geo(events)
    monkeypatch.setattr(cat_geo, "_BIG", 0)
    monkeypatch.setattr(cat_geo, "_SMALL", 0)
    big = cat_geo.Geo(events)
    assert big.big and not small.big
    return small, big


@pytest.mark.parametrize("seed", range(25))
def test_big_universe_operations_equal_the_dense_ones(
    seed: int, monkeypatch: pytest.MonkeyPatch
) -> None:
    rng = random.Random(seed)
    n = rng.randint(2, 24)
    small, big = _geos(n, monkeypatch)
    a = _bits(_random_relation(rng, n), n)
    b = _bits(_random_relation(rng, n), n)
    s = rng.getrandbits(n)
    names = ("closure", "star", "transpose", "domain", "range", "is_acyclic", "pairs")
    for name in (*names, "complement_rel"):
        assert getattr(big, name)(a) == getattr(small, name)(a), name
    assert big.compose(a, b) == small.compose(a, b)
    assert big.cartesian(s, b & small.rowmask) == small.cartesian(s, b & small.rowmask)
    assert big.identity(s) == small.identity(s)
    assert big.rows(s) == small.rows(s)
    assert big.spread(s) == small.spread(s)


def test_shapes_give_their_pairs(monkeypatch: pytest.MonkeyPatch) -> None:
    n = 9
    small, big = _geos(n, monkeypatch)
    ev = small.events
    parents: list[int | None] = [None] * (ev[-1] + 2)
    # two trees of paths, through ids outside the universe (ev[k] + 1)
    for child, parent in [(ev[1], ev[0]), (ev[2], ev[1]), (ev[3], ev[1]), (ev[5], ev[4])]:
        parents[child] = parent
    parents[ev[6] + 1] = ev[5]
    parents[ev[7]] = ev[6] + 1
    shapes: list[Rows] = [
        Forest(tuple(parents)),
        Apart(ev[:-1], (frozenset(ev[:3]), frozenset({ev[4], ev[5], 999}))),
        Classes((frozenset(ev[:3]), frozenset(ev[5:]))),
        Orders(((ev[:4], frozenset(ev[6:])), ((ev[8], ev[5]), frozenset()))),
    ]
    for shape in shapes:
        expected = small.rel_bits(list(shape))  # its pairs, listed
        assert small.shape_bits(shape) == expected, shape
        assert big.shape_bits(shape) == expected, shape


@pytest.mark.parametrize("seed", range(60))
def test_inserting_pairs_into_a_closure_gives_the_closure_of_the_union(seed: int) -> None:
    rng = random.Random(seed)
    n = rng.randint(1, 30)
    base = rng.choice([_random_relation(rng, n), _chain(n, rng.random() < 0.5)])
    # pairs from a few sources, which may close cycles through the base
    sources = rng.sample(range(n), rng.randint(1, min(n, 4)))
    extra = {(u, rng.randrange(n)) for u in sources for _ in range(rng.randint(1, 6))}
    closed = _bits(_closure(base), n)
    edges: dict[int, int] = {}
    for i, j in extra:
        edges[i] = edges.get(i, 0) | 1 << j
    cols = rows.split(_bits({(j, i) for i, j in _closure(base)}, n), n)
    for who, row in rows.insert(rows.split(closed, n), cols, edges):
        closed |= rows.product(who, row, n)
    assert closed == _bits(_closure(base | extra), n)


@pytest.mark.parametrize("seed", range(40))
def test_sparse_rows_are_the_non_empty_rows(seed: int) -> None:
    rng = random.Random(seed)
    n = rng.randint(1, 200)
    full = [0] * n
    for _ in range(rng.randint(0, 12)):
        full[rng.randrange(n)] |= (
            rng.getrandbits(n) if rng.random() < 0.5 else 1 << rng.randrange(n)
        )
    want = {i: row for i, row in enumerate(full) if row}
    r = rows.join(full, n)
    assert rows.sparse_rows(r, n, len(want)) == want
    if want:
        assert rows.sparse_rows(r, n, len(want) - 1) is None


@pytest.mark.parametrize("who", [0, 1, 0b1110, (1 << 50) - 1, sum(1 << i for i in range(0, 50, 2))])
def test_a_product_has_the_row_at_each_of_its_events(who: int) -> None:
    n, row = 50, 0b1011 | 1 << 49
    assert rows.product(who, row, n) == rows.join([row if who >> i & 1 else 0 for i in range(n)], n)


@pytest.mark.parametrize("seed", range(25))
def test_closure_of_a_union_on_a_big_universe_equals_the_dense_one(
    seed: int, monkeypatch: pytest.MonkeyPatch
) -> None:
    rng = random.Random(seed)
    n = rng.randint(2, 24)
    small, big = _geos(n, monkeypatch)
    order = _bits(_chain(n, rng.random() < 0.5), n)
    parts = [order, _bits(_random_relation(rng, n), n)]
    # a read's rf and fr beside a shared order: a few pairs from a few events
    u = rng.randrange(n)
    parts += [sum(1 << (u * n + j) for j in range(n) if rng.random() < 0.3)]
    for _ in range(2):
        parts[1] = sum(1 << (rng.randrange(n) * n + rng.randrange(n)) for _ in range(3))
        for name in ("closure_of_union", "star_of_union"):
            want = getattr(small, name)(parts)
            assert getattr(big, name)(parts) == want, name
            assert want == getattr(small, name.split("_")[0])(parts[0] | parts[1] | parts[2])


@pytest.mark.parametrize("seed", range(20))
def test_positions_and_from_positions_are_inverse(seed: int) -> None:
    rng = random.Random(seed)
    nbits = rng.randint(1, 5000)
    want = sorted(rng.sample(range(nbits), rng.randint(0, min(nbits, rng.choice([3, 40])))))
    r = rows.from_positions(want, nbits)
    assert r == sum(1 << k for k in want)
    assert rows.positions(r) == want
