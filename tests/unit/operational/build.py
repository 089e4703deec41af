"""Hand-built litmus tests for the machine's unit tests (independent of the frontend)."""

from __future__ import annotations

from pisa_mm.errors import Span
from pisa_mm.events.kinds import Order, Scope, Space
from pisa_mm.litmus.program import (
    Address,
    AddrSpace,
    And,
    Atom,
    Barrier,
    Condition,
    Fence,
    IAtom,
    IAtomOp,
    Imm,
    Instruction,
    LitmusTest,
    Load,
    MemObs,
    Observable,
    Op,
    Prop,
    Quantifier,
    Reg,
    RegObs,
    Store,
    Thread,
    ThreadPlacement,
    VarDecl,
    VarRef,
)

SPAN = Span("t.litmus", 1, 1)
BOTH = frozenset({Space.GLOBAL, Space.SHARED})


def ld(
    var: str,
    reg: str,
    order: Order | None = None,
    scope: Scope | None = None,
    space: AddrSpace = AddrSpace.GLOBAL,
) -> Op:
    return Load(Reg(reg), Address(VarRef(var), None), space, order, scope, 32, 1)


def st(
    var: str,
    value: int,
    order: Order | None = None,
    scope: Scope | None = None,
    space: AddrSpace = AddrSpace.GLOBAL,
) -> Op:
    return Store(Address(VarRef(var), None), Imm(value), space, order, scope, 32, 1)


def add(
    var: str,
    reg: str,
    value: int,
    order: Order = Order.RLX,
    scope: Scope = Scope.SYS,
    op: IAtomOp = IAtomOp.ADD,
    cmp: int | None = None,
) -> Op:
    src0 = Imm(value if cmp is None else cmp)
    src1 = None if cmp is None else Imm(value)
    return IAtom(
        op, Reg(reg), Address(VarRef(var), None), src0, src1, AddrSpace.GLOBAL, order, scope, 32
    )


def fence(order: Order, scope: Scope = Scope.GPU) -> Op:
    return Fence(BOTH, order, scope)


def barrier() -> Op:
    return Barrier()


def thread(
    index: int,
    ops: list[Op],
    wg: int | None = None,
    sg: int | None = None,
    host: bool = False,
    labels: dict[int, str] | None = None,
) -> Thread:
    names = labels or {}
    body = tuple(
        Instruction(
            op,
            i,
            Span("t.litmus", 10 * (index + 1) + i, 3),
            type(op).__name__.lower(),
            (names[i],) if i in names else (),
        )
        for i, op in enumerate(ops)
    )
    wg = index if wg is None and not host else wg
    return Thread(index, ThreadPlacement(host, None if host else 0, wg, sg, SPAN), (), body, SPAN)


def eq(obs: Observable, value: int) -> Atom:
    return Atom(obs, value, False, SPAN)


def r(thread: int, reg: str) -> RegObs:
    return RegObs(thread, reg)


def m(var: str) -> MemObs:
    return MemObs(var)


def litmus(
    threads: list[Thread],
    *atoms: Prop,
    variables: tuple[str, ...] = ("x", "y"),
    shared: tuple[str, ...] = (),
    quant: Quantifier = Quantifier.EXISTS,
) -> LitmusTest:
    decls = tuple(VarDecl(v, Space.GLOBAL, 32, 1, (0,), SPAN) for v in variables) + tuple(
        VarDecl(v, Space.SHARED, 32, 1, (0,), SPAN) for v in shared
    )
    prop: Prop = And(tuple(atoms))
    return LitmusTest(
        "T", None, (), decls, (), tuple(threads), (), Condition(quant, prop, SPAN), "t.litmus", ""
    )
