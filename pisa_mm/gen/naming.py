"""Canonical rotation of a cycle and herd-style family names (MP, SB, IRIW, Z6.0, CoRR, ...)."""

from __future__ import annotations

from pisa_mm.events.kinds import Order, Scope
from pisa_mm.gen.edges import (
    COMMUNICATION,
    ORDER_NAMES,
    SCOPE_NAMES,
    Cycle,
    Dir,
    Edge,
    EdgeKind,
    FenceSpace,
    LocSpace,
)
from pisa_mm.gen.params import Params, Placement
from pisa_mm.gen.program import Event

# The classic families, keyed as diy7 keys them: for each thread (in the canonical rotation)
# the kinds of its first and last access ("W" for a one-access thread), joined by "+".
FAMILIES: dict[str, str] = {
    "WW+RR": "MP",
    "WR+WR": "SB",
    "RW+RW": "LB",
    "W+RR+W+RR": "IRIW",
    "W+RW+RR": "WRC",
    "WW+RW+RR": "ISA2",
    "WW+WW": "2+2W",
    "WW+WR": "R",
    "WW+RW": "S",
    "W+RR+WR": "RWC",
    "WW+RR+WR": "W+RWC",
    "WW+RW+WR": "Z6.0",
    "WW+WW+RW": "Z6.1",
    "WW+RW+RW": "Z6.2",
    "WW+WW+RR": "Z6.3",
    "WW+WR+WR": "Z6.4",
    "WW+WW+WR": "Z6.5",
    "WR+WR+WR": "3.SB",
    "RW+RW+RW": "3.LB",
    "WW+WW+WW": "3.2W",
    "W+RW+RW": "WWC",
    "W+RW+WR": "WRW+WR",
    "W+RR+WW": "WRR+2W",
    "W+RW+WW": "WRW+2W",
    "W+RR+W+RW": "IRRWIW",
    "W+RW+W+RW": "IRWIW",
}
# Cycles on one location: the coherence shapes.
COHERENCE_FAMILIES: dict[str, str] = {
    "WW": "CoWW",
    "RW": "CoRW1",
    "W+RW": "CoRW2",
    "W+WR": "CoWR",
    "W+RR": "CoRR",
    "WR": "CoWR0",
}

_RANK = {Dir.W: 0, Dir.R: 1}
_LEVELS = {
    Placement.SAME_SG: Scope.SG,
    Placement.SAME_WG: Scope.WG,
    Placement.DIFF_WG: Scope.GPU,
    Placement.DIFF_GPU: Scope.SYS,
    Placement.HOST: Scope.SYS,
}


def thread_starts(cycle: Cycle) -> list[int]:
    """Events that begin a thread: those after an external edge.

    A one-thread cycle starts after a communication edge: that edge closes the cycle by going
    back in program order (`PosWW Coi` is CoWW), every other edge goes forward.
    """
    n = len(cycle)
    starts = [i for i in range(n) if cycle.edges[i - 1].external]
    if starts:
        return starts
    return [i for i in range(n) if cycle.edges[i - 1].kind in COMMUNICATION]


def points(cycle: Cycle) -> tuple[tuple[Dir, ...], ...]:
    """For each thread from event 0 (a thread start), its first and last access kinds."""
    out: list[tuple[Dir, ...]] = []
    current: list[Dir] = []
    for i, edge in enumerate(cycle.edges):
        assert edge.src is not None
        current.append(edge.src)
        if edge.external or i == len(cycle) - 1:
            out.append((current[0],) if len(current) == 1 else (current[0], current[-1]))
            current = []
    return tuple(out)


def _key(cycle: Cycle) -> tuple[object, ...]:
    pts = tuple(tuple(_RANK[d] for d in p) for p in points(cycle))
    edges = tuple(
        (e.kind.value, e.same_loc, e.external, str(e.src), str(e.dst), repr(e.fence), str(e.dep))
        for e in cycle.edges
    )
    annots = tuple(repr((a.order, a.scope, a.space, a.generic, a.rmw)) for a in cycle.annots)
    return (pts, edges, annots)


