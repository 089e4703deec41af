"""Raw syntax tree to LitmusTest: decode every instruction and enforce PISA's restrictions."""

from __future__ import annotations

import math
from collections.abc import Iterable, Sequence
from dataclasses import dataclass, field
from typing import NoReturn

from pisa_mm.errors import Diagnostic, PisaMMError, Severity, Span
from pisa_mm.events.kinds import Order, Scope, Space
from pisa_mm.litmus import isa
from pisa_mm.litmus import syntax as S
from pisa_mm.litmus.program import (
    Address,
    AddrOf,
    AddrSpace,
    Alu,
    AluOp,
    And,
    Atom,
    Barrier,
    BoolConst,
    Collective,
    CollectiveKind,
    CommitGroup,
    Compare,
    Condition,
    CpAsync,
    FAtom,
    Fence,
    Goto,
    IAtom,
    Imm,
    Implies,
    Instruction,
    LitmusTest,
    Load,
    MemObs,
    Not,
    Observable,
    Op,
    Or,
    Pred,
    Prop,
    Quantifier,
    Reg,
    RegInit,
    RegObs,
    Return,
    Select,
    Store,
    Thread,
    ThreadPlacement,
    VarDecl,
    VarRef,
    WaitGroup,
)
from pisa_mm.values.expr import FpFormat
from pisa_mm.values.fp import float_literal_to_bits

_SWIZZLE = {"x": 0, "y": 1, "z": 2, "w": 3}
_SPACE_OF = {
    AddrSpace.GLOBAL: Space.GLOBAL,
    AddrSpace.SHARED: Space.SHARED,
    AddrSpace.PRIVATE: Space.PRIVATE,
    AddrSpace.CONST: Space.CONST,
}


def _fail(span: Span | None, message: str, code: str) -> NoReturn:
    raise PisaMMError.at(span, message, code)


# ---------------------------------------------------------------- immediates (PISA 3.2)


def int_bits(raw: S.RawInt, width: int, what: str = "operand") -> int:
    """An integer literal as a `width`-bit pattern: decimal sign-extends, hex zero-extends."""
    value = raw.value
    if raw.is_hex and value >= 0:
        ok = value < (1 << width)
    else:
        ok = -(1 << (width - 1)) <= value < (1 << width)
    if not ok:
        _fail(raw.span, f"immediate {raw.text} does not fit the {width}-bit {what}", "immediate")
    return value & ((1 << width) - 1)


def _fp_imm(raw: S.RawInt | S.RawFloat, fmt: FpFormat) -> Imm:
    """A float operand of fatom: a decimal converted to `fmt`, or an IEEE pattern of its size."""
    name = fmt.value[0]
    if isinstance(raw, S.RawInt) and raw.is_hex:
        digits = raw.text.lstrip("+-")[2:]
        if raw.text.startswith("-") or len(digits) != fmt.width // 4:
            _fail(
                raw.span,
                f"hexadecimal float {raw.text} must have exactly {fmt.width // 4} hex digits "
                f"for .{name} (PISA 3.2: no conversion of IEEE patterns)",
                "immediate",
            )
        return Imm(int(digits, 16), raw.span)
    try:
        value = float(raw.text)
    except ValueError:  # the grammar only lets numbers through; keep the message anyway
        _fail(raw.span, f"bad number {raw.text}", "immediate")
    if math.isinf(value):
        _fail(raw.span, f"float literal {raw.text} is out of range", "immediate")
    bits = float_literal_to_bits(raw.text, fmt, raw.span)
    if bits & ~(1 << (fmt.width - 1)) == ((1 << fmt.ebits) - 1) << (fmt.sbits - 1):
        _fail(raw.span, f"float literal {raw.text} overflows .{name}", "immediate")
    return Imm(bits, raw.span)


# ---------------------------------------------------------------- qualifiers


@dataclass(frozen=True, slots=True)
class _Q:
    """One dotted qualifier of a mnemonic, with its own span (for carets under it)."""

    text: str
    span: Span


def _split_opcode(op: S.Name) -> tuple[str, list[_Q]]:
    parts = op.text.split(".")
    col = op.span.col + len(parts[0])
    quals = []
    for p in parts[1:]:
        quals.append(_Q(p, Span(op.span.file, op.span.line, col, op.span.line, col + 1 + len(p))))
        col += 1 + len(p)
    return parts[0], quals


@dataclass
class _MemQ:
    space: _Q | None = None
    order: _Q | None = None
    scope: _Q | None = None
    vec: _Q | None = None
    type: _Q | None = None
    op: _Q | None = None
    cc: list[_Q] = field(default_factory=list)

    @property
    def cc_text(self) -> str:
        return ".".join(q.text for q in self.cc)

    @property
    def cc_span(self) -> Span:
        first, last = self.cc[0].span, self.cc[-1].span
        return Span(first.file, first.line, first.col, last.end_line, last.end_col)


_SLOT_NAMES = {
    "space": "address space",
    "order": "memory order",
    "scope": "memory scope",
    "vec": "vector",
    "type": "type",
    "op": "operation",
}


def _classify(
    mnemonic: str, quals: Sequence[_Q], ops: Iterable[str] = (), fp: bool = False
) -> _MemQ:
    """Sort the qualifiers of a memory instruction into their categories (any order)."""
    m = _MemQ()
    opset = set(ops)
    for q in quals:
        t = q.text
        if t in isa.SPACES:
            slot = "space"
        elif t == "weak" or t in isa.ORDERS:
            slot = "order"
        elif t in isa.SCOPES:
            slot = "scope"
        elif t in isa.CC_PARTS:
            m.cc.append(q)
            continue
        elif t in isa.VECS and mnemonic in ("ld", "st"):
            slot = "vec"
        elif t in opset:
            slot = "op"
        elif (fp and t in isa.FTYPES) or (not fp and t in isa.WIDTHS):
            slot = "type"
        elif not fp and t in isa.FTYPES and mnemonic != "fence":
            _fail(q.span, f"{mnemonic} takes an integer type such as .32b, not .{t}", "type")
        elif fp and t in isa.WIDTHS:
            _fail(q.span, f"fatom takes a float type (.hf, .bf, .f, .df), not .{t}", "type")
        else:
            _fail(q.span, f"unknown qualifier '.{t}' for {mnemonic}", "qualifier")
        prev: _Q | None = getattr(m, slot)
        if prev is not None:
            _fail(
                q.span,
                f"second {_SLOT_NAMES[slot]} qualifier '.{t}' (already '.{prev.text}')",
                "qualifier",
            )
        setattr(m, slot, q)
    return m


def _only(mnemonic: str, m: _MemQ, allowed: set[str]) -> None:
    """Reject categories `mnemonic` has no slot for (e.g. a vector qualifier on iatom)."""
    for slot in ("space", "order", "scope", "vec", "type", "op"):
        q = getattr(m, slot)
        if q is not None and slot not in allowed:
            _fail(q.span, f"{mnemonic} takes no {_SLOT_NAMES[slot]} qualifier", "qualifier")
    if m.cc and "cc" not in allowed:
        _fail(m.cc_span, f"{mnemonic} takes no cache-control qualifier", "qualifier")


# ---------------------------------------------------------------- per-thread decoding


@dataclass(frozen=True, slots=True)
class _Use:
    """A register mention: `width` None means "an address register, 32 or 64 bits"."""

    name: str
    elem: int | None
    pred: bool
    width: int | None
    vec: int  # > 1: the whole vector register
    write: bool
    span: Span


