"""The cat language's built-in sets and relations, computed statically from an EventStructure.

A pair (or member) holds in an execution iff its events happen in it (see docs/events.md).
`rf`, `co` and `loc` depend on the execution and are the engines' business.
"""

from __future__ import annotations

from collections.abc import Callable, Collection, Iterable, Iterator, Mapping

from pisa_mm.cat.compact import Apart, Blocks, Classes, Forest, Rows
from pisa_mm.events.kinds import Kind, Order, Scope, Space, Tag
from pisa_mm.events.model import Event, EventStructure, Location, Placement
from pisa_mm.hints import cast

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


def _is_access(e: Event) -> bool:
    return e.kind in (Kind.READ, Kind.WRITE)


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


# the sets in the order `static_sets` gives them, before UNSCOPED and the order, scope and
# space sets
_FIXED_SETS: tuple[str, ...] = ("_", "R", "W", "M", "F", "IW", "ARRIVE", "DEPART", "ASYNC")
_FIXED_SETS += ("RMW", "EXIT", "RET", "BADADDR", "HOST", "GENERIC")
_KIND_SETS = {Kind.READ: ("R", "M"), Kind.WRITE: ("W", "M"), Kind.FENCE: ("F",)}
_TAG_SETS = {Tag.INIT: "IW", Tag.ARRIVE: "ARRIVE", Tag.DEPART: "DEPART", Tag.ASYNC: "ASYNC"}
_TAG_SETS[Tag.RMW] = "RMW"
_ORDER_NAMES = {order: name for name, order in _ORDER_SETS.items()}
_SCOPE_NAMES = {scope: name for name, scope in _SCOPE_SETS.items()}
_SPACE_NAMES = {space: name for name, space in SPACE_SETS.items()}


def static_sets(es: EventStructure) -> dict[str, frozenset[int]]:
    """Every built-in set. Space sets hold accesses whose space is statically certain (one
    possible location, or all in one space) and fences by the spaces they cover; use
    `dynamic_space_sets` once an execution fixes computed addresses."""
    host = {t.index for t in es.threads if t.placement.host}
    later = (*_ORDER_SETS, *_SCOPE_SETS, *SPACE_SETS)
    members: dict[str, list[int]] = {name: [] for name in (*_FIXED_SETS, *later)}
    # one pass over the events (this runs once per test), each event into its sets
    for e in es.events:
        i = e.id
        members["_"].append(i)
        access = e.kind is Kind.READ or e.kind is Kind.WRITE
        for name in _KIND_SETS.get(e.kind, ()):
            members[name].append(i)
        tag = _TAG_SETS.get(e.tag)
        if tag is not None:
            members[tag].append(i)
        if e.kind is Kind.EXIT:
            members["EXIT"].append(i)
            if e.tag is Tag.RETURN:
                members["RET"].append(i)
            elif e.tag is Tag.INVALID:
                members["BADADDR"].append(i)
        if e.thread in host:
            members["HOST"].append(i)
        if e.generic:
            members["GENERIC"].append(i)
        # NA names the non-atomic accesses only: EXIT and collectives carry NA as "no order"
        if e.order is not Order.NA or access:
            members[_ORDER_NAMES[e.order]].append(i)
        if e.scope is not None:
            members[_SCOPE_NAMES[e.scope]].append(i)
        # a fence is in the sets of the spaces it covers, an access in its space's if certain
        if e.kind is Kind.FENCE or (access and len(e.spaces) == 1):
            for space in e.spaces:
                members[_SPACE_NAMES[space]].append(i)
    sets = {name: frozenset(members[name]) for name in _FIXED_SETS}
    sets["UNSCOPED"] = _unscoped(es)
    sets.update((name, frozenset(members[name])) for name in later)
    return sets


def dynamic_space_sets(
    es: EventStructure, loc_of: Mapping[int, Location]
) -> dict[str, frozenset[int]]:
    """GLOBAL/SHARED/PRIVATE/CONST in one execution, where `loc_of` gives the location each
    access with several possible locations actually touched (others are looked up)."""
    out: dict[str, set[int]] = {name: set() for name in SPACE_SETS}
    names = _SPACE_NAMES
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

Pair = tuple[int, int]


def _classes(es: EventStructure, key: Callable[[Event], object | None]) -> list[list[int]]:
    """The events grouped by their non-None key (an equivalence on those events)."""
    groups: dict[object, list[int]] = {}
    for e in es.events:
        k = key(e)
        if k is not None:
            groups.setdefault(k, []).append(e.id)
    return list(groups.values())


def _class_pairs(classes: Iterable[list[int]], events: frozenset[int] | None) -> Iterator[Pair]:
    return _block_pairs(((c, c) for c in classes), events)


def _place(es: EventStructure, e: Event) -> Placement | None:
    if e.thread is None:
        return None
    p = es.threads[e.thread].placement
    return None if p.host else p


