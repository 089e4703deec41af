"""Turn a cycle and one point of the sweep into a generated litmus test (or a skip reason)."""

from __future__ import annotations

from pisa_mm.errors import Diagnostic, PisaMMError, Severity, Span
from pisa_mm.events.kinds import Order, Scope
from pisa_mm.gen.cycle import CODE
from pisa_mm.gen.edges import (
    ORDER_NAMES,
    SCOPE_NAMES,
    Cycle,
    DepKind,
    Dir,
    Edge,
    EdgeKind,
    EventAnnot,
    FenceSpace,
    FenceSpec,
    LocSpace,
    RmwKind,
)
from pisa_mm.gen.naming import canonical_rotation, family, test_name
from pisa_mm.gen.params import (
    SCHEME_ORDERS,
    FenceKind,
    OrderScheme,
    Params,
    Placement,
    SpaceChoice,
)
from pisa_mm.gen.program import LOC_NAMES, Event, GenTest, GenThread
from pisa_mm.records import replace

NEVER = 255  # the compare value of a cas standing for a read: no generated write stores it
_PISA_ORDER = {
    Order.NA: "",
    Order.RLX: ".relaxed",
    Order.ACQ: ".acquire",
    Order.REL: ".release",
    Order.ACQ_REL: ".acq_rel",
    Order.SC: ".seq_cst",
}
_PISA_SCOPE = {
    Scope.SG: ".subgroup",
    Scope.WG: ".workgroup",
    Scope.GPU: ".gpu",
    Scope.SYS: ".system",
}


class Skip(Exception):
    """This point of the sweep would be invalid PISA; `reason` says which rule."""

    def __init__(self, reason: str) -> None:
        super().__init__(reason)
        self.reason = reason


def _cycle_error(edge: Edge, message: str) -> PisaMMError:
    return PisaMMError(Diagnostic(Severity.ERROR, message, edge.span, CODE))


def apply_fences(cycle: Cycle, params: Params) -> Cycle:
    """Replace each different-location Po edge by the fence edge that --fences asks for."""
    kind = params.fence.kind
    if kind is FenceKind.NONE:
        return cycle
    edges = []
    for e in cycle.edges:
        if e.kind is EdgeKind.PO and not e.same_loc:
            order: Order | None
            match kind:
                case FenceKind.SC:
                    order = Order.SC
                case FenceKind.ACQ_REL:
                    order = Order.ACQ_REL
                case FenceKind.REL_ACQ:
                    order = Order.REL if e.dst is Dir.W else Order.ACQ if e.src is Dir.R else None
                case FenceKind.SG:
                    order = None
            if kind is FenceKind.SG:
                e = replace(e, kind=EdgeKind.FENCE, fence=FenceSpec(scope=Scope.SG))
            elif order is not None:
                spec = FenceSpec(order=order, space=params.fence.space)
                e = replace(e, kind=EdgeKind.FENCE, fence=spec)
        edges.append(e)
    return Cycle(tuple(edges), cycle.annots, cycle.text)


def apply_rmw(cycle: Cycle, params: Params) -> Cycle:
    if params.rmw is None:
        return cycle
    pos, kind = params.rmw.position, params.rmw.kind
    annot = cycle.annots[pos]
    if annot.rmw is not None:
        raise Skip("the access is already an iatom")
    if cycle.edges[pos].src is Dir.R and kind is not RmwKind.CAS:
        raise Skip(f"iatom.{kind.value} stands for a write, not a read")
    annots = list(cycle.annots)
    annots[pos] = replace(annot, rmw=kind)
    return Cycle(cycle.edges, tuple(annots), cycle.text)


