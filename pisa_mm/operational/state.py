"""Machine states: messages with released views, per-work-item views, async agents, psc.

The parts of a state are named tuples rather than the frozen dataclasses used elsewhere:
every step copies a few of them and every state is hashed and compared as a whole, and
tuples do both in C (several times faster on the larger explorations).
"""

from __future__ import annotations

from collections.abc import Iterable, Mapping
from typing import NamedTuple

from pisa_mm.enums import Enum
from pisa_mm.events.kinds import Scope, Space
from pisa_mm.events.model import Location
from pisa_mm.operational.atoms import (
    BOTH,
    HB_SPACES,
    INIT,
    Actor,
    Clock,
    Coh,
    Edges,
    Ev,
    Flag,
    MsgId,
)
from pisa_mm.records import field, record
from pisa_mm.values.expr import Expr


class View(NamedTuple):
    """What an agent knows: `coh` the mo-latest message it has seen per location (absent =
    the init message), `hb` per space and actor the number of that actor's events that
    happen before it (a vector clock per address space)."""

    coh: Coh = ()
    hb: Clock = ()

    def msg(self, loc: Location) -> MsgId:
        for k, v in self.coh:
            if k == loc:
                return v
        return INIT

    def clock(self, space: Space, actor: Actor) -> int:
        key = (space.value, actor)
        for k, v in self.hb:
            if k == key:
                return v
        return 0

    def restrict(self, spaces: frozenset[Space]) -> View:
        """The part of the view about locations (and hb) of `spaces`: what a fence transfers."""
        if spaces >= BOTH:
            return View(
                tuple((k, v) for k, v in self.coh if k.space in spaces or k.space not in BOTH),
                self.hb,
            )
        names = {s.value for s in spaces}
        return View(
            tuple((k, v) for k, v in self.coh if k.space in spaces),
            tuple((k, v) for k, v in self.hb if k[0] in names),
        )

    def with_clock(self, actor: Actor, count: int) -> View:
        """This view with `actor`'s own events up to `count` happening before (in both spaces)."""
        hb = dict(self.hb)
        for s in HB_SPACES:
            hb[(s.value, actor)] = max(hb.get((s.value, actor), 0), count)
        return View(self.coh, tuple(sorted(hb.items())))


Entries = tuple[tuple[int, Scope, View], ...]


class Message(NamedTuple):
    """One write in a location's modification order.

    `released` are the views a synchronising reader may acquire, each with the thread and
    scope of its release event (a release write, or a release fence before a relaxed write,
    or inherited along a release sequence of RMWs). `glued` marks an RMW's write, which sits
    directly after the message its read took: nothing may ever be placed between them.
    """

    id: MsgId
    value: int
    released: Entries = ()
    glued: bool = False
    atomic: bool = True


class Access(NamedTuple):
    """A past access, kept per location for race detection (`seq`: the actor's event
    count at it)."""

    actor: Actor
    seq: int
    write: bool
    atomic: bool
    scope: Scope | None
    text: str


class Status(Enum):
    RUN = "run"
    BARRIER = "barrier"  # arrived at a barrier, waiting for its work-group
    COLLECTIVE = "collective"  # arrived at a collective, waiting for its sub-group
    DONE = "done"  # fell off the end of its body
    RETURNED = "returned"  # executed `return`
    CUT = "cut"  # would have exceeded the unroll bound
    INVALID = "invalid"  # stopped at an access whose address is no location (undefined)

    @property
    def finished(self) -> bool:
        return self in (Status.DONE, Status.RETURNED, Status.CUT, Status.INVALID)


class ThreadState(NamedTuple):
    """A work-item's state."""

    pc: int
    regs: tuple[tuple[str, Expr], ...]
    cur: View
    pending: Entries = ()  # released views of messages read by relaxed reads (for acq fences)
    relf: tuple[tuple[Scope, View], ...] = ()  # views at release fences, per fence scope
    events: int = 0  # events executed so far (accesses, fences, barrier halves, collectives)
    elem: int = 0  # next element of a vector access
    backedges: tuple[tuple[int, int], ...] = ()
    barriers: int = 0
    collectives: int = 0
    status: Status = Status.RUN
    open_group: tuple[int, ...] = ()  # cp.async agents not yet committed
    groups: tuple[tuple[int, ...], ...] = ()  # committed groups, oldest first, not yet waited
    agents: int = 0  # number of cp.async issued
    barred: bool = False  # its work-group passed a barrier without it: it may reach no other
    # only with seq_cst instructions (psc needs them): the location of the last event (None
    # for a fence or collective), and the hb clock of the latest event before the current
    # run of accesses to that location (`d` of po-nl;hb;po-nl; None: no such event)
    last_loc: Location | None = None
    run_dhb: Clock | None = None

    def reg_env(self) -> dict[str, Expr]:
        return dict(self.regs)

    def fence_view(self, scope: Scope) -> View | None:
        for s, v in self.relf:
            if s == scope:
                return v
        return None


