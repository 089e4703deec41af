"""Enumerate candidate executions of an event structure: paths, then rf and co.

A candidate picks one path per work-item, a write for every read that happens (same
location once addresses are resolved), and a coherence order per location (init first).
Values are computed in dependency order; a candidate whose values depend on themselves
(rf with the data and address dependencies cyclic) is skipped, as herd7 does
(docs/architecture.md). Nothing here knows a memory model: consistency is the model's job,
and an optional `Prune` callback may cut partial candidates that no completion can save.
When events and locations do not depend on values, co is chosen before rf so that such a
callback sees complete coherence orders while rf is being chosen.
"""

from __future__ import annotations

import itertools
import math
from collections.abc import Callable, Iterable, Iterator, Mapping, Sequence

from pisa_mm.cat.compact import Orders
from pisa_mm.errors import PisaMMError
from pisa_mm.events.model import Event, EventStructure, Kind, Location, Path
from pisa_mm.explicit.size import live_paths
from pisa_mm.records import field, record
from pisa_mm.values.eval import MalformedExprError, UnboundValueError, check_apply, evaluate
from pisa_mm.values.expr import Apply, Const, Expr, Op, ReadValue

__all__ = ["Candidate", "ForcedPairs", "PathFilter", "Prune", "candidates", "location_address"]


@record
class Candidate:
    """One candidate execution: what happens, who reads from whom, and in which co order.

    `paths` has the picked path of each work-item (in thread order), `events` the ids of the
    events that happen (init writes included), `locs` the resolved location of every
    happening access, `values` the value of every happening read and write, `co` the
    coherence order of every location as a tuple of write ids (init write first).

    A *partial* candidate (what a `Prune` callback sees) has only some of its rf edges and
    a prefix of each coherence order, `pending` holding the writes still to be placed after
    that prefix; its `values` may be empty. Its rf and co are subsets of those of every
    candidate that completes it.
    """

    paths: tuple[Path, ...]
    path_indices: tuple[int, ...]
    events: frozenset[int]
    rf: frozenset[tuple[int, int]]
    co: Mapping[Location, tuple[int, ...]]
    locs: Mapping[int, Location]
    values: Mapping[int, int]
    contributions: Mapping[tuple[int, int], int]  # (thread, k) -> its k-th contribution
    pending: Mapping[Location, frozenset[int]] = field(default_factory=dict)

    @property
    def cut(self) -> bool:
        """Some work-item's path was truncated by the unroll bound."""
        return any(p.cut for p in self.paths)

    @property
    def ended(self) -> bool:
        """Some work-item's path ended at an access with an invalid address."""
        return any(p.invalid for p in self.paths)

    def co_pairs(self) -> frozenset[tuple[int, int]]:
        """The coherence relation: transitive, total on each location's writes (for a
        partial candidate: the placed prefix, before every pending write)."""
        out: set[tuple[int, int]] = set()
        pending = self.pending
        for loc, order in self.co.items():
            out.update(itertools.combinations(order, 2))  # (a, b) with a before b
            later = pending.get(loc) if pending else None
            if later:
                out.update(itertools.product(order, later))
        return frozenset(out)

    def co_orders(self) -> Orders:
        """`co_pairs`, given by its orders (no pair listed: cat/compact.py)."""
        pending = self.pending
        return Orders(
            tuple(
                (order, (pending.get(loc) or frozenset()) if pending else frozenset())
                for loc, order in self.co.items()
            )
        )

    def evaluate(self, es: EventStructure, expr: Expr) -> int:
        """`expr` (e.g. a final register) with this execution's read values and contributions."""

        def contribution(thread: int, index: int) -> int:
            if (thread, index) not in self.contributions:
                raise _divergence(es, thread, index)
            return self.contributions[(thread, index)]

        return evaluate(expr, lambda eid: self.values[eid], contribution)

    def final_value(self, loc: Location) -> int | None:
        """The value of the co-last write to `loc`, None if nothing wrote it."""
        order = self.co.get(loc)
        return None if not order else self.values[order[-1]]


# Called on partial candidates; False means no completion can be allowed (skip them all).
Prune = Callable[[Candidate], bool]

# Called on a partial candidate without coherence and the pairs (a, b) of writes to ask
# about: those of them that every completion `Prune` keeps has a before b (for many pairs in
# one evaluation, explicit/forced.py; the others are asked of `Prune` one by one).
ForcedPairs = Callable[[Candidate, frozenset[tuple[int, int]]], frozenset[tuple[int, int]]]

# Called on each choice of paths (one per work-item, in thread order) before any rf or co
# is chosen; False skips every candidate on those paths (e.g. liveness wants only those
# with a work-item cut at a spin loop).
PathFilter = Callable[[tuple[Path, ...]], bool]


