"""Per-instruction transfer functions over value expressions, shared by builder and machine.

Every function takes a register environment mapping register keys to `Expr`s and returns
`Expr`s. The event-structure builder passes symbolic values (`ReadValue`, `Contribution`);
a concrete machine passes `Const`s, and then every result folds to a `Const` because `mk`
evaluates operators whose operands are all constants.
"""

from __future__ import annotations

from collections.abc import Callable, Mapping, Sequence

from pisa_mm.errors import PisaMMError, Span
from pisa_mm.events.kinds import Order
from pisa_mm.events.layout import Layout
from pisa_mm.litmus.program import (
    Address,
    Alu,
    AluOp,
    CmpOp,
    Collective,
    CollectiveKind,
    Compare,
    FAtom,
    FAtomOp,
    IAtom,
    IAtomOp,
    Imm,
    Pred,
    Reg,
    Select,
    VarRef,
)
from pisa_mm.values.eval import apply_op, check_apply
from pisa_mm.values.expr import (
    BOOL,
    FALSE,
    TRUE,
    Apply,
    Const,
    Contribution,
    Expr,
    FpFormat,
    Op,
    ReadValue,
)
from pisa_mm.values.fold import same_expr

ADDR_WIDTH = 64  # addresses are 64-bit values (PISA 3.3)

Regs = Mapping[str, Expr]

# ---------------------------------------------------------------- constant folding


def _mask(width: int) -> int:
    return (1 << width) - 1


def mk(op: Op, args: Sequence[Expr], width: int, fmt: FpFormat | None = None) -> Expr:
    """Build `op(args)`, folding constants and trivial boolean identities.

    Folding may drop a read from the expression (`ite(c, a, a)` is `a`); dependencies do not
    come from these expressions but from the syntactic sources the builder tracks
    (events/deps.py), so simplifying here is safe for them.
    """
    tup = tuple(args)
    node = Apply(op, tup, width, fmt)
    check_apply(node)  # a malformed node is a bug here, not bad input
    if all(isinstance(x, Const) for x in tup):
        values = [x.value for x in tup if isinstance(x, Const)]
        arg_width = tup[0].width if tup else width
        return Const(apply_op(op, values, width, arg_width, fmt), width)
    if op is Op.ITE and isinstance(tup[0], Const):
        return tup[1] if tup[0].value else tup[2]
    if op is Op.ITE and same_expr(tup[1], tup[2]):
        return tup[1]
    if op is Op.BAND:
        flat: list[Expr] = []
        for x in tup:
            if isinstance(x, Apply) and x.op is Op.BAND:
                flat.extend(x.args)
            elif not any(same_expr(x, y) for y in flat):
                flat.append(x)
        rest = tuple(x for x in flat if x != TRUE)
        if FALSE in rest:
            return FALSE
        if not rest:
            return TRUE
        if len(rest) == 1:
            return rest[0]
        tup = rest
    if op is Op.BOR:
        rest = tuple(x for x in tup if x != FALSE)
        if TRUE in rest:
            return TRUE
        if not rest:
            return FALSE
        if len(rest) == 1:
            return rest[0]
        tup = rest
    if op is Op.BNOT and isinstance(tup[0], Apply) and tup[0].op is Op.BNOT:
        return tup[0].args[0]
    return node if tup is node.args else Apply(op, tup, width, fmt)


def conj(*args: Expr) -> Expr:
    return mk(Op.BAND, args, BOOL)


def neg(arg: Expr) -> Expr:
    return mk(Op.BNOT, (arg,), BOOL)


def coerce(expr: Expr, width: int, *, signed: bool = False) -> Expr:
    """Zero- (or sign-) extend or truncate a bit-vector to `width`; BOOL becomes 0/1."""
    if expr.width == width:
        return expr
    if expr.width == BOOL:
        return mk(Op.ITE, (expr, Const(1, width), Const(0, width)), width)
    if width == BOOL:
        return mk(Op.NE, (expr, Const(0, expr.width)), BOOL)
    if expr.width > width:
        return mk(Op.TRUNC, (expr,), width)
    return mk(Op.SEXT if signed else Op.ZEXT, (expr,), width)