def _layout(cycle: Cycle) -> tuple[list[int], list[int]]:
    """Thread and location index of each event (locations change at d edges only)."""
    n = len(cycle)
    threads = [0] * n
    for i in range(1, n):
        threads[i] = threads[i - 1] + (1 if cycle.edges[i - 1].external else 0)
    parent = list(range(n))

    def find(i: int) -> int:
        while parent[i] != i:
            i = parent[i]
        return i

    for i, e in enumerate(cycle.edges):
        if e.same_loc:
            parent[find(i)] = find((i + 1) % n)
    labels: dict[int, int] = {}
    locs = [labels.setdefault(find(i), len(labels)) for i in range(n)]
    return threads, locs


def _loc_spaces(cycle: Cycle, locs: list[int], params: Params) -> list[LocSpace]:
    default = LocSpace.SHARED if params.space is SpaceChoice.SHARED else LocSpace.GLOBAL
    chosen: dict[int, tuple[LocSpace, Span | None]] = {}
    for i, a in enumerate(cycle.annots):
        if a.space is None:
            continue
        old = chosen.get(locs[i])
        if old is not None and old[0] is not a.space:
            raise PisaMMError(
                Diagnostic(
                    Severity.ERROR,
                    f"location {LOC_NAMES[locs[i]]} is "
                    f"annotated both {old[0].value} and {a.space.value}",
                    a.span,
                    CODE,
                )
            )
        chosen[locs[i]] = (a.space, a.span)
    return [chosen[k][0] if k in chosen else default for k in range(max(locs) + 1)]


def _scheme_order(params: Params, cycle: Cycle, i: int) -> Order:
    e_in, e_out = cycle.edges[i - 1], cycle.edges[i]
    d, rmw = e_out.src, cycle.annots[i].rmw is not None
    role = Order.REL if d is Dir.W else Order.ACQ
    match params.orders:
        case OrderScheme.WEAK | OrderScheme.RLX | OrderScheme.SC:
            order = SCHEME_ORDERS[params.orders]
        case OrderScheme.REL_ACQ:
            order = role
        case OrderScheme.ACQ_REL:
            order = Order.ACQ_REL if rmw else role
        case OrderScheme.SYNC:
            # the canonical rotation starts at a thread start: event 0 has no po-predecessor
            has_pred = i > 0 and not e_in.external
            has_succ = i < len(cycle) - 1 and not e_out.external
            if d is Dir.W and has_pred and e_out.external:
                order = Order.REL
            elif d is Dir.R and has_succ and e_in.external and e_in.kind is EdgeKind.RF:
                order = Order.ACQ
            else:
                order = Order.NA
    if rmw and order is Order.NA:
        order = Order.RLX  # an iatom is always atomic: where a scheme says weak, relaxed
    return order


def _check_access(ev: Event, host: bool, annot: EventAnnot) -> None:
    if ev.rmw is not None:
        if ev.order is Order.SC:
            raise Skip("iatom has no seq_cst order (PISA 8.2)")
        if ev.order is Order.NA:
            raise Skip("an iatom is atomic: it has no weak order (PISA 8.2)")
    elif ev.dir is Dir.R and ev.order in (Order.REL, Order.ACQ_REL):
        raise Skip("ld has no release or acq_rel order (PISA 8.3)")
    elif ev.dir is Dir.W and ev.order in (Order.ACQ, Order.ACQ_REL):
        raise Skip("st has no acquire or acq_rel order (PISA 8.5)")
    if ev.order in (Order.NA, Order.RLX) and annot.scope is not None:
        raise Skip("a weak or relaxed access takes no scope (PISA 8.x: .memscope needs an order)")
    if ev.scope is Scope.SG:
        raise Skip("subgroup scope exists only as fence.subgroup (PISA 9.2)")
    if host:
        if ev.space is LocSpace.SHARED:
            raise Skip("host threads access only .global memory (PISA 1.2.1.2)")
        if ev.scope not in (None, Scope.SYS):
            raise Skip("host threads use only the system scope (PISA 1.2.1.2)")