@dataclass
class _RegInfo:
    pred: bool
    width: int
    vec: int
    declared: bool
    span: Span


@dataclass
class _Ctx:
    """What every thread's decoding needs to know about the test."""

    path: str
    source: str
    strict: bool
    variables: dict[str, VarDecl]
    warnings: list[str]

    def warn(self, span: Span, message: str, code: str) -> None:
        if self.strict:
            _fail(span, message + " (an error with --strict)", code)
        diag = Diagnostic(Severity.WARNING, message, span, code)
        self.warnings.append(diag.render(self.source))


class _ThreadDecoder:
    def __init__(self, ctx: _Ctx, index: int, host: bool, raw: S.RawThread) -> None:
        self.ctx = ctx
        self.index = index
        self.host = host
        self.raw = raw
        self.uses: list[list[_Use]] = []
        self.cur: list[_Use] = []
        self.regs: dict[str, _RegInfo] = {}
        self.vector_names: set[str] = set()

    # ------------------------------------------------------------ operands

    def _split_reg(self, raw: S.RawReg) -> tuple[str, int | None]:
        name = raw.name
        if name in self.regs or "." not in name:
            return name, None
        base, _, sw = name.rpartition(".")
        if base in self.vector_names or (base in self.regs and self.regs[base].vec > 1):
            if sw in _SWIZZLE:
                return base, _SWIZZLE[sw]
            if sw in ("xy", "zw", "xyzw"):
                _fail(raw.span, f"multi-element swizzle '.{sw}' is not supported", "unsupported")
        return name, None

    def reg(self, raw: S.RawOperand, width: int | None, write: bool, what: str) -> Reg:
        if not isinstance(raw, S.RawReg) or raw.negated:
            _fail(_span_of(raw), f"expected a register for {what}", "operand")
        name, elem = self._split_reg(raw)
        self.cur.append(_Use(name, elem, False, width, 1, write, raw.span))
        return Reg(name, elem, raw.span)

    def vreg(self, raw: S.RawOperand, width: int, vec: int, write: bool, what: str) -> Reg:
        if not isinstance(raw, S.RawReg) or raw.negated:
            _fail(_span_of(raw), f"expected a vector register for {what}", "operand")
        name, elem = self._split_reg(raw)
        if elem is not None:
            _fail(raw.span, f"expected a whole vector register for {what}", "operand")
        self.cur.append(_Use(name, None, False, width, vec, write, raw.span))
        return Reg(name, None, raw.span)

    def pred(self, raw: S.RawOperand, write: bool, what: str) -> Pred:
        if not isinstance(raw, S.RawReg):
            _fail(_span_of(raw), f"expected a predicate register for {what}", "operand")
        if write and raw.negated:
            _fail(raw.span, "a negated predicate cannot be a destination", "operand")
        info = self.regs.get(raw.name)
        if info is not None and info.declared and not info.pred:
            _fail(
                raw.span,
                f"%{raw.name} is declared .reg, but {what} needs a predicate (.pred)",
                "width",
            )
        self.cur.append(_Use(raw.name, None, True, 1, 1, write, raw.span))
        return Pred(raw.name, raw.negated, raw.span)

    def src(self, raw: S.RawOperand, width: int, what: str) -> Reg | Imm:
        if isinstance(raw, S.RawInt):
            return Imm(int_bits(raw, width), raw.span)
        if isinstance(raw, S.RawFloat):
            _fail(raw.span, "float literals are allowed only as fatom operands", "immediate")
        return self.reg(raw, width, False, what)

    def alu_src(self, raw: S.RawOperand, width: int, what: str) -> Reg | Imm | VarRef:
        if isinstance(raw, S.RawVar):
            var = self.var(raw)
            self._address_width(var, width, raw.span)
            return var
        return self.src(raw, width, what)

    def _address_width(self, ref: VarRef, width: int, span: Span) -> None:
        decl = self.ctx.variables[ref.name]
        bits = isa.ADDRESS_BITS[decl.space]
        if bits != width:
            _fail(
                span,
                f"the address of @{ref.name} (.{decl.space.value}) is {bits}-bit, "
                f"not {width}-bit (PISA 3.3)",
                "width",
            )

    def var(self, raw: S.RawVar) -> VarRef:
        decl = self.ctx.variables.get(raw.name)
        if decl is None:
            _fail(raw.span, f"undeclared variable @{raw.name}", "undeclared")
        if decl.thread is not None and decl.thread != self.index:
            _fail(
                raw.span,
                f"@{raw.name} is .private to P{decl.thread}, not visible in P{self.index}",
                "undeclared",
            )
        if self.host and decl.space is not Space.GLOBAL:
            _fail(
                raw.span,
                f"host threads may access only .global memory; @{raw.name} is .{decl.space.value}",
                "host",
            )
        return VarRef(raw.name, raw.span)

    def address(self, raw: S.RawOperand, what: str = "the address") -> Address:
        if not isinstance(raw, S.RawAddress):
            _fail(_span_of(raw), f"expected an address operand [...] for {what}", "operand")
        base: Reg | VarRef | Imm
        match raw.base:
            case S.RawVar():
                base = self.var(raw.base)
            case S.RawReg():
                base = self.reg(raw.base, None, False, "an address")
            case S.RawInt():
                _fail(
                    raw.base.span,
                    "absolute addresses [imm] are not supported: the layout of variables is "
                    "chosen by the checker; use [@var] or a register",
                    "unsupported",
                )
        offset: Reg | Imm | None = None
        match raw.offset:
            case None:
                pass
            case S.RawInt():
                value = raw.offset.value
                if raw.negative:
                    value = -value
                if not -(1 << 63) <= value < (1 << 64):
                    _fail(raw.offset.span, f"offset {raw.offset.text} is too large", "immediate")
                offset = Imm(value & ((1 << 64) - 1), raw.offset.span)
            case S.RawReg():
                offset = self.reg(raw.offset, None, False, "an address offset")
        return Address(base, offset, raw.span)

    def nargs(self, instr: S.RawInstr, n: int, shape: str) -> None:
        if len(instr.operands) != n:
            _fail(
                instr.span,
                f"{instr.opcode.text} takes {n} operand{'s' if n != 1 else ''} ({shape}), "
                f"got {len(instr.operands)}",
                "operand",
            )

    # ------------------------------------------------------------ order and scope

    def order_scope(self, m: _MemQ, what: str, default_relaxed: bool) -> tuple[Order, Scope]:
        if m.order is None:
            assert default_relaxed
            order_text = "relaxed"
        else:
            order_text = m.order.text
        order = isa.ORDERS[order_text]
        if order is Order.RLX:
            if m.scope is not None:
                _fail(
                    m.scope.span,
                    f"a memory scope needs a non-relaxed order; {what} is relaxed "
                    "(PISA 8: .memscope only when .memorder != .relaxed)",
                    "scope",
                )
            return order, Scope.SYS
        if m.scope is None:
            assumed = Scope.SYS if self.host else Scope.GPU
            span = m.order.span if m.order is not None else self.instr_span
            self.ctx.warn(
                span,
                f"{what}.{order_text} has no memory scope: assuming "
                f".{'system' if self.host else 'gpu'} (PISA 1.2.1.2 requires one)",
                "missing-scope",
            )
            return order, assumed
        scope = isa.SCOPES[m.scope.text]
        if scope is Scope.SG:
            _fail(m.scope.span, "scope .subgroup is allowed only in fence.subgroup", "scope")
        if self.host and scope is not Scope.SYS:
            _fail(
                m.scope.span,
                f"host threads share only the .system scope, not .{m.scope.text}",
                "host",
            )
        return order, scope

    def atomic_cc(self, m: _MemQ, space: AddrSpace) -> None:
        if not m.cc:
            return
        if space is AddrSpace.SHARED:
            _fail(m.cc_span, "cache control is not allowed on .shared", "cc")
        if m.cc_text not in isa.ATOMIC_CC:
            _fail(
                m.cc_span,
                f"'.{m.cc_text}' is not an atomic cache control (.uc, .L2wb or .L3wb)",
                "cc",
            )

    def host_space(self, space: AddrSpace, q: _Q | None) -> None:
        if self.host and space not in (AddrSpace.GLOBAL, AddrSpace.GENERIC):
            span = q.span if q is not None else self.instr_span
            _fail(span, f"host threads may access only .global memory, not .{space.value}", "host")

    def no_host(self, what: str) -> None:
        if self.host:
            _fail(self.instr_span, f"host threads cannot execute {what}", "host")

    # ------------------------------------------------------------ instructions

    def decode(self, instr: S.RawInstr) -> list[Op]:
        self.instr_span = instr.span
        text = instr.opcode.text
        if text.startswith("cp.async"):
            return self.cp_async(instr)
        mnemonic, quals = _split_opcode(instr.opcode)
        if mnemonic in ("ld", "st"):
            return [self.ld_st(instr, mnemonic, quals)]
        if mnemonic == "iatom":
            return [self.iatom(instr, quals)]
        if mnemonic == "fatom":
            return [self.fatom(instr, quals)]
        if mnemonic == "fence":
            return [self.fence(instr, quals)]
        if mnemonic == "barrier":
            if [q.text for q in quals] != ["workgroup"]:
                _fail(instr.opcode.span, "the barrier is written barrier.workgroup", "qualifier")
            self.nargs(instr, 0, "none")
            self.no_host("barrier.workgroup")
            return [Barrier()]
        if mnemonic in isa.ALU:
            return [self.alu(instr, mnemonic, quals)]
        if mnemonic in ("scmp", "ucmp"):
            return [self.compare(instr, mnemonic, quals)]
        if mnemonic == "sel":
            return [self.select(instr, quals)]
        if mnemonic == "addrof":
            return [self.addrof(instr, quals)]
        if mnemonic in ("goto", "return"):
            return [self.branch(instr, mnemonic, quals)]
        if mnemonic in ("shfl", "ired", "redfirstidx"):
            self.no_host(f"sub-group collectives ({mnemonic})")
            return [self.collective(instr, mnemonic, quals)]
        if mnemonic in ("ld.param", "param"):
            _fail(instr.opcode.span, "ld.param is not supported in litmus tests", "unsupported")
        if mnemonic in isa.UNSUPPORTED:
            _fail(
                instr.opcode.span,
                f"instruction '{mnemonic}' is not supported in litmus tests",
                "unsupported",
            )
        _fail(instr.opcode.span, f"unknown instruction '{mnemonic}'", "unknown-instruction")

    def width_of(self, m: _MemQ, instr: S.RawInstr, mnemonic: str) -> int:
        if m.type is None:
            _fail(instr.opcode.span, f"{mnemonic} needs a type qualifier such as .32b", "type")
        return isa.WIDTHS[m.type.text]

    def ld_st(self, instr: S.RawInstr, mnemonic: str, quals: list[_Q]) -> Load | Store:
        m = _classify(mnemonic, quals)
        _only(mnemonic, m, {"space", "order", "scope", "vec", "type", "cc"})
        is_ld = mnemonic == "ld"
        width = self.width_of(m, instr, mnemonic)
        space = isa.SPACES[m.space.text] if m.space is not None else AddrSpace.GENERIC
        order_text = m.order.text if m.order is not None else None
        vec = isa.VECS[m.vec.text] if m.vec is not None else 1
        assert m.type is not None
        order: Order | None = None
        scope: Scope | None = None
        if order_text is not None and order_text != "weak":
            assert m.order is not None
            allowed = isa.LD_ATOMIC_ORDERS if is_ld else isa.ST_ATOMIC_ORDERS
            if order_text not in allowed:
                names = ", ".join(f".{o}" for o in isa.ORDERS if o in allowed)
                _fail(
                    m.order.span,
                    f"{mnemonic} does not allow .{order_text}: an atomic {mnemonic} is one of "
                    f"{names} (PISA {'8.3' if is_ld else '8.5'})",
                    "order",
                )
            if space in (AddrSpace.PRIVATE, AddrSpace.CONST):
                _fail(m.order.span, f"a memory order is not allowed on .{space.value}", "order")
            if m.vec is not None:
                _fail(m.vec.span, "vector accesses must be non-atomic (no memory order)", "vec")
            if width == 8:
                _fail(m.type.span, ".8b is allowed only for non-atomic accesses", "type")
            if width == 64 and space is not AddrSpace.GLOBAL:
                _fail(
                    m.type.span,
                    f"an atomic .64b {mnemonic} is allowed only on .global, not .{space.value} "
                    f"(PISA {'8.3' if is_ld else '8.5'})",
                    "type",
                )
            self.atomic_cc(m, space)
            order, scope = self.order_scope(m, mnemonic, False)
        else:
            if m.scope is not None:
                _fail(
                    m.scope.span,
                    f"a memory scope needs an atomic order; this {mnemonic} is non-atomic",
                    "scope",
                )
            if m.order is not None and space in (AddrSpace.PRIVATE, AddrSpace.CONST):
                _fail(m.order.span, f"a memory order is not allowed on .{space.value}", "order")
            if not is_ld and space is AddrSpace.CONST:
                assert m.space is not None
                _fail(m.space.span, "store to .const memory (read-only)", "const-store")
            if width not in isa.NONATOMIC_TYPES:
                _fail(m.type.span, f"a non-atomic {mnemonic} has no .{width}b type", "type")
            if vec != 1 and width not in isa.VEC_TYPES[vec]:
                assert m.vec is not None
                ok = ", ".join(f".{w}b" for w in sorted(isa.VEC_TYPES[vec]))
                _fail(m.vec.span, f".v{vec} is allowed only with {ok} (PISA 5.2)", "vec")
            if m.cc:
                if space is AddrSpace.SHARED:
                    _fail(m.cc_span, "cache control is not allowed on .shared", "cc")
                table = isa.LD_CC if is_ld else isa.ST_CC
                if m.cc_text not in table:
                    _fail(
                        m.cc_span,
                        f"'.{m.cc_text}' is not a cache control of non-atomic {mnemonic}",
                        "cc",
                    )
        self.host_space(space, m.space)
        self.nargs(instr, 2, "dst, [addr]" if is_ld else "[addr], src")
        if is_ld:
            dst_raw, addr_raw = instr.operands
            dst = (
                self.vreg(dst_raw, width, vec, True, "the destination")
                if vec > 1
                else self.reg(dst_raw, width, True, "the destination")
            )
            return Load(dst, self.address(addr_raw), space, order, scope, width, vec)
        addr_raw, src_raw = instr.operands
        addr = self.address(addr_raw)
        src: Reg | Imm
        if vec > 1:
            src = self.vreg(src_raw, width, vec, False, "the source")
        else:
            src = self.src(src_raw, width, "the source")
        return Store(addr, src, space, order, scope, width, vec)

    def atomic_space(self, m: _MemQ, instr: S.RawInstr, mnemonic: str) -> AddrSpace:
        if m.space is None:
            _fail(
                instr.opcode.span,
                f"{mnemonic} needs an address space: .global, .shared or .generic",
                "qualifier",
            )
        space = isa.SPACES[m.space.text]
        if space not in isa.ATOMIC_SPACES:
            _fail(m.space.span, f"{mnemonic} cannot access .{space.value} memory", "space")
        self.host_space(space, m.space)
        return space

    def atomic_order(self, m: _MemQ, mnemonic: str) -> None:
        if m.order is not None and m.order.text not in ("relaxed", "release", "acquire", "acq_rel"):
            _fail(
                m.order.span,
                f"{mnemonic} does not allow .{m.order.text}: the orders are .relaxed, .release, "
                ".acquire and .acq_rel (PISA 8)",
                "order",
            )

    def iatom(self, instr: S.RawInstr, quals: list[_Q]) -> IAtom:
        m = _classify("iatom", quals, isa.IATOM_OPS)
        _only("iatom", m, {"space", "order", "scope", "type", "op", "cc"})
        space = self.atomic_space(m, instr, "iatom")
        self.atomic_order(m, "iatom")
        if m.op is None:
            _fail(instr.opcode.span, "iatom needs an operation such as .add or .cas", "qualifier")
        op = isa.IATOM_OPS[m.op.text]
        width = self.width_of(m, instr, "iatom")
        assert m.type is not None
        if width == 8:
            _fail(m.type.span, ".8b is allowed only for non-atomic accesses", "type")
        allowed = isa.iatom_widths(space, op)
        if width not in allowed:
            ok = ", ".join(f".{w}b" for w in sorted(allowed))
            _fail(
                m.type.span,
                f"iatom.{op.value} on .{space.value} does not support .{width}b "
                f"(PISA 8.2 allows {ok})",
                "type",
            )
        self.atomic_cc(m, space)
        order, scope = self.order_scope(m, "iatom", True)
        nsrc = isa.iatom_sources(op)
        shape = ", ".join(["dst", "[addr]", "src0", "src1"][: 2 + nsrc])
        self.nargs(instr, 2 + nsrc, shape)
        ops = instr.operands
        dst = self.reg(ops[0], width, True, "the destination")
        addr = self.address(ops[1])
        src0 = self.src(ops[2], width, "src0") if nsrc >= 1 else None
        src1 = self.src(ops[3], width, "src1") if nsrc >= 2 else None
        return IAtom(op, dst, addr, src0, src1, space, order, scope, width)

    def fatom(self, instr: S.RawInstr, quals: list[_Q]) -> FAtom:
        m = _classify("fatom", quals, isa.FATOM_OPS, fp=True)
        _only("fatom", m, {"space", "order", "scope", "type", "op", "cc"})
        space = self.atomic_space(m, instr, "fatom")
        self.atomic_order(m, "fatom")
        if m.op is None:
            _fail(instr.opcode.span, "fatom needs an operation such as .add or .cas", "qualifier")
        op = isa.FATOM_OPS[m.op.text]
        if m.type is None:
            _fail(instr.opcode.span, "fatom needs a type: .hf, .bf, .f or .df", "type")
        fmt = isa.FTYPES[m.type.text]
        allowed = isa.fatom_formats(space, op)
        if fmt not in allowed:
            _fail(
                m.type.span,
                f"fatom.{op.value} on .{space.value} does not support .{m.type.text} "
                "(.df only for .add/.sub on .global, PISA 8.1)",
                "type",
            )
        self.atomic_cc(m, space)
        order, scope = self.order_scope(m, "fatom", True)
        cas = op.value == "cas"
        self.nargs(
            instr, 4 if cas else 3, "dst, [addr], src0, src1" if cas else "dst, [addr], src0"
        )
        ops = instr.operands
        dst = self.reg(ops[0], fmt.width, True, "the destination")
        addr = self.address(ops[1])
        src0 = self.fsrc(ops[2], fmt, "src0")
        src1 = self.fsrc(ops[3], fmt, "src1") if cas else None
        return FAtom(op, fmt, dst, addr, src0, src1, space, order, scope)

    def fsrc(self, raw: S.RawOperand, fmt: FpFormat, what: str) -> Reg | Imm:
        if isinstance(raw, S.RawInt | S.RawFloat):
            return _fp_imm(raw, fmt)
        return self.reg(raw, fmt.width, False, what)

    def fence(self, instr: S.RawInstr, quals: list[_Q]) -> Fence:
        m = _classify("fence", quals)
        _only("fence", m, {"space", "order", "scope"})
        self.nargs(instr, 0, "none")
        both = frozenset({Space.GLOBAL, Space.SHARED})
        if m.scope is not None and m.scope.text == "subgroup":
            extra = m.space or m.order
            if extra is not None:
                _fail(
                    extra.span,
                    "fence.subgroup takes no address space or memory order (PISA 9.2)",
                    "qualifier",
                )
            self.no_host("fence.subgroup")
            return Fence(both, Order.ACQ_REL, Scope.SG)
        if m.scope is None:
            _fail(
                instr.opcode.span,
                "fence needs a memory scope: .workgroup, .gpu (or .system with .global)",
                "scope",
            )
        space = isa.SPACES[m.space.text] if m.space is not None else None
        if space not in isa.FENCE_SCOPES:
            assert m.space is not None
            _fail(m.space.span, f"fence cannot order .{m.space.text} memory", "space")
        if m.scope.text not in isa.FENCE_SCOPES[space]:
            form = f"fence.{space.value}" if space is not None else "fence"
            _fail(
                m.scope.span,
                f"{form} allows only .workgroup or .gpu; .system needs fence.global (PISA 9.2)",
                "scope",
            )
        order = Order.ACQ_REL
        if m.order is not None:
            if m.order.text not in isa.FENCE_ORDERS:
                _fail(
                    m.order.span,
                    f"fence does not allow .{m.order.text}: the orders are .acquire, .release, "
                    ".acq_rel and .seq_cst",
                    "order",
                )
            order = isa.ORDERS[m.order.text]
        scope = isa.SCOPES[m.scope.text]
        if self.host and scope is not Scope.SYS:
            _fail(
                m.scope.span,
                f"host threads share only the .system scope, not .{m.scope.text}",
                "host",
            )
        if space is AddrSpace.GLOBAL:
            spaces = frozenset({Space.GLOBAL})
        elif space is AddrSpace.SHARED:
            spaces = frozenset({Space.SHARED})
        else:
            spaces = both
        return Fence(spaces, order, scope)

    def int_type(
        self,
        quals: list[_Q],
        mnemonic: str,
        instr: S.RawInstr,
        allowed: frozenset[int],
        extra: Sequence[str] = (),
    ) -> tuple[int, list[_Q]]:
        """Split off the one `.Nb` type qualifier; the others must be in `extra`."""
        width: int | None = None
        rest: list[_Q] = []
        for q in quals:
            if q.text in isa.WIDTHS:
                if width is not None:
                    _fail(q.span, f"second type qualifier '.{q.text}'", "qualifier")
                width = isa.WIDTHS[q.text]
                if width not in allowed:
                    ok = ", ".join(f".{w}b" for w in sorted(allowed))
                    _fail(q.span, f"{mnemonic} does not support .{q.text} (only {ok})", "type")
            elif q.text == "16bx2":
                _fail(q.span, "packed .16bx2 types are not supported", "unsupported")
            elif q.text in ("sat", "dsat", "full", "quo", "rem"):
                _fail(q.span, f"{mnemonic}.{q.text} is not supported", "unsupported")
            elif q.text in extra:
                rest.append(q)
            else:
                _fail(q.span, f"unknown qualifier '.{q.text}' for {mnemonic}", "qualifier")
        if width is None:
            _fail(instr.opcode.span, f"{mnemonic} needs a type qualifier such as .32b", "type")
        return width, rest

    def alu(self, instr: S.RawInstr, mnemonic: str, quals: list[_Q]) -> Alu:
        op, nsrc, allowed = isa.ALU[mnemonic]
        width, _ = self.int_type(quals, mnemonic, instr, allowed)
        self.nargs(instr, 1 + nsrc, "dst, src" if nsrc == 1 else "dst, src0, src1")
        ops = instr.operands
        dst = self.reg(ops[0], width, True, "the destination")
        srcs: list[Reg | Imm | VarRef] = []
        for i, raw in enumerate(ops[1:]):
            w = 32 if (i == 1 and op in isa.SHIFTS) else width
            srcs.append(self.alu_src(raw, w, f"src{i}"))
        return Alu(op, dst, tuple(srcs), width)

    def compare(self, instr: S.RawInstr, mnemonic: str, quals: list[_Q]) -> Compare:
        width, rest = self.int_type(quals, mnemonic, instr, isa.INT_TYPES, tuple(isa.CMP_OPS))
        if len(rest) != 1:
            span = rest[1].span if len(rest) > 1 else instr.opcode.span
            _fail(
                span,
                f"{mnemonic} needs one comparison: .eq, .ne, .lt, .le, .gt or .ge",
                "qualifier",
            )
        self.nargs(instr, 3, "pred, src0, src1")
        ops = instr.operands
        if isinstance(ops[0], S.RawReg):
            info = self.regs.get(ops[0].name)
            if info is not None and info.declared and not info.pred:
                _fail(
                    ops[0].span,
                    f"{mnemonic} with a register destination is not supported; "
                    "declare the destination with .pred",
                    "unsupported",
                )
        dst = self.pred(ops[0], True, "the destination")
        a = self.src(ops[1], width, "src0")
        b = self.src(ops[2], width, "src1")
        return Compare(isa.CMP_OPS[rest[0].text], mnemonic == "scmp", dst, a, b, width)

    def select(self, instr: S.RawInstr, quals: list[_Q]) -> Select:
        width, _ = self.int_type(quals, "sel", instr, isa.INT_TYPES)
        self.nargs(instr, 4, "dst, src0, src1, pred")
        ops = instr.operands
        last = ops[3]
        if isinstance(last, S.RawReg) and not last.negated:
            info = self.regs.get(last.name)
            if info is not None and info.declared and not info.pred:
                _fail(
                    last.span,
                    "sel with a register selector is not supported; use a predicate",
                    "unsupported",
                )
        dst = self.reg(ops[0], width, True, "the destination")
        a = self.src(ops[1], width, "src0")
        b = self.src(ops[2], width, "src1")
        cond = self.pred(last, False, "the selector")
        return Select(dst, cond, a, b, width)

    def addrof(self, instr: S.RawInstr, quals: list[_Q]) -> AddrOf:
        width, _ = self.int_type(quals, "addrof", instr, frozenset({32, 64}))
        self.nargs(instr, 2, "dst, @var")
        dst_raw, var_raw = instr.operands
        if not isinstance(var_raw, S.RawVar):
            _fail(_span_of(var_raw), "addrof needs a memory variable (@name)", "operand")
        dst = self.reg(dst_raw, width, True, "the destination")
        var = self.var(var_raw)
        self._address_width(var, width, var_raw.span)
        return AddrOf(dst, var, width)

    def branch(self, instr: S.RawInstr, mnemonic: str, quals: list[_Q]) -> Goto | Return:
        names = [q.text for q in quals]
        if names not in ([], ["cond"]):
            _fail(
                quals[0].span, f"unknown qualifier '.{quals[0].text}' for {mnemonic}", "qualifier"
            )
        cond_form = names == ["cond"]
        ops = instr.operands
        if mnemonic == "return":
            if len(ops) > int(cond_form):
                _fail(
                    _span_of(ops[-1]),
                    "return values are not supported in litmus threads",
                    "unsupported",
                )
            self.nargs(instr, int(cond_form), "pred" if cond_form else "none")
            return Return(self.pred(ops[0], False, "the condition") if cond_form else None)
        self.nargs(instr, 2 if cond_form else 1, "pred, label" if cond_form else "label")
        target = ops[-1]
        if not isinstance(target, S.RawIdent):
            _fail(_span_of(target), "expected a label", "operand")
        cond = self.pred(ops[0], False, "the condition") if cond_form else None
        return Goto(target.name, cond, target.span)

    def collective(self, instr: S.RawInstr, mnemonic: str, quals: list[_Q]) -> Collective:
        ops = instr.operands
        if mnemonic == "shfl":
            width, rest = self.int_type(
                quals, mnemonic, instr, frozenset({32}), (*isa.SHFL_OPS, "sg")
            )
            kinds = [q.text for q in rest if q.text != "sg"]
            if len(kinds) != 1 or len(rest) - len(kinds) > 1:
                _fail(
                    instr.opcode.span,
                    "shfl needs one operation (.up, .dn, .xor, .idx) and at most one .sg",
                    "qualifier",
                )
            op = kinds[0] + (".sg" if len(rest) == 2 else "")
            self.nargs(instr, 4, "dst, src0, src1, src2")
            dst = self.reg(ops[0], 32, True, "the destination")
            src0 = self.reg(ops[1], 32, False, "src0")
            srcs: tuple[Reg | Imm | Pred, ...] = (
                src0,
                self.src(ops[2], 32, "src1"),
                self.src(ops[3], 32, "src2"),
            )
            return Collective(CollectiveKind.SHFL, op, dst, srcs, width)
        if mnemonic == "ired":
            width, rest = self.int_type(
                quals, mnemonic, instr, frozenset({16, 32}), tuple(isa.IRED_OPS)
            )
            if len(rest) != 1:
                _fail(instr.opcode.span, "ired needs one operation such as .sum", "qualifier")
            self.nargs(instr, 3, "dst, src0, src1")
            dst = self.reg(ops[0], width, True, "the destination")
            src0 = self.reg(ops[1], width, False, "src0")
            srcs = (src0, self.src(ops[2], 32, "src1"))
            return Collective(CollectiveKind.IRED, rest[0].text, dst, srcs, width)
        width, _ = self.int_type(quals, mnemonic, instr, frozenset({32}))
        self.nargs(instr, 2, "dst, src0")
        dst = self.reg(ops[0], 32, True, "the destination")
        return Collective(CollectiveKind.REDFIRSTIDX, "", dst, (self.src(ops[1], 32, "src0"),), 32)

    def cp_async(self, instr: S.RawInstr) -> list[Op]:
        text = instr.opcode.text
        self.no_host("cp.async")
        ops = instr.operands
        if text == "cp.async.shared.global":
            self.nargs(instr, 3, "[dst], [src], size")
            dst = self.address(ops[0], "the shared destination")
            src = self.address(ops[1], "the global source")
            size_raw = ops[2]
            if not isinstance(size_raw, S.RawInt) or size_raw.value not in isa.CP_ASYNC_SIZES:
                _fail(_span_of(size_raw), "the cp.async size must be 4, 8 or 16 bytes", "operand")
            return [CpAsync(dst, src, size_raw.value)]
        if text == "cp.async.commit_group":
            self.nargs(instr, 0, "none")
            return [CommitGroup()]
        if text == "cp.async.wait_all":
            self.nargs(instr, 0, "none")
            return [CommitGroup(), WaitGroup(0)]
        if text == "cp.async.wait_group":
            self.nargs(instr, 1, "N")
            n = ops[0]
            if not isinstance(n, S.RawInt) or n.value < 0:
                _fail(_span_of(n), "cp.async.wait_group needs a non-negative integer", "operand")
            return [WaitGroup(n.value)]
        _fail(
            instr.opcode.span,
            f"unknown instruction '{text}' (cp.async forms: cp.async.shared.global, "
            "cp.async.commit_group, cp.async.wait_group, cp.async.wait_all)",
            "unknown-instruction",
        )

    # ------------------------------------------------------------ the whole body

    def run(self) -> tuple[list[Instruction], list[str], dict[str, _RegInfo]]:
        """Decode the body: instructions (labels attached), end labels, register table."""
        for st in self.raw.body:
            if isinstance(st, S.RawRegDecl):
                self.declare(st)
            elif isinstance(st, S.RawInstr):
                mnemonic, quals = _split_opcode(st.opcode)
                vecs = [q for q in quals if q.text in isa.VECS]
                if mnemonic in ("ld", "st") and vecs and st.operands:
                    target = st.operands[0] if mnemonic == "ld" else st.operands[-1]
                    if isinstance(target, S.RawReg):
                        self.vector_names.add(target.name)
        body: list[Instruction] = []
        pending: list[str] = []
        seen_labels: dict[str, Span] = {}
        for st in self.raw.body:
            if isinstance(st, S.RawLabel):
                if st.name in seen_labels:
                    _fail(st.span, f"duplicate label '{st.name}' in P{self.index}", "label")
                seen_labels[st.name] = st.span
                pending.append(st.name)
            elif isinstance(st, S.RawInstr):
                self.cur = []
                ops = self.decode(st)
                for k, op in enumerate(ops):
                    labels = tuple(pending) if k == 0 else ()
                    body.append(Instruction(op, len(body), st.span, st.text, labels))
                    self.uses.append(self.cur if k == 0 else [])
                pending = []
        for ins in body:
            if isinstance(ins.op, Goto) and ins.op.label not in seen_labels:
                _fail(
                    ins.op.label_span, f"unknown label '{ins.op.label}' in P{self.index}", "label"
                )
        self.resolve_widths()
        return body, pending, self.regs

    def declare(self, d: S.RawRegDecl) -> None:
        vec, width, pred = 1, 1, d.type is None
        if d.type is not None:
            parts = d.type.text.split(".")[1:]
            width_text = parts[-1]
            if width_text not in isa.WIDTHS:
                _fail(d.type.span, f"unknown register type {d.type.text}", "type")
            width = isa.WIDTHS[width_text]
            if len(parts) == 2:
                if parts[0] not in isa.VECS:
                    _fail(d.type.span, f"unknown vector type {d.type.text}", "type")
                vec = isa.VECS[parts[0]]
        for n in d.names:
            for name in _expand_range(n):
                if name in self.regs:
                    _fail(n.span, f"register %{name} is declared twice", "duplicate")
                self.regs[name] = _RegInfo(pred, width, vec, True, n.span)
                if vec > 1:
                    self.vector_names.add(name)

    def resolve_widths(self) -> None:
        """Undeclared registers take the width of their first writer, else of their first use."""
        flat = [u for us in self.uses for u in us]
        for pass_writes in (True, False):
            for u in flat:
                if u.name in self.regs or (pass_writes and not u.write) or u.width is None:
                    continue
                if u.elem is not None:
                    continue  # an element of an undeclared vector: left to the whole-vector use
                self.regs[u.name] = _RegInfo(u.pred, u.width, u.vec, False, u.span)
        for u in flat:
            info = self.regs.get(u.name)
            if info is None:
                if u.elem is not None:
                    _fail(u.span, f"vector register %{u.name} is never declared", "undeclared")
                # only ever used as an address: a 64-bit pointer register
                self.regs[u.name] = _RegInfo(False, 64, 1, False, u.span)
                continue
            shown = f"%{u.name}" + (f".{'xyzw'[u.elem]}" if u.elem is not None else "")
            if u.pred != info.pred:
                kind, want = (
                    ("a predicate", "a register") if info.pred else ("a register", "a predicate")
                )
                _fail(u.span, f"{shown} is {kind}, but this operand needs {want}", "width")
            if u.elem is not None:
                if info.vec == 1:
                    _fail(u.span, f"%{u.name} is not a vector register", "width")
                if u.elem >= info.vec:
                    _fail(
                        u.span, f"{shown} is beyond the {info.vec} elements of %{u.name}", "width"
                    )
            elif u.vec != info.vec and not info.pred:
                if info.vec == 1:
                    _fail(
                        u.span,
                        f"%{u.name} is a scalar register, but a .v{u.vec} access needs a "
                        f"{u.vec}-element vector",
                        "width",
                    )
                _fail(
                    u.span,
                    f"%{u.name} has {info.vec} elements, but this access needs {u.vec}",
                    "width",
                )
            if u.width is None:
                if info.width not in (32, 64) or (info.vec > 1 and u.elem is None):
                    _fail(
                        u.span,
                        f"an address register must be .32b or .64b; {shown} is .{info.width}b",
                        "width",
                    )
            elif u.width != info.width and not info.pred:
                _fail(
                    u.span, f"{shown} is .{info.width}b, but this operand is .{u.width}b", "width"
                )


