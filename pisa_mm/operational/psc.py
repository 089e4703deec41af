"""RC11's SC constraint, per address space: the psc graph, kept acyclic as the run grows.

The machine does not order seq_cst events by the order in which it executes them (an SC
order that follows execution order is stronger than RC11's psc: see docs/operational.md).
Instead, a state records the events psc can mention (`Ev`: every `.global`/`.shared` access,
every seq_cst access and every seq_cst fence, with the happens-before clocks it had) and the
transitive closure of the psc edges found so far between seq_cst events. Each step adds its
events one at a time; `add` finds every psc edge whose witnesses are complete once the new
event exists, and refuses the step when an edge would close a cycle. A psc edge's witnesses
(the events a, a', b', b, c, d, m1, m2 of the definitions below) are all present once the
last of them is executed, and the events hb-before an event are executed before it, so
looking at the newest event in each role finds every edge exactly once it exists:

    scb_X      = po | [X];po-nl;hb_X;po-nl;[X] | ([X];hb_X;[X]) & loc | co | fr
    psc-base_X = ([SC&M] | [FSC_X];hb_X;[M&X]) ; scb_X ; ([SC&M] | [M&X];hb_X;[FSC_X])
    psc-f_X    = [FSC_X] ; (hb_X | hb_X;[M&X];eco;hb_X) ; [FSC_X]
    psc-cross  = [SC&M] ; ([X];po-nl;(hb_G & hb_S);po-nl;[Y]) ; [SC&M]   (X, Y distinct)
    sc: acyclic (psc-base_G | psc-base_S | psc-f_G | psc-f_S | psc-cross) & incl

- the new event n is an access: as b' of psc-base and of psc-cross (if n is SC: every a'
  with scb(a', n));
  as a' (co/fr edges from n to writes already in memory, the only scb edges that can end at
  an older event); as m1 of psc-f (eco from n to older accesses that are hb-before fences);
- n is an SC fence: as b of psc-base (every access b' hb-before n, every a' with scb(a', b'))
  and of psc-f (SC fences hb-before n, and eco paths into accesses hb-before n).

In every other role an event is hb-before (or po-before) a later witness, so it is never the
newest. Edges only grow as events are added, so a prefix of a consistent run is consistent:
refusing a step never loses a run whose completion would have been consistent.
"""

from __future__ import annotations

from collections.abc import Callable, Iterable

from pisa_mm.events.kinds import Kind, Scope, Space
from pisa_mm.events.model import Location
from pisa_mm.operational.atoms import BOTH, Actor, Clock, Edges, Ev, MsgId, Node


def clock(hb: Clock, space: Space, actor: Actor) -> int:
    key = (space.value, actor)
    for k, v in hb:
        if k == key:
            return v
    return 0


def hb_before(a: Ev, b: Ev, space: Space) -> bool:
    """a hb_X b, for an event a executed before b: po, or b's clock covers a."""
    if a.actor == b.actor:
        return a.seq < b.seq
    return clock(b.hb, space, a.actor) >= a.seq


def _space(e: Ev) -> Space | None:
    """The space of an access to `.global` or `.shared` memory (None otherwise)."""
    if e.loc is None or e.loc.space not in BOTH:
        return None
    return e.loc.space