def _fence_line(spec: FenceSpec, params: Params, default: FenceSpace, host: bool) -> str:
    scope = spec.scope if spec.scope is not None else params.scope
    if scope is Scope.SG:
        if spec.order is not None or spec.space is not None:
            raise Skip(
                "a subgroup-scope fence is fence.subgroup, which takes no order or "
                "address space (PISA 9.2)"
            )
        if host:
            raise Skip("host threads have no sub-group: no fence.subgroup (PISA 1.2.1.2)")
        return "fence.subgroup;"
    space = spec.space if spec.space is not None else default
    order = spec.order if spec.order is not None else Order.ACQ_REL
    if scope is Scope.SYS and space is not FenceSpace.GLOBAL:
        raise Skip("only fence.global has the system scope (PISA 9.2)")
    if host and (scope is not Scope.SYS or space is not FenceSpace.GLOBAL):
        raise Skip("host threads fence only .global memory at system scope (PISA 1.2.1.2)")
    sp = "" if space is FenceSpace.GENERIC else f".{space.value}"
    return f"fence{sp}{_PISA_ORDER[order]}{_PISA_SCOPE[scope]};"


def _coherence(cycle: Cycle, locs: list[int]) -> tuple[dict[int, int], dict[int, int | None]]:
    """Each write's value (its rank in co, from 1) and its co-predecessor (None: init)."""
    n = len(cycle)
    edges = cycle.edges
    values: dict[int, int] = {}
    pred: dict[int, int | None] = {}
    for loc in sorted(set(locs)):
        writes = [i for i in range(n) if locs[i] == loc and edges[i].src is Dir.W]
        before: dict[int, set[int]] = {w: set() for w in writes}
        for i, e in enumerate(edges):
            j = (i + 1) % n
            if locs[i] != loc:
                continue
            if e.kind is EdgeKind.CO:
                before[j].add(i)
            elif e.kind is EdgeKind.FR and edges[i - 1].kind is EdgeKind.RF:
                before[j].add((i - 1) % n)
        order: list[int] = []
        while len(order) < len(writes):
            ready = [w for w in writes if w not in order and before[w] <= set(order)]
            if not ready:
                bad = next(
                    e
                    for i, e in enumerate(edges)
                    if locs[i] == loc and e.kind in (EdgeKind.CO, EdgeKind.FR)
                )
                raise _cycle_error(
                    bad,
                    f"no coherence order of location {LOC_NAMES[loc]} "
                    "satisfies the cycle's Co and Fr edges",
                )
            order.append(ready[0])
        for rank, w in enumerate(order):
            values[w] = rank + 1
            pred[w] = order[rank - 1] if rank else None
    return values, pred


def _read_value(
    cycle: Cycle, i: int, values: dict[int, int], pred: dict[int, int | None]
) -> int | None:
    """The value the cycle makes read i return, or None if the cycle leaves it open."""
    n = len(cycle)
    e_in, e_out = cycle.edges[i - 1], cycle.edges[i]
    if e_in.kind is EdgeKind.RF:
        return values[(i - 1) % n]
    if e_out.kind is EdgeKind.FR:
        p = pred[(i + 1) % n]
        return 0 if p is None else values[p]
    return None


_LEVEL = {
    Placement.SAME_SG: Scope.SG,
    Placement.SAME_WG: Scope.WG,
    Placement.DIFF_WG: Scope.GPU,
    Placement.DIFF_GPU: Scope.SYS,
}
Place = tuple[int, int, int | None] | None  # (gpu, wg, sg or fresh); None: the host


def _arcs(levels: list[Scope], cut: Scope) -> list[int]:
    """Number the arcs of the thread cycle cut at the edges of level >= cut (thread t's arc).
    levels[t] is the edge from thread t to t+1; the last arc wraps into the first."""
    ids = [0]
    for level in levels[:-1]:
        ids.append(ids[-1] + (1 if level >= cut else 0))
    if levels[-1] < cut:
        last = ids[-1]
        ids = [0 if i == last else i for i in ids]
    return ids