def free_reads(expr: Expr) -> frozenset[int]:
    """Ids of the read events whose values `expr` mentions."""
    out: set[int] = set()
    stack = [expr]
    while stack:
        e = stack.pop()
        match e:
            case Apply(args=args):
                stack.extend(args)
            case ReadValue(event=event):
                out.add(event)
            case _:
                pass
    return frozenset(out)


def contributions(expr: Expr) -> frozenset[tuple[int, int]]:
    """The (thread, collective index) pairs whose contributions `expr` mentions."""
    out: set[tuple[int, int]] = set()
    stack = [expr]
    while stack:
        e = stack.pop()
        if isinstance(e, Apply):
            stack.extend(e.args)
        elif isinstance(e, Contribution):
            out.add((e.thread, e.index))
    return frozenset(out)


# ---------------------------------------------------------------- operands and registers


def reg_key(reg: Reg) -> str:
    """The environment key of a register or vector element (`r0`, `v.x`, `v.5`)."""
    if reg.elem is None:
        return reg.name
    return f"{reg.name}.{'xyzw'[reg.elem] if reg.elem < 4 else reg.elem}"


def elem_key(reg: Reg, i: int) -> str:
    """The key of element `i` of the vector register `reg` (for `.vN` loads and stores)."""
    return reg_key(Reg(reg.name, i, reg.span))


def read_reg(regs: Regs, key: str, width: int) -> Expr:
    """A register's value at `width` bits; a never-written register reads as 0."""
    value = regs.get(key)
    if value is None:
        return Const(0, width)
    return coerce(value, width)


def pred_value(regs: Regs, pred: Pred) -> Expr:
    value = regs.get(pred.name, FALSE)
    value = coerce(value, BOOL)
    return neg(value) if pred.negated else value


def operand(
    regs: Regs, op: Reg | Imm | VarRef | Pred, width: int, layout: Layout, span: Span | None
) -> Expr:
    """The value of a source operand at `width` bits (`@x` is the variable's address)."""
    match op:
        case Reg():
            return read_reg(regs, reg_key(op), width)
        case Imm():
            return Const(op.value & _mask(width), width)
        case VarRef():
            return Const(var_address(layout, op, span) & _mask(width), width)
        case Pred():
            return coerce(pred_value(regs, op), width)


def var_address(layout: Layout, ref: VarRef, span: Span | None) -> int:
    var = layout.variable(ref.name)
    if var is None:
        raise PisaMMError.at(ref.span or span, f"unknown memory variable @{ref.name}", "undeclared")
    return var.base


def address(regs: Regs, addr: Address, layout: Layout) -> Expr:
    """The 64-bit byte address of `[base + offset]`; register offsets are signed (PISA 3.3)."""
    match addr.base:
        case Reg():
            base = read_reg(regs, reg_key(addr.base), ADDR_WIDTH)
        case VarRef():
            base = Const(var_address(layout, addr.base, addr.span), ADDR_WIDTH)
        case Imm():
            base = Const(addr.base.value & _mask(ADDR_WIDTH), ADDR_WIDTH)
    match addr.offset:
        case None:
            return base
        case Reg():
            raw = regs.get(reg_key(addr.offset), Const(0, ADDR_WIDTH))
            off = coerce(raw, ADDR_WIDTH, signed=True)
        case Imm():
            off = Const(addr.offset.value & _mask(ADDR_WIDTH), ADDR_WIDTH)
    return mk(Op.ADD, (base, off), ADDR_WIDTH)


# ---------------------------------------------------------------- register data flow