def _expand_range(n: S.Name) -> list[str]:
    text = n.text[1:]
    if "<" not in text:
        return [text]
    base, _, rng = text.partition("<")
    lo, _, hi = rng.rstrip(">").partition("~")
    if int(hi) <= int(lo) or int(hi) - int(lo) > 1024:
        _fail(n.span, f"register range {n.text} must name 1 to 1024 registers", "declaration")
    return [f"{base}{i}" for i in range(int(lo), int(hi))]


def _span_of(raw: S.RawOperand) -> Span:
    return raw.span


# ---------------------------------------------------------------- data flow


def _keys(reg: Reg | Pred, regs: dict[str, _RegInfo]) -> list[tuple[str, int | None]]:
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


def def_use(op: Op) -> tuple[list[Reg | Pred], list[Reg | Pred]]:
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


def _check_defined(
    index: int,
    body: list[Instruction],
    end_labels: list[str],
    regs: dict[str, _RegInfo],
    inits: set[str],
) -> None:
    """Reject a register read that some path from the start reaches with no definition."""
    n = len(body)
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
    entry: set[tuple[str, int | None]] = set()
    for name in inits:
        info = regs.get(name)
        entry.update((name, i) for i in range(info.vec)) if info and info.vec > 1 else entry.add(
            (name, None)
        )
    din: list[set[tuple[str, int | None]] | None] = [None] * n
    if n:
        din[0] = entry
    work = [0] if n else []
    while work:
        i = work.pop()
        cur = din[i]
        assert cur is not None
        defs, _ = def_use(body[i].op)
        out = cur | {k for d in defs for k in _keys(d, regs)}
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
        _, uses = def_use(ins.op)
        for r in uses:
            for k in _keys(r, regs):
                if k not in have:
                    shown = f"%{k[0]}" + (f".{'xyzw'[k[1]]}" if k[1] is not None else "")
                    _fail(
                        r.span or ins.span,
                        f"register {shown} of P{index} may be read before it is written "
                        "(give it an init such as "
                        f"'P{index}:{shown} = 0;' or write it first)",
                        "uninit",
                    )