class _Unknown(Exception):
    """A value needed an rf edge that is not chosen yet."""


class _Cyclic(Exception):
    """A value depends on itself through rf and data/address dependencies."""


class _Absent(Exception):
    """A value was needed from a read that does not happen in this candidate.

    Guards are conjunctions of the branch conditions before an event, so whatever needs
    such a value lies on a path whose guard is false: the candidate is not well formed.
    """


class _BadAddress(Exception):
    """A computed address is none of the locations the access may touch."""


def _divergence(es: EventStructure, thread: int, index: int) -> PisaMMError:
    """Collective divergence is undefined behaviour (docs/events.md): never invent a value."""
    spans = [
        e.span
        for e in es.events
        if e.thread == thread and e.kind is Kind.COLLECTIVE and e.collective_index == index
    ]
    return PisaMMError.at(
        spans[0] if spans else None,
        f"collective divergence: a lane of P{thread}'s sub-group uses P{thread}'s collective "
        f"#{index + 1}, which P{thread} does not execute on some path (undefined behaviour, "
        "PISA 7); the explicit engine does not support it",
        "collective-divergence",
    )


def location_address(es: EventStructure, loc: Location) -> int:
    var = es.layout.variable(loc.var)
    if var is None:
        raise RuntimeError(f"location {loc} names no variable of the layout")
    return var.base + loc.offset


class _Applied:
    """The results of the operators over constants and read values (a read-modify-write's
    new value, a compare-and-swap's guard) that the resolvers of one choice of paths
    computed, by the values read: each rf choice evaluates them again, over a few values."""

    def __init__(self) -> None:
        self.results: dict[tuple[int, ...], int] = {}
        self._reads: dict[int, tuple[int, ...] | None] = {}

    def reads(self, expr: Apply) -> tuple[int, ...] | None:
        """The events whose read values `expr` reads, in order, when it is an operator
        (not a lazy one) over constants and read values that `evaluate` computes without
        an error of its own; None for the others (evaluated every time)."""
        key = id(expr)
        if key in self._reads:
            return self._reads[key]
        reads: tuple[int, ...] | None = None
        if expr.op not in _LAZY and all(type(a) in (Const, ReadValue) for a in expr.args):
            try:
                # what `evaluate` checks before it reads a value (structural: once)
                check_apply(expr)
                for a in expr.args:
                    if isinstance(a, Const):
                        evaluate(a, _no_read)
                reads = tuple(a.event for a in expr.args if isinstance(a, ReadValue))
            except (MalformedExprError, UnboundValueError):
                reads = None
        self._reads[key] = reads
        return reads


def _no_read(eid: int) -> int:
    raise LookupError(eid)


# The operators `evaluate` computes lazily (the operands it reads depend on the values).
_LAZY = frozenset({Op.ITE, Op.BAND, Op.BOR})


class _Resolver:
    """Values, addresses and guards under a (possibly partial) rf choice, memoised.

    `value(e)` determines event e: first its address, then (for a read) the value of the
    write it reads from, or (for a write or collective) its value expression. Reaching an
    event that is still being determined is a dependency cycle (rf, data and addr).
    """

    def __init__(
        self,
        es: EventStructure,
        rf: Mapping[int, int | None],
        collectives: Mapping[tuple[int, int], int],
        applied: _Applied | None = None,
    ) -> None:
        self.es = es
        self.rf = rf
        self.collectives = collectives
        self.busy: set[int] = set()
        self.value_memo: dict[int, int] = {}
        self.addr_memo: dict[int, int | None] = {}
        self.applied = applied

    def _eval(self, expr: Expr) -> int:
        if isinstance(expr, Const):
            return expr.value
        applied = self.applied
        if applied is not None and type(expr) is Apply:
            reads = applied.reads(expr)
            if reads is not None:
                # The read values first, in the order `evaluate` reads them (so the same
                # one raises first); the operator's result is then a function of them.
                try:
                    key = (id(expr), *[self.value(r) for r in reads])
                except LookupError:  # `evaluate` says which value is unbound
                    return evaluate(expr, self.value, self.contribution)
                hit = applied.results.get(key)
                if hit is None:
                    hit = applied.results[key] = evaluate(expr, self.value, self.contribution)
                return hit
        return evaluate(expr, self.value, self.contribution)

    def contribution(self, thread: int, index: int) -> int:
        eid = self.collectives.get((thread, index))
        if eid is None:
            raise _divergence(self.es, thread, index)
        return self.value(eid)

    def address(self, eid: int) -> int | None:
        if eid in self.addr_memo:
            return self.addr_memo[eid]
        e = self.es.events[eid]
        if eid in self.busy:
            raise _Cyclic
        self.busy.add(eid)
        try:
            value = None if e.addr is None else self._eval(e.addr)
        finally:
            self.busy.discard(eid)
        self.addr_memo[eid] = value
        return value

    def value(self, eid: int) -> int:
        known = self.value_memo.get(eid)  # values are ints, never None
        if known is not None:
            return known
        e = self.es.events[eid]
        if e.addr is not None and not isinstance(e.addr, Const):
            self.address(eid)  # an address dependency is part of determining the event
        if eid in self.busy:
            raise _Cyclic
        if type(e.value) is Const and e.kind is not Kind.READ:
            # A constant written value: nothing to determine first (no event to mark busy).
            value = self.value_memo[eid] = e.value.value
            return value
        self.busy.add(eid)
        try:
            if e.kind is Kind.READ:
                if eid not in self.rf:
                    raise _Unknown
                source = self.rf[eid]
                if source is None:
                    raise _Absent
                value = self.value(source)
            else:
                if e.value is None:
                    raise RuntimeError(f"event {eid} has no value")
                value = self._eval(e.value)
        finally:
            self.busy.discard(eid)
        self.value_memo[eid] = value
        return value

    def holds(self, guard: Expr) -> bool:
        return self._eval(guard) != 0

    def location(self, eid: int) -> Location:
        e = self.es.events[eid]
        if len(e.locs) == 1 and isinstance(e.addr, Const | None):
            return next(iter(e.locs))
        address = self.address(eid)
        for loc in sorted(e.locs):
            if location_address(self.es, loc) == address:
                return loc
        # The builder guards the access with the validity of its address (the other branch
        # ends at an invalid-address marker), so this candidate contradicts its own path.
        raise _BadAddress


