"""The litmus frontend: every instruction family decodes to the right program.py object."""

from __future__ import annotations

import pytest

from pisa_mm.errors import PisaMMError
from pisa_mm.events.kinds import Order, Scope, Space
from pisa_mm.litmus import parse_test
from pisa_mm.litmus.program import (
    AddrOf,
    AddrSpace,
    Alu,
    AluOp,
    And,
    Atom,
    Barrier,
    BoolConst,
    CmpOp,
    Collective,
    CollectiveKind,
    CommitGroup,
    Compare,
    CpAsync,
    FAtom,
    FAtomOp,
    Fence,
    Goto,
    IAtom,
    IAtomOp,
    Imm,
    Implies,
    LitmusTest,
    Load,
    MemObs,
    Not,
    Op,
    Or,
    Pred,
    Quantifier,
    Reg,
    RegObs,
    Return,
    Select,
    Store,
    VarRef,
    WaitGroup,
)
from pisa_mm.values.expr import FpFormat

MP = """PISA MP+rel.gpu+acq.gpu
"Message passing across two work-groups with gpu-scope release/acquire."
{
  .global .32b @x = 0;
  .global .32b @y = 0;
}

P0 @ wg 0 {
  st.global.32b [@x], 1;
  st.global.release.gpu.32b [@y], 1;
}

P1 @ wg 1 {
  ld.global.acquire.gpu.32b %r0, [@y];
  ld.global.32b %r1, [@x];
}

exists (P1:%r0 == 1 /\\ P1:%r1 == 0)
"""

INIT = """{
  .global .32b @x = 0;
  .global .32b @a[4] = {1, 2};
  .global .16b @h = 0;
  .global .64b @g = 0;
  .global .128b @q = 0;
  .shared .32b @s = 0;
  .shared .16b @sh = 0;
  .const .32b @c = 3;
%s}
"""


def build(
    body: str, init: str = "", cond: str = "exists (true)", strict: bool = False
) -> LitmusTest:
    text = "PISA T\n" + INIT % init + "P0 @ wg 0 {\n" + body + "\n}\n" + cond + "\n"
    return parse_test(text, "t.litmus", strict=strict)


def op(body: str, init: str = "", index: int = 0) -> Op:
    return build(body, init).threads[0].body[index].op


def error(body: str, init: str = "", cond: str = "exists (true)", strict: bool = False) -> str:
    with pytest.raises(PisaMMError) as info:
        build(body, init, cond, strict)
    return info.value.diagnostics[0].message


def test_mp_example() -> None:
    t = parse_test(MP, "mp.litmus")
    assert t.name == "MP+rel.gpu+acq.gpu"
    assert t.description is not None and t.description.startswith("Message passing")
    assert [v.name for v in t.variables] == ["x", "y"]
    p0, p1 = t.threads
    assert p0.placement.wg == 0 and p1.placement.wg == 1
    assert p0.placement.gpu == 0 and p0.placement.sg != p1.placement.sg
    st = p0.body[1].op
    assert isinstance(st, Store)
    assert (st.order, st.scope, st.width, st.space) == (Order.REL, Scope.GPU, 32, AddrSpace.GLOBAL)
    assert st.addr.base == VarRef("y", st.addr.base.span)
    ld = p1.body[0].op
    assert isinstance(ld, Load) and ld.order is Order.ACQ and ld.dst.name == "r0"
    weak = p1.body[1].op
    assert isinstance(weak, Load) and weak.order is None and weak.scope is None
    assert t.condition.quantifier is Quantifier.EXISTS
    prop = t.condition.prop
    assert isinstance(prop, And) and len(prop.args) == 2
    a0 = prop.args[0]
    assert isinstance(a0, Atom) and a0.obs == RegObs(1, "r0") and a0.value == 1
    assert t.warnings == ()
    assert dict(p1.regs) == {"r0": 32, "r1": 32}


def test_header_metadata_and_comments() -> None:
    text = (
        '// leading comment\nPISA X.y+z-1\n"desc"\nexpect = allowed\nflags = data-race\n'
        "(* block\n comment *)\n{ .global .32b @x; }\nP0 @ gpu 1 { st.global.32b [@x], 1; }\n"
        "~exists (@x = 1)\n"
    )
    t = parse_test(text, "m.litmus")
    assert t.name == "X.y+z-1" and t.description == "desc"
    assert t.metadata == (("expect", "allowed"), ("flags", "data-race"))
    assert t.condition.quantifier is Quantifier.NOT_EXISTS
    assert t.threads[0].placement.gpu == 1
    assert t.variables[0].init == (0,)


