"""A cheap upper estimate of how many candidates the explicit engine enumerates."""

from __future__ import annotations

import math

from pisa_mm.events.model import EventStructure, Kind, Location, Tag

__all__ = ["candidate_space"]


def candidate_space(es: EventStructure) -> int:
    """paths x rf choices x co orders, from the events alone (nothing is enumerated).

    Paths multiply across work-items; each read may read from any write (init included)
    that may share one of its locations; each location's non-init writes may come in any
    order. Events of every path are counted together, so this bounds the enumeration from
    above (before pruning), which is what the choice of an engine needs.
    """
    paths = math.prod(max(1, len(t.paths)) for t in es.threads)
    writers: dict[Location, int] = {}
    stores: dict[Location, int] = {}
    for e in es.events:
        if e.kind is Kind.WRITE:
            for loc in e.locs:
                writers[loc] = writers.get(loc, 0) + 1
                if e.tag is not Tag.INIT:
                    stores[loc] = stores.get(loc, 0) + 1
    rf = 1
    for e in es.events:
        if e.kind is Kind.READ:
            rf *= max(1, sum(writers.get(loc, 0) for loc in e.locs))
    co = math.prod(math.factorial(n) for n in stores.values())
    return paths * rf * co