# ---------------------------------------------------------------- static address checks


def _static_targets(body: list[Instruction], inits: dict[str, RegInit]) -> dict[str, VarRef]:
    """Registers that hold one known variable address everywhere they are read."""
    writers: dict[str, list[Op]] = {}
    for ins in body:
        defs, _ = def_use(ins.op)
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
    ctx: _Ctx,
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
        _fail(
            span,
            f"{ins.text.split()[0]} accesses @{ref.name}, a .{dspace.value} variable, "
            f"through .{space.value}",
            "space",
        )
    if host and dspace is not Space.GLOBAL:
        _fail(
            span,
            f"host threads may access only .global memory; @{ref.name} is .{dspace.value}",
            "host",
        )
    if kind in ("store", "atomic", "async-dst") and dspace is Space.CONST:
        _fail(span, f"store to .const variable @{ref.name} (read-only)", "const-store")
    if kind == "atomic" and dspace in (Space.PRIVATE, Space.CONST):
        _fail(
            span,
            f"an atomic access must target .global or .shared memory; @{ref.name} is "
            f".{dspace.value}",
            "space",
        )
    if kind == "async-dst" and dspace is not Space.SHARED:
        _fail(span, f"cp.async writes .shared memory; @{ref.name} is .{dspace.value}", "space")
    if kind == "async-src" and dspace is not Space.GLOBAL:
        _fail(span, f"cp.async reads .global memory; @{ref.name} is .{dspace.value}", "space")
    elem = decl.width // 8
    if kind.startswith("async"):
        size = width // 8
        if size % elem != 0:
            _fail(
                span,
                f"mixed-size access: cp.async of {size} bytes over @{ref.name} declared "
                f".{decl.width}b is not supported",
                "mixed-size",
            )
        align = size
    else:
        if width != decl.width:
            _fail(
                span,
                f"mixed-size access: a .{width}b access to @{ref.name} declared .{decl.width}b "
                "is not supported",
                "mixed-size",
            )
        size = width * vec // 8
        align = width // 8 if width >= 32 else size
    off = addr.offset
    if isinstance(off, Reg):
        return
    offset = 0 if off is None else off.value
    if offset >= 1 << 63:
        offset -= 1 << 64
    if offset % align != 0:
        _fail(
            span,
            f"misaligned address: byte offset {offset} of @{ref.name} is not a multiple "
            f"of {align} (PISA 5.1)",
            "alignment",
        )
    total = decl.count * elem
    if offset < 0 or offset + size > total:
        _fail(
            span,
            f"out-of-bounds access: bytes {offset}..{offset + size - 1} of @{ref.name}, "
            f"which has {total} bytes",
            "bounds",
        )