def test_ld_st_forms() -> None:
    ld = op("ld.shared.relaxed.32b %r0, [@s];")
    assert isinstance(ld, Load)
    assert (ld.order, ld.scope, ld.space) == (Order.RLX, Scope.SYS, AddrSpace.SHARED)
    ld = op("ld.global.seq_cst.system.uc.128b %r0, [@q];")
    assert isinstance(ld, Load) and (ld.order, ld.scope, ld.width) == (Order.SC, Scope.SYS, 128)
    ld = op("ld.global.weak.L1c.L2c.L3c.32b %r0, [@a + 4];")
    assert isinstance(ld, Load) and ld.order is None
    assert ld.addr.offset == Imm(4, ld.addr.offset.span if ld.addr.offset else None)
    ld = op("ld.32b %r0, [@x];")
    assert isinstance(ld, Load) and ld.space is AddrSpace.GENERIC
    st = op("st.global.release.workgroup.L2wb.32b [@x], -1;")
    assert isinstance(st, Store) and st.scope is Scope.WG and isinstance(st.src, Imm)
    assert st.src.value == 0xFFFFFFFF
    st = op("st.global.L1wb.L2uc.L3wb.16b [@h], 0xffff;")
    assert isinstance(st, Store) and st.src == Imm(0xFFFF, st.src.span)
    ld = op("ld.const.32b %r0, [@c];")
    assert isinstance(ld, Load) and ld.space is AddrSpace.CONST


def test_vector_access_and_swizzle() -> None:
    th = build(
        ".reg .v4.32b %v;\n.reg .v2.32b %w;\n"
        "ld.global.v4.32b %v, [@a];\n"
        "mov.32b %r0, %v.z;\n"
        "mov.32b %w.x, %r0;\nmov.32b %w.y, %r0;\n"
        "st.global.v2.32b [@a + 8], %w;\n"
    ).threads[0]
    ld = th.body[0].op
    assert isinstance(ld, Load) and ld.vec == 4 and ld.dst == Reg("v", None, ld.dst.span)
    mov = th.body[1].op
    assert isinstance(mov, Alu) and mov.srcs[0] == Reg("v", 2, mov.srcs[0].span)
    st = th.body[4].op
    assert isinstance(st, Store) and st.vec == 2
    assert dict(th.vectors) == {"v": 4, "w": 2}
    assert dict(th.regs)["v"] == 32


def test_every_iatom_op_and_width() -> None:
    for o in IAtomOp:
        srcs = {IAtomOp.INC: "", IAtomOp.DEC: "", IAtomOp.CAS: ", 1, 2"}.get(o, ", 1")
        for w, var in ((16, "h"), (32, "x"), (64, "g"), (128, "q")):
            body = f"iatom.global.{o.value}.{w}b %r0, [@{var}]{srcs};"
            ok = w != 128 or o in (IAtomOp.CAS, IAtomOp.XCHG)
            ok = ok and not (w == 16 and o in (IAtomOp.INCWRAP, IAtomOp.DECWRAP))
            if ok:
                got = op(body)
                assert isinstance(got, IAtom) and got.op is o and got.width == w
                assert got.order is Order.RLX and got.scope is Scope.SYS
            else:
                error(body)


def test_iatom_orders_and_shared_table() -> None:
    got = op("iatom.shared.acq_rel.workgroup.cas.32b %r0, [@s], 0, 1;")
    assert isinstance(got, IAtom) and got.order is Order.ACQ_REL and got.scope is Scope.WG
    assert got.src0 == Imm(0, got.src0.span if got.src0 else None)
    got = op("iatom.global.release.gpu.incwrap.32b %r0, [@x], 5;")
    assert isinstance(got, IAtom) and got.order is Order.REL
    assert "does not support .64b" in error("iatom.shared.add.64b %r0, [@s], 1;")
    assert "does not support .32b" not in error("iatom.shared.incwrap.16b %r0, [@sh], 1;")


def test_every_fatom_op_and_type() -> None:
    for o in FAtomOp:
        for fmt, var in (
            (FpFormat.HF, "h"),
            (FpFormat.BF, "h"),
            (FpFormat.F, "x"),
            (FpFormat.DF, "g"),
        ):
            srcs = ", 1.0, 2.0" if o is FAtomOp.CAS else ", 1.0"
            body = f"fatom.global.{o.value}.{fmt.value[0]} %r0, [@{var}]{srcs};"
            if fmt is FpFormat.DF and o not in (FAtomOp.ADD, FAtomOp.SUB):
                error(body)
                continue
            got = op(body)
            assert isinstance(got, FAtom) and got.op is o and got.fmt is fmt
            assert isinstance(got.src0, Imm)
    got = op("fatom.global.acquire.gpu.add.f %r0, [@x], 0x3f800000;")
    assert isinstance(got, FAtom) and got.src0 == Imm(0x3F800000, got.src0.span)


