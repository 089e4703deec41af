"""The built-in sets and relations of the cat language: the contract engines implement."""

from __future__ import annotations

from collections.abc import Mapping
from types import MappingProxyType

from pisa_mm.cat.syntax import Ty
from pisa_mm.records import record

__all__ = ["BUILTINS", "INTRINSIC", "Builtin"]


@record
class Builtin:
    name: str
    ty: Ty
    doc: str


# Every name here is provided by each engine (`BaseRelations.set`/`.rel` for the concrete
# evaluator; the Z3 engine encodes them itself). Events are int ids; `_` (every event of the
# execution) is syntax, not a name: it is `BaseRelations.events`. Every set and relation is
# restricted to the events of the execution (a relation holds only between events that happen).
_TABLE: tuple[tuple[str, Ty, str], ...] = (
    # --- event kinds
    ("R", Ty.SET, "reads, including the read of an RMW and the reads of async copies"),
    ("W", Ty.SET, "writes, including init writes, the write of an RMW and async-copy writes"),
    ("M", Ty.SET, "memory accesses: R | W"),
    ("F", Ty.SET, "fences, including the ARRIVE and DEPART events of barrier.workgroup"),
    ("IW", Ty.SET, "init writes: one per location instance"),
    ("ARRIVE", Ty.SET, "first event of a barrier.workgroup: a release fence, WG scope"),
    ("DEPART", Ty.SET, "second event of a barrier.workgroup: an acquire fence, WG scope"),
    ("ASYNC", Ty.SET, "reads and writes performed by a cp.async copy"),
    ("RMW", Ty.SET, "events of an atomic read-modify-write (both halves; a failed cas's read)"),
    ("EXIT", Ty.SET, "the end marker of each work-item path"),
    ("RET", Ty.SET, "EXIT markers of paths that ended by `return`"),
    (
        "BADADDR",
        Ty.SET,
        "EXIT markers of paths that ended at an access whose computed address is none of the "
        "test's locations (undefined behaviour; the access's own marker)",
    ),
    ("HOST", Ty.SET, "events of host threads"),
    # --- memory orders (exactly that order; weak accesses, async copies, init writes are NA)
    ("NA", Ty.SET, "non-atomic: weak accesses, async-copy accesses, init writes"),
    ("RLX", Ty.SET, "relaxed atomics"),
    ("ACQ", Ty.SET, "events with order acquire"),
    ("REL", Ty.SET, "events with order release"),
    ("ACQ_REL", Ty.SET, "events with order acq_rel"),
    ("SC", Ty.SET, "events with order seq_cst"),
    # --- effective scopes of atomics and fences
    ("SG", Ty.SET, "atomics and fences of effective scope subgroup"),
    ("WG", Ty.SET, "atomics and fences of effective scope workgroup (any wider scope on .shared)"),
    ("GPU", Ty.SET, "atomics and fences of effective scope gpu"),
    ("SYS", Ty.SET, "atomics and fences of effective scope system (every relaxed atomic)"),
    ("UNSCOPED", Ty.SET, "atomic events of .relaxed instructions, which have no scope label"),
    # --- address spaces: accesses to a location of that space, fences covering it
    ("GLOBAL", Ty.SET, "accesses to .global locations; fences covering global memory"),
    ("SHARED", Ty.SET, "accesses to .shared locations; fences covering shared memory"),
    ("PRIVATE", Ty.SET, "accesses to .private locations"),
    ("CONST", Ty.SET, "accesses to .const locations"),
    ("GENERIC", Ty.SET, "accesses written with .generic addressing"),
    # --- relations
    ("id", Ty.REL, "identity on the events of the execution"),
    ("po", Ty.REL, "program order of one work-item: strict, transitive; no async-copy events"),
    ("rf", Ty.REL, "reads-from: write -> read of the same location that takes its value"),
    ("co", Ty.REL, "coherence: strict total order per location, transitive, init write first"),
    ("loc", Ty.REL, "same location instance (memory accesses only)"),
    ("int", Ty.REL, "same work-item, its async-copy events included"),
    ("ext", Ty.REL, "different work-items; an init write is ext to every event"),
    ("rmw", Ty.REL, "read -> write of one successful atomic read-modify-write"),
    ("addr", Ty.REL, "address dependency: read -> access whose address uses its value"),
    ("data", Ty.REL, "data dependency: read -> write whose value uses its value"),
    ("ctrl", Ty.REL, "control dependency: read -> events after a branch on its value"),
    (
        "aso",
        Ty.REL,
        "async-copy order (transitive): before a cp.async -> its events -> after "
        "the wait that completes its group; its read -> its write",
    ),
    (
        "bsync",
        Ty.REL,
        "ARRIVE -> DEPART of the same barrier instance (k-th barrier of each "
        "work-item of one work-group)",
    ),
    ("binst", Ty.REL, "ARRIVE -> ARRIVE of different work-items, same barrier instance"),
    ("sinstr", Ty.REL, "events produced by the same source instruction"),
    (
        "bfewer",
        Ty.REL,
        "ARRIVE of the k-th barrier of a work-item -> EXIT of another "
        "work-item of its work-group that executed fewer than k barriers",
    ),
    ("same-sg", Ty.REL, "events of work-items of one sub-group (never host events)"),
    ("same-wg", Ty.REL, "events of work-items of one work-group (never host events)"),
    ("same-gpu", Ty.REL, "events of work-items of one NDRange (never host events)"),
    (
        "incl",
        Ty.REL,
        "scope inclusion (mutual) between atomics/fences: each one's thread is in "
        "the other's scope instance (SYS: everyone, host too; GPU: same NDRange; WG: same "
        "work-group; SG: same sub-group)",
    ),
)

BUILTINS: Mapping[str, Builtin] = MappingProxyType(
    {name: Builtin(name, ty, doc) for name, ty, doc in _TABLE}
)

# Built-ins the concrete evaluator computes from the universe itself (engines may skip them).
INTRINSIC = frozenset({"id"})
