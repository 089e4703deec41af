"""The cat language's built-in sets and relations, computed statically from an EventStructure.

A pair (or member) holds in an execution iff its events happen in it (see docs/events.md).
`rf`, `co` and `loc` depend on the execution and are the engines' business.
"""

from __future__ import annotations

from collections.abc import Callable, Iterable, Mapping

from pisa_mm.events.kinds import Kind, Order, Scope, Space, Tag
from pisa_mm.events.model import Event, EventStructure, Location, Placement

SET_NAMES = (
    "_",
    "R",
    "W",
    "M",
    "F",
    "IW",
    "ARRIVE",
    "DEPART",
    "ASYNC",
    "RMW",
    "EXIT",
    "RET",
    "BADADDR",
    "HOST",
    "NA",
    "RLX",
    "ACQ",
    "REL",
    "ACQ_REL",
    "SC",
    "SG",
    "WG",
    "GPU",
    "SYS",
    "UNSCOPED",
    "GLOBAL",
    "SHARED",
    "PRIVATE",
    "CONST",
    "GENERIC",
)

RELATION_NAMES = (
    "id",
    "po",
    "int",
    "ext",
    "rmw",
    "addr",
    "data",
    "ctrl",
    "aso",
    "bsync",
    "binst",
    "sinstr",
    "bfewer",
    "same-sg",
    "same-wg",
    "same-gpu",
    "incl",
)

SPACE_SETS = {
    "GLOBAL": Space.GLOBAL,
    "SHARED": Space.SHARED,
    "PRIVATE": Space.PRIVATE,
    "CONST": Space.CONST,
}

_ORDER_SETS = {
    "NA": Order.NA,
    "RLX": Order.RLX,
    "ACQ": Order.ACQ,
    "REL": Order.REL,
    "ACQ_REL": Order.ACQ_REL,
    "SC": Order.SC,
}
_SCOPE_SETS = {"SG": Scope.SG, "WG": Scope.WG, "GPU": Scope.GPU, "SYS": Scope.SYS}

Pairs = frozenset[tuple[int, int]]


def _select(es: EventStructure, pred: Callable[[Event], bool]) -> frozenset[int]:
    return frozenset(e.id for e in es.events if pred(e))


def _is_access(e: Event) -> bool:
    return e.kind in (Kind.READ, Kind.WRITE)


def _has_order(order: Order) -> Callable[[Event], bool]:
    # NA names the non-atomic accesses only: EXIT and collectives carry NA as "no order"
    return lambda e: e.order is order and (order is not Order.NA or _is_access(e))


def _has_scope(scope: Scope) -> Callable[[Event], bool]:
    return lambda e: e.scope is scope


def _in_space(space: Space) -> Callable[[Event], bool]:
    def member(e: Event) -> bool:
        if e.kind is Kind.FENCE:
            return space in e.spaces
        return _is_access(e) and e.spaces == frozenset({space})

    return member


def _unscoped(es: EventStructure) -> frozenset[int]:
    """The atomic events of `.relaxed` instructions, which carry no scope label (PISA 8).

    An RMW is relaxed when both its halves are: the relaxed half of an acquire or release
    RMW belongs to a scoped instruction (`es.rmw` pairs every RMW's read with its write,
    the write of a cas included, whether or not it happens).
    """
    partner: dict[int, int] = {}
    for r, w in es.rmw:
        partner[r], partner[w] = w, r
    out: set[int] = set()
    for e in es.events:
        if e.order is not Order.RLX or not _is_access(e):
            continue
        other = partner.get(e.id)
        if other is None or es.events[other].order is Order.RLX:
            out.add(e.id)
    return frozenset(out)


