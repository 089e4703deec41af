"""Event structures: every event each work-item may perform, as a tree of paths per work-item."""

from __future__ import annotations

from collections.abc import Iterable, Iterator, Set

from pisa_mm.errors import Span
from pisa_mm.events.kinds import Kind, Order, Scope, Space, Tag
from pisa_mm.events.layout import Layout
from pisa_mm.hints import TypeVar
from pisa_mm.records import field, record
from pisa_mm.values.expr import Expr

__all__ = [
    "Event",
    "EventStructure",
    "Kind",
    "Location",
    "Order",
    "Path",
    "Placement",
    "ProgramOrder",
    "Scope",
    "Space",
    "Tag",
    "ThreadStructure",
]


@record(order=True)
class Location:
    """A location instance: byte `offset` of variable `var`.

    `instance` is the work-group of a `.shared` location, as (NDRange, work-group number):
    `@ gpu 0, wg 0` and `@ gpu 1, wg 0` are two work-groups, each with its own copy; the
    work-item of a `.private` one; None for `.global` and `.const`.
    """

    var: str
    offset: int
    instance: int | tuple[int, int] | None
    space: Space = field(compare=False)

    def __str__(self) -> str:
        name = f"@{self.var}" if self.offset == 0 else f"@{self.var}+{self.offset}"
        if self.space is Space.SHARED and isinstance(self.instance, tuple):
            gpu, wg = self.instance
            return f"wg{wg}:{name}" if gpu == 0 else f"gpu{gpu}:wg{wg}:{name}"
        if self.space is Space.PRIVATE:
            return f"P{self.instance}:{name}"
        return name


@record
class Placement:
    """Where a thread runs. Host threads have no sub-group, work-group or NDRange."""

    host: bool
    gpu: int | None
    wg: int | None
    sg: int | None
    lane: int | None  # index among the work-items of its sub-group, in thread order


@record
class Event:
    """One event. Ids are dense 0..n-1 in the structure; init writes come first.

    `addr` is the address expression of a memory access (a Const when statically known);
    `locs` the location instances it may access (exactly one when `addr` is a Const).
    `value` is the value written (W) or contributed (COLLECTIVE); a read's value is
    `ReadValue(id)`. `guard` is the conjunction of the branch conditions taken before the
    event on its path: the event happens iff its thread follows a path through it and the
    guard holds. `parent` is the po-predecessor in the thread's tree (None at the root);
    async-copy events have `parent` set to the last event before their issue point.
    """

    id: int
    thread: int | None  # None for init writes
    kind: Kind
    tag: Tag
    order: Order
    scope: Scope | None  # effective scope of atomics and fences; None for NA accesses
    spaces: frozenset[Space]  # an access: its location's space; a fence: the spaces covered
    width: int  # bits; 0 for fences, EXIT and collectives
    addr: Expr | None
    locs: frozenset[Location]
    value: Expr | None
    guard: Expr
    parent: int | None
    generic: bool = False  # written with .generic addressing
    barrier_index: int | None = None  # k for the k-th barrier (0-based) of its work-item
    # j when produced by the j-th barrier.workgroup of its thread's body (0-based, text
    # order): "the same barrier instruction" across threads, whose bodies differ (`sinstr`)
    barrier_site: int | None = None
    collective_index: int | None = None  # k for the k-th collective of its work-item
    instr: int | None = None  # static instruction id (for `sinstr`); None for init writes
    span: Span | None = None
    text: str = ""  # the PISA source line, for reports


@record
class Path:
    """One complete path of a work-item: its events in program order and its final registers.

    `cut` is True when the path was truncated by the unroll bound; `invalid` when it ends at
    an access whose computed address is none of the test's locations (its last event is an
    EXIT tagged INVALID, the `invalid-address` witness). An execution using either kind of
    path has no final state: engines report its flags (and count the cut ones), never its
    registers or memory as an outcome (docs/model.md).
    """

    events: tuple[int, ...]
    guard: Expr
    final_regs: tuple[tuple[str, Expr], ...]
    returned: bool
    cut: bool
    invalid: bool = False