def candidates(
    es: EventStructure,
    prune: Prune | None = None,
    paths_wanted: PathFilter | None = None,
    forced_pairs: ForcedPairs | None = None,
) -> Iterator[Candidate]:
    """Every well-formed candidate execution, in a deterministic order.

    `prune`, if given, is asked about partial candidates (rf chosen for some reads, when the
    events and locations do not depend on values; a prefix of co) and may cut them: it must
    answer False only when no completion is wanted. `paths_wanted`, if given, restricts the
    enumeration to the choices of paths it accepts. `forced_pairs`, if given with `prune`,
    answers many of the coherence questions `prune` would be asked one by one.
    """
    inits = [e.id for e in es.events if e.thread is None]
    for choice in itertools.product(*live_paths(es)):
        paths = tuple(t.paths[i] for t, i in zip(es.threads, choice, strict=True))
        if paths_wanted is not None and not paths_wanted(paths):
            continue
        yield from _Choice(es, paths, tuple(choice), inits, prune, forced_pairs).candidates()


def _static_locations(paths: Sequence[Path], events: Sequence[Event]) -> dict[int, Location] | None:
    """Every access's location, when every event surely happens and no address depends on
    a value (then the events and locations of the candidate are known before rf)."""
    if not all(_always(p.guard) for p in paths):
        return None
    locs: dict[int, Location] = {}
    for e in events:
        if not _always(e.guard):
            return None
        if e.kind in (Kind.READ, Kind.WRITE):
            if len(e.locs) != 1 or not isinstance(e.addr, Const | None):
                return None
            locs[e.id] = next(iter(e.locs))
    return locs


# What `_Choice._values` records of an event: location and value, value only, nothing.
_ACCESS, _VALUED, _OTHER = 0, 1, 2

# At most this many coherence orders of one choice of paths are kept for its rf choices.
_KEPT_ORDERS = 4096

RfChoice = dict[int, int | None]
CoOrders = dict[Location, tuple[int, ...]]


