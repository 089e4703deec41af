"""Register definitions and uses: no read before a write on any path."""

from __future__ import annotations

from pisa_mm.litmus.decode.context import RegInfo, fail
from pisa_mm.litmus.program import (
    Address,
    AddrOf,
    Alu,
    Collective,
    Compare,
    CpAsync,
    FAtom,
    Goto,
    IAtom,
    Instruction,
    Load,
    Op,
    Pred,
    Reg,
    Return,
    Select,
    Store,
)


def _keys(reg: Reg | Pred, regs: dict[str, RegInfo]) -> list[tuple[str, int | None]]:
    if isinstance(reg, Reg):
        if reg.elem is not None:
            return [(reg.name, reg.elem)]
        info = regs.get(reg.name)
        if info is not None and info.vec > 1:
            return [(reg.name, i) for i in range(info.vec)]
    return [(reg.name, None)]


def _regs_in(x: object) -> list[Reg | Pred]:
    match x:
        case Reg() | Pred():
            return [x]
        case Address(base=b, offset=o):
            return _regs_in(b) + _regs_in(o)
        case _:
            return []


DefUse = tuple[list[Reg | Pred], list[Reg | Pred]]  # the registers written, those read


def def_use(op: Op) -> DefUse:
    """The registers an instruction writes and reads."""
    match op:
        case Load(dst=d, addr=a):
            return [d], _regs_in(a)
        case Store(addr=a, src=s):
            return [], _regs_in(a) + _regs_in(s)
        case IAtom(dst=d, addr=a, src0=s0, src1=s1) | FAtom(dst=d, addr=a, src0=s0, src1=s1):
            return [d], _regs_in(a) + _regs_in(s0) + _regs_in(s1)
        case Alu(dst=d, srcs=ss):
            return [d], [r for s in ss for r in _regs_in(s)]
        case Compare(dst=d, a=a, b=b):
            return [d], _regs_in(a) + _regs_in(b)
        case Select(dst=d, cond=c, a=a, b=b):
            return [d], [c, *_regs_in(a), *_regs_in(b)]
        case AddrOf(dst=d):
            return [d], []
        case Goto(cond=c) | Return(cond=c):
            return [], _regs_in(c)
        case Collective(dst=d, srcs=ss):
            return [d], [r for s in ss for r in _regs_in(s)]
        case CpAsync(dst=d, src=s):
            return [], _regs_in(d) + _regs_in(s)
        case _:
            return [], []


def check_defined(
    index: int,
    body: list[Instruction],
    flow: list[DefUse],
    end_labels: list[str],
    regs: dict[str, RegInfo],
    inits: set[str],
) -> None:
    """Reject a register read that some path from the start reaches with no definition
    (`flow`: each instruction's `def_use`).

    The registers surely defined before each instruction are bit sets over the register
    keys: with thousands of registers, sets of names copied at every instruction made a
    long thread quadratic.
    """
    n = len(body)
    bit: dict[tuple[str, int | None], int] = {}

    def mask(keys: list[tuple[str, int | None]]) -> int:
        out = 0
        for k in keys:
            b = bit.get(k)
            if b is None:
                b = bit[k] = 1 << len(bit)
            out |= b
        return out

    target = {lab: ins.index for ins in body for lab in ins.labels}
    for lab in end_labels:
        target[lab] = n
    succ: list[list[int]] = []
    for ins in body:
        op = ins.op
        nxt = [ins.index + 1]
        if isinstance(op, Goto):
            nxt = [target[op.label]] if op.cond is None else [ins.index + 1, target[op.label]]
        elif isinstance(op, Return):
            nxt = [] if op.cond is None else [ins.index + 1]
        succ.append([s for s in nxt if s < n])
    entry = mask([k for name in sorted(inits) for k in _init_keys(name, regs)])
    defined = [mask([k for d in defs for k in _keys(d, regs)]) for defs, _ in flow]
    din: list[int | None] = [None] * n
    if n:
        din[0] = entry
    work = [0] if n else []
    while work:
        i = work.pop()
        cur = din[i]
        assert cur is not None
        out = cur | defined[i]
        for s in succ[i]:
            prev = din[s]
            new = out if prev is None else prev & out
            if prev is None or new != prev:
                din[s] = new
                work.append(s)
    for ins in body:
        have = din[ins.index]
        if have is None:
            continue  # unreachable
        _, uses = flow[ins.index]
        for r in uses:
            for k in _keys(r, regs):
                if not have & bit.get(k, 0):
                    shown = f"%{k[0]}" + (f".{'xyzw'[k[1]]}" if k[1] is not None else "")
                    fail(
                        r.span or ins.span,
                        f"register {shown} of P{index} may be read before it is written "
                        "(give it an init such as "
                        f"'P{index}:{shown} = 0;' or write it first)",
                        "uninit",
                    )


def _init_keys(name: str, regs: dict[str, RegInfo]) -> list[tuple[str, int | None]]:
    """The keys an init of register `name` defines: every element of a vector."""
    info = regs.get(name)
    if info is not None and info.vec > 1:
        return [(name, i) for i in range(info.vec)]
    return [(name, None)]