def _check_accesses(
    ctx: _Ctx, body: list[Instruction], inits: dict[str, RegInit], host: bool
) -> None:
    static = _static_targets(body, inits)
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


# ---------------------------------------------------------------- the test


def _var_decl(ctx: _Ctx, d: S.RawVarDecl, thread: int | None) -> VarDecl:
    space_text = d.space.text[1:]
    if thread is None and space_text == "private":
        _fail(d.space.span, "declare .private variables inside a thread body", "declaration")
    if thread is not None and space_text != "private":
        _fail(d.space.span, f"declare .{space_text} variables in the init block", "declaration")
    space = Space.PRIVATE if space_text == "private" else isa.DECL_SPACES[space_text]
    type_text = d.type.text[1:]
    if type_text not in isa.WIDTHS:
        _fail(
            d.type.span,
            f"a memory variable has a scalar type (.8b ... .128b), not {d.type.text}",
            "type",
        )
    width = isa.WIDTHS[type_text]
    if d.name.text[1:] in ctx.variables:
        _fail(d.name.span, f"variable {d.name.text} is declared twice", "duplicate")
    count = 1
    if d.count is not None:
        count = d.count.value
        if count < 1 or count > 4096:
            _fail(d.count.span, "an array has 1 to 4096 elements", "declaration")
    values = d.init or ()
    if d.init_is_list and d.count is None and len(values) > 1:
        _fail(
            d.span,
            f"scalar {d.name.text} has a list of {len(values)} initial values",
            "declaration",
        )
    if len(values) > count:
        _fail(
            values[count].span,
            f"{d.name.text} has {count} elements but {len(values)} initial values",
            "declaration",
        )
    init = [int_bits(v, width, "variable") for v in values]
    init += [0] * (count - len(init))
    return VarDecl(d.name.text[1:], space, width, count, tuple(init), d.span, thread)