_ALU = {
    AluOp.ADD: Op.ADD,
    AluOp.SUB: Op.SUB,
    AluOp.SMUL: Op.MUL,
    AluOp.UMUL: Op.MUL,
    AluOp.AND: Op.AND,
    AluOp.OR: Op.OR,
    AluOp.XOR: Op.XOR,
    AluOp.NOT: Op.NOT,
    AluOp.SHL: Op.SHL,
    AluOp.SHR: Op.LSHR,
    AluOp.ASR: Op.ASHR,
    AluOp.SMIN: Op.SMIN,
    AluOp.SMAX: Op.SMAX,
    AluOp.UMIN: Op.UMIN,
    AluOp.UMAX: Op.UMAX,
    AluOp.NEG: Op.NEG,
}


def alu(instr: Alu, regs: Regs, layout: Layout, span: Span | None = None) -> Expr:
    """The value `instr` writes to its destination register."""
    srcs = [operand(regs, s, instr.width, layout, span) for s in instr.srcs]
    if instr.op is AluOp.MOV:
        return srcs[0]
    return mk(_ALU[instr.op], srcs, instr.width)


_CMP_SIGNED = {
    CmpOp.EQ: Op.EQ,
    CmpOp.NE: Op.NE,
    CmpOp.LT: Op.SLT,
    CmpOp.LE: Op.SLE,
    CmpOp.GT: Op.SGT,
    CmpOp.GE: Op.SGE,
}
_CMP_UNSIGNED = {
    CmpOp.EQ: Op.EQ,
    CmpOp.NE: Op.NE,
    CmpOp.LT: Op.ULT,
    CmpOp.LE: Op.ULE,
    CmpOp.GT: Op.UGT,
    CmpOp.GE: Op.UGE,
}


def compare(instr: Compare, regs: Regs, layout: Layout, span: Span | None = None) -> Expr:
    """The BOOL `scmp`/`ucmp` writes to its predicate."""
    a = operand(regs, instr.a, instr.width, layout, span)
    b = operand(regs, instr.b, instr.width, layout, span)
    table = _CMP_SIGNED if instr.signed else _CMP_UNSIGNED
    return mk(table[instr.op], (a, b), BOOL)


def select(instr: Select, regs: Regs, layout: Layout, span: Span | None = None) -> Expr:
    a = operand(regs, instr.a, instr.width, layout, span)
    b = operand(regs, instr.b, instr.width, layout, span)
    return mk(Op.ITE, (pred_value(regs, instr.cond), a, b), instr.width)


# ---------------------------------------------------------------- atomics


def rmw_orders(order: Order) -> tuple[Order, Order]:
    """The orders of an RMW's read and write: the read takes the acquire part, the write the
    release part (model-decisions "Events"); a failed cas keeps just the read's order."""
    match order:
        case Order.ACQ_REL:
            return Order.ACQ, Order.REL
        case Order.ACQ:
            return Order.ACQ, Order.RLX
        case Order.REL:
            return Order.RLX, Order.REL
        case Order.SC:
            return Order.SC, Order.SC
        case _:
            return order, order


def atom_width(instr: IAtom | FAtom) -> int:
    return instr.width if isinstance(instr, IAtom) else instr.fmt.width


def _src(regs: Regs, src: Reg | Imm | None, width: int, layout: Layout, span: Span | None) -> Expr:
    return Const(0, width) if src is None else operand(regs, src, width, layout, span)


