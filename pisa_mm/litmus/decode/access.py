"""Static address checks: space, const, alignment and bounds of accesses to known variables."""

from __future__ import annotations

from pisa_mm.events.kinds import Space
from pisa_mm.litmus.decode.context import Ctx, fail
from pisa_mm.litmus.decode.dataflow import DefUse
from pisa_mm.litmus.program import (
    Address,
    AddrOf,
    AddrSpace,
    Alu,
    AluOp,
    CpAsync,
    FAtom,
    IAtom,
    Instruction,
    Load,
    Op,
    Reg,
    RegInit,
    Store,
    VarRef,
)

_SPACE_OF = {
    AddrSpace.GLOBAL: Space.GLOBAL,
    AddrSpace.SHARED: Space.SHARED,
    AddrSpace.PRIVATE: Space.PRIVATE,
    AddrSpace.CONST: Space.CONST,
}


def static_targets(
    body: list[Instruction], flow: list[DefUse], inits: dict[str, RegInit]
) -> dict[str, VarRef]:
    """Registers that hold one known variable address everywhere they are read (`flow`:
    each instruction's `def_use`)."""
    writers: dict[str, list[Op]] = {}
    for ins, (defs, _) in zip(body, flow, strict=True):
        for d in defs:
            writers.setdefault(d.name, []).append(ins.op)
    out: dict[str, VarRef] = {}
    for name, init in inits.items():
        if isinstance(init.value, VarRef) and name not in writers:
            out[name] = init.value
    for name, ws in writers.items():
        if name in inits or len(ws) != 1:
            continue
        w = ws[0]
        if isinstance(w, AddrOf):
            out[name] = w.var
        elif isinstance(w, Alu) and w.op is AluOp.MOV and isinstance(w.srcs[0], VarRef):
            out[name] = w.srcs[0]
    return out


def _check_access(
    ctx: Ctx,
    ins: Instruction,
    addr: Address,
    space: AddrSpace,
    width: int,
    vec: int,
    kind: str,  # "load", "store", "atomic", "async-src", "async-dst"
    static: dict[str, VarRef],
    host: bool,
) -> None:
    base = addr.base
    ref = (
        base
        if isinstance(base, VarRef)
        else static.get(base.name)
        if isinstance(base, Reg) and base.elem is None
        else None
    )
    if ref is None:
        return
    decl = ctx.variables[ref.name]
    span = addr.span or ins.span
    dspace = decl.space
    if space is not AddrSpace.GENERIC and _SPACE_OF[space] is not dspace:
        fail(
            span,
            f"{ins.text.split()[0]} accesses @{ref.name}, a .{dspace.value} variable, "
            f"through .{space.value}",
            "space",
        )
    if host and dspace is not Space.GLOBAL:
        fail(
            span,
            f"host threads may access only .global memory; @{ref.name} is .{dspace.value}",
            "host",
        )
    if kind in ("store", "atomic", "async-dst") and dspace is Space.CONST:
        fail(span, f"store to .const variable @{ref.name} (read-only)", "const-store")
    if kind == "atomic" and dspace in (Space.PRIVATE, Space.CONST):
        fail(
            span,
            f"an atomic access must target .global or .shared memory; @{ref.name} is "
            f".{dspace.value}",
            "space",
        )
    if kind == "async-dst" and dspace is not Space.SHARED:
        fail(span, f"cp.async writes .shared memory; @{ref.name} is .{dspace.value}", "space")
    if kind == "async-src" and dspace is not Space.GLOBAL:
        fail(span, f"cp.async reads .global memory; @{ref.name} is .{dspace.value}", "space")
    elem = decl.width // 8
    if kind.startswith("async"):
        size = width // 8
        if size % elem != 0:
            fail(
                span,
                f"mixed-size access: cp.async of {size} bytes over @{ref.name} declared "
                f".{decl.width}b is not supported",
                "mixed-size",
            )
        align = size
    else:
        if width != decl.width:
            fail(
                span,
                f"mixed-size access: a .{width}b access to @{ref.name} declared .{decl.width}b "
                "is not supported",
                "mixed-size",
            )
        size = width * vec // 8
        align = width // 8 if width >= 32 else size
    off = addr.offset
    if isinstance(off, Reg) or not isinstance(base, VarRef):
        # an address held in a register is computed, even when it is a known variable's:
        # past that variable or misaligned, it is `invalid-address` (undefined behaviour,
        # raised only if reached), not an input error (docs/model.md)
        return
    offset = 0 if off is None else off.value
    if offset >= 1 << 63:
        offset -= 1 << 64
    if offset % align != 0:
        fail(
            span,
            f"misaligned address: byte offset {offset} of @{ref.name} is not a multiple "
            f"of {align} (PISA 5.1)",
            "alignment",
        )
    total = decl.count * elem
    if offset < 0 or offset + size > total:
        fail(
            span,
            f"out-of-bounds access: bytes {offset}..{offset + size - 1} of @{ref.name}, "
            f"which has {total} bytes",
            "bounds",
        )


def check_accesses(
    ctx: Ctx, body: list[Instruction], static: dict[str, VarRef], host: bool
) -> None:
    """Check the accesses to known variables (`static`: from `static_targets`)."""
    for ins in body:
        match ins.op:
            case Load(addr=a, space=sp, width=w, vec=v, order=o):
                kind = "load" if o is None else "atomic"
                _check_access(ctx, ins, a, sp, w, v, kind, static, host)
            case Store(addr=a, space=sp, width=w, vec=v, order=o):
                kind = "store" if o is None else "atomic"
                _check_access(ctx, ins, a, sp, w, v, kind, static, host)
            case IAtom(addr=a, space=sp, width=w):
                _check_access(ctx, ins, a, sp, w, 1, "atomic", static, host)
            case FAtom(addr=a, space=sp, fmt=f):
                _check_access(ctx, ins, a, sp, f.width, 1, "atomic", static, host)
            case CpAsync(dst=d, src=s, size=n):
                _check_access(ctx, ins, d, AddrSpace.SHARED, n * 8, 1, "async-dst", static, host)
                _check_access(ctx, ins, s, AddrSpace.GLOBAL, n * 8, 1, "async-src", static, host)
            case _:
                pass
