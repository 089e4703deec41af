"""The generated test before printing: resolved events, thread bodies, condition atoms."""

from __future__ import annotations

from pisa_mm.events.kinds import Order, Scope
from pisa_mm.gen.edges import Dir, LocSpace, RmwKind
from pisa_mm.gen.params import Params
from pisa_mm.records import record

LOC_NAMES = ("x", "y", "z", "a", "b", "c", "d", "e", "f", "g", "h", "k", "m", "n", "p", "q")


@record
class Event:
    """A memory event of the test, fully resolved."""

    thread: int
    dir: Dir
    loc: int
    space: LocSpace
    generic: bool
    order: Order
    scope: Scope | None
    rmw: RmwKind | None


@record
class GenThread:
    place: tuple[int, int, int | None] | None  # (gpu, wg, sg or fresh); None: the host
    decls: tuple[str, ...]
    body: tuple[str, ...]


@record
class GenTest:
    """A generated test before printing; locations are named LOC_NAMES[i]."""

    name: str
    shape: str
    cycle: str  # the canonical rotation, with --fences/--rmw applied (build.cycle_text)
    params: Params
    locs: tuple[LocSpace, ...]
    reg_inits: tuple[tuple[int, str, str], ...]  # (thread, register, value or @loc)
    threads: tuple[GenThread, ...]
    reg_atoms: tuple[tuple[int, str, int], ...]
    mem_atoms: tuple[tuple[int, int], ...]  # (location, final value)
