"""Hand-built executions for the cat tests: a tiny builder that derives the built-ins."""

from __future__ import annotations

import itertools
from collections.abc import Iterable
from dataclasses import dataclass, field

from pisa_mm.cat.builtins import BUILTINS

ALL_SPACES = ("GLOBAL", "SHARED")


@dataclass(frozen=True)
class Place:
    """Where a thread runs; host threads have none of the GPU levels."""

    gpu: int | None = 0
    wg: int | None = 0
    sg: int | None = 0

    @property
    def host(self) -> bool:
        return self.gpu is None


HOST = Place(None, None, None)


@dataclass
class Ev:
    id: int
    kind: str  # R, W, F, EXIT
    thread: int | None  # None: init write
    loc: str | None = None
    order: str = "NA"
    scope: str | None = None
    spaces: tuple[str, ...] = ()
    tags: frozenset[str] = frozenset()  # IW, ARRIVE, DEPART, ASYNC, RMW, RET, GENERIC


@dataclass
class Execution:
    """Implements pisa_mm.cat.eval.BaseRelations."""

    events: tuple[int, ...]
    sets: dict[str, frozenset[int]]
    rels: dict[str, frozenset[tuple[int, int]]]

    def set(self, name: str) -> frozenset[int]:
        assert BUILTINS[name].ty.value == "set", name
        return self.sets.get(name, frozenset())

    def rel(self, name: str) -> frozenset[tuple[int, int]]:
        assert name != "id", "the evaluator computes id itself"
        assert BUILTINS[name].ty.value == "relation", name
        return self.rels.get(name, frozenset())


@dataclass
class Builder:
    """Events are numbered in creation order; po is creation order within a thread."""

    places: dict[int, Place]
    evs: list[Ev] = field(default_factory=list)
    space_of: dict[str, str] = field(default_factory=dict)
    extra: dict[str, set[tuple[int, int]]] = field(default_factory=dict)
    co_chains: list[list[int]] = field(default_factory=list)

    def _add(self, ev: Ev) -> int:
        self.evs.append(ev)
        return ev.id

    def init(self, loc: str, space: str = "GLOBAL") -> int:
        self.space_of[loc] = space
        return self._add(Ev(len(self.evs), "W", None, loc, spaces=(space,), tags=frozenset({"IW"})))

    def access(
        self, kind: str, thread: int, loc: str, order: str = "NA", scope: str | None = None,
        tags: Iterable[str] = (),
    ) -> int:  # fmt: skip
        if order == "RLX" and scope is None:
            scope = "SYS"  # relaxed atomics have system scope
        space = self.space_of[loc]
        return self._add(
            Ev(len(self.evs), kind, thread, loc, order, scope, (space,), frozenset(tags))
        )

    def write(self, thread: int, loc: str, order: str = "NA", scope: str | None = None,
              tags: Iterable[str] = ()) -> int:  # fmt: skip
        return self.access("W", thread, loc, order, scope, tags)

    def read(self, thread: int, loc: str, order: str = "NA", scope: str | None = None,
             tags: Iterable[str] = ()) -> int:  # fmt: skip
        return self.access("R", thread, loc, order, scope, tags)

    def fence(self, thread: int, order: str = "ACQ_REL", scope: str = "GPU",
              spaces: tuple[str, ...] = ALL_SPACES, tags: Iterable[str] = ()) -> int:  # fmt: skip
        return self._add(
            Ev(len(self.evs), "F", thread, None, order, scope, spaces, frozenset(tags))
        )

    def barrier(self, thread: int) -> tuple[int, int]:
        a = self.fence(thread, "REL", "WG", tags={"ARRIVE"})
        d = self.fence(thread, "ACQ", "WG", tags={"DEPART"})
        return a, d

    def exit(self, thread: int, returned: bool = False) -> int:
        tags = frozenset({"RET"}) if returned else frozenset()
        return self._add(Ev(len(self.evs), "EXIT", thread, tags=tags))

    def relate(self, name: str, *pairs: tuple[int, int]) -> None:
        self.extra.setdefault(name, set()).update(pairs)

    def rf(self, w: int, r: int) -> None:
        self.relate("rf", (w, r))

    def co(self, *chain: int) -> None:
        """Coherence order of one location, init write first."""
        self.co_chains.append(list(chain))

    def build(self) -> Execution:
        evs = self.evs
        sets: dict[str, set[int]] = {n: set() for n, b in BUILTINS.items() if b.ty.value == "set"}
        for e in evs:
            if e.kind in ("R", "W", "F", "EXIT"):
                sets[e.kind].add(e.id)
            if e.kind in ("R", "W"):
                sets["M"].add(e.id)
            sets[e.order].add(e.id)
            if e.scope is not None:
                sets[e.scope].add(e.id)
            for s in e.spaces:
                sets[s].add(e.id)
            for t in e.tags:
                sets[t].add(e.id)
            if e.thread is not None and self.places[e.thread].host:
                sets["HOST"].add(e.id)
        rels: dict[str, set[tuple[int, int]]] = {n: set() for n, b in BUILTINS.items()}
        for a, b in itertools.product(evs, evs):
            if a.thread is not None and a.thread == b.thread:
                rels["int"].add((a.id, b.id))
                plain = not ({"ASYNC"} & (a.tags | b.tags))
                if a.id < b.id and plain:
                    rels["po"].add((a.id, b.id))
            if a.thread is None or b.thread is None or a.thread != b.thread:
                rels["ext"].add((a.id, b.id))
            if a.loc is not None and a.loc == b.loc:
                rels["loc"].add((a.id, b.id))
            if a.thread is not None and b.thread is not None:
                pa, pb = self.places[a.thread], self.places[b.thread]
                if not pa.host and not pb.host and pa.gpu == pb.gpu:
                    rels["same-gpu"].add((a.id, b.id))
                    if pa.wg == pb.wg:
                        rels["same-wg"].add((a.id, b.id))
                        if pa.sg == pb.sg:
                            rels["same-sg"].add((a.id, b.id))
                if a.scope and b.scope and self._in(a, pb) and self._in(b, pa):
                    rels["incl"].add((a.id, b.id))
        for chain in self.co_chains:
            rels["co"].update(itertools.combinations(chain, 2))
        for name, pairs in self.extra.items():
            rels[name].update(pairs)
        rels.pop("id")
        return Execution(
            tuple(e.id for e in evs),
            {k: frozenset(v) for k, v in sets.items()},
            {k: frozenset(v) for k, v in rels.items()},
        )

    def _in(self, a: Ev, other: Place) -> bool:
        """Is a thread placed at `other` in the scope instance of a's scope?"""
        assert a.thread is not None and a.scope is not None
        mine = self.places[a.thread]
        if a.scope == "SYS":
            return True
        if mine.host or other.host:
            return False
        if a.scope == "GPU":
            return mine.gpu == other.gpu
        if a.scope == "WG":
            return (mine.gpu, mine.wg) == (other.gpu, other.wg)
        return (mine.gpu, mine.wg, mine.sg) == (other.gpu, other.wg, other.sg)