class AgentState(NamedTuple):
    """A cp.async in flight: its element (source, destination) pairs, the elements whose
    source it has not read yet (`unread`), and those read and not yet written with their
    value (`held`). Elements are copied in any order: `aso` orders each element's read
    before its write, and nothing else among a copy's events."""

    pairs: tuple[tuple[Location, Location], ...]
    view: View
    unread: tuple[int, ...]
    held: tuple[tuple[int, int], ...] = ()
    events: int = 0
    text: str = ""
    line: int = 0

    @property
    def done(self) -> bool:
        return not self.unread and not self.held

    def moves(self) -> list[tuple[Location, bool, int]]:
        """Its possible next steps: (location, writes it, element)."""
        reads = [(self.pairs[i][0], False, i) for i in self.unread]
        return reads + [(self.pairs[i][1], True, i) for i, _ in self.held]


@record(frozen=False)
class Config:
    """A whole machine state; mutable while a step builds it, then only read and hashed.

    `log` and `psc` exist only for programs with seq_cst instructions (psc.py): the events
    psc may mention, sorted by actor and count, and the closure of the psc edges so far.
    `raised` holds the flags raised by the steps that built this state from its predecessor
    (not part of the state: they count when the state is on a complete run); `dead` marks a
    state no run may go through (its eager steps closed a psc cycle, or a work-item reached
    a barrier its work-group had passed without it).
    """

    threads: list[ThreadState]
    mem: dict[Location, tuple[Message, ...]]
    accesses: dict[Location, tuple[Access, ...]] = field(default_factory=dict)
    agents: dict[Actor, AgentState] = field(default_factory=dict)
    log: tuple[Ev, ...] = ()
    psc: Edges = frozenset()
    raised: list[Flag] = field(default_factory=list)
    dead: bool = False

    def clone(self) -> Config:
        return Config(
            list(self.threads),
            dict(self.mem),
            dict(self.accesses),
            dict(self.agents),
            self.log,
            self.psc,
        )

    def assign(self, other: Config) -> None:
        """Become `other` (used to run a step in place)."""
        self.threads[:] = other.threads
        self.mem = other.mem
        self.accesses = other.accesses
        self.agents = other.agents
        self.log = other.log
        self.psc = other.psc
        self.raised.extend(other.raised)
        self.dead = self.dead or other.dead

    def key(self) -> object:
        """A canonical, hashable summary: equal keys mean equal futures."""
        return (
            tuple(self.threads),
            # a location holding only its init message is the same as one never touched
            tuple(sorted(kv for kv in self.mem.items() if len(kv[1]) > 1)),
            tuple(sorted(self.accesses.items())),
            tuple(sorted(self.agents.items())),
            self.log,
            self.psc,
        )

    def messages(self, loc: Location) -> tuple[Message, ...]:
        return self.mem[loc]

    def pos(self, loc: Location, mid: MsgId) -> int:
        """The timestamp of a message: its index in the location's modification order."""
        if mid == INIT:
            return 0
        for i, m in enumerate(self.mem[loc]):
            if m.id == mid:
                return i
        raise AssertionError(f"message {mid} not in the modification order of {loc}")

    def join(self, a: View, b: View) -> View:
        """The least view above both: mo-later message per location, max per clock entry."""
        if not b.coh and not b.hb:
            return a
        coh = dict(a.coh)
        for loc, mid in b.coh:
            old = coh.get(loc)
            if old is None or self.pos(loc, mid) > self.pos(loc, old):
                coh[loc] = mid
        hb = dict(a.hb)
        for k, n in b.hb:
            if hb.get(k, 0) < n:
                hb[k] = n
        return View(tuple(sorted(coh.items())), tuple(sorted(hb.items())))

    def join_all(self, views: Iterable[View]) -> View:
        out = View()
        for v in views:
            out = self.join(out, v)
        return out


def merge_entries(entries: Iterable[tuple[int, Scope, View]], cfg: Config) -> Entries:
    """Released views keyed by (thread, scope), joined, in a canonical order."""
    acc: dict[tuple[int, Scope], View] = {}
    for t, s, v in entries:
        old = acc.get((t, s))
        acc[(t, s)] = v if old is None else cfg.join(old, v)
    return tuple((t, s, acc[(t, s)]) for t, s in sorted(acc))


def set_coh(view: View, loc: Location, mid: MsgId) -> View:
    coh = dict(view.coh)
    coh[loc] = mid
    return View(tuple(sorted(coh.items())), view.hb)


def set_regs(
    regs: tuple[tuple[str, Expr], ...], updates: Mapping[str, Expr]
) -> tuple[tuple[str, Expr], ...]:
    d = dict(regs)
    d.update(updates)
    return tuple(sorted(d.items()))
