"""Relations given by their shape (strict orders, equivalence classes), never by their pairs.

A coherence order over n writes has n(n-1)/2 pairs, `loc` over n accesses of one location
n*n, program order of a thread of n events n(n-1)/2 and `ext` of n threads about n*n:
listed as pairs, they cost quadratic Python work and memory (a million tuples at a thousand
writes, sixteen million for `ext` of 4,000 events). A `BaseRelations` may return one of these
instead; iterating it yields its pairs (for whoever wants them), and the evaluator turns it
into bits a row at a time (`cat/geo.py` `Geo.shape_bits`).
"""

from __future__ import annotations

from collections.abc import Iterator, Sequence

from pisa_mm.records import record

__all__ = ["SHAPES", "Apart", "Blocks", "Classes", "Forest", "Orders", "Rows"]


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


@record
class Apart:
    """The pairs of two different events of `events` that share no class of `classes`
    (disjoint); an event in no class is apart from every other one (`ext`: no common
    work-item)."""

    events: tuple[int, ...]
    classes: tuple[frozenset[int], ...]

    def __iter__(self) -> Iterator[tuple[int, int]]:
        owner = {e: k for k, group in enumerate(self.classes) for e in group}
        for a in self.events:
            ka = owner.get(a)
            for b in self.events:
                if a != b and (ka is None or ka != owner.get(b)):
                    yield a, b


@record
class Forest:
    """Strict ancestry in a forest: `parents[e]` is the parent of event e (None for a root);
    a is related to b when a is a proper ancestor of b (program order of each work-item's
    tree of paths)."""

    parents: tuple[int | None, ...]

    def __iter__(self) -> Iterator[tuple[int, int]]:
        for e in range(len(self.parents)):
            anc = self.parents[e]
            while anc is not None:
                yield anc, e
                anc = self.parents[anc]


@record
class Blocks:
    """A union of products: every pair of `left` x `right`, for each `(left, right)` of
    `blocks` (scope inclusion: linearly many ids for quadratically many pairs)."""

    blocks: tuple[tuple[frozenset[int], frozenset[int]], ...]

    def __iter__(self) -> Iterator[tuple[int, int]]:
        seen: set[tuple[int, int]] = set()
        for left, right in self.blocks:
            for a in sorted(left):
                for b in sorted(right):
                    if (a, b) not in seen:
                        seen.add((a, b))
                        yield a, b


Rows = Orders | Classes | Apart | Forest | Blocks
# The shapes' types, for a membership test (cheaper than isinstance with a union).
SHAPES: frozenset[type] = frozenset({Orders, Classes, Apart, Forest, Blocks})