def static_sets(es: EventStructure) -> dict[str, frozenset[int]]:
    """Every built-in set. Space sets hold accesses whose space is statically certain (one
    possible location, or all in one space) and fences by the spaces they cover; use
    `dynamic_space_sets` once an execution fixes computed addresses."""
    host = {t.index for t in es.threads if t.placement.host}
    sets: dict[str, frozenset[int]] = {
        "_": _select(es, lambda e: True),
        "R": _select(es, lambda e: e.kind is Kind.READ),
        "W": _select(es, lambda e: e.kind is Kind.WRITE),
        "M": _select(es, _is_access),
        "F": _select(es, lambda e: e.kind is Kind.FENCE),
        "IW": _select(es, lambda e: e.tag is Tag.INIT),
        "ARRIVE": _select(es, lambda e: e.tag is Tag.ARRIVE),
        "DEPART": _select(es, lambda e: e.tag is Tag.DEPART),
        "ASYNC": _select(es, lambda e: e.tag is Tag.ASYNC),
        "RMW": _select(es, lambda e: e.tag is Tag.RMW),
        "EXIT": _select(es, lambda e: e.kind is Kind.EXIT),
        "RET": _select(es, lambda e: e.kind is Kind.EXIT and e.tag is Tag.RETURN),
        "BADADDR": _select(es, lambda e: e.kind is Kind.EXIT and e.tag is Tag.INVALID),
        "HOST": _select(es, lambda e: e.thread in host),
        "GENERIC": _select(es, lambda e: e.generic),
        "UNSCOPED": _unscoped(es),
    }
    for name, order in _ORDER_SETS.items():
        sets[name] = _select(es, _has_order(order))
    for name, scope in _SCOPE_SETS.items():
        sets[name] = _select(es, _has_scope(scope))
    for name, space in SPACE_SETS.items():
        sets[name] = _select(es, _in_space(space))
    return sets


def dynamic_space_sets(
    es: EventStructure, loc_of: Mapping[int, Location]
) -> dict[str, frozenset[int]]:
    """GLOBAL/SHARED/PRIVATE/CONST in one execution, where `loc_of` gives the location each
    access with several possible locations actually touched (others are looked up)."""
    out: dict[str, set[int]] = {name: set() for name in SPACE_SETS}
    names = {space: name for name, space in SPACE_SETS.items()}
    for e in es.events:
        if e.kind is Kind.FENCE:
            for sp in e.spaces:
                out[names[sp]].add(e.id)
        elif _is_access(e):
            loc = loc_of.get(e.id)
            if loc is not None:
                out[names[loc.space]].add(e.id)
            elif len(e.spaces) == 1:
                out[names[next(iter(e.spaces))]].add(e.id)
    return {k: frozenset(v) for k, v in out.items()}


# ---------------------------------------------------------------- relations


def _group_pairs(groups: Iterable[Iterable[int]]) -> set[tuple[int, int]]:
    out: set[tuple[int, int]] = set()
    for g in groups:
        members = list(g)
        out.update((a, b) for a in members for b in members)
    return out


def _by(es: EventStructure, key: Callable[[Event], object | None]) -> set[tuple[int, int]]:
    """All pairs of events with the same non-None key."""
    groups: dict[object, list[int]] = {}
    for e in es.events:
        k = key(e)
        if k is not None:
            groups.setdefault(k, []).append(e.id)
    return _group_pairs(groups.values())


def _place(es: EventStructure, e: Event) -> Placement | None:
    if e.thread is None:
        return None
    p = es.threads[e.thread].placement
    return None if p.host else p


def _wg_key(es: EventStructure, e: Event) -> tuple[int | None, int | None] | None:
    p = _place(es, e)
    return None if p is None else (p.gpu, p.wg)


def _scope_instance_key(es: EventStructure, thread: int, scope: Scope) -> object:
    """Threads with equal keys share the scope instance of level `scope`."""
    p = es.threads[thread].placement
    if scope is Scope.SYS:
        return "system"
    if p.host:
        return ("host", thread)  # a host thread shares nothing narrower than system
    if scope is Scope.GPU:
        return ("gpu", p.gpu)
    if scope is Scope.WG:
        return ("wg", p.gpu, p.wg)
    return ("sg", p.gpu, p.wg, p.sg)