def _placements(raw: S.RawTest) -> list[ThreadPlacement]:
    explicit: dict[str, set[int]] = {"wg": set(), "sg": set()}
    parsed: list[tuple[dict[str, int], bool, Span]] = []
    for t in raw.threads:
        items: dict[str, int] = {}
        host = False
        seen: dict[str, Span] = {}
        for p in t.placement:
            if p.kind in seen:
                _fail(p.span, f"{p.kind} is given twice for {t.name.text}", "placement")
            seen[p.kind] = p.span
            if p.kind == "host":
                host = True
            else:
                assert p.value is not None
                v = p.value.value
                if v < 0 or v > 1_000_000:
                    _fail(p.value.span, f"bad {p.kind} number {p.value.text}", "placement")
                items[p.kind] = v
        if host and items:
            other = next(p for p in t.placement if p.kind != "host")
            _fail(other.span, "a host thread has no gpu, work-group or sub-group", "placement")
        for k in ("wg", "sg"):
            if k in items:
                explicit[k].add(items[k])
        span = t.placement[0].span if t.placement else t.span
        parsed.append((items, host, span))
    fresh = {k: max(v, default=-1) + 1 for k, v in explicit.items()}
    out: list[ThreadPlacement] = []
    for items, host, span in parsed:
        if host:
            out.append(ThreadPlacement(True, None, None, None, span))
            continue
        got: dict[str, int] = {}
        for k in ("wg", "sg"):
            if k in items:
                got[k] = items[k]
            else:
                got[k] = fresh[k]
                fresh[k] += 1
        out.append(ThreadPlacement(False, items.get("gpu", 0), got["wg"], got["sg"], span))
    return out