class Graph:
    """One step's view of the log: positions in mo, scope inclusion, and the edge search."""

    def __init__(
        self,
        log: Iterable[Ev],
        pos: Callable[[Location, MsgId], int],
        incl: Callable[[int, Scope, int, Scope], bool],
    ) -> None:
        self.log = list(log)
        self.pos = pos
        self.incl = incl
        self.fences = [e for e in self.log if not e.access]
        self.accesses = [e for e in self.log if e.access]
        self._cmin: dict[tuple[Actor, int], int] = {}
        self._at: set[tuple[Actor, int, Location | None]] | None = None

    # ------------------------------------------------------------ relations

    def _key(self, e: Ev) -> tuple[int, int]:
        """Place in eco: a write at its mo index, a read just after the write it read."""
        assert e.loc is not None and e.msg is not None
        return (self.pos(e.loc, e.msg), 1 if e.kind is Kind.READ else 0)

    def eco(self, a: Ev, b: Ev) -> bool:
        """a eco b, = (rf | co | fr)+ on one location: a's place in mo strictly before b's
        (two reads of one write are not related)."""
        return a.loc == b.loc and self._key(a) < self._key(b)

    def co_fr(self, a: Ev, b: Ev) -> bool:
        """a co b or a fr b: b is a write after what a wrote or read."""
        return b.kind is Kind.WRITE and self.eco(a, b)

    def _c_min(self, a: Ev) -> int:
        """The count of the first event po-after a that is not an access to a's location
        (the `c` of po-nl;hb;po-nl: every later event is hb-after it)."""
        k = self._cmin.get((a.actor, a.seq))
        if k is None:
            if self._at is None:
                self._at = {(e.actor, e.seq, e.loc) for e in self.accesses}
            k = a.seq + 1
            while (a.actor, k, a.loc) in self._at:
                k += 1
            self._cmin[(a.actor, a.seq)] = k
        return k

    def scb(self, a: Ev, b: Ev) -> frozenset[Space]:
        """The spaces X with scb_X(a, b), for accesses a and b (a older or b older)."""
        if a.actor == b.actor and a.actor[1] < 0 and a.seq < b.seq:
            return BOTH  # po
        if a.loc == b.loc and self.co_fr(a, b):
            return BOTH
        sa, sb = _space(a), _space(b)
        if sa is None or sa is not sb:
            return frozenset()
        if a.loc == b.loc and hb_before(a, b, sa):
            return frozenset({sa})
        if (
            a.actor[1] < 0
            and b.actor[1] < 0
            and a.actor != b.actor
            and b.dhb is not None
            and clock(b.dhb, sa, a.actor) >= self._c_min(a)
        ):
            return frozenset({sa})  # a po-nl c hb_X d po-nl b
        return frozenset()

    def scb_cross(self, a: Ev, b: Ev) -> bool:
        """a po-nl c (hb_G & hb_S) d po-nl b, for accesses a and b of different spaces."""
        sa, sb = _space(a), _space(b)
        return (
            sa is not None
            and sb is not None
            and sa is not sb
            and a.actor[1] < 0
            and b.actor[1] < 0
            and a.actor != b.actor
            and b.dhb is not None
            and all(clock(b.dhb, x, a.actor) >= self._c_min(a) for x in BOTH)
        )

    def fpre(self, e: Ev, space: Space) -> set[Node]:
        """The SC fences covering `space` that are hb_X-before the X-access e."""
        if _space(e) is not space:
            return set()
        return {f.node for f in self.fences if space in f.spaces and hb_before(f, e, space)}

    def fpost(self, e: Ev, space: Space) -> set[Node]:
        """The SC fences covering `space` that are hb_X-after the X-access e (so far)."""
        if _space(e) is not space:
            return set()
        return {f.node for f in self.fences if space in f.spaces and hb_before(e, f, space)}

    def pre(self, e: Ev, space: Space) -> set[Node]:
        """The SC events psc-base_X starts from before the access e."""
        own = {e.node} if e.sc else set()
        return own | self.fpre(e, space)

    # ------------------------------------------------------------ new edges

    def edges(self, n: Ev) -> set[tuple[Node, Node]]:
        """Every psc edge whose newest witness is n (n not yet in the log)."""
        out: set[tuple[Node, Node]] = set()
        if n.access:
            y = _space(n)
            ys = (y,) if y is not None else ()
            if n.sc:
                # n as b': every scb_X(a', n), with psc-base_X's start points before a'
                for a in self.accesses:
                    for x in self.scb(a, n):
                        out.update((p, n.node) for p in self.pre(a, x))
                    if a.sc and self.scb_cross(a, n):
                        out.add((a.node, n.node))
            # n as a': co/fr from n to writes already in memory
            starts = ({n.node} if n.sc else set()) | (self.fpre(n, y) if y else set())
            if starts:
                for b in self.accesses:
                    if b.loc == n.loc and self.co_fr(n, b):
                        ends = {b.node} if b.sc else set()
                        if y is not None:
                            ends |= self.fpost(b, y)
                        out.update((p, q) for p in starts for q in ends)
            # n as m1 of psc-f: fence hb n eco m2 hb fence
            for x in ys:
                starts = self.fpre(n, x)
                if starts:
                    for m2 in self.accesses:
                        if m2.loc == n.loc and self.eco(n, m2):
                            out.update((p, q) for p in starts for q in self.fpost(m2, x))
            return out
        if not n.sc:
            return out
        for x in sorted(n.spaces & BOTH, key=lambda s: s.value):
            before = [b for b in self.accesses if _space(b) is x and hb_before(b, n, x)]
            # psc-base_X ending at n: a' scb_X b' hb_X n
            for b in before:
                for a in self.accesses:
                    if a is not b and x in self.scb(a, b):
                        out.update((p, n.node) for p in self.pre(a, x))
            # psc-f_X: a hb_X n, and a hb_X m1 eco m2 hb_X n
            for f in self.fences:
                if f.sc and x in f.spaces and hb_before(f, n, x):
                    out.add((f.node, n.node))
            for m2 in before:
                for m1 in self.accesses:
                    if m1.loc == m2.loc and self.eco(m1, m2):
                        out.update((p, n.node) for p in self.fpre(m1, x))
        return out


def close(
    edges: Edges,
    new: Iterable[tuple[Node, Node]],
    ok: Callable[[Node, Node], bool],
) -> Edges | None:
    """The transitive closure `edges` extended with the scope-inclusive pairs of `new`, or
    None when they close a cycle."""
    reach = set(edges)
    for a, b in sorted(new):
        if (a, b) in reach or not ok(a, b):
            continue
        if a == b or (b, a) in reach:
            return None
        preds = {x for x, y in reach if y == a} | {a}
        succs = {y for x, y in reach if x == b} | {b}
        if preds & succs:
            return None
        reach.update((x, y) for x in preds for y in succs)
    return frozenset(reach)