def _fatom_imm(literal: str, fmt: str) -> int:
    var = {"hf": "@h", "bf": "@h", "f": "@x", "df": "@g"}[fmt]
    got = op(f"fatom.global.add.{fmt} %r0, [{var}], {literal};")
    assert isinstance(got, FAtom) and isinstance(got.src0, Imm)
    return got.src0.value


def test_float_immediates_round_to_nearest_even() -> None:
    assert _fatom_imm("1.0", "f") == 0x3F800000
    assert _fatom_imm("-1.0", "hf") == 0xBC00
    assert _fatom_imm("1.5", "bf") == 0x3FC0
    assert _fatom_imm("0.1", "df") == 0x3FB999999999999A
    assert _fatom_imm("65504.0", "hf") == 0x7BFF
    assert _fatom_imm("5.960464477539063e-08", "hf") == 0x0001  # smallest subnormal
    # halfway between 1 and the next bf16 (1 + 2^-7): ties to even, down to 1.0
    assert _fatom_imm("1.00390625", "bf") == 0x3F80
    assert _fatom_imm("1.01171875", "bf") == 0x3F82
    assert _fatom_imm("0.0", "f") == 0 and _fatom_imm("-0.0", "f") == 0x80000000


def test_float_immediate_that_rounds_past_the_largest_finite_is_an_error() -> None:
    with pytest.raises(PisaMMError, match=r"overflows \.hf"):
        _fatom_imm("65520.0", "hf")


def test_fence_forms() -> None:
    both = frozenset({Space.GLOBAL, Space.SHARED})
    assert op("fence.workgroup;") == Fence(both, Order.ACQ_REL, Scope.WG)
    assert op("fence.acquire.gpu;") == Fence(both, Order.ACQ, Scope.GPU)
    assert op("fence.shared.release.workgroup;") == Fence(
        frozenset({Space.SHARED}), Order.REL, Scope.WG
    )
    assert op("fence.generic.seq_cst.gpu;") == Fence(both, Order.SC, Scope.GPU)
    assert op("fence.global.acq_rel.system;") == Fence(
        frozenset({Space.GLOBAL}), Order.ACQ_REL, Scope.SYS
    )
    assert op("fence.subgroup;") == Fence(both, Order.ACQ_REL, Scope.SG)
    assert op("barrier.workgroup;") == Barrier()


def test_alu_compare_select_addrof() -> None:
    t = build(
        "mov.32b %r0, 5;\n"
        "iadd.32b %r1, %r0, -1;\n"
        "shl.64b %d, %e, %r1;\n"
        "ineg.16b %h, 3;\n"
        "scmp.lt.32b %p, %r1, 4;\n"
        "ucmp.ge.32b %q, %r1, 0xffffffff;\n"
        "sel.32b %r2, %r0, 7, !%p;\n"
        "addrof.64b %ad, @x;\n"
        "addrof.32b %as, @s;\n"
        "mov.64b %m, @g;\n",
        "  P0:%e = 1;\n",
    )
    body = [i.op for i in t.threads[0].body]
    assert body[0] == Alu(
        AluOp.MOV, Reg("r0", None, body[0].dst.span), (Imm(5, body[0].srcs[0].span),), 32
    )  # type: ignore[union-attr]
    assert isinstance(body[1], Alu) and body[1].op is AluOp.ADD
    assert isinstance(body[1].srcs[1], Imm) and body[1].srcs[1].value == 0xFFFFFFFF
    assert isinstance(body[2], Alu) and body[2].op is AluOp.SHL and body[2].width == 64
    assert isinstance(body[3], Alu) and body[3].op is AluOp.NEG
    cmp = body[4]
    assert isinstance(cmp, Compare) and cmp.op is CmpOp.LT and cmp.signed and cmp.dst.name == "p"
    assert isinstance(body[5], Compare) and not body[5].signed
    sel = body[6]
    assert isinstance(sel, Select) and sel.cond.negated and isinstance(sel.b, Imm)
    assert isinstance(body[7], AddrOf) and body[7].width == 64 and body[7].var.name == "x"
    assert isinstance(body[8], AddrOf) and body[8].width == 32
    assert isinstance(body[9], Alu) and isinstance(body[9].srcs[0], VarRef)
    regs = dict(t.threads[0].regs)
    assert regs["p"] == 1 and regs["d"] == 64 and regs["e"] == 64 and regs["h"] == 16