class _Choice:
    """One choice of paths: its events, and the enumeration of rf and co over them."""

    def __init__(
        self,
        es: EventStructure,
        paths: tuple[Path, ...],
        choice: tuple[int, ...],
        inits: Sequence[int],
        prune: Prune | None,
        forced_pairs: ForcedPairs | None = None,
    ) -> None:
        self.es, self.paths, self.choice, self.prune = es, paths, choice, prune
        self.forced_pairs = forced_pairs
        present = sorted(set(inits) | {eid for p in paths for eid in p.events})
        self.events = [es.events[i] for i in present]
        self.collectives = {
            (e.thread, e.collective_index): e.id
            for e in self.events
            if e.kind is Kind.COLLECTIVE and e.thread is not None and e.collective_index is not None
        }
        self.reads = [e for e in self.events if e.kind is Kind.READ]
        writes = [e for e in self.events if e.kind is Kind.WRITE]
        # The checks of `_consistent`, with those whose answer does not depend on rf (constant
        # guards, fixed locations) decided here: an option that fails one is never tried, and
        # only the others are run per rf choice (`_Checks`).
        self.path_checks: list[_Check] = []
        self.dead = False  # some path's guard is constant false: no candidate at all
        for p in paths:
            known = _known_guard(p.guard, True)
            if known is None:
                self.path_checks.append((_GUARD, p.guard, True))
            elif not known:
                self.dead = True
        self.sources: dict[int, list[int | None]] = {}
        self.edge_checks: dict[tuple[int, int | None], list[_Check]] = {}
        for r in self.reads:
            options: list[int | None] = [w.id for w in writes if w.locs & r.locs]
            if not _always(r.guard):
                options.append(None)  # the read may not happen
            kept: list[int | None] = []
            for w in options:
                checks = _edge_checks(es, r, None if w is None else es.events[w])
                if checks is not None:
                    kept.append(w)
                    self.edge_checks[(r.id, w)] = checks
            self.sources[r.id] = kept
        # Writes read from must happen: their guards, when not constant.
        self.guarded_writes = {w.id for w in writes if not _always(w.guard)}
        # Whether a partial rf choice can fail at all (else only complete ones are judged).
        self.partial_checks = bool(
            self.path_checks or self.guarded_writes or any(self.edge_checks.values())
        )
        self.complete_checks: list[_Check] = [
            (_DETERMINED, e.id, True)
            for e in self.events
            if e.kind in (Kind.WRITE, Kind.COLLECTIVE) and not _surely_determined(e)
        ]
        self.static_locs = _static_locations(paths, self.events)
        # Accesses and collectives: the events that have a value, in event order.
        self.valued = [
            e.id for e in self.events if e.kind in (Kind.READ, Kind.WRITE, Kind.COLLECTIVE)
        ]
        # With fixed events and locations and constant written values (no collective), a
        # read's value is that of the write it reads from: no resolver needed.
        self.plain: dict[int, int] | None = None
        if self.static_locs is not None and not self.collectives:
            consts = {w.id: w.value for w in writes}
            if all(isinstance(v, Const) for v in consts.values()):
                self.plain = {w: v.value for w, v in consts.items() if isinstance(v, Const)}
        # Then a candidate's values are these, in event order, with its reads' filled in: a
        # copy and a step per read, where a step per event is most of a candidate's cost on
        # thousands of stores.
        plain = self.plain
        self.plain_values: dict[int, int] = {}
        self.plain_reads: frozenset[int] = frozenset()
        if plain is not None:
            self.plain_values = {eid: plain.get(eid, 0) for eid in self.valued}
            self.plain_reads = frozenset(eid for eid in self.valued if eid not in plain)
        # With fixed locations, the coherence orders depend only on which events happen:
        # enumerated once per set of events (when there are not too many to keep) and
        # shared between the rf choices that make those events happen.
        self.fixed_locs = all(
            _fixed_location(e) is not None for e in self.events if e.kind in (Kind.READ, Kind.WRITE)
        )
        self._co_orders: dict[frozenset[int], list[CoOrders]] = {}
        # Every event of the choice: those of each candidate when they all surely happen
        # (one object for all of them, which the engine's memos then find by identity).
        self.ids = frozenset(e.id for e in self.events)
        self.applied = _Applied()
        # What `_values` asks of each event, in event order, worked out once: whether it
        # surely happens (an init write, a constant true guard: what `holds` would say),
        # whether it is an access (and its location when no value decides it) or another
        # event with a value.
        self.walk: list[tuple[Event, bool, int, Location | None]] = [
            (
                e,
                e.thread is None or _always(e.guard),
                _ACCESS
                if e.kind in (Kind.READ, Kind.WRITE)
                else _VALUED
                if e.kind is Kind.COLLECTIVE
                else _OTHER,
                _fixed_location(e),
            )
            for e in self.events
        ]

    def candidates(self) -> Iterator[Candidate]:
        if self.dead:
            return
        if self.prune is not None and self.static_locs is not None:
            # Events and locations are fixed: choose co first, so that every rf choice is
            # judged against a complete co (a stale read is cut as soon as it is chosen).
            ids = self.ids
            init_of, by_loc = _writes_by_location(self.events, self.static_locs)
            for co in self._orders(init_of, by_loc, ids, self.static_locs, frozenset()):
                for rf, res in self._assign(co):
                    yield self._resolved(rf, res, co)
        else:
            for rf, res in self._assign(None):
                yield from self._with_rf(rf, res)

    # ---------------------------------------------------------------- rf

    def _consistent(self, rf: RfChoice, complete: bool) -> _Resolver | None:
        """The resolver of `rf` (its values memoised) if the chosen edges contradict no
        value, guard or location, else None. With `complete`, every check must be
        decidable; otherwise undecidable ones pass."""
        res = _Resolver(self.es, dict(rf), self.collectives, self.applied)
        if not self.partial_checks and not (complete and self.complete_checks):
            return res  # nothing here depends on rf
        checks = list(self.path_checks)
        read_from: set[int] = set()
        for r, w in rf.items():
            checks.extend(self.edge_checks[(r, w)])
            if w is not None:
                read_from.add(w)
        # a write read from must happen
        guarded = sorted(read_from & self.guarded_writes)
        checks.extend((_GUARD, self.es.events[w].guard, True) for w in guarded)
        if complete:
            checks.extend(self.complete_checks)
        try:
            return res if _consistent(self.es, res, checks, complete) else None
        except (_Cyclic, _BadAddress, _Absent):
            return None

    def _wanted(self, rf: RfChoice, co: CoOrders | None) -> bool:
        if self.prune is None or self.static_locs is None:
            return True
        return self.prune(
            self._candidate(
                self.ids,
                _rf_pairs(rf),
                co or {},
                self.static_locs,
                {},
                {},
                {},
            )
        )

    def _extended(
        self, rf: RfChoice, parent: _Resolver, undecided: list[_Check], read: int
    ) -> tuple[_Resolver, list[_Check]] | None:
        """`_consistent(rf, complete=False)` for `rf`, the choice of `parent` with one more
        edge (of `read`), judged from the parent's judgement: the checks the parent decided
        passed, and their values are the same under every extension of its rf, so only
        those it left undecided and those of the new edge are run, with the parent's values
        memoised. The resolver and the checks still undecided, or None when one fails."""
        res = _Resolver(self.es, dict(rf), self.collectives, self.applied)
        res.value_memo = parent.value_memo.copy()
        res.addr_memo = parent.addr_memo.copy()
        w = rf[read]
        checks = [*undecided, *self.edge_checks[(read, w)]]
        if w is not None and w in self.guarded_writes:
            checks.append((_GUARD, self.es.events[w].guard, True))
        try:
            left = _undecided(self.es, res, checks)
        except (_Cyclic, _BadAddress, _Absent):
            return None
        return None if left is None else (res, left)

    def _assign(self, co: CoOrders | None) -> Iterator[tuple[RfChoice, _Resolver]]:
        """Complete, consistent rf choices (`co`, when given, is fixed for pruning), read by
        read in depth-first order, each with its resolver. Iterative: a test may have
        thousands of reads. A complete choice is not pruned: whoever asked for candidates
        judges it whole, and `prune` would judge the same execution again (once per rf
        choice of the last read: thousands, with thousands of writes)."""
        rf: RfChoice = {}
        reads = [r.id for r in self.reads]
        options = [self.sources[r] for r in reads]
        if not reads:
            res = self._consistent(rf, complete=True)
            if res is not None:
                yield {}, res
            return
        # A partial choice needs judging only when some check depends on rf (a guard or a
        # location computed from read values); else every partial choice is consistent.
        partial = self.partial_checks
        # whether `_wanted` asks `prune` at all (else it says yes to every partial choice)
        judging = self.prune is not None and self.static_locs is not None
        # per chosen read: the judgement of the choice before it (`_extended`)
        judged: list[tuple[_Resolver, list[_Check]]] = []
        if partial:
            root = _Resolver(self.es, {}, self.collectives, self.applied)
            try:
                left = _undecided(self.es, root, self.path_checks)
            except (_Cyclic, _BadAddress, _Absent):
                return
            if left is None:
                return  # a check fails whatever rf is
            judged.append((root, left))
        pos = [0]  # per chosen read, the index of its next option
        while pos:
            k = len(pos) - 1
            if pos[k] == len(options[k]):
                pos.pop()
                rf.pop(reads[k], None)
                if partial:
                    judged.pop()
                continue
            rf[reads[k]] = options[k][pos[k]]
            pos[k] += 1
            mine: tuple[_Resolver, list[_Check]] | None = None
            if partial:
                mine = self._extended(rf, *judged[k], reads[k])
                if mine is None:
                    continue
            if k + 1 < len(reads):
                if judging and not self._wanted(rf, co):
                    continue
                pos.append(0)
                if mine is not None:
                    judged.append(mine)
            elif mine is not None and not mine[1]:
                # Every check but the complete ones passed, under this very rf: those are
                # what is left to judge (in their order, as `_consistent` would).
                res = mine[0]
                try:
                    ok = _consistent(self.es, res, self.complete_checks, True)
                except (_Cyclic, _BadAddress, _Absent):
                    ok = False
                if ok:
                    yield dict(rf), res
            else:
                found = self._consistent(rf, complete=True)
                if found is not None:
                    yield dict(rf), found

    # ---------------------------------------------------------------- values and co

    def _candidate(
        self,
        ids: frozenset[int],
        rf: frozenset[tuple[int, int]],
        co: CoOrders,
        locs: Mapping[int, Location],
        values: Mapping[int, int],
        contributions: Mapping[tuple[int, int], int],
        pending: Mapping[Location, frozenset[int]],
    ) -> Candidate:
        return Candidate(
            paths=self.paths,
            path_indices=self.choice,
            events=ids,
            rf=rf,
            co=dict(co),
            locs=locs,
            values=values,
            contributions=contributions,
            pending=dict(pending),
        )

    def _values(
        self, res: _Resolver
    ) -> tuple[frozenset[int], Mapping[int, Location], dict[int, int], dict[tuple[int, int], int]]:
        """What happens under a complete rf (`res`, the resolver that checked it): event ids,
        locations, values, contributions."""
        if self.static_locs is not None:
            # Every event happens and every location is known (`_static_locations`).
            plain = self.plain
            if plain is not None:
                fixed = self.plain_values.copy()
                reads, filled = self.plain_reads, 0
                for r, w in res.rf.items():
                    if w is not None and r in reads:
                        fixed[r] = plain[w]
                        filled += 1
                if filled != len(reads):  # a read without a write: as the full walk says
                    read = {r: plain[w] for r, w in res.rf.items() if w is not None}
                    fixed = {e: plain[e] if e in plain else read[e] for e in self.valued}
            else:
                fixed = {eid: res.value(eid) for eid in self.valued}
            ids = self.ids
            contributions = {k: fixed[eid] for k, eid in self.collectives.items()}
            return ids, self.static_locs, fixed, contributions
        locs: dict[int, Location] = {}
        values: dict[int, int] = {}
        happening: list[int] = []
        for e, sure, what, at in self.walk:
            if not sure and not res.holds(e.guard):
                continue
            eid = e.id
            happening.append(eid)
            if what == _ACCESS:
                locs[eid] = res.location(eid) if at is None else at
                values[eid] = res.value(eid)
            elif what == _VALUED:
                values[eid] = res.value(eid)
        ids = frozenset(happening)
        contributions = {k: values[eid] for k, eid in self.collectives.items() if eid in ids}
        return ids, locs, values, contributions

    def _resolved(self, rf: RfChoice, res: _Resolver, co: CoOrders) -> Candidate:
        ids, locs, values, contributions = self._values(res)
        return self._candidate(ids, _rf_pairs(rf), co, locs, values, contributions, {})

    def _with_rf(self, rf: RfChoice, res: _Resolver) -> Iterator[Candidate]:
        ids, locs, values, contributions = self._values(res)
        pairs = _rf_pairs(rf)
        if self.fixed_locs and self.prune is None:
            orders: Iterable[CoOrders] = self._shared_orders(ids, locs)
        else:
            init_of, by_loc = _writes_by_location([self.es.events[i] for i in sorted(ids)], locs)
            orders = self._orders(init_of, by_loc, ids, locs, pairs)
        for co in orders:
            # every order is a fresh dict (or one shared read-only): no copy
            yield Candidate(self.paths, self.choice, ids, pairs, co, locs, values, contributions)

    def _shared_orders(
        self, ids: frozenset[int], locs: Mapping[int, Location]
    ) -> Iterator[CoOrders]:
        """The coherence orders of the events `ids` at fixed locations: enumerated on the
        first rf choice that makes them happen, kept when there are at most `_KEPT_ORDERS`
        of them."""
        hit = self._co_orders.get(ids)
        if hit is not None:
            yield from hit
            return
        happening = (
            self.events if len(ids) == len(self.events) else [e for e in self.events if e.id in ids]
        )
        init_of, by_loc = _writes_by_location(happening, locs)
        count = math.prod(math.factorial(len(ws)) for ws in by_loc.values())
        kept: list[CoOrders] = []
        for co in self._orders(init_of, by_loc, ids, locs, frozenset()):
            if count <= _KEPT_ORDERS:
                kept.append(co)
            yield co
        if count <= _KEPT_ORDERS:
            self._co_orders[ids] = kept

    def _orders(
        self,
        init_of: Mapping[Location, int],
        by_loc: Mapping[Location, list[int]],
        ids: frozenset[int],
        locs: Mapping[int, Location],
        rf: frozenset[tuple[int, int]],
    ) -> Iterator[CoOrders]:
        """Every coherence order (init first), built write by write from the front of each
        location's order; `prune` judges each proper prefix."""
        all_locs = sorted(set(init_of) | set(by_loc))
        co: CoOrders = {loc: (init_of[loc],) if loc in init_of else () for loc in all_locs}
        pending = {loc: frozenset(by_loc.get(loc, ())) for loc in all_locs}
        forced = self._forced(init_of, by_loc, ids, locs, rf)

        def keep() -> bool:
            if self.prune is None:
                return True
            return self.prune(self._candidate(ids, rf, co, locs, {}, {}, pending))

        return self._co_search(all_locs, co, pending, keep, forced)

    def _forced(
        self,
        init_of: Mapping[Location, int],
        by_loc: Mapping[Location, list[int]],
        ids: frozenset[int],
        locs: Mapping[int, Location],
        rf: frozenset[tuple[int, int]],
    ) -> dict[int, int]:
        """Write -> a write that every allowed coherence order puts before it, as the model's
        own pruning axioms show: `b` may not precede `a` when the partial candidate whose
        only coherence is `init, b, a` already fails one (`prune`), since every order with
        `b` before `a` extends it. Asked only of the consecutive writes of one work-item
        (m-1 evaluations where the search would try each of m writes at every step), and
        only from three writes on (with two the search costs no more). A write whose
        predecessor is still pending is never tried next (`_co_search`): the orders, and
        the candidates, are those the search would keep without it, in the same order.

        `forced_pairs` (explicit/forced.py) answers, in one evaluation for every location,
        the pairs the model's syntax shows forced: each of them the question above answers
        forced too, so only the others are asked one by one, and the answer is the same."""
        out: dict[int, int] = {}
        if self.prune is None:
            return out
        asked: list[tuple[Location, int, int]] = []
        for loc, writes in by_loc.items():
            if len(writes) < 3:
                continue
            by_thread: dict[int | None, list[int]] = {}
            for w in writes:
                by_thread.setdefault(self.es.events[w].thread, []).append(w)
            for group in by_thread.values():
                asked.extend((loc, a, b) for a, b in itertools.pairwise(group))
        shown: frozenset[tuple[int, int]] = frozenset()
        if self.forced_pairs is not None and asked:
            bare = self._candidate(ids, rf, {}, locs, {}, {}, {})
            shown = self.forced_pairs(bare, frozenset((a, b) for _, a, b in asked))
        for loc, a, b in asked:
            if (a, b) not in shown:
                init = init_of.get(loc)
                head = () if init is None else (init,)
                partial = self._candidate(
                    ids, rf, {loc: (*head, b)}, locs, {}, {}, {loc: frozenset({a})}
                )
                if self.prune(partial):
                    continue
            out[b] = a
        return out

    @staticmethod
    def _co_search(
        all_locs: list[Location],
        co: CoOrders,
        pending: dict[Location, frozenset[int]],
        keep: Callable[[], bool],
        forced: Mapping[int, int],
    ) -> Iterator[CoOrders]:
        """Depth-first over the locations in order, each one's order write by write; `keep`
        judges the prefixes, and a write is not tried while the write `forced` puts before
        it is pending. Iterative: one location may have thousands of writes.

        A prefix whose next step has a single write to try is not judged: its only
        extension is, and `keep` is monotone (a longer prefix has more co pairs), so judging
        the longer one cuts the same orders. A chain of such steps that completes the order
        is judged once, on the complete order (`forced` chains of thousands of writes cost
        one judgement, not one per write)."""
        active = [loc for loc in all_locs if pending[loc]]
        if not active:
            yield dict(co)
            return
        # per open step: (location index, its order and pending writes before the step,
        # the writes to try next, the index of the next one, whether a prefix of the
        # order so far went unjudged)
        stack: list[tuple[int, tuple[int, ...], frozenset[int], list[int], list[int], bool]] = []

        # The writes that `forced` puts right after each write: placing one makes them
        # ready, so each step's choices come from the last ones, not from every pending write.
        unblocks: dict[int, list[int]] = {}
        for later, earlier in forced.items():
            unblocks.setdefault(earlier, []).append(later)

        def ready(i: int) -> list[int]:
            rest = pending[active[i]]
            return [w for w in sorted(rest) if forced.get(w) not in rest]

        def after(writes: list[int], w: int, rest: frozenset[int]) -> list[int]:
            """`ready` once w of `writes` is placed and `rest` pending."""
            freed = [x for x in unblocks.get(w, ()) if x in rest]
            out = [x for x in writes if x != w]
            return sorted(out + freed) if freed else out

        def open_step(i: int, writes: list[int], owed: bool) -> None:
            loc = active[i]
            stack.append((i, co[loc], pending[loc], writes, [0], owed))

        open_step(0, ready(0), False)
        while stack:
            i, prefix, rest, writes, nxt, owed = stack[-1]
            loc = active[i]
            if nxt[0] == len(writes):
                co[loc], pending[loc] = prefix, rest
                stack.pop()
                continue
            w = writes[nxt[0]]
            nxt[0] += 1
            co[loc], pending[loc] = (*prefix, w), rest - {w}
            if pending[loc]:
                following = after(writes, w, pending[loc])
                if len(following) == 1:
                    open_step(i, following, True)
                elif keep():
                    open_step(i, following, False)
            elif i + 1 < len(active):
                open_step(i + 1, ready(i + 1), owed)
            elif not owed or keep():
                yield dict(co)


