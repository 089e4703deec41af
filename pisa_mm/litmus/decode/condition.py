"""The observables of `locations` and the final condition, checked against the test."""

from __future__ import annotations

from pisa_mm.errors import int_literal
from pisa_mm.events.kinds import Space
from pisa_mm.litmus import syntax as S
from pisa_mm.litmus.decode.context import SWIZZLE, Ctx, RegInfo, fail
from pisa_mm.litmus.decode.declarations import thread_index
from pisa_mm.litmus.decode.floats import float_bits
from pisa_mm.litmus.decode.immediates import int_bits
from pisa_mm.litmus.program import (
    And,
    Atom,
    BoolConst,
    Implies,
    LitmusTest,
    MemObs,
    Not,
    Observable,
    Or,
    Prop,
    RegObs,
    ThreadPlacement,
)
from pisa_mm.values.expr import FpFormat


class CondChecker:
    """Resolves the observables of `locations` and the final condition."""

    def __init__(
        self,
        ctx: Ctx,
        regs: list[dict[str, RegInfo]],
        places: list[ThreadPlacement],
        floats: list[dict[str, FpFormat]] | None = None,
    ) -> None:
        self.ctx = ctx
        self.regs = regs
        self.places = places
        self.floats = floats if floats is not None else [{} for _ in regs]

    def observable(self, o: S.RawObservable) -> tuple[Observable, int]:
        """The observable and its width in bits."""
        if isinstance(o, S.RawRegObs):
            t = thread_index(o.thread, "condition")
            if t >= len(self.regs):
                fail(o.thread.span, f"there is no thread P{t}", "condition")
            name = o.reg.text[1:]
            elem: int | None = None
            table = self.regs[t]
            if name not in table and "." in name:
                base, _, sw = name.rpartition(".")
                if base in table and table[base].vec > 1 and sw in SWIZZLE:
                    name, elem = base, SWIZZLE[sw]
            info = table.get(name)
            if info is None:
                fail(o.reg.span, f"P{t} has no register %{name}", "condition")
            if info.vec > 1 and elem is None:
                fail(o.reg.span, f"name one element of vector %{name}, e.g. %{name}.x", "condition")
            if elem is not None and elem >= info.vec:
                fail(o.reg.span, f"%{name} has only {info.vec} elements", "condition")
            fmt = self.floats[t].get(name) if elem is None else None
            return RegObs(t, name, elem, fmt, info.width), info.width
        name = o.var.text[1:]
        decl = self.ctx.variables.get(name)
        if decl is None:
            fail(o.var.span, f"undeclared variable @{name}", "undeclared")
        index = 0
        if o.index is not None:
            index = o.index.value
            if not 0 <= index < decl.count:
                fail(
                    o.index.span,
                    f"@{name} has {decl.count} element"
                    f"{'s' if decl.count != 1 else ''}; index {index} is out of bounds",
                    "bounds",
                )
        if decl.space is Space.PRIVATE:
            fail(o.var.span, f"cannot observe .private variable @{name}", "condition")
        wg, gpu = self._shared_instance(o, name, decl.space)
        return MemObs(name, index, wg, gpu, decl.fmt, decl.width), decl.width

    def _shared_instance(
        self, o: S.RawMemObs, name: str, space: Space
    ) -> tuple[int | None, int | None]:
        """(work-group, NDRange) of a `.shared` observable; (None, None) for other spaces.
        NDRange 0 is given as None, so that each instance has one MemObs.

        `gpuN:wgK:@s` names work-group K of NDRange N; `wgK:@s` NDRange 0's work-group K,
        or, when NDRange 0 has none, that of the only NDRange with a work-group K.
        """
        groups = sorted({(p.gpu or 0, p.wg) for p in self.places if p.wg is not None})
        prefix = o.gpu if o.gpu is not None else o.wg
        if prefix is not None and space is not Space.SHARED:
            fail(
                prefix.span,
                f"a work-group prefix names a .shared instance; @{name} is .{space.value}",
                "condition",
            )
        if o.wg is None:
            if space is not Space.SHARED:
                return None, None
            if len(groups) != 1:
                g, w = groups[0] if groups else (0, 0)
                example = f"wg{w}:@{name}" if g == 0 else f"gpu{g}:wg{w}:@{name}"
                fail(
                    o.var.span,
                    f"@{name} is .shared: name the work-group instance, e.g. {example}",
                    "condition",
                )
            g, w = groups[0]
            return w, g or None
        wg = int_literal(o.wg.text[2:], o.wg.span, "work-group number")
        if o.gpu is not None:
            gpu = int_literal(o.gpu.text[3:], o.gpu.span, "NDRange number")
            if (gpu, wg) not in groups:
                fail(o.gpu.span, f"no thread is in work-group {wg} of gpu {gpu}", "condition")
            return wg, gpu or None
        gpus = sorted(g for g, w in groups if w == wg)
        if not gpus:
            fail(o.wg.span, f"no thread is in work-group {wg}", "condition")
        if 0 not in gpus and len(gpus) > 1:
            fail(
                o.wg.span,
                f"work-group {wg} exists in gpus {', '.join(map(str, gpus))} but not in gpu 0: "
                f"write gpu{gpus[0]}:wg{wg}:@{name}",
                "condition",
            )
        return wg, None if 0 in gpus else gpus[0]

    def prop(self, p: S.RawProp) -> Prop:
        match p:  # atoms first: a condition is mostly atoms
            case S.RawAtom(obs=o, op=cmp, value=v, span=span):
                obs, width = self.observable(o)
                if isinstance(v, S.RawFloat):
                    value = float_bits(v, obs.fmt, str(obs))
                else:
                    value = int_bits(v, width, "value")
                return Atom(obs, value, cmp == "!=", span)
            case S.RawBool(value=v):
                return BoolConst(v)
            case S.RawNot(arg=a):
                return Not(self.prop(a))
            case S.RawBinary(op="implies", lhs=lhs, rhs=rhs):
                return Implies(self.prop(lhs), self.prop(rhs))
            case S.RawJunction(op=op, args=sides):
                args: list[Prop] = []
                for side in sides:
                    sub = self.prop(side)
                    if (op == "and" and isinstance(sub, And)) or (
                        op == "or" and isinstance(sub, Or)
                    ):
                        args.extend(sub.args)
                    else:
                        args.append(sub)
                return And(tuple(args)) if op == "and" else Or(tuple(args))
        raise AssertionError(p)


def validate_prop(raw: S.RawProp, test: LitmusTest, source: str) -> Prop:
    """Check a stand-alone PROP against an already validated test."""
    ctx = Ctx(test.path, source, False, {v.name: v for v in test.variables}, [])
    tables: list[dict[str, RegInfo]] = []
    for th in test.threads:
        vecs = dict(th.vectors)
        tables.append({n: RegInfo(w == 1, w, vecs.get(n, 1), True, th.span) for n, w in th.regs})
    places = [th.placement for th in test.threads]
    floats = [dict(th.floats) for th in test.threads]
    return CondChecker(ctx, tables, places, floats).prop(raw)