def test_control_flow_and_labels() -> None:
    t = build(
        ".pred %p;\n"
        "top:\n"
        "ld.global.32b %r0, [@x];\n"
        "scmp.eq.32b %p, %r0, 0;\n"
        "goto.cond %p, top;\n"
        "goto.cond !%p, end;\n"
        "return.cond %p;\n"
        "goto end;\n"
        "return;\n"
        "end:\n"
    )
    th = t.threads[0]
    assert th.body[0].labels == ("top",)
    g = th.body[2].op
    assert (
        isinstance(g, Goto)
        and g.label == "top"
        and g.cond == Pred("p", False, g.cond.span if g.cond else None)
    )
    g2 = th.body[3].op
    assert isinstance(g2, Goto) and g2.cond is not None and g2.cond.negated
    assert isinstance(th.body[4].op, Return) and th.body[4].op.cond is not None
    assert isinstance(th.body[6].op, Return) and th.body[6].op.cond is None
    assert th.end_labels == ("end",)
    assert th.label_index("end") == len(th.body) and th.label_index("top") == 0


def test_collectives_and_async() -> None:
    t = build(
        "shfl.up.sg.32b %r0, %r1, 1, 0xffffffff;\n"
        "ired.smax.16b %r2, %h, 0xffff;\n"
        "redfirstidx.32b %r3, 0xffff;\n"
        "cp.async.shared.global [@s], [@x], 4;\n"
        "cp.async.commit_group;\n"
        "cp.async.wait_group 1;\n"
        "cp.async.wait_all;\n",
        "  P0:%r1 = 9;\n  P0:%h = 2;\n",
    )
    body = t.threads[0].body
    shfl = body[0].op
    assert isinstance(shfl, Collective) and shfl.kind is CollectiveKind.SHFL and shfl.op == "up.sg"
    assert len(shfl.srcs) == 3
    ired = body[1].op
    assert isinstance(ired, Collective) and ired.op == "smax" and ired.width == 16
    red = body[2].op
    assert isinstance(red, Collective) and red.kind is CollectiveKind.REDFIRSTIDX
    assert isinstance(body[3].op, CpAsync) and body[3].op.size == 4
    assert body[4].op == CommitGroup() and body[5].op == WaitGroup(1)
    assert body[6].op == CommitGroup() and body[7].op == WaitGroup(0)
    assert body[6].span == body[7].span and [i.index for i in body] == list(range(8))


def test_placement_defaults_never_clash() -> None:
    text = (
        "PISA P\n{ .global .32b @x; }\n"
        "P0 @ wg 0, sg 0 { st.global.32b [@x], 1; }\n"
        "P1 @ sg 0 { st.global.32b [@x], 1; }\n"
        "P2 @ wg 0 { st.global.32b [@x], 1; }\n"
        "P3 @ gpu 2 { st.global.32b [@x], 1; }\n"
        "P4 @ host { st.global.release.system.32b [@x], 1; }\n"
        "exists (true)\n"
    )
    t = parse_test(text, "p.litmus")
    pl = [th.placement for th in t.threads]
    assert (pl[0].wg, pl[0].sg) == (0, 0)
    assert pl[1].wg not in (0, None) and pl[1].sg == 0
    assert pl[2].wg == 0 and pl[2].sg not in (0, None)
    assert pl[3].gpu == 2 and pl[3].wg not in (0, pl[1].wg)
    assert pl[4].host and pl[4].wg is None and pl[4].gpu is None


def test_register_inits_and_static_addresses() -> None:
    t = build(
        "ld.global.32b %r0, [%p];\nst.generic.32b [%p + 4], %r0;",
        "  P0:%p = @a;\n  P0:%k = -2;\n",
    )
    inits = {i.reg.name: i.value for i in t.reg_inits}
    assert isinstance(inits["p"], VarRef) and inits["k"] == 0xFFFFFFFE
    assert dict(t.threads[0].regs)["p"] == 64
    # an address held in a register is computed even when it is a known variable's: past
    # it or misaligned, it is the builder's invalid-address (if reached), no input error
    build("ld.global.32b %r0, [%p + 2];", "  P0:%p = @a;\n")
    build("addrof.64b %p, @a;\nld.global.32b %r0, [%p + 16];")
    assert "misaligned" in error("ld.global.32b %r0, [@a + 2];")
    assert "out-of-bounds" in error("ld.global.32b %r0, [@a + 16];")