def _rf_pairs(rf: RfChoice) -> frozenset[tuple[int, int]]:
    return frozenset((w, r) for r, w in rf.items() if w is not None)


def _writes_by_location(
    events: Sequence[Event], locs: Mapping[int, Location]
) -> tuple[dict[Location, int], dict[Location, list[int]]]:
    """The init write of each location, and its other writes in id order."""
    init_of: dict[Location, int] = {}
    by_loc: dict[Location, list[int]] = {}
    for e in events:
        if e.kind is Kind.WRITE:
            if e.thread is None:
                init_of[locs[e.id]] = e.id
            else:
                by_loc.setdefault(locs[e.id], []).append(e.id)
    return init_of, by_loc


def _always(guard: Expr) -> bool:
    return isinstance(guard, Const) and guard.value != 0


# A check of `_consistent`: (what, subject, expected). _GUARD: the guard expression
# `subject` evaluates to `expected`; _SAME_LOC: the accesses `subject` (a (read, write) pair)
# touch one location; _DETERMINED: event `subject`, if its guard holds, has a well-defined
# value (and, for a write, location).
_GUARD, _SAME_LOC, _DETERMINED = 0, 1, 2
_Check = tuple[int, Expr | tuple[int, int] | int, bool]


def _known_guard(guard: Expr, expected: bool) -> bool | None:
    """Whether `guard` evaluates to `expected`, when it is a constant; else None."""
    if isinstance(guard, Const):
        return (guard.value != 0) == expected
    return None


