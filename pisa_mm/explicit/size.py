"""A cheap upper estimate of how many candidates the explicit engine enumerates."""

from __future__ import annotations

import math

from pisa_mm.events.model import EventStructure, Kind, Location, Tag

__all__ = ["candidate_space"]


# The last structure asked about and its estimate: `auto` asks before running the explicit
# engine, which asks again (whether to prune). One tuple, read and replaced whole (threads
# may share it); it keeps nothing else alive.
_last: tuple[EventStructure | None, int] = (None, 0)


def candidate_space(es: EventStructure) -> int:
    """`_estimate(es)`, remembered for the last structure."""
    global _last
    known, value = _last
    if known is not es:
        value = _estimate(es)
        _last = (es, value)
    return value


def _estimate(es: EventStructure) -> int:
    """Per work-item, the sum over its paths of the rf choices of the path's reads; their
    product; times the co orders. From the events alone (nothing is enumerated).

    Each read may read from any write (init included) that may share one of its
    locations; each location's non-init writes (of any path) may come in any order. This
    bounds the enumeration from above (before pruning), which is what the choice of an
    engine needs. Summing over a work-item's paths, not multiplying the paths by the rf
    choices of all their reads together, keeps a spin loop unrolled k times at about k
    times a straight-line test (each path has its own few reads), not 2^k.
    """
    writers: dict[Location, int] = {}
    stores: dict[Location, int] = {}
    for e in es.events:
        if e.kind is Kind.WRITE:
            for loc in e.locs:
                writers[loc] = writers.get(loc, 0) + 1
                if e.tag is not Tag.INIT:
                    stores[loc] = stores.get(loc, 0) + 1
    choices = [1] * len(es.events)
    for i, e in enumerate(es.events):
        if e.kind is Kind.READ:
            choices[i] = max(1, sum(writers.get(loc, 0) for loc in e.locs))
    rf = 1
    for t in es.threads:
        rf *= max(1, sum(math.prod(choices[i] for i in p.events) for p in t.paths))
    co = math.prod(math.factorial(n) for n in stores.values())
    return rf * co