def _relabel(ids: list[object]) -> list[int]:
    seen: dict[object, int] = {}
    return [seen.setdefault(i, len(seen)) for i in ids]


def _common(a: tuple[int, int, int], b: tuple[int, int, int]) -> Scope:
    if a == b:
        return Scope.SG
    if a[:2] == b[:2]:
        return Scope.WG
    return Scope.GPU if a[0] == b[0] else Scope.SYS


def _placements(params: Params, cycle: Cycle, nthreads: int) -> list[Place]:
    """Each thread's placement: from the external edges' placement qualifiers (`Rfe.wg`), the
    others taking the level of --placements. Arcs between the edges of a level get distinct
    instances of the level below, which realises every consistent set of qualifiers."""
    external = [e for e in cycle.edges if e.external]
    annotated = any(e.place is not None for e in external)
    if params.placement is Placement.HOST:
        if annotated:
            raise Skip("the host placement does not combine with placement qualifiers")
        out: list[Place] = []
        for t in range(nthreads):
            out.append(None if t == params.host_thread else (0, len(out), None))
        return out
    if nthreads == 1:
        return [(0, 0, None)]
    default = _LEVEL[params.placement]
    levels = [e.place if e.place is not None else default for e in external]
    gpus = _arcs(levels, Scope.SYS)
    wgs = _relabel(list(zip(gpus, _arcs(levels, Scope.GPU), strict=True)))
    sgs = _relabel(list(zip(wgs, _arcs(levels, Scope.WG), strict=True)))
    full = list(zip(gpus, wgs, sgs, strict=True))
    for t, (edge, level) in enumerate(zip(external, levels, strict=True)):
        got = _common(full[t], full[(t + 1) % nthreads])
        if got is not level and not all(e.place is not None for e in external):
            raise Skip(
                f"--placements {params.placement.value} contradicts the cycle's placement "
                "qualifiers (around a cycle the widest placement must occur twice)"
            )
        if got is not level:
            raise _cycle_error(
                edge,
                f"{edge.text} joins P{t} and P{(t + 1) % nthreads} at "
                f"scope {SCOPE_NAMES[level]}, but the cycle's other "
                "placements put them at scope "
                f"{SCOPE_NAMES[got]} (around a cycle the widest placement "
                "must occur at least twice)",
            )
    places: list[Place] = []
    for g, w, sg in full:
        # per-NDRange work-group numbers; a sub-group only when the work-group is shared
        wg_in_gpu = _relabel([x[1] for x in full if x[0] == g]).__getitem__(
            [x[1] for x in full if x[0] == g].index(w)
        )
        shared = sum(1 for x in full if x[:2] == (g, w)) > 1
        sg_in_wg = _relabel([x[2] for x in full if x[:2] == (g, w)])[
            [x[2] for x in full if x[:2] == (g, w)].index(sg)
        ]
        places.append((g, wg_in_gpu, sg_in_wg if shared else None))
    return places


