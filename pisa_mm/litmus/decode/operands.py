"""Operands, orders and scopes of one thread's instructions: the decoder state."""

from __future__ import annotations

from collections.abc import Callable, Sequence

from pisa_mm.errors import Span
from pisa_mm.events.kinds import Order, Scope, Space
from pisa_mm.hints import TypeVar
from pisa_mm.litmus import isa
from pisa_mm.litmus import syntax as S
from pisa_mm.litmus.decode.context import SWIZZLE, Ctx, RegInfo, Use, fail
from pisa_mm.litmus.decode.immediates import int_bits
from pisa_mm.litmus.decode.qualifiers import MemQ, Q, split_opcode, suggest
from pisa_mm.litmus.program import (
    Address,
    AddrSpace,
    Imm,
    Pred,
    Reg,
    VarRef,
)

T = TypeVar("T")

# What the qualifier checks of an instruction family made of an opcode (its text, in a
# thread on the host or not): they read only the qualifiers, so an opcode that passed them
# once without a warning passes them again with the same result. A suite repeats a few dozen
# opcodes; the table is emptied when a test brings thousands.
_QUALIFIED: dict[tuple[object, str, bool], object] = {}
_MAX_QUALIFIED = 4096


class OperandDecoder:
    """One thread's decoding state and its operand, order and scope decoders."""

    def __init__(self, ctx: Ctx, index: int, host: bool, raw: S.RawThread) -> None:
        self.ctx = ctx
        self.index = index
        self.host = host
        self.raw = raw
        self.uses: list[list[Use]] = []
        self.cur: list[Use] = []
        self.regs: dict[str, RegInfo] = {}
        self.vector_names: set[str] = set()
        self.instr_span: Span = raw.span

    def qualified(
        self, instr: S.RawInstr, check: Callable[[OperandDecoder, S.RawInstr, list[Q]], T]
    ) -> T:
        """`check(self, instr, qualifiers)` of the instruction's opcode (`check` reads no
        operand), remembered when it raised and warned nothing: every error and warning is
        the uncached call's."""
        key = (check, instr.opcode.text, self.host)
        known = _QUALIFIED.get(key)
        if known is not None:
            return known  # type: ignore[return-value]  # what `check` returned for this key
        warned = len(self.ctx.warnings)
        value = check(self, instr, split_opcode(instr.opcode)[1])
        if len(self.ctx.warnings) == warned:
            if len(_QUALIFIED) >= _MAX_QUALIFIED:
                _QUALIFIED.clear()
            _QUALIFIED[key] = value
        return value

    # ------------------------------------------------------------ operands

    def _split_reg(self, raw: S.RawReg) -> tuple[str, int | None]:
        name = raw.name
        if name in self.regs or "." not in name:
            return name, None
        base, _, sw = name.rpartition(".")
        if base in self.vector_names or (base in self.regs and self.regs[base].vec > 1):
            if sw in SWIZZLE:
                return base, SWIZZLE[sw]
            if sw in ("xy", "zw", "xyzw"):
                fail(raw.span, f"multi-element swizzle '.{sw}' is not supported", "unsupported")
        return name, None

    def reg(self, raw: S.RawOperand, width: int | None, write: bool, what: str) -> Reg:
        if not isinstance(raw, S.RawReg) or raw.negated:
            fail(span_of(raw), f"expected a register for {what}", "operand")
        name, elem = self._split_reg(raw)
        self.cur.append(Use(name, elem, False, width, 1, write, raw.span))
        return Reg(name, elem, raw.span)

    def vreg(self, raw: S.RawOperand, width: int, vec: int, write: bool, what: str) -> Reg:
        if not isinstance(raw, S.RawReg) or raw.negated:
            fail(span_of(raw), f"expected a vector register for {what}", "operand")
        name, elem = self._split_reg(raw)
        if elem is not None:
            fail(raw.span, f"expected a whole vector register for {what}", "operand")
        self.cur.append(Use(name, None, False, width, vec, write, raw.span))
        return Reg(name, None, raw.span)

    def pred(self, raw: S.RawOperand, write: bool, what: str) -> Pred:
        if not isinstance(raw, S.RawReg):
            fail(span_of(raw), f"expected a predicate register for {what}", "operand")
        if write and raw.negated:
            fail(raw.span, "a negated predicate cannot be a destination", "operand")
        info = self.regs.get(raw.name)
        if info is not None and info.declared and not info.pred:
            fail(
                raw.span,
                f"%{raw.name} is declared .reg, but {what} needs a predicate (.pred)",
                "width",
            )
        self.cur.append(Use(raw.name, None, True, 1, 1, write, raw.span))
        return Pred(raw.name, raw.negated, raw.span)

    def src(self, raw: S.RawOperand, width: int, what: str) -> Reg | Imm:
        if isinstance(raw, S.RawInt):
            return Imm(int_bits(raw, width), raw.span)
        if isinstance(raw, S.RawFloat):
            fail(raw.span, "float literals are allowed only as fatom operands", "immediate")
        return self.reg(raw, width, False, what)

    def alu_src(self, raw: S.RawOperand, width: int, what: str) -> Reg | Imm | VarRef:
        if isinstance(raw, S.RawVar):
            var = self.var(raw)
            self.address_width(var, width, raw.span)
            return var
        return self.src(raw, width, what)

    def address_width(self, ref: VarRef, width: int, span: Span) -> None:
        decl = self.ctx.variables[ref.name]
        bits = isa.ADDRESS_BITS[decl.space]
        if bits != width:
            fail(
                span,
                f"the address of @{ref.name} (.{decl.space.value}) is {bits}-bit, "
                f"not {width}-bit (PISA 3.3)",
                "width",
            )

    def var(self, raw: S.RawVar) -> VarRef:
        decl = self.ctx.variables.get(raw.name)
        if decl is None:
            fail(raw.span, f"undeclared variable @{raw.name}", "undeclared")
        if decl.thread is not None and decl.thread != self.index:
            fail(
                raw.span,
                f"@{raw.name} is .private to P{decl.thread}, not visible in P{self.index}",
                "undeclared",
            )
        if self.host and decl.space is not Space.GLOBAL:
            fail(
                raw.span,
                f"host threads may access only .global memory; @{raw.name} is .{decl.space.value}",
                "host",
            )
        return VarRef(raw.name, raw.span)

    def address(self, raw: S.RawOperand, what: str = "the address") -> Address:
        if not isinstance(raw, S.RawAddress):
            fail(span_of(raw), f"expected an address operand [...] for {what}", "operand")
        base: Reg | VarRef | Imm
        match raw.base:
            case S.RawVar():
                base = self.var(raw.base)
            case S.RawReg():
                base = self.reg(raw.base, None, False, "an address")
            case S.RawInt():
                fail(
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
                    fail(raw.offset.span, f"offset {raw.offset.text} is too large", "immediate")
                offset = Imm(value & ((1 << 64) - 1), raw.offset.span)
            case S.RawReg():
                offset = self.reg(raw.offset, None, False, "an address offset")
        return Address(base, offset, raw.span)

    def nargs(self, instr: S.RawInstr, n: int, shape: str) -> None:
        if len(instr.operands) != n:
            fail(
                instr.span,
                f"{instr.opcode.text} takes {n} operand{'s' if n != 1 else ''} ({shape}), "
                f"got {len(instr.operands)}",
                "operand",
            )

    # ------------------------------------------------------------ order and scope

    def order_scope(self, m: MemQ, what: str, default_relaxed: bool) -> tuple[Order, Scope]:
        if m.order is None:
            assert default_relaxed
            order_text = "relaxed"
        else:
            order_text = m.order.text
        order = isa.ORDERS[order_text]
        if order is Order.RLX:
            if m.scope is not None:
                fail(
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
            fail(m.scope.span, "scope .subgroup is allowed only in fence.subgroup", "scope")
        if self.host and scope is not Scope.SYS:
            fail(
                m.scope.span,
                f"host threads share only the .system scope, not .{m.scope.text}",
                "host",
            )
        return order, scope

    def atomic_cc(self, m: MemQ, space: AddrSpace) -> None:
        if not m.cc:
            return
        if space is AddrSpace.SHARED:
            fail(m.cc_span, "cache control is not allowed on .shared", "cc")
        if m.cc_text not in isa.ATOMIC_CC:
            fail(
                m.cc_span,
                f"'.{m.cc_text}' is not an atomic cache control (.uc, .L2wb or .L3wb)",
                "cc",
            )

    def host_space(self, space: AddrSpace, q: Q | None) -> None:
        if self.host and space not in (AddrSpace.GLOBAL, AddrSpace.GENERIC):
            span = q.span if q is not None else self.instr_span
            fail(span, f"host threads may access only .global memory, not .{space.value}", "host")

    def no_host(self, what: str) -> None:
        if self.host:
            fail(self.instr_span, f"host threads cannot execute {what}", "host")

    def width_of(self, m: MemQ, instr: S.RawInstr, mnemonic: str) -> int:
        if m.type is None:
            fail(instr.opcode.span, f"{mnemonic} needs a type qualifier such as .32b", "type")
        return isa.WIDTHS[m.type.text]

    def int_type(
        self,
        quals: list[Q],
        mnemonic: str,
        instr: S.RawInstr,
        allowed: frozenset[int],
        extra: Sequence[str] = (),
    ) -> tuple[int, list[Q]]:
        """Split off the one `.Nb` type qualifier; the others must be in `extra`."""
        width: int | None = None
        rest: list[Q] = []
        for q in quals:
            if q.text in isa.WIDTHS:
                if width is not None:
                    fail(q.span, f"second type qualifier '.{q.text}'", "qualifier")
                width = isa.WIDTHS[q.text]
                if width not in allowed:
                    ok = ", ".join(f".{w}b" for w in sorted(allowed))
                    fail(q.span, f"{mnemonic} does not support .{q.text} (only {ok})", "type")
            elif q.text == "16bx2":
                fail(q.span, "packed .16bx2 types are not supported", "unsupported")
            elif q.text in ("sat", "dsat", "full", "quo", "rem"):
                fail(q.span, f"{mnemonic}.{q.text} is not supported", "unsupported")
            elif q.text in extra:
                rest.append(q)
            else:
                hint = suggest(q.text, [*(f"{w}b" for w in allowed), *extra])
                fail(q.span, f"unknown qualifier '.{q.text}' for {mnemonic}{hint}", "qualifier")
        if width is None:
            fail(instr.opcode.span, f"{mnemonic} needs a type qualifier such as .32b", "type")
        return width, rest


def span_of(raw: S.RawOperand) -> Span:
    return raw.span