def _fixed_location(e: Event) -> Location | None:
    """The location of an access whose address is no computed value (as `_Resolver.location`)."""
    if len(e.locs) == 1 and isinstance(e.addr, Const | None):
        return next(iter(e.locs))
    return None


def _edge_checks(es: EventStructure, r: Event, w: Event | None) -> list[_Check] | None:
    """The checks of reading from `w` (None: `r` does not happen) that depend on rf; None
    when one that does not fails (the option is never consistent)."""
    checks: list[_Check] = []
    # a read happens (its guard holds) exactly when it reads from some write
    known = _known_guard(r.guard, w is not None)
    if known is None:
        checks.append((_GUARD, r.guard, w is not None))
    elif not known:
        return None
    if w is not None:
        rl, wl = _fixed_location(r), _fixed_location(w)
        if rl is None or wl is None:
            checks.append((_SAME_LOC, (r.id, w.id), True))
        elif rl != wl:
            return None
        if _known_guard(w.guard, True) is False:
            return None
    return checks


def _surely_determined(e: Event) -> bool:
    """The `_DETERMINED` check of `e` passes whatever rf is."""
    if _known_guard(e.guard, False):
        return True
    if not _always(e.guard) or not isinstance(e.value, Const):
        return False
    return e.kind is not Kind.WRITE or _fixed_location(e) is not None


