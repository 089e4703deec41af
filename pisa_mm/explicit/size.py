"""Cheap measures of a test's candidate space: the bound the explicit engine prunes by, and
the shape `auto` predicts both engines' costs from (nothing is enumerated)."""

from __future__ import annotations

import functools
import itertools
import math
from collections.abc import Callable, Iterable, Sequence

from pisa_mm.events.model import Event, EventStructure, Kind, Location, Path, Tag
from pisa_mm.events.semantics import contributions, free_reads
from pisa_mm.hints import TypeVar
from pisa_mm.litmus.program import MemObs, Observable, RegObs
from pisa_mm.outcomes.condition import reg_key
from pisa_mm.records import record
from pisa_mm.values.eval import UnboundValueError, evaluate
from pisa_mm.values.expr import Apply, Const, Expr, Op, ReadValue

__all__ = ["Shape", "candidate_space", "live_paths", "shape"]


T = TypeVar("T")


def _for_the_last(compute: Callable[[EventStructure], T]) -> Callable[[EventStructure], T]:
    """`compute`, its answer kept for the last structure asked about: `auto` asks before
    running the explicit engine, which asks again (whether to prune, which paths). One
    tuple, read and replaced whole (threads may share it); it keeps nothing else alive."""
    last: tuple[EventStructure, T] | None = None

    @functools.wraps(compute)
    def remembered(es: EventStructure) -> T:
        nonlocal last
        known = last
        if known is None or known[0] is not es:
            known = last = (es, compute(es))
        return known[1]

    return remembered


@_for_the_last
def live_paths(es: EventStructure) -> tuple[tuple[int, ...], ...]:
    """Per work-item, the indices of the paths it may take: not those that no values of
    their reads can take. A path is dead when its condition is constant false, or when a
    conjunct of it on one read alone holds for none of the constant values that the read
    may read (the writes, of any path, that may share its location: a superset of what any
    execution offers it, so only paths no execution takes are dropped). A work-item that
    dereferences a loaded pointer has a path per location it may reach and one that ends at
    an invalid address; when the pointer's location only ever holds null, only the last can
    be taken, and the product of every work-item's paths, which the explicit engine
    enumerates, had 2^n choices for n such work-items where one is possible."""
    if all(len(t.paths) == 1 for t in es.threads):
        return tuple((0,) for _ in es.threads)
    writers, _ = _writers(es.events)
    satisfies: dict[tuple[int, int], bool] = {}
    return tuple(
        tuple(
            i
            for i, p in enumerate(t.paths)
            if len(t.paths) == 1 or _may_take(es, p, writers, satisfies)
        )
        for t in es.threads
    )


def _may_take(
    es: EventStructure,
    path: Path,
    writers: dict[Location, list[Event]],
    satisfies: dict[tuple[int, int], bool],
) -> bool:
    if isinstance(path.guard, Const):
        return path.guard.value != 0
    alone: dict[int, list[Expr]] = {}
    for c in _conjuncts(path.guard):
        reads = free_reads(c)
        if len(reads) == 1:
            alone.setdefault(next(iter(reads)), []).append(c)
    for i, conditions in alone.items():
        read = es.events[i]
        if read.kind is not Kind.READ:
            continue
        ws = _sources(read, writers)
        if ws and not any(_may_satisfy(w, conditions, satisfies) for w in ws):
            return False
    return True


@_for_the_last
def candidate_space(es: EventStructure) -> int:
    """Per work-item, the sum over its paths of the rf choices of the path's reads; their
    product; times the co orders. From the events alone (nothing is enumerated).

    Each read may read from any write (init included) that may share one of its
    locations; each location's non-init writes (of any path) may come in any order. This
    bounds the enumeration from above (before pruning), which is what the explicit engine's
    choice to prune needs. Summing over a work-item's paths, not multiplying the paths by
    the rf choices of all their reads together, keeps a spin loop unrolled k times at about
    k times a straight-line test (each path has its own few reads), not 2^k.
    """
    writers, stores = _writers(es.events)
    return _space(es, writers, stores)