def _wg_key(es: EventStructure, e: Event) -> tuple[int | None, int | None] | None:
    p = _place(es, e)
    return None if p is None else (p.gpu, p.wg)


def scope_instance_key(es: EventStructure, thread: int, scope: Scope) -> object:
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


def incl_blocks(es: EventStructure) -> list[tuple[list[int], list[int]]]:
    """`incl` as blocks (A, B), each meaning every pair of A x B; the blocks are disjoint and
    their lists total linearly many ids (one per event and scope level on each side).

    incl holds between scoped a and b when b's thread lies in a's scope instance and a's
    thread in b's. Events are grouped by their own instance; a group splits by the instance
    its threads have at the other side's level, which must be that side's own instance."""
    own: dict[tuple[Scope, object], list[Event]] = {}
    for e in es.events:
        if e.scope is not None and e.thread is not None:
            own.setdefault((e.scope, scope_instance_key(es, e.thread, e.scope)), []).append(e)
    levels = sorted({scope for scope, _ in own})
    # split[group][level]: the group's event ids by their thread's instance at `level`
    split: dict[tuple[Scope, object], dict[Scope, dict[object, list[int]]]] = {}
    for group, events in own.items():
        split[group] = {}
        for level in levels:
            parts = split[group][level] = {}
            for e in events:
                assert e.thread is not None
                parts.setdefault(scope_instance_key(es, e.thread, level), []).append(e.id)
    blocks: list[tuple[list[int], list[int]]] = []
    for (scope_a, key_a), by_level in split.items():
        for scope_b in levels:
            for key_b, ids_a in by_level[scope_b].items():
                other = split.get((scope_b, key_b))
                ids_b = None if other is None else other[scope_a].get(key_a)
                if ids_b:
                    blocks.append((ids_a, ids_b))
    return blocks


def _block_pairs(
    blocks: Iterable[tuple[list[int], list[int]]], events: frozenset[int] | None
) -> Iterator[Pair]:
    for left, right in blocks:
        if events is not None:
            left = [e for e in left if e in events]
            right = [e for e in right if e in events]
        for a in left:
            for b in right:
                yield a, b