def _thread_index(name: S.Name, what: str) -> int:
    text = name.text
    digits = text[1:] if text.startswith("P") else text
    return int(digits)


def validate(raw: S.RawTest, *, strict: bool = False) -> LitmusTest:
    """Check and decode a raw test; the first violation raises PisaMMError."""
    ctx = _Ctx(raw.path, raw.source, strict, {}, [])
    for d in raw.variables:
        decl = _var_decl(ctx, d, None)
        ctx.variables[decl.name] = decl
    for i, t in enumerate(raw.threads):
        if not t.name.text.startswith("P") or _thread_index(t.name, "thread") != i:
            _fail(
                t.name.span,
                f"threads must be numbered P0, P1, ... in order: expected P{i}, got {t.name.text}",
                "thread",
            )
        for st in t.body:
            if isinstance(st, S.RawVarDecl):
                decl = _var_decl(ctx, st, i)
                ctx.variables[decl.name] = decl
    placements = _placements(raw)
    nthreads = len(raw.threads)

    # register inits, grouped by thread
    raw_inits: dict[int, dict[str, S.RawRegInit]] = {}
    for ri in raw.reg_inits:
        ti = _thread_index(ri.thread, "init")
        if ti >= nthreads:
            _fail(
                ri.thread.span,
                f"init of a register of P{ti}, but there is no thread P{ti}",
                "thread",
            )
        name = ri.reg.text[1:]
        if name in raw_inits.setdefault(ti, {}):
            _fail(ri.span, f"P{ti}:%{name} is initialised twice", "duplicate")
        raw_inits[ti][name] = ri

    threads: list[Thread] = []
    all_inits: list[RegInit] = []
    reg_tables: list[dict[str, _RegInfo]] = []
    for i, t in enumerate(raw.threads):
        host = placements[i].host
        dec = _ThreadDecoder(ctx, i, host, t)
        body, end_labels, regs = dec.run()
        inits: dict[str, RegInit] = {}
        for name, ri in raw_inits.get(i, {}).items():
            info = regs.get(name)
            value: int | VarRef
            if isinstance(ri.value, S.RawVar):
                ref = dec.var(ri.value)
                if info is None:
                    info = regs[name] = _RegInfo(
                        False, isa.ADDRESS_BITS[ctx.variables[ref.name].space], 1, False, ri.span
                    )
                if info.pred or info.vec > 1:
                    _fail(ri.reg.span, f"%{name} cannot hold an address", "width")
                bits = isa.ADDRESS_BITS[ctx.variables[ref.name].space]
                if info.width not in (32, 64) or info.width < bits:
                    # a 64-bit register may hold any address (a generic pointer, PISA 3.3.1)
                    _fail(
                        ri.value.span,
                        f"the address of @{ref.name} is {bits}-bit; %{name} is .{info.width}b",
                        "width",
                    )
                value = ref
            else:
                if info is None:
                    info = regs[name] = _RegInfo(False, 32, 1, False, ri.span)
                if info.vec > 1:
                    _fail(ri.reg.span, f"vector register %{name} cannot be initialised", "width")
                value = int_bits(ri.value, info.width, "register")
            reg: Reg | Pred = (
                Pred(name, False, ri.reg.span) if info.pred else Reg(name, None, ri.reg.span)
            )
            inits[name] = RegInit(i, reg, value, ri.span)
        _check_defined(i, body, end_labels, regs, set(inits))
        _check_accesses(ctx, body, inits, host)
        all_inits.extend(inits.values())
        reg_tables.append(regs)
        threads.append(
            Thread(
                i,
                placements[i],
                tuple(sorted((n, r.width) for n, r in regs.items())),
                tuple(body),
                t.span,
                tuple(sorted((n, r.vec) for n, r in regs.items() if r.vec > 1)),
                tuple(end_labels),
            )
        )

    checker = _CondChecker(ctx, reg_tables, placements)
    locations = tuple(checker.observable(o)[0] for o in raw.locations)
    cond = raw.condition
    quant = {
        "exists": Quantifier.EXISTS,
        "~exists": Quantifier.NOT_EXISTS,
        "forall": Quantifier.FORALL,
    }[cond.quantifier.text]
    condition = Condition(quant, checker.prop(cond.prop), cond.span)
    return LitmusTest(
        raw.name.text,
        raw.description,
        raw.metadata,
        tuple(ctx.variables.values()),
        tuple(all_inits),
        tuple(threads),
        locations,
        condition,
        raw.path,
        raw.source,
        tuple(ctx.warnings),
        filter=None if raw.filter is None else checker.prop(raw.filter),
    )