@record
class ThreadStructure:
    index: int
    name: str  # "P0"
    placement: Placement
    paths: tuple[Path, ...]


_T = TypeVar("_T")


class ProgramOrder(Set[tuple[int, int]]):
    """po as the threads' trees (each event's parent link), with its transitive closure as pairs
    computed on first use only.

    A long thread has a quadratic closure (4,000 stores: 8 million pairs), so the structure
    keeps the tree, which is linear; `edges()` gives the immediate edges and membership walks
    the ancestors without materialising. A consumer that iterates the relation (the cat
    evaluator's `po`, the engines) gets the closure once and it is kept.
    """

    __slots__ = ("_pairs", "_parents")

    def __init__(self, parents: tuple[int | None, ...]) -> None:
        # parents[i]: the po-predecessor of event i, None for roots and for events not in po
        self._parents = parents
        self._pairs: frozenset[tuple[int, int]] | None = None

    @property
    def parents(self) -> tuple[int | None, ...]:
        return self._parents

    def edges(self) -> Iterator[tuple[int, int]]:
        """The immediate edges (the transitive reduction), in event order."""
        for child, parent in enumerate(self._parents):
            if parent is not None:
                yield parent, child

    def ancestors(self, eid: int) -> Iterator[int]:
        anc = self._parents[eid]
        while anc is not None:
            yield anc
            anc = self._parents[anc]

    def pairs(self) -> frozenset[tuple[int, int]]:
        if self._pairs is None:
            self._pairs = frozenset(
                (anc, eid) for eid in range(len(self._parents)) for anc in self.ancestors(eid)
            )
        return self._pairs

    def __contains__(self, pair: object) -> bool:
        if self._pairs is not None:
            return pair in self._pairs
        if not isinstance(pair, tuple) or len(pair) != 2:
            return False
        a, b = pair
        if not isinstance(b, int) or not 0 <= b < len(self._parents):
            return False
        return any(anc == a for anc in self.ancestors(b))

    def __iter__(self) -> Iterator[tuple[int, int]]:
        return iter(self.pairs())

    def __len__(self) -> int:
        return len(self.pairs())

    def __hash__(self) -> int:
        # equal to a frozenset of the same pairs, so hashed like one
        return hash(self.pairs())

    def __eq__(self, other: object) -> bool:
        if isinstance(other, ProgramOrder):
            return self._parents == other._parents
        return Set.__eq__(self, other)

    def __repr__(self) -> str:
        return f"ProgramOrder(parents={self._parents!r})"

    @classmethod
    def _from_iterable(cls, it: Iterable[_T]) -> frozenset[_T]:
        # set operators (po | x, po - x) give plain frozensets of pairs
        return frozenset(it)


@record
class EventStructure:
    """Everything an engine needs about one litmus test's program, independent of the model.

    Static relations are sets of (event id, event id) pairs; a pair holds in an execution iff
    both events happen. `po` and `aso` are transitive; `po` is kept as the threads' trees
    (ProgramOrder), its closure materialised only by a consumer that iterates it. `rmw`
    pairs an RMW's read with its write (only on the success path of a cas). Dependencies:
    `addr`, `data`, `ctrl` from reads.
    """

    name: str
    events: tuple[Event, ...]
    threads: tuple[ThreadStructure, ...]
    po: ProgramOrder
    aso: frozenset[tuple[int, int]]
    rmw: frozenset[tuple[int, int]]
    addr: frozenset[tuple[int, int]]
    data: frozenset[tuple[int, int]]
    ctrl: frozenset[tuple[int, int]]
    init: tuple[tuple[Location, int], ...]  # initial value of every location instance
    layout: Layout
    unroll: int

    def event(self, eid: int) -> Event:
        return self.events[eid]
