"""Relations given by their shape (strict orders, equivalence classes), never by their pairs.

A coherence order over n writes has n(n-1)/2 pairs and `loc` over n accesses of one location
n*n: listed as pairs, they cost quadratic Python work and memory per candidate (a million
tuples at a thousand writes). A `BaseRelations` may return one of these instead; iterating
it yields its pairs (for whoever wants them), and the evaluator turns it into bits a row at a
time (`_Geo.rel_bits`).
"""

from __future__ import annotations

from collections.abc import Iterator, Sequence

from pisa_mm.records import record

__all__ = ["Classes", "Orders", "Rows"]


@record
class Orders:
    """The union of strict orders: in each `(order, after)` of `chains`, every event comes
    before the later events of `order` and before every event of `after`."""

    chains: tuple[tuple[tuple[int, ...], frozenset[int]], ...]

    def __iter__(self) -> Iterator[tuple[int, int]]:
        for order, after in self.chains:
            for k, a in enumerate(order):
                for b in order[k + 1 :]:
                    yield a, b
                for b in sorted(after):
                    yield a, b

    def rows(self) -> Iterator[tuple[int, Sequence[int], frozenset[int]]]:
        """Per event of a chain: it, the events after it in its order, and `after`."""
        for order, after in self.chains:
            for k, a in enumerate(order):
                yield a, order[k + 1 :], after


@record
class Classes:
    """An equivalence relation (reflexive) given by its classes, which are disjoint."""

    classes: tuple[frozenset[int], ...]

    def __iter__(self) -> Iterator[tuple[int, int]]:
        for group in self.classes:
            for a in sorted(group):
                for b in sorted(group):
                    yield a, b


Rows = Orders | Classes