def rmw_write(
    instr: IAtom | FAtom, old: Expr, regs: Regs, layout: Layout, span: Span | None = None
) -> tuple[Expr, Expr]:
    """(condition under which the RMW writes, value written) given the `old` value read.

    The condition is TRUE except for `cas`, which writes only when `old` equals src0.
    """
    w = atom_width(instr)
    a = _src(regs, instr.src0, w, layout, span)
    b = _src(regs, instr.src1, w, layout, span)
    if isinstance(instr, FAtom):
        fmt = instr.fmt
        match instr.op:
            case FAtomOp.CAS:
                return mk(Op.FEQ, (old, a), BOOL, fmt), b
            case FAtomOp.ADD:
                return TRUE, mk(Op.FADD, (old, a), w, fmt)
            case FAtomOp.SUB:
                return TRUE, mk(Op.FSUB, (old, a), w, fmt)
            case FAtomOp.MIN:
                return TRUE, mk(Op.FMIN, (old, a), w, fmt)
            case FAtomOp.MAX:
                return TRUE, mk(Op.FMAX, (old, a), w, fmt)
    one = Const(1, w)
    match instr.op:
        case IAtomOp.CAS:
            return mk(Op.EQ, (old, a), BOOL), b
        case IAtomOp.XCHG:
            return TRUE, a
        case IAtomOp.INC:
            return TRUE, mk(Op.ADD, (old, one), w)
        case IAtomOp.DEC:
            return TRUE, mk(Op.SUB, (old, one), w)
        case _:
            return TRUE, mk(_IATOM[instr.op], (old, a), w)


_IATOM = {
    IAtomOp.ADD: Op.ADD,
    IAtomOp.SUB: Op.SUB,
    IAtomOp.SMIN: Op.SMIN,
    IAtomOp.SMAX: Op.SMAX,
    IAtomOp.UMIN: Op.UMIN,
    IAtomOp.UMAX: Op.UMAX,
    IAtomOp.AND: Op.AND,
    IAtomOp.OR: Op.OR,
    IAtomOp.XOR: Op.XOR,
    IAtomOp.INCWRAP: Op.INCWRAP,
    IAtomOp.DECWRAP: Op.DECWRAP,
}


# ---------------------------------------------------------------- sub-group collectives

SUBGROUP_LANES = 32  # lane masks are 32-bit (PISA 7)


def collective_contribution(
    instr: Collective, regs: Regs, layout: Layout, span: Span | None = None
) -> Expr:
    """The value a work-item contributes to a collective: its src0."""
    return operand(regs, instr.srcs[0], instr.width, layout, span)


def _bit(mask: Expr, lane: int) -> Expr:
    shifted = mk(Op.LSHR, (mask, Const(lane, 32)), 32)
    return mk(Op.NE, (mk(Op.AND, (shifted, Const(1, 32)), 32), Const(0, 32)), BOOL)


_IRED = {
    "sum": Op.ADD,
    "smin": Op.SMIN,
    "smax": Op.SMAX,
    "umin": Op.UMIN,
    "umax": Op.UMAX,
    "and": Op.AND,
    "or": Op.OR,
    "xor": Op.XOR,
    "absmax": Op.UMAX,
}


def _abs(x: Expr, w: int) -> Expr:
    negative = mk(Op.SLT, (x, Const(0, w)), BOOL)
    return mk(Op.ITE, (negative, mk(Op.NEG, (x,), w), x), w)


