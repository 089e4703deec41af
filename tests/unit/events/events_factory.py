"""Hand-built LitmusTest objects for the event-builder tests (independent of the parser)."""

from __future__ import annotations

from pisa_mm.errors import Span
from pisa_mm.events.kinds import Space
from pisa_mm.litmus.program import (
    Address,
    BoolConst,
    Condition,
    Imm,
    Instruction,
    LitmusTest,
    Op,
    Quantifier,
    Reg,
    RegInit,
    Thread,
    ThreadPlacement,
    VarDecl,
    VarRef,
)

FILE = "t.litmus"


def span(line: int, col: int = 3) -> Span:
    return Span(FILE, line, col)


def at(name: str, offset: int | Reg | None = None) -> Address:
    off = Imm(offset) if isinstance(offset, int) else offset
    return Address(VarRef(name), off)


def via(reg: str, offset: int | None = None) -> Address:
    return Address(Reg(reg), None if offset is None else Imm(offset))


def var(name: str, space: Space = Space.GLOBAL, width: int = 32, count: int = 1,
        init: tuple[int, ...] = (0,), thread: int | None = None) -> VarDecl:  # fmt: skip
    return VarDecl(name, space, width, count, init, span(1), thread)


def thread(
    index: int,
    ops: list[Op] | list[tuple[Op, tuple[str, ...]]],
    *,
    wg: int | None = None,
    sg: int | None = None,
    gpu: int | None = 0,
    host: bool = False,
    regs: tuple[tuple[str, int], ...] = (),
    end_labels: tuple[str, ...] = (),
    vectors: tuple[tuple[str, int], ...] = (),
) -> Thread:
    body = []
    for i, item in enumerate(ops):
        op, labels = item if isinstance(item, tuple) else (item, ())
        line = 10 * (index + 1) + i
        body.append(Instruction(op, i, span(line), f"{type(op).__name__.lower()} #{i}", labels))
    place = ThreadPlacement(
        host, None if host else gpu, None if host else (index if wg is None else wg),
        None if host else (0 if sg is None else sg), span(10 * (index + 1) - 1),
    )  # fmt: skip
    return Thread(index, place, regs, tuple(body), span(10 * (index + 1) - 1),
                  vectors, end_labels)  # fmt: skip


def make_test(
    threads: list[Thread],
    variables: list[VarDecl] | None = None,
    inits: list[RegInit] | None = None,
) -> LitmusTest:
    return LitmusTest(
        name="T",
        description=None,
        metadata=(),
        variables=tuple(variables if variables is not None else [var("x"), var("y")]),
        reg_inits=tuple(inits or ()),
        threads=tuple(threads),
        locations=(),
        condition=Condition(Quantifier.EXISTS, BoolConst(True), span(99)),
        path=FILE,
        source="",
    )


def reg_init(t: int, reg: str, value: int | VarRef) -> RegInit:
    return RegInit(t, Reg(reg), value, span(2))