def barrier_relations(es: EventStructure) -> tuple[set[Pair], ...]:
    """bsync, binst and bfewer."""
    arrive: dict[tuple[object, int | None], list[Event]] = {}
    depart: dict[tuple[object, int | None], list[Event]] = {}
    for e in es.events:
        if e.tag is Tag.ARRIVE:
            arrive.setdefault((_wg_key(es, e), e.barrier_index), []).append(e)
        elif e.tag is Tag.DEPART:
            depart.setdefault((_wg_key(es, e), e.barrier_index), []).append(e)
    if not arrive:
        # bsync, binst and bfewer all start at an arrive (most tests have no barrier)
        return set(), set(), set()
    bsync = {(a.id, d.id) for key, arr in arrive.items() for a in arr for d in depart.get(key, ())}
    binst = {
        (a.id, b.id) for arr in arrive.values() for a in arr for b in arr if a.thread != b.thread
    }
    barriers_before_exit: dict[int, int] = {}
    for t in es.threads:
        for path in t.paths:
            count = sum(1 for e in path.events if es.events[e].tag is Tag.ARRIVE)
            barriers_before_exit[path.events[-1]] = count
    arrive_by_wg: dict[object, list[Event]] = {}
    for (wg, _), arr in arrive.items():
        arrive_by_wg.setdefault(wg, []).extend(arr)
    bfewer = {
        (a.id, x)
        for x, count in barriers_before_exit.items()
        for a in arrive_by_wg.get(_wg_key(es, es.events[x]), ())
        if es.events[x].thread != a.thread
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


class StaticRelations(Mapping[str, Pairs]):
    """Every built-in relation except rf, co and loc, each computed when first asked for.

    Several are quadratic in the events (`ext`, `int`, `same-*`, `po` of a long thread:
    2,000 threads make millions of pairs), so nothing is computed up front: `pairs` streams
    one relation's pairs among a set of events without keeping them (what the cat
    evaluator needs), and indexing materialises (and keeps) one relation's full pairs.
    """

    def __init__(self, es: EventStructure) -> None:
        self.es = es
        self._cache: dict[str, Pairs] = {}
        self._classes: dict[str, list[list[int]]] = {}
        self._barriers: tuple[set[Pair], ...] | None = None
        self._shapes: dict[str, Rows] = {}
        self._held: dict[str, Rows | Collection[Pair] | None] = {}

    def shape(self, name: str) -> Rows | None:
        """`po`, `ext`, `incl` and the class relations by their shape (cat/compact.py), or None for
        the others: linear in the events where their pairs are quadratic. Over every event
        of the structure; a consumer restricts them to the events that happen."""
        hit = self._shapes.get(name)
        if hit is None:
            if name == "po":
                hit = Forest(self.es.po.parents)
            elif name == "ext":
                threads = self.classes("int")
                ids = tuple(e.id for e in self.es.events)
                hit = Apart(ids, tuple(frozenset(c) for c in threads))
            elif name in _CLASS_RELATIONS:
                hit = Classes(tuple(frozenset(c) for c in self.classes(name)))
            elif name == "incl":
                hit = Blocks(tuple((frozenset(a), frozenset(b)) for a, b in incl_blocks(self.es)))
            else:
                return None
            self._shapes[name] = hit
        return hit

    def held(self, name: str) -> Rows | Collection[Pair] | None:
        """`shape(name)`, else `given(name)` (None for the others), remembered: the cat
        evaluator asks for each of them once per set of events that happens."""
        held = self._held
        if name in held:
            return held[name]
        hit: Rows | Collection[Pair] | None = self.shape(name)
        if hit is None:
            hit = self.given(name)
        held[name] = hit
        return hit

    def given(self, name: str) -> Collection[Pair] | None:
        """The pairs of `rmw`, `addr`, `data`, `ctrl`, `aso`, `bsync`, `binst` and `bfewer`
        over every event of the structure, as held (most are empty in a small test), or None
        for the others; a consumer that ignores the events that do not happen need not
        filter them (`pairs`)."""
        hit = self._cache.get(name)
        if hit is not None:
            return cast(Collection[Pair], hit)
        given = _GIVEN.get(name)
        if given is not None:
            return cast(Collection[Pair], given(self.es))
        if name in _BARRIERS:
            if self._barriers is None:
                self._barriers = barrier_relations(self.es)
            return self._barriers[_BARRIERS.index(name)]
        return None

    def __getitem__(self, name: str) -> Pairs:
        if name not in RELATION_NAMES:
            raise KeyError(name)
        hit = self._cache.get(name)
        if hit is None:
            hit = self._cache[name] = frozenset(self.pairs(name))
        return hit

    def __iter__(self) -> Iterator[str]:
        return iter(RELATION_NAMES)

    def __len__(self) -> int:
        return len(RELATION_NAMES)

    def classes(self, name: str) -> list[list[int]]:
        """The equivalence classes of `int`, `sinstr`, `same-sg`, `same-wg` or `same-gpu`:
        the relation holds between any two events of one class (each with itself too)."""
        hit = self._classes.get(name)
        if hit is None:
            hit = self._classes[name] = _classes(self.es, self._class_key(name))
        return hit

    def _class_key(self, name: str) -> Callable[[Event], object | None]:
        es = self.es

        def sub_group(e: Event) -> object | None:
            p = _place(es, e)
            return None if p is None else (p.gpu, p.wg, p.sg)

        def gpu(e: Event) -> object | None:
            p = _place(es, e)
            return None if p is None else p.gpu

        keys: dict[str, Callable[[Event], object | None]] = {
            "int": lambda e: e.thread,
            "sinstr": _static_instruction,
            "same-sg": sub_group,
            "same-wg": lambda e: _wg_key(es, e),
            "same-gpu": gpu,
        }
        return keys[name]

    def pairs(self, name: str, events: frozenset[int] | None = None) -> Iterator[Pair]:
        """The pairs of relation `name` between events of `events` (None: all events)."""
        es = self.es
        hit = self._cache.get(name)
        if hit is not None or name in _GIVEN:
            given = hit if hit is not None else _GIVEN[name](es)
            yield from (p for p in given if events is None or (p[0] in events and p[1] in events))
            return
        ids = [e.id for e in es.events if events is None or e.id in events]
        match name:
            case "id":
                yield from ((i, i) for i in ids)
            case "po":
                po = es.po
                for b in ids:
                    for a in po.ancestors(b):
                        if events is None or a in events:
                            yield a, b
            case "ext":
                thread = [e.thread for e in es.events]
                for a in ids:
                    ta = thread[a]
                    for b in ids:
                        if a != b and (ta is None or ta != thread[b]):
                            yield a, b
            case "incl":
                yield from _block_pairs(incl_blocks(es), events)
            case "bsync" | "binst" | "bfewer":
                if self._barriers is None:
                    self._barriers = barrier_relations(es)
                rel = self._barriers[("bsync", "binst", "bfewer").index(name)]
                yield from (p for p in rel if events is None or (p[0] in events and p[1] in events))
            case _:
                yield from _class_pairs(self.classes(name), events)


_BARRIERS = ("bsync", "binst", "bfewer")
_CLASS_RELATIONS = frozenset({"int", "sinstr", "same-sg", "same-wg", "same-gpu"})

# the relations the structure holds as pair sets already
_GIVEN: dict[str, Callable[[EventStructure], Iterable[Pair]]] = {
    "rmw": lambda es: es.rmw,
    "addr": lambda es: es.addr,
    "data": lambda es: es.data,
    "ctrl": lambda es: es.ctrl,
    "aso": lambda es: es.aso,
}


def static_relations(es: EventStructure) -> StaticRelations:
    """Every built-in relation except rf, co and loc (computed lazily, see StaticRelations)."""
    return StaticRelations(es)
