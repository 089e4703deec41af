"""`cat/rows.py` `join` packs rows that are not mostly empty eight at a time (n bytes per
group): the relation is the one whose row i is rows[i], whatever the density and width."""

from __future__ import annotations

import random

import pytest

from pisa_mm.cat import rows


def _reference(parts: list[int], n: int) -> int:
    out = 0
    for i, row in enumerate(parts):
        out |= row << (i * n)
    return out


@pytest.mark.parametrize("seed", range(40))
def test_join_is_the_relation_of_its_rows(seed: int) -> None:
    rng = random.Random(seed)
    n = rng.choice([9, 15, 16, 17, 63, 64, 65, 130])
    density = rng.choice([0.0, 0.05, 0.2, 0.6, 1.0])
    parts = [rng.getrandbits(n) if rng.random() < density else 0 for _ in range(n)]
    joined = rows.join(parts, n)
    assert joined == _reference(parts, n)
    assert rows.split(joined, n) == parts


def test_a_row_wider_than_n_is_ored_into_the_next_rows() -> None:
    # why: within a group of eight the packing ORs the spill as the merge does; past the
    # group's n bytes it cannot, and the rows go to the merge
    n = 10
    parts = [(1 << n) - 1] * n
    parts[3] = 1 << (n + 2)  # spills into row 4, same group
    parts[7] = 1 << (n + 1)  # spills into row 8, the next group
    assert rows.join(parts, n) == _reference(parts, n)