def _incl(es: EventStructure) -> set[tuple[int, int]]:
    scoped = [e for e in es.events if e.scope is not None and e.thread is not None]
    out: set[tuple[int, int]] = set()
    for a in scoped:
        assert a.scope is not None and a.thread is not None
        for b in scoped:
            assert b.scope is not None and b.thread is not None
            a_sees_b = _scope_instance_key(es, a.thread, a.scope) == _scope_instance_key(
                es, b.thread, a.scope
            )
            b_sees_a = _scope_instance_key(es, b.thread, b.scope) == _scope_instance_key(
                es, a.thread, b.scope
            )
            if a_sees_b and b_sees_a:
                out.add((a.id, b.id))
    return out


def barrier_relations(es: EventStructure) -> tuple[set[tuple[int, int]], ...]:
    """bsync, binst and bfewer."""
    arrive = [e for e in es.events if e.tag is Tag.ARRIVE]
    depart = [e for e in es.events if e.tag is Tag.DEPART]
    bsync = {
        (a.id, d.id)
        for a in arrive
        for d in depart
        if a.barrier_index == d.barrier_index and _wg_key(es, a) == _wg_key(es, d)
    }
    binst = {
        (a.id, b.id)
        for a in arrive
        for b in arrive
        if a.thread != b.thread
        and a.barrier_index == b.barrier_index
        and _wg_key(es, a) == _wg_key(es, b)
    }
    barriers_before_exit: dict[int, int] = {}
    for t in es.threads:
        for path in t.paths:
            count = sum(1 for e in path.events if es.events[e].tag is Tag.ARRIVE)
            barriers_before_exit[path.events[-1]] = count
    bfewer = {
        (a.id, x)
        for a in arrive
        for x, count in barriers_before_exit.items()
        if es.events[x].thread != a.thread
        and _wg_key(es, es.events[x]) == _wg_key(es, a)
        and a.barrier_index is not None
        and count < a.barrier_index + 1
    }
    return bsync, binst, bfewer


def _static_instruction(e: Event) -> object | None:
    """Identity of the instruction that produced `e`, for `sinstr`.

    Within a thread it is the instruction itself. Across threads only barriers are compared
    (for barrier divergence, PISA 9.1): each litmus thread has its own body, so "the same
    barrier" is the same ordinal among the barrier instructions of the bodies; comparing
    source positions would make any two threads' barriers differ.
    """
    if e.barrier_site is not None:
        return ("barrier", e.barrier_site)
    if e.instr is None or e.thread is None:
        return None
    return ("instr", e.thread, e.instr)


def static_relations(es: EventStructure) -> dict[str, Pairs]:
    """Every built-in relation except rf, co and loc."""
    all_ids = [e.id for e in es.events]
    same_thread = _by(es, lambda e: e.thread)
    bsync, binst, bfewer = barrier_relations(es)

    def sub_group(e: Event) -> object | None:
        p = _place(es, e)
        return None if p is None else (p.gpu, p.wg, p.sg)

    def gpu(e: Event) -> object | None:
        p = _place(es, e)
        return None if p is None else p.gpu

    rels: dict[str, set[tuple[int, int]] | Pairs] = {
        "id": {(i, i) for i in all_ids},
        "po": es.po.pairs(),  # the cat evaluator iterates it: materialised once, here
        "int": same_thread,
        "ext": {(a, b) for a in all_ids for b in all_ids if a != b} - same_thread,
        "rmw": es.rmw,
        "addr": es.addr,
        "data": es.data,
        "ctrl": es.ctrl,
        "aso": es.aso,
        "bsync": bsync,
        "binst": binst,
        "sinstr": _by(es, _static_instruction),
        "bfewer": bfewer,
        "same-sg": _by(es, sub_group),
        "same-wg": _by(es, lambda e: _wg_key(es, e)),
        "same-gpu": _by(es, gpu),
        "incl": _incl(es),
    }
    return {name: frozenset(rels[name]) for name in RELATION_NAMES}
