"""Pairs of the builder's local event ids (events/build.py: counted from 0 in each thread
run) moved past the init writes once they are counted."""

from __future__ import annotations

from collections.abc import Iterable

__all__ = ["shift_pairs"]


def shift_pairs(pairs: Iterable[tuple[int, int]], n: int) -> frozenset[tuple[int, int]]:
    return frozenset((a + n, b + n) for a, b in pairs)
