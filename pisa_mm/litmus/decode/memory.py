"""ld, st (PISA 8.3, 8.5) and the asynchronous copies (cp.async, PTX extension)."""

from __future__ import annotations

from pisa_mm.events.kinds import Order, Scope
from pisa_mm.litmus import isa
from pisa_mm.litmus import syntax as S
from pisa_mm.litmus.decode.context import fail
from pisa_mm.litmus.decode.operands import OperandDecoder, span_of
from pisa_mm.litmus.decode.qualifiers import Q, classify, only
from pisa_mm.litmus.program import (
    AddrSpace,
    CommitGroup,
    CpAsync,
    Imm,
    Load,
    Op,
    Reg,
    Store,
    WaitGroup,
)


def ld_st(dec: OperandDecoder, instr: S.RawInstr, mnemonic: str) -> Load | Store:
    is_ld = mnemonic == "ld"
    space, order, scope, width, vec = dec.qualified(instr, _ld if is_ld else _st)
    dec.nargs(instr, 2, "dst, [addr]" if is_ld else "[addr], src")
    if is_ld:
        dst_raw, addr_raw = instr.operands
        dst = (
            dec.vreg(dst_raw, width, vec, True, "the destination")
            if vec > 1
            else dec.reg(dst_raw, width, True, "the destination")
        )
        return Load(dst, dec.address(addr_raw), space, order, scope, width, vec)
    addr_raw, src_raw = instr.operands
    addr = dec.address(addr_raw)
    src: Reg | Imm
    if vec > 1:
        src = dec.vreg(src_raw, width, vec, False, "the source")
    else:
        src = dec.src(src_raw, width, "the source")
    return Store(addr, src, space, order, scope, width, vec)


_Access = tuple[AddrSpace, Order | None, Scope | None, int, int]  # space, order, scope, width, vec


def _ld(dec: OperandDecoder, instr: S.RawInstr, quals: list[Q]) -> _Access:
    return _access("ld", dec, instr, quals)


def _st(dec: OperandDecoder, instr: S.RawInstr, quals: list[Q]) -> _Access:
    return _access("st", dec, instr, quals)


def _access(mnemonic: str, dec: OperandDecoder, instr: S.RawInstr, quals: list[Q]) -> _Access:
    """The qualifier checks of an ld or st (PISA 8.3, 8.5)."""
    m = classify(mnemonic, quals)
    only(mnemonic, m, {"space", "order", "scope", "vec", "type", "cc"})
    is_ld = mnemonic == "ld"
    width = dec.width_of(m, instr, mnemonic)
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
            fail(
                m.order.span,
                f"{mnemonic} does not allow .{order_text}: an atomic {mnemonic} is one of "
                f"{names} (PISA {'8.3' if is_ld else '8.5'})",
                "order",
            )
        if space in (AddrSpace.PRIVATE, AddrSpace.CONST):
            fail(m.order.span, f"a memory order is not allowed on .{space.value}", "order")
        if m.vec is not None:
            fail(m.vec.span, "vector accesses must be non-atomic (no memory order)", "vec")
        if width == 8:
            fail(m.type.span, ".8b is allowed only for non-atomic accesses", "type")
        if width == 64 and space is not AddrSpace.GLOBAL:
            fail(
                m.type.span,
                f"an atomic .64b {mnemonic} is allowed only on .global, not .{space.value} "
                f"(PISA {'8.3' if is_ld else '8.5'})",
                "type",
            )
        dec.atomic_cc(m, space)
        order, scope = dec.order_scope(m, mnemonic, False)
    else:
        if m.scope is not None:
            fail(
                m.scope.span,
                f"a memory scope needs an atomic order; this {mnemonic} is non-atomic",
                "scope",
            )
        if m.order is not None and space in (AddrSpace.PRIVATE, AddrSpace.CONST):
            fail(m.order.span, f"a memory order is not allowed on .{space.value}", "order")
        if not is_ld and space is AddrSpace.CONST:
            assert m.space is not None
            fail(m.space.span, "store to .const memory (read-only)", "const-store")
        if width not in isa.NONATOMIC_TYPES:
            fail(m.type.span, f"a non-atomic {mnemonic} has no .{width}b type", "type")
        if vec != 1 and width not in isa.VEC_TYPES[vec]:
            assert m.vec is not None
            ok = ", ".join(f".{w}b" for w in sorted(isa.VEC_TYPES[vec]))
            fail(m.vec.span, f".v{vec} is allowed only with {ok} (PISA 5.2)", "vec")
        if m.cc:
            if space is AddrSpace.SHARED:
                fail(m.cc_span, "cache control is not allowed on .shared", "cc")
            table = isa.LD_CC if is_ld else isa.ST_CC
            if m.cc_text not in table:
                fail(
                    m.cc_span,
                    f"'.{m.cc_text}' is not a cache control of non-atomic {mnemonic}",
                    "cc",
                )
    dec.host_space(space, m.space)
    return space, order, scope, width, vec


def cp_async(dec: OperandDecoder, instr: S.RawInstr) -> list[Op]:
    text = instr.opcode.text
    dec.no_host("cp.async")
    ops = instr.operands
    if text == "cp.async.shared.global":
        dec.nargs(instr, 3, "[dst], [src], size")
        dst = dec.address(ops[0], "the shared destination")
        src = dec.address(ops[1], "the global source")
        size_raw = ops[2]
        if not isinstance(size_raw, S.RawInt) or size_raw.value not in isa.CP_ASYNC_SIZES:
            fail(span_of(size_raw), "the cp.async size must be 4, 8 or 16 bytes", "operand")
        return [CpAsync(dst, src, size_raw.value)]
    if text == "cp.async.commit_group":
        dec.nargs(instr, 0, "none")
        return [CommitGroup()]
    if text == "cp.async.wait_all":
        dec.nargs(instr, 0, "none")
        return [CommitGroup(), WaitGroup(0)]
    if text == "cp.async.wait_group":
        dec.nargs(instr, 1, "N")
        n = ops[0]
        if not isinstance(n, S.RawInt) or n.value < 0:
            fail(span_of(n), "cp.async.wait_group needs a non-negative integer", "operand")
        return [WaitGroup(n.value)]
    fail(
        instr.opcode.span,
        f"unknown instruction '{text}' (cp.async forms: cp.async.shared.global, "
        "cp.async.commit_group, cp.async.wait_group, cp.async.wait_all)",
        "unknown-instruction",
    )