def collective_result(
    instr: Collective,
    regs: Regs,
    layout: Layout,
    lane: int,
    lanes: Sequence[int],
    contribution: Callable[[int], Expr],
    span: Span | None = None,
) -> Expr:
    """The value the collective writes to the destination of the work-item in `lane`.

    `lanes` are the active lanes of the sub-group (%activemask); `contribution(j)` is the
    value lane j contributes (for `lane` itself, callers pass its own contribution). Lanes
    outside the participating mask keep their destination unchanged (PISA 7).
    """
    if not isinstance(instr.dst, Reg):
        raise PisaMMError.at(span, f"{instr.kind.value} with a predicate destination", "operand")
    w = instr.width
    old = read_reg(regs, reg_key(instr.dst), w)
    active = sum(1 << j for j in lanes)
    if instr.kind is CollectiveKind.REDFIRSTIDX:
        mask = mk(Op.AND, (operand(regs, instr.srcs[0], 32, layout, span), Const(active, 32)), 32)
        # an empty mask has no first lane: the spec's loop would not end; we return 32
        result: Expr = Const(SUBGROUP_LANES, w)
        for j in reversed(range(SUBGROUP_LANES)):
            result = mk(Op.ITE, (_bit(mask, j), Const(j, w), result), w)
        return result
    mask_src = instr.srcs[2] if instr.kind is CollectiveKind.SHFL else instr.srcs[1]
    mask = mk(Op.AND, (operand(regs, mask_src, 32, layout, span), Const(active, 32)), 32)
    own = contribution(lane)
    if instr.kind is CollectiveKind.IRED:
        base_op = instr.op.split(".")[0]
        if base_op not in _IRED:
            raise PisaMMError.at(span, f"unsupported ired operation .{instr.op}", "unsupported")
        # fold over the participating lanes only: `seen` says some earlier lane took part,
        # so a non-participant is skipped rather than given an identity element
        acc: Expr = Const(0, w)
        seen: Expr = FALSE
        for j in sorted(lanes):
            v = contribution(j)
            if base_op == "absmax":
                v = _abs(v, w)
            step = mk(Op.ITE, (seen, mk(_IRED[base_op], (acc, v), w), v), w)
            acc = mk(Op.ITE, (_bit(mask, j), step, acc), w)
            seen = mk(Op.BOR, (seen, _bit(mask, j)), BOOL)
        return mk(Op.ITE, (_bit(mask, lane), acc, old), w)
    return _shfl(instr, regs, layout, lane, lanes, contribution, mask, own, old, span)


def _shfl(
    instr: Collective,
    regs: Regs,
    layout: Layout,
    lane: int,
    lanes: Sequence[int],
    contribution: Callable[[int], Expr],
    mask: Expr,
    own: Expr,
    old: Expr,
    span: Span | None,
) -> Expr:
    w = instr.width
    parts = instr.op.split(".")
    mode = parts[0]
    sg = "sg" in parts[1:]
    if mode not in ("up", "dn", "xor", "idx"):
        raise PisaMMError.at(span, f"unsupported shfl operation .{instr.op}", "unsupported")
    src1 = operand(regs, instr.srcs[1], 32, layout, span)
    c5 = Const(0x1F, 32)
    offset = mk(Op.AND, (src1, c5), 32)
    if sg:
        cval = mk(Op.AND, (mk(Op.LSHR, (src1, Const(8, 32)), 32), c5), 32)
        segmask = mk(Op.AND, (mk(Op.LSHR, (src1, Const(16, 32)), 32), c5), 32)
    else:
        cval = Const(0 if mode == "up" else 0x1F, 32)
        segmask = Const(0, 32)
    me = Const(lane, 32)
    not_seg = mk(Op.NOT, (segmask,), 32)
    clamp = mk(Op.OR, (mk(Op.AND, (me, segmask), 32), mk(Op.AND, (cval, not_seg), 32)), 32)
    min_lane = mk(Op.AND, (me, segmask), 32)
    match mode:
        case "up":
            src_lane = mk(Op.SUB, (me, offset), 32)
            in_bounds = mk(Op.SGE, (src_lane, clamp), BOOL)
        case "dn":
            src_lane = mk(Op.ADD, (me, offset), 32)
            in_bounds = mk(Op.SLE, (src_lane, clamp), BOOL)
        case "xor":
            src_lane = mk(Op.XOR, (me, offset), 32)
            in_bounds = mk(Op.SLE, (src_lane, clamp), BOOL)
        case _:
            src_lane = mk(Op.OR, (min_lane, mk(Op.AND, (offset, not_seg), 32)), 32)
            in_bounds = mk(Op.SLE, (src_lane, clamp), BOOL)
    result = own
    for j in sorted(lanes, reverse=True):
        take = conj(mk(Op.EQ, (src_lane, Const(j, 32)), BOOL), in_bounds, _bit(mask, j))
        result = mk(Op.ITE, (take, contribution(j), result), w)
    return mk(Op.ITE, (_bit(mask, lane), result, old), w)