def build_test(base: Cycle, params: Params, shape: str | None = None) -> GenTest:
    """The test of `base` under `params`; raises Skip when that would be invalid PISA."""
    cycle, _ = canonical_rotation(apply_rmw(apply_fences(base, params), params))
    n = len(cycle)
    edges = cycle.edges
    threads, locs = _layout(cycle)
    nthreads = threads[-1] + 1
    if params.placement is Placement.HOST and params.host_thread >= nthreads:
        raise Skip("no such thread to put on the host")
    places = _placements(params, cycle, nthreads)
    spaces = _loc_spaces(cycle, locs, params)
    groups = {p[:2] if p is not None else None for p in places}
    if LocSpace.SHARED in spaces and len(groups) > 1:
        raise Skip(
            "a .shared variable is per work-group: threads in different work-groups, "
            "NDRanges or on the host cannot share it (PISA 2.1)"
        )
    events: list[Event] = []
    for i in range(n):
        a = cycle.annots[i]
        d = edges[i].src
        assert d is not None
        order = a.order if a.order is not None else _scheme_order(params, cycle, i)
        scoped = order not in (Order.NA, Order.RLX)
        scope = (a.scope if a.scope is not None else params.scope) if scoped else None
        generic = a.generic or params.space is SpaceChoice.GENERIC
        ev = Event(threads[i], d, locs[i], spaces[locs[i]], generic, order, scope, a.rmw)
        _check_access(ev, places[threads[i]] is None, a)
        events.append(ev)
    values, pred = _coherence(cycle, locs)
    if all(s is LocSpace.SHARED for s in spaces):
        fence_default = FenceSpace.SHARED
    elif all(s is LocSpace.GLOBAL for s in spaces):
        fence_default = FenceSpace.GLOBAL
    else:
        fence_default = FenceSpace.GENERIC

    reg_inits: list[tuple[int, str, str]] = []
    reg_atoms: list[tuple[int, str, int]] = []
    gen_threads: list[GenThread] = []
    for t in range(nthreads):
        host = places[t] is None
        body: list[str] = []
        decls: list[str] = []
        regs: dict[int, str] = {}
        pointers: dict[int, str] = {}
        temps = preds = 0
        guarded = False
        for i in (k for k in range(n) if threads[k] == t):
            ev = events[i]
            e_in = edges[i - 1]
            inner = not e_in.external and i > 0 and threads[i - 1] == t
            addr_off = ""
            data_reg: str | None = None
            if inner and e_in.kind is EdgeKind.FENCE:
                assert e_in.fence is not None
                body.append(_fence_line(e_in.fence, params, fence_default, host))
            elif inner and e_in.kind is EdgeKind.DP:
                src = regs[i - 1]
                tmp = f"%t{temps}"
                temps += 1
                if e_in.dep is DepKind.CTRL:
                    want = _read_value(cycle, i - 1, values, pred)
                    if want is None:
                        raise _cycle_error(
                            e_in,
                            f"{e_in.text}: the read it starts from must "
                            "have a value the cycle fixes (an Rf edge into it), "
                            "for the branch to test",
                        )
                    p = f"%p{preds}"
                    preds += 1
                    decls.append(f".pred {p};")
                    body.append(f"ucmp.eq.32b {p}, {src}, {want};")
                    body.append(f"goto.cond !{p}, end;")
                    guarded = True
                    temps -= 1
                else:
                    body.append(f"xor.32b {tmp}, {src}, {src};")
                    if e_in.dep is DepKind.ADDR:
                        if ev.generic:
                            raise Skip(
                                "an address dependency into a .generic access would "
                                "need 64-bit pointer arithmetic on a 32-bit value"
                            )
                        addr_off = f" + {tmp}"
                    else:
                        data_reg = tmp
            name = "@" + LOC_NAMES[ev.loc]
            if ev.generic:
                if ev.loc not in pointers:
                    pointers[ev.loc] = f"%g{len(pointers)}"
                    reg_inits.append((t, pointers[ev.loc], name))
                addr = f"[{pointers[ev.loc]}]"
                sp = ".generic"
            else:
                addr = f"[{name}{addr_off}]"
                sp = f".{ev.space.value}"
            q = sp + _PISA_ORDER[ev.order] + (_PISA_SCOPE[ev.scope] if ev.scope else "")
            if ev.dir is Dir.R or ev.rmw is not None:
                reg = f"%r{len(regs)}"
                regs[i] = reg
                if guarded:
                    reg_inits.append((t, reg, "0"))
            if ev.rmw is not None:
                prev = pred.get(i)
                old = 0 if prev is None else values[prev]
                if ev.dir is Dir.R:
                    operands = f"{NEVER}, {NEVER}"
                    seen = _read_value(cycle, i, values, pred)
                else:
                    new = values[i]
                    operand = {RmwKind.XCHG: new, RmwKind.ADD: new - old, RmwKind.CAS: new}[ev.rmw]
                    src_text = str(operand)
                    if data_reg is not None:
                        body.append(f"iadd.32b {data_reg}, {data_reg}, {operand};")
                        src_text = data_reg
                    operands = f"{old}, {src_text}" if ev.rmw is RmwKind.CAS else src_text
                    seen = old
                body.append(f"iatom{q}.{ev.rmw.value}.32b {regs[i]}, {addr}, {operands};")
            elif ev.dir is Dir.R:
                body.append(f"ld{q}.32b {regs[i]}, {addr};")
                seen = _read_value(cycle, i, values, pred)
            else:
                value = str(values[i])
                if data_reg is not None:
                    body.append(f"iadd.32b {data_reg}, {data_reg}, {values[i]};")
                    value = data_reg
                body.append(f"st{q}.32b {addr}, {value};")
                seen = None
            if seen is not None:
                reg_atoms.append((t, regs[i], seen))
        if guarded:
            body.append("end:")
        gen_threads.append(GenThread(places[t], tuple(decls), tuple(body)))

    mem_atoms = []
    for loc in range(len(spaces)):
        writes = [i for i in range(n) if locs[i] == loc and edges[i].src is Dir.W]
        if len(writes) > 1:
            mem_atoms.append((loc, max(values[w] for w in writes)))
    shape_name = shape or family(cycle)
    test = GenTest(
        name="",
        shape=shape_name,
        cycle=cycle_text(cycle),
        params=params,
        locs=tuple(spaces),
        reg_inits=tuple(reg_inits),
        threads=tuple(gen_threads),
        reg_atoms=tuple(reg_atoms),
        mem_atoms=tuple(mem_atoms),
    )
    return replace(test, name=test_name(family(cycle), cycle, events, params, fence_default))


