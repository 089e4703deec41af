"""Static spin-loop detection on a litmus program: loops that only load and retry."""

from __future__ import annotations

from pisa_mm.litmus.program import (
    Alu,
    Compare,
    Goto,
    IAtom,
    IAtomOp,
    Instruction,
    LitmusTest,
    Load,
    Pred,
    Reg,
    Select,
    Thread,
)
from pisa_mm.records import record

__all__ = ["SpinLoop", "spin_loops"]


@record
class SpinLoop:
    """A back-edge `goto` of work-item `thread` whose body [`head`, `edge`] (instruction
    indices) only loads, updates registers and retries cas, carries no register from one
    iteration to the next, and whose exit depends on a loaded value; `line` is the
    back-edge's PISA source line."""

    thread: int
    head: int
    edge: int
    line: int
    text: str


def _quiet(ins: Instruction) -> bool:
    """No side effect a spinning work-item could make visible: a load, a register update,
    or a cas (a failed cas leaves memory unchanged, PISA 8.2; a successful one exits)."""
    op = ins.op
    if isinstance(op, Load | Alu | Compare | Select):
        return True
    return isinstance(op, IAtom) and op.op is IAtomOp.CAS


def _names(*operands: object) -> set[str]:
    return {o.name for o in operands if isinstance(o, Reg | Pred)}


def _sources(op: object) -> set[str]:
    """The registers an instruction of a loop body reads."""
    if isinstance(op, Alu):
        return _names(*op.srcs)
    if isinstance(op, Compare):
        return _names(op.a, op.b)
    if isinstance(op, Select):
        return _names(op.cond, op.a, op.b)
    if isinstance(op, Load):
        return _names(op.addr.base, op.addr.offset)
    if isinstance(op, IAtom):
        return _names(op.addr.base, op.addr.offset, op.src0, op.src1)
    return set()


def _memoryless(body: tuple[Instruction, ...]) -> bool:
    """No iteration reads a register that an earlier iteration wrote: each iteration is the
    same function of the values it loads, so dropping iterations that read stale values
    changes nothing after the loop (the argument of docs/progress.md, "Soundness")."""
    written: set[str] = set()
    dsts = {
        ins.op.dst.name for ins in body if isinstance(ins.op, Load | IAtom | Alu | Compare | Select)
    }
    for ins in body:
        if (_sources(ins.op) & dsts) - written:
            return False
        if isinstance(ins.op, Load | IAtom | Alu | Compare | Select):
            written.add(ins.op.dst.name)
    return True


def _loaded(body: tuple[Instruction, ...]) -> set[str]:
    """Registers of one iteration whose value depends on a value loaded in it."""
    out: set[str] = set()
    for ins in body:
        op = ins.op
        if isinstance(op, Load | IAtom) or (
            isinstance(op, Alu | Compare | Select) and _sources(op) & out
        ):
            out.add(op.dst.name)
    return out


def _loop(thread: Thread, ins: Instruction) -> SpinLoop | None:
    op = ins.op
    if not isinstance(op, Goto) or op.cond is None:
        return None
    head = thread.label_index(op.label)
    if head > ins.index:
        return None
    body = thread.body[head : ins.index]
    if not body or not all(_quiet(i) for i in body):
        return None
    if op.cond.name not in _loaded(body):  # it must exit on a loaded value
        return None
    if not _memoryless(body):  # e.g. a counter of attempts: not a plain spin
        return None
    return SpinLoop(thread.index, head, ins.index, ins.span.line, ins.text)


def spin_loops(test: LitmusTest) -> tuple[SpinLoop, ...]:
    """Every spin loop of the test, in thread then text order."""
    out = []
    for thread in test.threads:
        for ins in thread.body:
            loop = _loop(thread, ins)
            if loop is not None:
                out.append(loop)
    return tuple(out)
