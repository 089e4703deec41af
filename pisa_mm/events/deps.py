"""Syntactic dependencies: which reads each register's value was computed from.

model-decisions ("Axioms"): dependencies are syntactic, as in herd. A value computed from a
register depends on the reads that wrote it even when the result does not depend on them
(`xor r, r`, `sel d, 1, 1, p`, `and r, 0`). The value expressions the builder keeps are
simplified (constant folding, `ite(c, a, a) = a`, ...), so dependencies are not read off
them: the builder tracks, beside each register's value, the set of *sources* (reads and
collective contributions) its instruction's operands carried, and records per event the
sources of its address, of its written value and of the branches before it.
"""

from __future__ import annotations

from collections.abc import Mapping

from pisa_mm.events.semantics import reg_key
from pisa_mm.litmus.program import Address, Imm, Pred, Reg, VarRef
from pisa_mm.values.expr import Contribution, ReadValue

__all__ = [
    "NONE",
    "Deps",
    "Source",
    "Sources",
    "address_sources",
    "operand_sources",
    "resolve",
]

# A source of a value: the read it came from, or a collective contribution of another
# work-item (resolved at the end to the sources of that contribution).
Source = ReadValue | Contribution
Sources = frozenset[Source]
Deps = Mapping[str, Sources]  # register key -> sources of its current value

NONE: Sources = frozenset()


def operand_sources(deps: Deps, *ops: Reg | Imm | VarRef | Pred | None) -> Sources:
    """The sources of the operands: those of their registers (immediates have none)."""
    out: set[Source] = set()
    for op in ops:
        if isinstance(op, Reg):
            out |= deps.get(reg_key(op), NONE)
        elif isinstance(op, Pred):
            out |= deps.get(op.name, NONE)
    return frozenset(out)


def address_sources(deps: Deps, addr: Address) -> Sources:
    """The sources of `[base + offset]`: those of its base and offset registers."""
    base = addr.base if isinstance(addr.base, Reg) else None
    offset = addr.offset if isinstance(addr.offset, Reg) else None
    if base is None and offset is None:
        return NONE  # `[@x]`, most addresses
    return operand_sources(deps, base, offset)


def resolve(
    recorded: Mapping[int, Sources], contributed: Mapping[tuple[int, int], list[Sources]]
) -> dict[int, frozenset[int]]:
    """Each event's sources as read ids: a contribution stands for every read that fed it
    (on any path of its work-item: a may-dependency)."""
    memo: dict[tuple[int, int], frozenset[int]] = {}

    def contribution(key: tuple[int, int]) -> frozenset[int]:
        # Contributions only use earlier collectives of their work-item, so an iterative
        # worklist in index order suffices; a cycle cannot occur.
        if key in memo:
            return memo[key]
        todo = [key]
        while todo:
            k = todo[-1]
            pending = [
                (s.thread, s.index)
                for srcs in contributed.get(k, [])
                for s in srcs
                if isinstance(s, Contribution)
                and (s.thread, s.index) not in memo
                and (s.thread, s.index) != k
            ]
            if pending:
                todo.extend(pending)
                continue
            todo.pop()
            out: set[int] = set()
            for srcs in contributed.get(k, []):
                for s in srcs:
                    if isinstance(s, ReadValue):
                        out.add(s.event)
                    elif (s.thread, s.index) in memo:
                        out |= memo[(s.thread, s.index)]
            memo[k] = frozenset(out)
        return memo[key]

    result: dict[int, frozenset[int]] = {}
    for eid, srcs in recorded.items():
        ids: set[int] = set()
        for s in srcs:
            if isinstance(s, ReadValue):
                ids.add(s.event)
            else:
                ids |= contribution((s.thread, s.index))
        result[eid] = frozenset(ids)
    return result