def _undecided(es: EventStructure, res: _Resolver, checks: Sequence[_Check]) -> list[_Check] | None:
    """The checks that `_consistent` (not `complete`) passes as undecidable, in order, or
    None when one fails."""
    left: list[_Check] = []
    for check in checks:
        try:
            if not _passes(es, res, check):
                return None
        except _Unknown:
            left.append(check)
    return left


def _consistent(
    es: EventStructure, res: _Resolver, checks: Sequence[_Check], complete: bool
) -> bool:
    """False when a check fails under the chosen rf edges (values, guards, locations).

    With `complete`, every check must be decidable; otherwise undecidable ones pass.
    """
    for check in checks:
        try:
            answer = _passes(es, res, check)
        except _Unknown:
            if complete:
                raise RuntimeError("a complete rf choice left a value undetermined") from None
            continue
        if not answer:
            return False
    return True


def _passes(es: EventStructure, res: _Resolver, check: _Check) -> bool:
    """Whether one check holds (`_Unknown` when it needs an rf edge not chosen yet)."""
    what, subject, expected = check
    if what == _GUARD:
        assert not isinstance(subject, int | tuple)
        return res.holds(subject) == expected
    if what == _SAME_LOC:
        assert isinstance(subject, tuple)
        r, w = subject
        return res.location(r) == res.location(w)
    assert isinstance(subject, int)
    e = es.events[subject]
    if res.holds(e.guard):
        res.value(subject)
        if e.kind is Kind.WRITE:
            res.location(subject)
    return True
