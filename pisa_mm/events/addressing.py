"""Which variables an access may reach: the one rule of the event builder and the machine.

A memory instruction's address space qualifier, whether it is atomic and whether a host
thread runs it decide the spaces it may reach (PISA 3.3.1, 8); a variable is a target of
its address when it lies in one of them, has the access's element width, is writable if
the access writes and, if private, belongs to the thread. An address computed from
registers that hits no target is undefined behaviour (`invalid-address`): the builder
splits off those executions, the machine stops the work-item there.
"""

from __future__ import annotations

from collections.abc import Iterable

from pisa_mm.events.kinds import Space
from pisa_mm.events.layout import Layout, Variable
from pisa_mm.litmus.program import AddrSpace, VarDecl

__all__ = ["QUALIFIED", "allowed_spaces", "invalid_copy", "is_target", "owns"]

# The space a qualified access names (`.global` ...); a generic one is absent.
QUALIFIED = {
    AddrSpace.GLOBAL: Space.GLOBAL,
    AddrSpace.SHARED: Space.SHARED,
    AddrSpace.PRIVATE: Space.PRIVATE,
    AddrSpace.CONST: Space.CONST,
}
# A generic atomic reaches global or shared memory (PISA 8), a generic weak access any space.
_ATOMIC_GENERIC = frozenset({Space.GLOBAL, Space.SHARED})
_WEAK_GENERIC = frozenset({Space.GLOBAL, Space.SHARED, Space.PRIVATE, Space.CONST})
# A host thread reaches only global and const memory.
_HOST = frozenset({Space.GLOBAL, Space.CONST})


def allowed_spaces(qual: AddrSpace, atomic: bool, host: bool) -> frozenset[Space]:
    """The spaces an access with qualifier `qual` may reach."""
    named = QUALIFIED.get(qual)
    if named is not None:
        spaces = frozenset({named})
    else:
        spaces = _ATOMIC_GENERIC if atomic else _WEAK_GENERIC
    return spaces & _HOST if host else spaces


def owns(variables: Iterable[VarDecl], name: str, thread: int) -> bool:
    """Whether `thread` may touch the private variable `name` (declared for it or for all)."""
    return any(
        d.name == name and d.thread in (None, thread) for d in variables if d.space is Space.PRIVATE
    )


def is_target(
    var: Variable, allowed: frozenset[Space], width: int, *, write: bool, owned: bool
) -> bool:
    """Whether an access of `width`-bit elements reaching `allowed` (a store or an RMW when
    `write`) may touch `var`; `owned`: the thread owns it, if it is private."""
    return (
        var.space in allowed
        and var.width == width
        and not (write and var.space is Space.CONST)
        and (var.space is not Space.PRIVATE or owned)
    )


def invalid_copy(layout: Layout, src: int, dst: int, size: int) -> int | None:
    """The first address of a `cp.async` of `size` bytes from `src` to `dst`, held in
    registers, that is none of the locations it copies between (the elements of a `.global`
    variable, to those of a `.shared` one of the same width, PISA's copy extension); None
    when every address is one (the copy's other checks then apply)."""
    found = layout.find(src)
    if found is None:
        return src
    width = found[0].width
    step = width // 8
    for i in range(0, max(size, step), step):
        for address, space in ((src + i, Space.GLOBAL), (dst + i, Space.SHARED)):
            hit = layout.find(address)
            if hit is None or hit[0].space is not space or hit[0].width != width or hit[1] % step:
                return address
    return None