def test_condition_forms() -> None:
    t = build(
        "ld.global.32b %r0, [@x];\nst.shared.32b [@s], 1;",
        cond="locations [P0:%r0; @a[1]; wg0:@s]\n"
        "forall (0:%r0 = -1 -> ~(@a[1] != 2) \\/ wg0:@s == 1 && !false || (true))",
    )
    assert t.locations == (RegObs(0, "r0"), MemObs("a", 1), MemObs("s", 0, 0))
    prop = t.condition.prop
    assert isinstance(prop, Implies)
    assert isinstance(prop.lhs, Atom) and prop.lhs.value == 0xFFFFFFFF
    assert isinstance(prop.rhs, Or) and len(prop.rhs.args) == 3
    assert isinstance(prop.rhs.args[0], Not)
    assert isinstance(prop.rhs.args[1], And)
    assert prop.rhs.args[2] == BoolConst(True)
    # a single work-group: the shared instance may be left implicit
    t2 = build("st.shared.32b [@s], 1;", cond="exists (@s == 1)")
    atom = t2.condition.prop
    assert isinstance(atom, Atom) and atom.obs == MemObs("s", 0, 0)


def test_missing_scope_warns_or_fails_strict() -> None:
    t = build("ld.global.acquire.32b %r0, [@x];")
    ld = t.threads[0].body[0].op
    assert isinstance(ld, Load) and ld.scope is Scope.GPU
    assert len(t.warnings) == 1 and "warning: ld.acquire has no memory scope" in t.warnings[0]
    assert "t.litmus:" in t.warnings[0] and "^" in t.warnings[0]
    assert "no memory scope" in error("ld.global.acquire.32b %r0, [@x];", strict=True)


def test_use_before_definition_dataflow() -> None:
    # defined on every path before the use: accepted
    build(
        "ld.global.32b %r0, [@x];\nscmp.eq.32b %p, %r0, 0;\ngoto.cond %p, a;\n"
        "mov.32b %r1, 1;\ngoto b;\na:\nmov.32b %r1, 2;\nb:\nst.global.32b [@x], %r1;"
    )
    # a loop that writes the register before its back edge: accepted
    build(
        "top:\nmov.32b %r1, 1;\nst.global.32b [@x], %r1;\n"
        "scmp.eq.32b %p, %r1, 0;\ngoto.cond %p, top;"
    )
    assert "may be read before" in error(
        "goto skip;\nmov.32b %r1, 1;\nskip:\nst.global.32b [@x], %r1;"
    )


def test_unsupported_is_named() -> None:
    assert "mixed-size" in error("ld.global.16b %r0, [@x];")
    assert "'fadd' is not supported" in error("fadd.f %r0, %r1, %r2;")
    assert ".16bx2" in error("iadd.16bx2 %r0, %r1, %r2;")
    assert "multi-element swizzle" in error(".reg .v2.32b %v;\nmov.64b %r0, %v.xy;")
    assert "store to .const" in error("st.generic.32b [%p], 1;", "  P0:%p = @c;\n")
    assert "host threads" in parse_error_host()


def parse_error_host() -> str:
    text = "PISA H\n{ .shared .32b @s; }\nP0 @ host { ld.generic.32b %r0, [%p]; }\nexists (true)\n"
    text = text.replace("{ .shared .32b @s; }", "{ .shared .32b @s; P0:%p = @s; }")
    with pytest.raises(PisaMMError) as info:
        parse_test(text, "h.litmus")
    return info.value.diagnostics[0].message


def test_errors_carry_sources() -> None:
    with pytest.raises(PisaMMError) as info:
        parse_test("PISA\n", "e.litmus")
    exc = info.value
    assert getattr(exc, "sources", None) == {"e.litmus": "PISA\n"}
    assert exc.render(exc.sources).startswith("e.litmus:")  # type: ignore[attr-defined]


def test_parse_prop_against_a_test() -> None:
    from pisa_mm.litmus import parse_prop

    t = parse_test(MP, "mp.litmus")
    prop = parse_prop("P1:%r0 == 1 /\\ @x != 0", t)
    assert isinstance(prop, And) and prop.args[0] == Atom(
        RegObs(1, "r0"), 1, False, prop.args[0].span
    )  # type: ignore[union-attr]
    with pytest.raises(PisaMMError) as info:
        parse_prop("P1:%r9 == 1", t)
    assert getattr(info.value, "sources", None) == {"<outcome>": "P1:%r9 == 1"}