class _CondChecker:
    """Resolves the observables of `locations` and the final condition."""

    def __init__(
        self, ctx: _Ctx, regs: list[dict[str, _RegInfo]], places: list[ThreadPlacement]
    ) -> None:
        self.ctx = ctx
        self.regs = regs
        self.places = places

    def observable(self, o: S.RawObservable) -> tuple[Observable, int]:
        """The observable and its width in bits."""
        if isinstance(o, S.RawRegObs):
            t = _thread_index(o.thread, "condition")
            if t >= len(self.regs):
                _fail(o.thread.span, f"there is no thread P{t}", "condition")
            name = o.reg.text[1:]
            elem: int | None = None
            table = self.regs[t]
            if name not in table and "." in name:
                base, _, sw = name.rpartition(".")
                if base in table and table[base].vec > 1 and sw in _SWIZZLE:
                    name, elem = base, _SWIZZLE[sw]
            info = table.get(name)
            if info is None:
                _fail(o.reg.span, f"P{t} has no register %{name}", "condition")
            if info.vec > 1 and elem is None:
                _fail(
                    o.reg.span, f"name one element of vector %{name}, e.g. %{name}.x", "condition"
                )
            if elem is not None and elem >= info.vec:
                _fail(o.reg.span, f"%{name} has only {info.vec} elements", "condition")
            return RegObs(t, name, elem), info.width
        name = o.var.text[1:]
        decl = self.ctx.variables.get(name)
        if decl is None:
            _fail(o.var.span, f"undeclared variable @{name}", "undeclared")
        index = 0
        if o.index is not None:
            index = o.index.value
            if not 0 <= index < decl.count:
                _fail(
                    o.index.span,
                    f"@{name} has {decl.count} element"
                    f"{'s' if decl.count != 1 else ''}; index {index} is out of bounds",
                    "bounds",
                )
        if decl.space is Space.PRIVATE:
            _fail(o.var.span, f"cannot observe .private variable @{name}", "condition")
        wg: int | None = None
        wgs = sorted({p.wg for p in self.places if p.wg is not None})
        if o.wg is not None:
            if decl.space is not Space.SHARED:
                _fail(
                    o.wg.span,
                    f"a work-group prefix names a .shared instance; @{name} is .{decl.space.value}",
                    "condition",
                )
            wg = int(o.wg.text[2:])
            gpus = {p.gpu for p in self.places if p.wg == wg}
            if not gpus:
                _fail(o.wg.span, f"no thread is in work-group {wg}", "condition")
            if len(gpus) > 1:
                _fail(o.wg.span, f"work-group {wg} exists in several gpus; rename one", "condition")
        elif decl.space is Space.SHARED:
            if len(wgs) != 1:
                _fail(
                    o.var.span,
                    f"@{name} is .shared: name the work-group instance, e.g. "
                    f"wg{wgs[0] if wgs else 0}:@{name}",
                    "condition",
                )
            wg = wgs[0]
        return MemObs(name, index, wg), decl.width

    def prop(self, p: S.RawProp) -> Prop:
        match p:
            case S.RawBool(value=v):
                return BoolConst(v)
            case S.RawNot(arg=a):
                return Not(self.prop(a))
            case S.RawBinary(op="implies", lhs=lhs, rhs=rhs):
                return Implies(self.prop(lhs), self.prop(rhs))
            case S.RawBinary(op=op, lhs=lhs, rhs=rhs):
                args: list[Prop] = []
                for side in (lhs, rhs):
                    sub = self.prop(side)
                    if (op == "and" and isinstance(sub, And)) or (
                        op == "or" and isinstance(sub, Or)
                    ):
                        args.extend(sub.args)
                    else:
                        args.append(sub)
                return And(tuple(args)) if op == "and" else Or(tuple(args))
            case S.RawAtom(obs=o, op=cmp, value=v, span=span):
                obs, width = self.observable(o)
                return Atom(obs, int_bits(v, width, "value"), cmp == "!=", span)
        raise AssertionError(p)


def validate_prop(raw: S.RawProp, test: LitmusTest, source: str) -> Prop:
    """Check a stand-alone PROP against an already validated test."""
    ctx = _Ctx(test.path, source, False, {v.name: v for v in test.variables}, [])
    tables: list[dict[str, _RegInfo]] = []
    for th in test.threads:
        vecs = dict(th.vectors)
        tables.append({n: _RegInfo(w == 1, w, vecs.get(n, 1), True, th.span) for n, w in th.regs})
    return _CondChecker(ctx, tables, [th.placement for th in test.threads]).prop(raw)