def _space(
    es: EventStructure, writers: dict[Location, list[Event]], stores: dict[Location, int]
) -> int:
    choices = {
        e.id: max(1, sum(len(writers.get(loc, ())) for loc in e.locs))
        for e in es.events
        if e.kind is Kind.READ
    }
    rf = 1
    for t, live in zip(es.threads, live_paths(es), strict=True):
        paths = (t.paths[i] for i in live)
        rf *= max(1, sum(math.prod(choices.get(i, 1) for i in p.events) for p in paths))
    return rf * _co_orders(stores)


@record
class Shape:
    """What `auto` (explicit/auto.py) reads off a test to predict the two engines' costs.

    `events`: all events, init writes included. `computed`: the writes (init excluded)
    whose value is no constant (data dependencies: the smt engine's value terms grow with
    them). `rf_edges`: per read, the writes it may
    read from, summed (the smt engine's rf variables); `co_pairs`: per location, the pairs
    of its non-init writes (its co variables). `leaves`: the candidates the explicit engine
    judges whole when it does not prune, and `tree`: the partial and complete candidates
    it judges when it prunes (see `shape`). `space`: `candidate_space`, by which the
    explicit engine decides to prune. `states`: an upper estimate of the final states (the
    smt engine's enumeration is about one solver check per state).
    """

    events: int
    computed: int
    rf_edges: int
    co_pairs: int
    leaves: int
    tree: int
    space: int
    states: int


