"""Raw syntax tree to LitmusTest: decode every instruction and enforce PISA's restrictions.

The checks live in pisa_mm/litmus/decode/, one module per instruction family or check kind;
this module runs them in order over a whole test.
"""

from __future__ import annotations

from pisa_mm.litmus import isa
from pisa_mm.litmus import syntax as S
from pisa_mm.litmus.decode import floats
from pisa_mm.litmus.decode.access import check_accesses, static_targets
from pisa_mm.litmus.decode.condition import CondChecker, validate_prop
from pisa_mm.litmus.decode.context import Ctx, RegInfo, fail
from pisa_mm.litmus.decode.dataflow import check_defined, def_use
from pisa_mm.litmus.decode.declarations import (
    thread_index,
    thread_placements,
    unroll_metadata,
    var_decl,
)
from pisa_mm.litmus.decode.immediates import int_bits
from pisa_mm.litmus.decode.thread import ThreadDecoder
from pisa_mm.litmus.program import (
    Condition,
    LitmusTest,
    Pred,
    Quantifier,
    Reg,
    RegInit,
    Thread,
    VarRef,
)
from pisa_mm.records import replace
from pisa_mm.values.expr import FpFormat

__all__ = ["validate", "validate_prop"]


_QUANTIFIERS = {
    "exists": Quantifier.EXISTS,
    "~exists": Quantifier.NOT_EXISTS,
    "forall": Quantifier.FORALL,
}


def validate(raw: S.RawTest, *, strict: bool = False) -> LitmusTest:
    """Check and decode a raw test; the first violation raises PisaMMError."""
    ctx = Ctx(raw.path, raw.source, strict, {}, [])
    unroll = unroll_metadata(raw)
    for d in raw.variables:
        decl = var_decl(ctx, d, None)
        ctx.variables[decl.name] = decl
    for i, t in enumerate(raw.threads):
        if not t.name.text.startswith("P") or thread_index(t.name, "thread") != i:
            fail(
                t.name.span,
                f"threads must be numbered P0, P1, ... in order: expected P{i}, got {t.name.text}",
                "thread",
            )
        for st in t.body:
            if isinstance(st, S.RawVarDecl):
                decl = var_decl(ctx, st, i)
                ctx.variables[decl.name] = decl
    placements = thread_placements(raw)
    nthreads = len(raw.threads)

    # register inits, grouped by thread
    raw_inits: dict[int, dict[str, S.RawRegInit]] = {}
    for ri in raw.reg_inits:
        ti = thread_index(ri.thread, "init")
        if ti >= nthreads:
            fail(
                ri.thread.span,
                f"init of a register of P{ti}, but there is no thread P{ti}",
                "thread",
            )
        name = ri.reg.text[1:]
        if name in raw_inits.setdefault(ti, {}):
            fail(ri.span, f"P{ti}:%{name} is initialised twice", "duplicate")
        raw_inits[ti][name] = ri

    threads: list[Thread] = []
    all_inits: list[RegInit] = []
    reg_tables: list[dict[str, RegInfo]] = []
    reg_floats: list[dict[str, FpFormat]] = []
    var_formats: floats.Formats = {}
    for i, t in enumerate(raw.threads):
        host = placements[i].host
        dec = ThreadDecoder(ctx, i, host, t)
        body, end_labels, regs = dec.run()
        thread_floats = floats.single(floats.register_formats(body))
        inits: dict[str, RegInit] = {}
        for name, ri in raw_inits.get(i, {}).items():
            info = regs.get(name)
            value: int | VarRef
            if isinstance(ri.value, S.RawVar):
                ref = dec.var(ri.value)
                if info is None:
                    info = regs[name] = RegInfo(
                        False, isa.ADDRESS_BITS[ctx.variables[ref.name].space], 1, False, ri.span
                    )
                if info.pred or info.vec > 1:
                    fail(ri.reg.span, f"%{name} cannot hold an address", "width")
                bits = isa.ADDRESS_BITS[ctx.variables[ref.name].space]
                if info.width not in (32, 64) or info.width < bits:
                    # a 64-bit register may hold any address (a generic pointer, PISA 3.3.1)
                    fail(
                        ri.value.span,
                        f"the address of @{ref.name} is {bits}-bit; %{name} is .{info.width}b",
                        "width",
                    )
                value = ref
            else:
                if info is None:
                    info = regs[name] = RegInfo(False, 32, 1, False, ri.span)
                if info.vec > 1:
                    fail(ri.reg.span, f"vector register %{name} cannot be initialised", "width")
                if isinstance(ri.value, S.RawFloat):
                    shown = f"P{i}:%{name}"
                    value = floats.float_bits(ri.value, thread_floats.get(name), shown)
                else:
                    value = int_bits(ri.value, info.width, "register")
            reg: Reg | Pred = (
                Pred(name, False, ri.reg.span) if info.pred else Reg(name, None, ri.reg.span)
            )
            inits[name] = RegInit(i, reg, value, ri.span)
        flow = [def_use(ins.op) for ins in body]  # shared by the checks below
        static: dict[str, VarRef] = {}
        # A thread that reads no register (most small tests: immediates and `[@x]`) has no
        # read before a write, and no register address for `static` to know.
        if any(uses for _, uses in flow):
            check_defined(i, body, flow, end_labels, regs, set(inits))
            static = static_targets(body, flow, inits)
        check_accesses(ctx, body, static, host)
        floats.variable_formats(body, static, var_formats)
        all_inits.extend(inits.values())
        reg_tables.append(regs)
        reg_floats.append(thread_floats)
        threads.append(
            Thread(
                i,
                placements[i],
                tuple(sorted((n, r.width) for n, r in regs.items())),
                tuple(body),
                t.span,
                tuple(sorted((n, r.vec) for n, r in regs.items() if r.vec > 1)),
                tuple(end_labels),
                tuple(sorted(thread_floats.items())),
            )
        )
    _type_floats(ctx, floats.single(var_formats))

    checker = CondChecker(ctx, reg_tables, placements, reg_floats)
    locations = tuple(checker.observable(o)[0] for o in raw.locations)
    cond = raw.condition
    quant = _QUANTIFIERS[cond.quantifier.text]
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
        unroll,
        filter=None if raw.filter is None else checker.prop(raw.filter),
    )


def _type_floats(ctx: Ctx, formats: dict[str, FpFormat]) -> None:
    """Record the variables' float types and convert their float initial values."""
    for name, fmt in formats.items():
        ctx.variables[name] = replace(ctx.variables[name], fmt=fmt)
    for name, index, raw in ctx.float_inits:
        decl = ctx.variables[name]
        init = list(decl.init)
        init[index] = floats.float_bits(raw, decl.fmt, f"@{name}")
        ctx.variables[name] = replace(decl, init=tuple(init))
