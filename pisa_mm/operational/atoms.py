"""The small types every part of the machine names (actors, message ids, clocks, psc events,
flags): one module below `state`, `psc` and `step`, so that none of them imports another
for its types."""

from __future__ import annotations

from typing import NamedTuple

from pisa_mm.events.kinds import Kind, Scope, Space
from pisa_mm.events.model import Location
from pisa_mm.records import record

# An actor performs memory events: (thread, -1) is the work-item itself, (thread, k) the agent
# of its k-th cp.async. Happens-before knowledge is a vector clock over actors.
Actor = tuple[int, int]
# A message is named by its writer and the writer's event count, so that two interleavings
# that produce the same messages produce equal (hashable, comparable) states.
MsgId = tuple[int, int, int]
INIT: MsgId = (-1, -1, 0)

HB_SPACES = (Space.GLOBAL, Space.SHARED)  # hb is computed per space (model-decisions)
BOTH = frozenset(HB_SPACES)

Coh = tuple[tuple[Location, MsgId], ...]
Clock = tuple[tuple[tuple[str, Actor], int], ...]


# An SC event: (thread, its event count). Only work-items execute seq_cst instructions.
Node = tuple[int, int]
Edges = frozenset[tuple[Node, Node]]


class Ev(NamedTuple):
    """An event the psc graph may mention.

    `hb` is the happens-before clock the event had, its own acquisition included (what
    happens before it, per space); `dhb` the clock of the latest po-earlier event of the
    work-item that is not an access to `loc` (None: there is none), the `d` of
    `po-nl ; hb ; po-nl`. `msg` is the message read (a read) or written (a write).
    """

    actor: Actor
    seq: int  # the actor's event count at this event
    kind: Kind
    loc: Location | None
    spaces: frozenset[Space]
    sc: bool
    scope: Scope | None
    msg: MsgId | None
    hb: Clock
    dhb: Clock | None = None
    line: int = 0  # source line, for `trace`

    @property
    def node(self) -> Node:
        return (self.actor[0], self.seq)

    @property
    def access(self) -> bool:
        return self.kind is not Kind.FENCE

    def key(self) -> tuple[Actor, int, int]:
        return (self.actor, self.seq, 0 if self.kind is Kind.READ else 1)


@record
class Flag:
    """An undefined-behaviour flag raised by a step, with the text of its witness."""

    name: str
    description: str
