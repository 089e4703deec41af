"""Thread-symmetry reduction: identical work-items need not be told apart.

Two work-items are interchangeable when they run the same code from the same registers,
touch only `.global`/`.const` memory, perform no collective, stand in the same scope
relation to every other thread, and no observable names their registers. Swapping them is
then an automorphism of the event structure: it preserves every built-in relation, hence
maps allowed executions to allowed executions with the same final state, flags and cut.

So the solver may consider only executions whose *keys* are sorted along each group of
interchangeable work-items: any execution can be permuted into one (a permutation carries
keys along with the work-items, so sorting is always possible). The key of a work-item is the
coherence clock of its first write when that write always happens at one fixed location,
the same for the whole group: clocks of distinct writes differ, so the order is strict and
exactly one execution per orbit remains. Otherwise it is the value read by its first event
when that is a read that always happens (sorted with <=). For k atomic increments of one
counter this removes the k! coherence orders that differ only by naming.
"""

from __future__ import annotations

import itertools
from collections.abc import Iterable, Sequence
from typing import Any

import z3

from pisa_mm.events.kinds import Kind, Space
from pisa_mm.events.model import EventStructure, Location, Placement
from pisa_mm.litmus.program import LitmusTest, Observable, RegObs
from pisa_mm.smt.encode import Encoding

__all__ = ["interchangeable_groups", "symmetry_constraints"]

_GLOBAL_SPACES = frozenset({Space.GLOBAL, Space.CONST})


def _relation(a: Placement, b: Placement) -> tuple[bool, ...]:
    """What a scope can see between two placements."""
    if a.host or b.host:
        return (a.host, b.host)
    return (
        a.gpu == b.gpu,
        a.gpu == b.gpu and a.wg == b.wg,
        (a.gpu, a.wg, a.sg) == (b.gpu, b.wg, b.sg),
    )


def _eligible(es: EventStructure, thread: int) -> bool:
    for e in es.events:
        if e.thread != thread:
            continue
        if e.kind is Kind.COLLECTIVE:
            return False
        if e.kind in (Kind.READ, Kind.WRITE) and not e.spaces <= _GLOBAL_SPACES:
            return False
    return True


def _signature(test: LitmusTest, thread: int) -> tuple[object, ...]:
    t = test.threads[thread]
    body = tuple((i.text, i.labels) for i in t.body)
    inits = tuple(sorted((str(r.reg), str(r.value)) for r in test.reg_inits if r.thread == thread))
    return (body, inits, t.regs, t.placement.host)


def _kinds(es: EventStructure, thread: int) -> tuple[object, ...]:
    return tuple((e.kind, e.tag, e.order, e.scope) for e in es.events if e.thread == thread)


def interchangeable_groups(
    test: LitmusTest, es: EventStructure, observables: Iterable[Observable]
) -> list[list[int]]:
    """Groups (of two or more) of pairwise interchangeable work-items, in thread order."""
    observed = {o.thread for o in observables if isinstance(o, RegObs)}
    places = [t.placement for t in es.threads]
    candidates = [t.index for t in es.threads if t.index not in observed and _eligible(es, t.index)]
    groups: list[list[int]] = []
    for t in candidates:
        for group in groups:
            u = group[0]
            if _signature(test, t) != _signature(test, u) or _kinds(es, t) != _kinds(es, u):
                continue
            others = [x.index for x in es.threads if x.index not in (t, u)]
            if all(_relation(places[t], places[x]) == _relation(places[u], places[x])
                   for x in others):  # fmt: skip
                group.append(t)
                break
        else:
            groups.append([t])
    return [g for g in groups if len(g) > 1]


def _clock_key(enc: Encoding, thread: int) -> tuple[Location, Any] | None:
    """The location and clock of the work-item's first write, when it always happens at one
    fixed location: distinct writes of one location have distinct clocks."""
    first = min(
        (e.id for e in enc.es.events if e.thread == thread and e.kind is Kind.WRITE), default=None
    )
    if first is None or enc.exec[first] is not True:
        return None
    places = list(enc.at[first].items())
    if len(places) != 1 or places[0][1] is not True:
        return None
    return places[0][0], enc.clock[first]


def _key(enc: Encoding, thread: int) -> Any | None:
    first = min((e.id for e in enc.es.events if e.thread == thread), default=None)
    if first is None:
        return None
    e = enc.es.events[first]
    if e.kind is not Kind.READ or enc.exec[first] is not True:
        return None
    return enc.read_value(first)


def symmetry_constraints(
    test: LitmusTest, enc: Encoding, observables: Sequence[Observable]
) -> list[Any]:
    """z3 constraints keeping one execution per orbit of the interchangeable work-items."""
    out: list[Any] = []
    for group in interchangeable_groups(test, enc.es, observables):
        clocks = [_clock_key(enc, t) for t in group]
        if all(k is not None for k in clocks) and len({k[0] for k in clocks if k}) == 1:
            terms = [k[1] for k in clocks if k]
            out.extend(z3.ULT(a, b) for a, b in itertools.pairwise(terms))
            continue
        keys = [_key(enc, t) for t in group]
        if any(k is None for k in keys):
            continue
        out.extend(z3.ULE(a, b) for a, b in itertools.pairwise(keys))
    return out