def annot_word(a: EventAnnot) -> str:
    """An event annotation written back (`xchg.rel.gpu.shared`); empty when it fixes nothing."""
    parts = [a.rmw.value] if a.rmw is not None else []
    if a.order is not None:
        parts.append(ORDER_NAMES[a.order])
    if a.scope is not None:
        parts.append(SCOPE_NAMES[a.scope])
    if a.space is not None:
        parts.append(a.space.value)
    if a.generic:
        parts.append("generic")
    return ".".join(parts)


def cycle_text(cycle: Cycle) -> str:
    """The cycle written back with its own annotations: with the same orders, scope, space
    and placement (and no --fences/--rmw, which it already contains) it regenerates the test."""
    words = []
    for e, a in zip(cycle.edges, cycle.annots, strict=True):
        if word := annot_word(a):
            words.append(word)
        words.append(edge_word(e))
    return " ".join(words)


def edge_word(e: Edge) -> str:
    sd = "s" if e.same_loc else "d"
    assert e.src is not None and e.dst is not None
    match e.kind:
        case EdgeKind.PO:
            return f"Po{sd}{e.src.value}{e.dst.value}"
        case EdgeKind.DP:
            assert e.dep is not None
            return f"Dp{e.dep.value}{sd}{e.dst.value}"
        case EdgeKind.FENCE:
            assert e.fence is not None
            quals = []
            if e.fence.order is not None:
                quals.append(ORDER_NAMES[e.fence.order])
            if e.fence.space is not None:
                quals.append(e.fence.space.value)
            if e.fence.scope is not None:
                quals.append(SCOPE_NAMES[e.fence.scope])
            return f"Fence{sd}{e.src.value}{e.dst.value}" + "".join("." + q for q in quals)
        case EdgeKind.RF | EdgeKind.FR | EdgeKind.CO:
            place = f".{SCOPE_NAMES[e.place]}" if e.place is not None else ""
            return str(e.kind.value) + ("e" if e.external else "i") + place