def canonical_rotation(cycle: Cycle) -> tuple[Cycle, int]:
    """The rotation that names the test (diy's normal form), and the event it starts at."""
    best = min(thread_starts(cycle), key=lambda k: _key(cycle.rotate(k)))
    return cycle.rotate(best), best


def family(cycle: Cycle) -> str:
    """The family name of a canonically rotated cycle; an unknown shape is named by its key."""
    key = "+".join("".join(d.value for d in p) for p in points(cycle))
    if all(e.same_loc for e in cycle.edges):
        return COHERENCE_FAMILIES.get(key, "Co." + key)
    return FAMILIES.get(key, key)


def _access_code(ev: Event, mixed: bool) -> str:
    parts = [ev.rmw.value] if ev.rmw is not None else []
    parts.append(ORDER_NAMES[ev.order])
    if ev.scope is not None:
        parts.append(SCOPE_NAMES[ev.scope])
    if mixed:
        parts.append(("gen-" if ev.generic else "") + ev.space.value)
    return ".".join(parts)


def _edge_code(e: Edge, params: Params, default: FenceSpace) -> str:
    s = "s" if e.same_loc else ""
    match e.kind:
        case EdgeKind.PO:
            return "po" + s
        case EdgeKind.DP:
            assert e.dep is not None
            return e.dep.value.lower() + s
        case EdgeKind.FENCE:
            assert e.fence is not None
            scope = e.fence.scope if e.fence.scope is not None else params.scope
            if scope is Scope.SG:
                return "fsg"
            order = e.fence.order if e.fence.order is not None else Order.ACQ_REL
            code = f"f{ORDER_NAMES[order]}.{SCOPE_NAMES[scope]}"
            space = e.fence.space if e.fence.space is not None else default
            return code + (f".{space.value}" if space is not default else "")
        case EdgeKind.RF | EdgeKind.FR | EdgeKind.CO:
            return str(e.kind.value).lower() + ("e" if e.external else "i")


def test_name(
    fam: str, cycle: Cycle, events: list[Event], params: Params, default: FenceSpace
) -> str:
    """herd-style: FAMILY+thread0+thread1+...[+space][+placement], from the canonical cycle.

    A thread is its accesses (order.scope) joined by its internal edges (`po`, `fsc.gpu`,
    `addr`, ...): `MP+weak-po-rel.gpu+acq.gpu-po-weak`.
    """
    kinds = {(ev.space, ev.generic) for ev in events}
    mixed = len(kinds) > 1
    tokens: list[str] = []
    for i, ev in enumerate(events):
        if i == 0 or cycle.edges[i - 1].external:
            tokens.append(_access_code(ev, mixed))
        else:
            tokens[-1] += f"-{_edge_code(cycle.edges[i - 1], params, default)}-"
            tokens[-1] += _access_code(ev, mixed)
    name = "+".join([fam, *tokens])
    if not mixed:
        space, generic = next(iter(kinds))
        if generic:
            name += "+generic" if space is LocSpace.GLOBAL else "+generic-shared"
        elif space is LocSpace.SHARED:
            name += "+shared"
    nthreads = len(tokens)
    external = [e for e in cycle.edges if e.external]
    if any(e.place is not None for e in external):
        level = _LEVELS[params.placement]
        levels = [e.place if e.place is not None else level for e in external]
        if len(set(levels)) > 1:
            return name + "+at." + ".".join(SCOPE_NAMES[lv] for lv in levels)
        uniform = {v: k for k, v in _LEVELS.items() if k is not Placement.HOST}[levels[0]]
        return name + ("" if uniform is Placement.DIFF_WG else f"+{uniform.value}")
    if params.placement is Placement.HOST:
        name += f"+host-P{params.host_thread}" if nthreads > 1 else "+host"
    elif params.placement is not Placement.DIFF_WG and nthreads > 1:
        name += f"+{params.placement.value}"
    return name