def shape(es: EventStructure, observed: Sequence[Observable]) -> Shape:
    """The measures of `Shape`, for a test whose final states show `observed`.

    A read's *tried* choices on a path are the writes that may share its location and
    whose value (when constant) satisfies the path's branch conditions on that read alone:
    the engine drops the others on a cheap guard check before judging anything, which is
    why a spin loop's iterations cost one choice each, not two. Its *kept* choices are the
    tried ones, except for an RMW's read (`es.rmw`), counted as one: the coherence order is
    chosen first, and an atomic read-modify-write then reads from the write just before
    its own (a judgement the engine's pruning makes of every other choice).

    `leaves` = per choice of paths, the product of the tried choices times the co orders
    (the factorials of each location's store counts), with the writes on those paths
    alone, summed over the choices (up to EXACT_CHOICES of them; beyond, the product over
    work-items of the sum over paths, every path's writes counting). `tree` = the co
    search's prefixes plus, per complete co order, the rf search's nodes: at each read in
    turn, the kept prefixes so far times that read's tried choices, summed alike (the
    work-items' reads come one work-item after another, and every choice of the later
    work-items' paths repeats the earlier ones' search).
    """
    writers, stores = _writers(es.events)
    rmw_reads = {r for r, _ in es.rmw}
    sources = {e.id: _sources(e, writers) for e in es.events if e.kind is Kind.READ}
    satisfies: dict[tuple[int, int], bool] = {}  # (id of a condition, value): its answer
    live = [[t.paths[i] for i in idx] for t, idx in zip(es.threads, live_paths(es), strict=True)]
    choices = {id(p): list(_path_choices(es, p, sources, satisfies)) for ps in live for p in ps}
    if 1 < math.prod(len(ps) for ps in live) <= EXACT_CHOICES:
        leaves, tree = _per_choice(es, live, rmw_reads, satisfies)
    else:
        leaves, tree = _aggregate(live, rmw_reads, choices, stores)
    return Shape(
        events=len(es.events),
        computed=sum(
            1
            for e in es.events
            if e.kind is Kind.WRITE and e.tag is not Tag.INIT and not isinstance(e.value, Const)
        ),
        rf_edges=sum(len(s) for s in sources.values()),
        co_pairs=sum(n * (n - 1) // 2 for n in stores.values()),
        leaves=leaves,
        tree=tree,
        space=candidate_space(es),  # remembered: auto asked it first
        states=min(leaves, _states(live, observed, writers, sources, choices)),
    )


# Up to this many choices of paths (one per work-item), `shape` counts each one's candidates
# with only the writes on its paths, as the engine enumerates them (a work-item that takes
# a lock on one path and not on another stores on one only); beyond, it sums per work-item.
EXACT_CHOICES = 64


def _rf_counts(reads: Iterable[tuple[int, int]], rmw_reads: set[int]) -> tuple[int, int, int]:
    """(tried leaves, kept leaves, nodes) of the rf search over `reads` in order, each
    (tried choices, read id)."""
    tried = kept = 1
    nodes = 0
    for n, read in reads:
        nodes += kept * n
        tried *= n
        kept *= 1 if read in rmw_reads else n
    return tried, kept, nodes


def _aggregate(
    live: Sequence[Sequence[Path]],
    rmw_reads: set[int],
    choices: dict[int, list[tuple[int, int]]],
    stores: dict[Location, int],
) -> tuple[int, int]:
    """(leaves, tree) with every write of every path a source and a member of co."""
    leaves = kept_so_far = 1
    tree = 0
    later = [len(ps) for ps in live]
    for k, paths in enumerate(live):
        tried_sum = kept_sum = nodes_sum = 0
        for p in paths:
            tried, kept, nodes = _rf_counts(choices[id(p)], rmw_reads)
            tried_sum, kept_sum, nodes_sum = tried_sum + tried, kept_sum + kept, nodes_sum + nodes
        tree += kept_so_far * nodes_sum * math.prod(later[k + 1 :])
        leaves *= max(1, tried_sum)
        kept_so_far *= max(1, kept_sum)
    co = _co_orders(stores)
    return leaves * co, _co_prefixes(stores) + co * max(1, tree)


def _per_choice(
    es: EventStructure,
    live: Sequence[Sequence[Path]],
    rmw_reads: set[int],
    satisfies: dict[tuple[int, int], bool],
) -> tuple[int, int]:
    """(leaves, tree) summed over the choices of paths, each with the writes on its paths."""
    inits = [e for e in es.events if e.thread is None]
    leaves = tree = 0
    for paths in itertools.product(*live):
        present = inits + [es.events[i] for p in paths for i in p.events]
        writers, stores = _writers(present)
        sources = {e.id: _sources(e, writers) for e in present if e.kind is Kind.READ}
        reads = [c for p in paths for c in _path_choices(es, p, sources, satisfies)]
        tried, _, nodes = _rf_counts(reads, rmw_reads)
        co = _co_orders(stores)
        leaves += tried * co
        tree += _co_prefixes(stores) + co * max(1, nodes)
    return max(1, leaves), max(1, tree)


def _writers(events: Iterable[Event]) -> tuple[dict[Location, list[Event]], dict[Location, int]]:
    """The writes (init included) that may touch each location, and its non-init count."""
    writers: dict[Location, list[Event]] = {}
    stores: dict[Location, int] = {}
    for e in events:
        if e.kind is Kind.WRITE:
            for loc in e.locs:
                writers.setdefault(loc, []).append(e)
                if e.tag is not Tag.INIT:
                    stores[loc] = stores.get(loc, 0) + 1
    return writers, stores


def _sources(read: Event, writers: dict[Location, list[Event]]) -> list[Event]:
    if len(read.locs) == 1:
        return writers.get(next(iter(read.locs)), [])
    seen: dict[int, Event] = {}
    for loc in read.locs:
        for w in writers.get(loc, ()):
            seen.setdefault(w.id, w)
    return list(seen.values())


def _co_orders(stores: dict[Location, int]) -> int:
    return math.prod(math.factorial(n) for n in stores.values())


def _co_prefixes(stores: dict[Location, int]) -> int:
    """The proper prefixes the co search judges: location after location, each one's
    orders built write by write (n!/(n-j)! prefixes of length j < n)."""
    total, done = 0, 1
    for n in stores.values():
        prefixes = length_j = 1
        for j in range(1, n):  # n!/(n-j)! from the previous one: n multiplications in all
            length_j *= n - j + 1
            prefixes += length_j
        total += done * (prefixes - 1)
        done *= math.factorial(n)
    return total


def _conjuncts(guard: Expr) -> Iterable[Expr]:
    stack = [guard]
    while stack:
        e = stack.pop()
        if isinstance(e, Apply) and e.op is Op.BAND:
            stack.extend(e.args)
        elif not isinstance(e, Const):
            yield e


def _path_choices(
    es: EventStructure,
    path: Path,
    sources: dict[int, list[Event]],
    satisfies: dict[tuple[int, int], bool],
) -> Iterable[tuple[int, int]]:
    """(tried choices, read id) of each read of `path`, in order (see `shape`)."""
    events = es.events
    if isinstance(path.guard, Const):  # no branch taken: every source may be read
        for i in path.events:
            if events[i].kind is Kind.READ:
                yield max(1, len(sources[i])), i
        return
    alone: dict[int, list[Expr]] = {}
    for c in _conjuncts(path.guard):
        reads = free_reads(c)
        if len(reads) == 1:
            alone.setdefault(next(iter(reads)), []).append(c)
    for i in path.events:
        if events[i].kind is not Kind.READ:
            continue
        conditions = alone.get(i)
        ws = sources[i]
        n = len(ws) if not conditions else sum(_may_satisfy(w, conditions, satisfies) for w in ws)
        yield max(1, n), i


def _may_satisfy(
    write: Event, conditions: list[Expr], satisfies: dict[tuple[int, int], bool]
) -> bool:
    """Whether reading `write` may satisfy every condition (on that one read): unknown
    when its value is not a constant. Paths share their prefixes' conditions: memoised."""
    value = write.value
    if not isinstance(value, Const):
        return True
    for c in conditions:
        key = (id(c), value.value)
        answer = satisfies.get(key)
        if answer is None:
            answer = satisfies[key] = _holds(c, value.value)
        if not answer:
            return False
    return True


def _holds(condition: Expr, value: int) -> bool:
    """`condition` (on one read) with that read's value `value`; True when it cannot be
    told here. The usual branch conditions (a register compared with a constant, negated
    or not) directly, the others by the evaluator."""
    match condition:
        case Apply(op=Op.BNOT, args=(inner,)):
            return not _holds(inner, value) if _decided(inner) else True
        case Apply(op=Op.EQ | Op.NE, args=(ReadValue(width=width), Const(value=constant))):
            return (value % (1 << width) == constant) == (condition.op is Op.EQ)
    try:
        return evaluate(condition, lambda _: value) != 0
    except UnboundValueError:  # a collective's contribution: not known here
        return True


def _decided(condition: Expr) -> bool:
    """Whether `_holds` answers `condition` from the value alone (no contribution)."""
    return not contributions(condition)


def _states(
    live: Sequence[Sequence[Path]],
    observed: Sequence[Observable],
    writers: dict[Location, list[Event]],
    sources: dict[int, list[Event]],
    choices: dict[int, list[tuple[int, int]]],
) -> int:
    """At most this many final states: per work-item with observed registers, the sum over
    its paths of the product of the tried choices of the reads those registers' final
    values mention; times, per observed location, its writes."""
    regs: dict[int, list[str]] = {}
    out = 1
    for o in observed:
        if isinstance(o, RegObs):
            regs.setdefault(o.thread, []).append(reg_key(o))
        elif isinstance(o, MemObs):
            out *= max(1, sum(len(ws) for loc, ws in writers.items() if loc.var == o.var))
    for thread, keys in regs.items():
        total = 0
        for p in live[thread]:
            finals = dict(p.final_regs)
            mentioned: set[int] = set()
            for key in keys:
                if (expr := finals.get(key)) is not None:
                    mentioned |= free_reads(expr)
            tried = {i: n for n, i in choices[id(p)]}
            total += math.prod(tried.get(r, len(sources.get(r, ())) or 1) for r in mentioned)
        out *= max(1, total)
    return out
