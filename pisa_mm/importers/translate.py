"""Translate a parsed herd C11 / OpenCL test into the pieces of a PISA litmus test."""

from __future__ import annotations

import re
from collections.abc import Iterator

from pisa_mm.errors import Span
from pisa_mm.importers import syntax as S
from pisa_mm.importers.placement import Place, covers, placements
from pisa_mm.importers.skips import Reason, Unsupported
from pisa_mm.records import record

__all__ = ["PisaTest", "translate"]

ORDERS = {
    "memory_order_relaxed": "relaxed",
    "memory_order_consume": "consume",
    "memory_order_acquire": "acquire",
    "memory_order_release": "release",
    "memory_order_acq_rel": "acq_rel",
    "memory_order_seq_cst": "seq_cst",
}
# OpenCL memory scopes -> PISA scopes (None: PISA has no such scope).
SCOPES: dict[str, str | None] = {
    "memory_scope_work_item": None,
    "memory_scope_sub_group": "subgroup",
    "memory_scope_work_group": "workgroup",
    "memory_scope_device": "gpu",
    "memory_scope_all_svm_devices": "system",
    "memory_scope_all_devices": "system",
}
FENCE_FLAGS = {"CLK_GLOBAL_MEM_FENCE": "global", "CLK_LOCAL_MEM_FENCE": "shared"}
# The order a failing PISA cas reads with: its order without release (model-decisions).
CAS_FAIL = {"relaxed": "relaxed", "acquire": "acquire", "release": "relaxed", "acq_rel": "acquire"}
FETCH_OPS = {"add": "add", "sub": "sub", "or": "or", "and": "and", "xor": "xor"}
LOAD_ORDERS = frozenset({"relaxed", "acquire", "seq_cst"})
STORE_ORDERS = frozenset({"relaxed", "release", "seq_cst"})

# C types of 32-bit integers (qualifiers dropped); anything else is skipped.
_QUALIFIERS = frozenset(
    {"volatile", "const", "global", "__global", "local", "__local", "generic", "__generic"}
)
_INT32 = frozenset(
    {"int", "signed", "unsigned", "atomic_int", "atomic_uint", "uint", "int32_t", "uint32_t"}
)
_UNSIGNED = frozenset({"unsigned", "atomic_uint", "uint", "uint32_t"})
_ARITH = {"+": "iadd", "-": "isub", "*": "umul", "&": "and", "|": "or", "^": "xor"}
_CMP = {"==": "eq", "!=": "ne", "<": "lt", "<=": "le", ">": "gt", ">=": "ge"}
_MIRROR = {"eq": "eq", "ne": "ne", "lt": "gt", "le": "ge", "gt": "lt", "ge": "le"}


@record
class Location:
    name: str
    space: str  # "global" or "shared"
    unsigned: bool
    init: int


@record
class PisaThread:
    proc: int
    place: Place
    lines: tuple[str, ...]


@record
class PisaTest:
    """A translated test, ready for writer.render."""

    name: str
    description: str
    metadata: tuple[tuple[str, str], ...]
    locations: tuple[Location, ...]
    reg_inits: tuple[tuple[int, str, int], ...]
    threads: tuple[PisaThread, ...]
    observed: tuple[str, ...]
    filter: str | None
    quantifier: str
    condition: str


def test_name(name: str) -> str:
    """herd's test name as a PISA TESTNAME (other characters become `_`)."""
    return re.sub(r"[^A-Za-z0-9_.+\-]", "_", name) or "imported"


def _base_type(words: tuple[str, ...], what: str, span: Span) -> bool:
    """Whether the 32-bit integer type `words` is unsigned; other types are skipped."""
    core = [w for w in words if w not in _QUALIFIERS and w != "_Atomic"]
    if "*" in core:
        raise Unsupported(Reason.POINTER, f"{what} holds a pointer", span)
    if not core or not all(w in _INT32 for w in core):
        raise Unsupported(
            Reason.TYPE,
            f"{what} has type `{' '.join(words)}`: only 32-bit integers (int, unsigned, "
            "atomic_int, atomic_uint) are imported",
            span,
        )
    return any(w in _UNSIGNED for w in core)


def _param_space(words: tuple[str, ...], span: Span) -> str | None:
    for w in words:
        if w in ("global", "__global"):
            return "global"
        if w in ("local", "__local"):
            return "shared"
        if w in ("private", "__private", "constant", "__constant"):
            raise Unsupported(
                Reason.SPACE, f"`{w}` memory cannot be shared between threads in a test", span
            )
    return None


def _locations(test: S.HerdTest) -> tuple[dict[str, Location], dict[str, set[int]]]:
    """Every shared location with its space and type, and the threads that name it."""
    inits: dict[str, S.InitItem] = {}
    for item in test.inits:
        if item.thread is not None:
            continue
        if item.pointer:
            raise Unsupported(
                Reason.POINTER,
                f"location {item.name} holds an address: PISA tests cannot store pointers "
                "in memory",
                item.span,
            )
        inits[item.name] = item
    regions: dict[str, str] = {}
    for name, region, span in test.regions:
        if region not in ("global", "local"):
            raise Unsupported(
                Reason.SPACE, f"region `{region}` of {name} (expected global or local)", span
            )
        regions[name] = "global" if region == "global" else "shared"
    spaces: dict[str, str] = dict(regions)
    unsigned: dict[str, bool] = {}
    users: dict[str, set[int]] = {}
    for t in test.threads:
        for p in t.params:
            users.setdefault(p.name, set()).add(t.proc)
            space = _param_space(p.type, p.span)
            u = _base_type(p.type, f"parameter {p.name} of P{t.proc}", p.span)
            if unsigned.setdefault(p.name, u) != u:
                raise Unsupported(
                    Reason.MIXED_SIZE, f"{p.name} has different types in different threads", p.span
                )
            if (
                space is not None
                and p.name not in regions
                and spaces.setdefault(p.name, space) != space
            ):
                raise Unsupported(
                    Reason.SPACE, f"{p.name} is global in one thread, local in another", p.span
                )
    for name, item in inits.items():
        if item.type:
            u = _base_type(item.type, f"location {name}", item.span)
            unsigned.setdefault(name, u)
    names = sorted(set(inits) | set(users))
    locs = {
        n: Location(
            n,
            spaces.get(n, "global"),
            unsigned.get(n, False),
            inits[n].value if n in inits else 0,
        )
        for n in names
    }
    return locs, users


def translate(test: S.HerdTest) -> PisaTest:
    """The PISA test; raises Unsupported for a test PISA cannot express."""
    for i, t in enumerate(test.threads):
        if t.proc != i:
            raise Unsupported(
                Reason.PLACEMENT, "threads must be numbered P0, P1, ... in order", t.span
            )
    places = placements(test)
    locs, users = _locations(test)
    used_spaces = {loc.space for loc in locs.values()}
    for name, procs in users.items():
        if locs[name].space == "shared" and not covers("workgroup", [places[p] for p in procs]):
            raise Unsupported(
                Reason.LOCAL_SHARING,
                f"local variable {name} is used by threads of different work-groups (each "
                "work-group has its own local memory)",
                test.header_span,
            )
    ctx = _Context(test, places, locs, users, used_spaces)
    threads = [_ThreadTranslator(ctx, t).run() for t in test.threads]
    reg_inits: list[tuple[int, str, int]] = []
    for item in test.inits:
        if item.thread is not None:
            if item.pointer:
                raise Unsupported(
                    Reason.POINTER,
                    f"register {item.thread}:{item.name} holds an address",
                    item.span,
                )
            if item.thread >= len(test.threads):
                raise Unsupported(
                    Reason.CONDITION, f"no thread P{item.thread} for {item.name}", item.span
                )
            reg_inits.append((item.thread, item.name, item.value))
    cond = _CondTranslator(ctx, threads)
    prop = cond.prop(test.prop)
    filt = cond.prop(test.filter) if test.filter is not None else None
    observed = tuple(cond.loc(loc) for loc in test.locations)
    explicit = {(p, r) for p, r, _ in reg_inits}
    for tt in threads:
        for reg in sorted(tt.needs_init | cond.regs.get(tt.proc, set())):
            if (tt.proc, reg) not in explicit and reg not in tt.definite:
                reg_inits.append((tt.proc, reg, 0))
    dialect = "C11" if test.dialect is S.Dialect.C11 else "OpenCL"
    return PisaTest(
        name=test_name(test.name),
        description=f"Imported from the herd {dialect} test {test.name}"
        + (f": {test.description}" if test.description else "."),
        metadata=(
            ("source", test.path),
            ("dialect", test.dialect.value),
            *((f"herd.{k}", v) for k, v in test.info),
        ),
        locations=tuple(locs.values()),
        reg_inits=tuple(reg_inits),
        threads=tuple(PisaThread(tt.proc, places[tt.proc], tuple(tt.lines)) for tt in threads),
        observed=observed,
        filter=filt,
        quantifier=test.quantifier,
        condition=prop,
    )


@record(frozen=False, slots=False)
class _Context:
    test: S.HerdTest
    places: dict[int, Place]
    locs: dict[str, Location]
    users: dict[str, set[int]]
    used_spaces: set[str]

    @property
    def opencl(self) -> bool:
        return self.test.dialect is S.Dialect.OPENCL


def _flags(e: S.Expr) -> Iterator[tuple[str, Span]]:
    match e:
        case S.BinOp(op="|"):
            yield from _flags(e.lhs)
            yield from _flags(e.rhs)
        case S.Name():
            yield e.name, e.span
        case _:
            yield "?", e.span


def _has_memory(e: S.Expr) -> bool:
    match e:
        case S.Deref() | S.Call():
            return True
        case S.BinOp():
            return _has_memory(e.lhs) or _has_memory(e.rhs)
        case S.UnOp():
            return _has_memory(e.arg)
        case _:
            return False


class _ThreadTranslator:
    """One thread's body -> PISA instruction lines (registers `%name`, temporaries `%_tN`)."""

    def __init__(self, ctx: _Context, thread: S.Thread) -> None:
        self.ctx = ctx
        self.thread = thread
        self.proc = thread.proc
        self.params = {p.name for p in thread.params}
        self.lines: list[str] = []
        self.regs: dict[str, bool] = {}  # register -> unsigned
        self.definite: set[str] = set()  # written on every path before this point
        self.needs_init: set[str] = set()
        self.depth = 0
        self.temps = 0
        self.labels = 0
        self._declare(thread.body)

    def _declare(self, body: tuple[S.Stmt, ...]) -> None:
        for st in body:
            match st:
                case S.Decl():
                    u = _base_type(st.type, f"register {st.name} of P{self.proc}", st.span)
                    self.regs[st.name] = u
                case S.Assign():
                    self.regs.setdefault(st.name, False)
                case S.If():
                    self._declare(st.then)
                    self._declare(st.orelse)
                case S.While():
                    self._declare(st.body)
                case _:
                    pass
        for item in self.ctx.test.inits:
            if item.thread == self.proc:
                self.regs.setdefault(item.name, False)
                self.definite.add(item.name)

    def run(self) -> _ThreadTranslator:
        self.stmts(self.thread.body)
        return self

    # ---------------------------------------------------------------- helpers

    def emit(self, line: str) -> None:
        self.lines.append(line)

    def temp(self, kind: str = "t") -> str:
        self.temps += 1
        while f"_{kind}{self.temps}" in self.regs:  # never one of the test's own registers
            self.temps += 1
        return f"%_{kind}{self.temps}"

    def label(self) -> str:
        self.labels += 1
        return f"L{self.labels}"

    def write(self, reg: str) -> None:
        if self.depth == 0:
            self.definite.add(reg)

    def loc(self, e: S.Expr, what: str) -> Location:
        """The location an atomic's object argument names (a parameter, or `&x`)."""
        if isinstance(e, (S.Name, S.AddrOf)) and e.name in self.ctx.locs:
            if e.name not in self.params and isinstance(e, S.Name):
                raise Unsupported(
                    Reason.CONDITION, f"P{self.proc} uses {e.name} without a parameter", e.span
                )
            return self.ctx.locs[e.name]
        raise Unsupported(
            Reason.POINTER,
            f"the object of {what} must be a location parameter (pointer arithmetic and "
            "pointers in registers are not imported)",
            e.span,
        )

    def location_of(self, name: str, span: Span) -> Location:
        if name not in self.params or name not in self.ctx.locs:
            raise Unsupported(
                Reason.POINTER,
                f"`*{name}`: {name} is not a location parameter of P{self.proc}",
                span,
            )
        return self.ctx.locs[name]

    def order(self, e: S.Expr, allowed: frozenset[str], what: str) -> str:
        if not isinstance(e, S.Name) or e.name not in ORDERS:
            raise Unsupported(Reason.ORDER, f"{what}: expected a memory_order_* constant", e.span)
        order = ORDERS[e.name]
        if order == "consume":
            raise Unsupported(
                Reason.CONSUME,
                "memory_order_consume has no PISA counterpart (promoting it to acquire would "
                "change verdicts)",
                e.span,
            )
        if order not in allowed:
            raise Unsupported(Reason.ORDER, f"{what} cannot be {e.name}", e.span)
        return order

    def scope(self, args: tuple[S.Expr, ...], index: int) -> tuple[str, Span | None]:
        """The PISA scope of an access: C11 system; OpenCL its scope argument (default device)."""
        if not self.ctx.opencl:
            return "system", None
        if len(args) <= index:
            return "gpu", None
        e = args[index]
        if not isinstance(e, S.Name) or e.name not in SCOPES:
            raise Unsupported(Reason.ORDER, "expected a memory_scope_* constant", e.span)
        scope = SCOPES[e.name]
        if scope is None:
            raise Unsupported(
                Reason.WORK_ITEM_SCOPE,
                "PISA has no work-item scope (memory_scope_work_item)",
                e.span,
            )
        return scope, e.span

    def quals(self, loc: Location, order: str, scope: str, span: Span | None, what: str) -> str:
        """`.relaxed` or `.ORDER.SCOPE`; a relaxed atomic is system-scoped in PISA, so an OpenCL
        one must be scoped to cover every thread that uses the location."""
        if order == "relaxed":
            procs = [self.ctx.places[p] for p in sorted(self.ctx.users.get(loc.name, {self.proc}))]
            if loc.space == "shared" and scope != "subgroup":
                return ".relaxed"  # all users share one work-group (checked)
            if not covers(scope, procs):
                raise Unsupported(
                    Reason.NARROW_RELAXED,
                    f"relaxed {what} at {scope} scope, but {loc.name} is used beyond one "
                    f"{scope} instance (PISA relaxed atomics have system scope)",
                    span,
                )
            return ".relaxed"
        if scope == "subgroup":
            raise Unsupported(
                Reason.SUBGROUP_ATOMIC,
                f"{what} at sub-group scope: PISA allows .subgroup only on fence.subgroup",
                span,
            )
        return f".{order}.{scope}"

    def nargs(self, call: S.Call, lo: int, hi: int) -> None:
        if not lo <= len(call.args) <= hi:
            raise Unsupported(
                Reason.CALL, f"{call.func} with {len(call.args)} arguments", call.span
            )

    # ---------------------------------------------------------------- statements

    def stmts(self, body: tuple[S.Stmt, ...]) -> None:
        for st in body:
            self.stmt(st)

    def stmt(self, st: S.Stmt) -> None:
        match st:
            case S.Decl():
                if st.init is not None:
                    self.value(st.init, f"%{st.name}")
                    self.write(st.name)
            case S.Assign():
                if st.name not in self.regs or st.name in self.params:
                    raise Unsupported(
                        Reason.POINTER, f"assignment to the location pointer {st.name}", st.span
                    )
                self.value(st.value, f"%{st.name}")
                self.write(st.name)
            case S.Store():
                loc = self.location_of(st.name, st.span)
                src = self.operand(st.value)
                self.emit(f"st.{loc.space}.32b [@{loc.name}], {src};")
            case S.CallStmt():
                self.call(st.call, None)
            case S.If():
                self.if_(st)
            case S.While():
                raise Unsupported(
                    Reason.LOOP,
                    "while loops are not imported (herd and pisa-mm bound loops differently)",
                    st.span,
                )

    def if_(self, st: S.If) -> None:
        cond = self.fold(st.cond)
        if cond is not None:  # a constant condition: only one branch exists
            self.depth += 1
            self.stmts(st.then if cond else st.orelse)
            self.depth -= 1
            return
        pred, negated = self.pred(st.cond)
        skip = self.label()
        self.emit(f"goto.cond {'' if negated else '!'}{pred}, {skip};")
        self.depth += 1
        self.stmts(st.then)
        if st.orelse:
            end = self.label()
            self.emit(f"goto {end};")
            self.emit(f"{skip}:")
            self.stmts(st.orelse)
            self.emit(f"{end}:")
        else:
            self.emit(f"{skip}:")
        self.depth -= 1

    # ---------------------------------------------------------------- expressions

    def fold(self, e: S.Expr) -> int | None:
        """The value of a constant expression (32-bit wrap-around), else None."""
        match e:
            case S.Const():
                return e.value & 0xFFFFFFFF
            case S.UnOp():
                a = self.fold(e.arg)
                if a is None:
                    return None
                return (-a) & 0xFFFFFFFF if e.op == "-" else int(a == 0)
            case S.BinOp():
                a, b = self.fold(e.lhs), self.fold(e.rhs)
                if a is None or b is None:
                    return None
                return _fold_binop(e.op, a, b)
            case _:
                return None

    def unsigned(self, e: S.Expr) -> bool:
        match e:
            case S.Name():
                return self.regs.get(e.name, False)
            case S.Deref():
                return e.name in self.ctx.locs and self.ctx.locs[e.name].unsigned
            case _:
                return False

    def read_reg(self, name: str, span: Span) -> str:
        if name in self.params:
            raise Unsupported(Reason.POINTER, f"the address {name} is used as a value", span)
        if name not in self.regs:
            raise Unsupported(Reason.CALL, f"unknown name {name} in P{self.proc}", span)
        if name not in self.definite:
            self.needs_init.add(name)  # herd's registers start at 0
        return f"%{name}"

    def operand(self, e: S.Expr) -> str:
        """A register or an immediate holding the value of `e`."""
        c = self.fold(e)
        if c is not None:
            return str(c)
        if isinstance(e, S.Name):
            return self.read_reg(e.name, e.span)
        return self.value(e, None)

    def value(self, e: S.Expr, dst: str | None) -> str:
        """Compute `e` into `dst` (or a fresh temporary) and return that register."""
        c = self.fold(e)
        if c is not None or isinstance(e, S.Name):
            src = str(c) if c is not None else self.read_reg(e.name, e.span)  # type: ignore[union-attr]
            if dst is None:
                return src
            if src != dst:
                self.emit(f"mov.32b {dst}, {src};")
            return dst
        out = dst if dst is not None else self.temp()
        match e:
            case S.Deref():
                loc = self.location_of(e.name, e.span)
                self.emit(f"ld.{loc.space}.32b {out}, [@{loc.name}];")
            case S.AddrOf():
                raise Unsupported(Reason.POINTER, f"the address &{e.name} as a value", e.span)
            case S.Call():
                self.call(e, out)
            case S.UnOp(op="-"):
                self.emit(f"ineg.32b {out}, {self.reg_operand(e.arg)};")
            case S.UnOp():
                pred, neg = self.pred(e)
                self.emit(f"sel.32b {out}, {'0, 1' if neg else '1, 0'}, {pred};")
            case S.BinOp() if e.op in _ARITH:
                a = self.reg_operand(e.lhs)
                b = self.operand(e.rhs)
                self.emit(f"{_ARITH[e.op]}.32b {out}, {a}, {b};")
            case S.BinOp() if e.op in _CMP or e.op in ("&&", "||"):
                pred, neg = self.pred(e)
                self.emit(f"sel.32b {out}, {'0, 1' if neg else '1, 0'}, {pred};")
            case S.BinOp():
                raise Unsupported(Reason.OPERATOR, f"operator `{e.op}`", e.span)
            case _:
                raise AssertionError(e)
        return out

    def reg_operand(self, e: S.Expr) -> str:
        """`e` in a register (PISA's first source operand is a register)."""
        src = self.operand(e)
        if src.startswith("%"):
            return src
        t = self.temp()
        self.emit(f"mov.32b {t}, {src};")
        return t

    def pred(self, e: S.Expr) -> tuple[str, bool]:
        """A predicate register p and `negated` such that e != 0 iff (p xor negated)."""
        match e:
            case S.UnOp(op="!"):
                p, neg = self.pred(e.arg)
                return p, not neg
            case S.BinOp() if e.op in _CMP:
                cop = _CMP[e.op]
                if self.fold(e.lhs) is not None:
                    lhs, rhs, cop = e.rhs, e.lhs, _MIRROR[cop]
                else:
                    lhs, rhs = e.lhs, e.rhs
                a = self.reg_operand(lhs)
                b = self.operand(rhs)
                kind = (
                    "ucmp"
                    if cop in ("eq", "ne") or self.unsigned(lhs) or self.unsigned(rhs)
                    else "scmp"
                )
                p = self.temp("p")
                self.emit(f"{kind}.{cop}.32b {p}, {a}, {b};")
                return p, False
            case S.BinOp() if e.op in ("&&", "||"):
                if _has_memory(e.rhs):
                    raise Unsupported(
                        Reason.OPERATOR,
                        f"`{e.op}` with a memory access on its right (short-circuit evaluation)",
                        e.span,
                    )
                a = self.bool_value(e.lhs)
                b = self.bool_value(e.rhs)
                t = self.temp()
                self.emit(f"{'and' if e.op == '&&' else 'or'}.32b {t}, {a}, {b};")
                p = self.temp("p")
                self.emit(f"ucmp.ne.32b {p}, {t}, 0;")
                return p, False
            case _:
                v = self.reg_operand(e)
                p = self.temp("p")
                self.emit(f"ucmp.ne.32b {p}, {v}, 0;")
                return p, False

    def bool_value(self, e: S.Expr) -> str:
        p, neg = self.pred(e)
        t = self.temp()
        self.emit(f"sel.32b {t}, {'0, 1' if neg else '1, 0'}, {p};")
        return t

    # ---------------------------------------------------------------- calls

    def call(self, call: S.Call, dst: str | None) -> None:
        f = call.func
        a = call.args
        explicit = f.endswith("_explicit")
        base = f.removesuffix("_explicit")
        if base == "atomic_load":
            self.nargs(
                call,
                2 if explicit else 1,
                3 if explicit and self.ctx.opencl else 2 if explicit else 1,
            )
            loc = self.loc(a[0], f)
            order = self.order(a[1], LOAD_ORDERS, f) if explicit else "seq_cst"
            scope, sp = self.scope(a, 2)
            out = dst if dst is not None else self.temp()
            q = self.quals(loc, order, scope, sp or call.span, "load")
            self.emit(f"ld.{loc.space}{q}.32b {out}, [@{loc.name}];")
        elif base == "atomic_store":
            self.result(call, dst)
            self.nargs(
                call,
                3 if explicit else 2,
                4 if explicit and self.ctx.opencl else 3 if explicit else 2,
            )
            loc = self.loc(a[0], f)
            src = self.operand(a[1])
            order = self.order(a[2], STORE_ORDERS, f) if explicit else "seq_cst"
            scope, sp = self.scope(a, 3)
            q = self.quals(loc, order, scope, sp or call.span, "store")
            self.emit(f"st.{loc.space}{q}.32b [@{loc.name}], {src};")
        elif base.startswith("atomic_fetch_") or base == "atomic_exchange":
            self.rmw(call, base, explicit, dst)
        elif base in ("atomic_compare_exchange_strong", "atomic_compare_exchange_weak"):
            self.cas(call, base, explicit, dst)
        elif f == "atomic_thread_fence" and not self.ctx.opencl:
            self.result(call, dst)
            self.nargs(call, 1, 1)
            order = self.order(a[0], frozenset(ORDERS.values()), f)
            if order != "relaxed":  # a relaxed fence has no effect
                self.emit(f"fence.global.{order}.system;")
        elif f == "atomic_work_item_fence" and self.ctx.opencl:
            self.result(call, dst)
            self.nargs(call, 3, 3)
            self.fence(call)
        elif f in ("barrier", "work_group_barrier") and self.ctx.opencl:
            self.result(call, dst)
            self.barrier(call)
        else:
            dialect = "OpenCL" if self.ctx.opencl else "C11"
            raise Unsupported(
                Reason.CALL, f"{f} is not an importable {dialect} operation", call.span
            )

    def result(self, call: S.Call, dst: str | None) -> None:
        if dst is not None:
            raise Unsupported(Reason.CALL, f"{call.func} has no value", call.span)

    def rmw(self, call: S.Call, base: str, explicit: bool, dst: str | None) -> None:
        a = call.args
        opname = base.removeprefix("atomic_fetch_") if base != "atomic_exchange" else "xchg"
        loc = self.loc(a[0] if a else S.Name("?", call.span), call.func)
        if opname in ("min", "max"):
            op = ("u" if loc.unsigned else "s") + opname
        elif opname == "xchg":
            op = "xchg"
        elif opname in FETCH_OPS:
            op = FETCH_OPS[opname]
        else:
            raise Unsupported(Reason.CALL, f"{call.func}", call.span)
        self.nargs(
            call, 3 if explicit else 2, 4 if explicit and self.ctx.opencl else 3 if explicit else 2
        )
        order = self.order(a[2], frozenset(ORDERS.values()), call.func) if explicit else "seq_cst"
        self.no_sc_rmw(order, call)
        scope, sp = self.scope(a, 3)
        src = self.operand(a[1])
        out = dst if dst is not None else self.temp()
        q = self.quals(loc, order, scope, sp or call.span, "read-modify-write")
        self.emit(f"iatom.{loc.space}{q}.{op}.32b {out}, [@{loc.name}], {src};")

    def no_sc_rmw(self, order: str, call: S.Call) -> None:
        if order == "seq_cst":
            raise Unsupported(
                Reason.SC_RMW,
                f"seq_cst {call.func}: PISA's iatom has no seq_cst order (PISA 8.2)",
                call.span,
            )

    def cas(self, call: S.Call, base: str, explicit: bool, dst: str | None) -> None:
        a = call.args
        if base.endswith("weak"):
            raise Unsupported(
                Reason.WEAK_CAS,
                "a weak compare-exchange may fail spuriously; PISA's cas is strong",
                call.span,
            )
        self.nargs(
            call, 5 if explicit else 3, 6 if explicit and self.ctx.opencl else 5 if explicit else 3
        )
        loc = self.loc(a[0], call.func)
        succ = self.order(a[3], frozenset(ORDERS.values()), call.func) if explicit else "seq_cst"
        fail = self.order(a[4], frozenset(ORDERS.values()), call.func) if explicit else "seq_cst"
        self.no_sc_rmw(succ, call)
        if fail != CAS_FAIL[succ]:
            raise Unsupported(
                Reason.CAS_ORDER,
                f"failure order {fail} of a {succ} compare-exchange: a failing PISA cas reads "
                f"with its order minus release ({CAS_FAIL[succ]})",
                a[4].span,
            )
        scope, sp = self.scope(a, 5)
        exp = a[1]
        # herd: `expected` is a location read (and on failure written) non-atomically;
        # `&r` (a register) is accepted too.
        exp_reg: str | None = None
        exp_loc: Location | None = None
        if isinstance(exp, S.AddrOf) and exp.name in self.regs:
            exp_reg = self.read_reg(exp.name, exp.span)
            expected = exp_reg
        elif isinstance(exp, S.Name) and exp.name in self.params:
            exp_loc = self.ctx.locs[exp.name]
            expected = self.temp()
            self.emit(f"ld.{exp_loc.space}.32b {expected}, [@{exp_loc.name}];")
        else:
            raise Unsupported(
                Reason.POINTER,
                "the expected value of a compare-exchange must be a location parameter or &r",
                exp.span,
            )
        desired = self.operand(a[2])
        old = self.temp()
        q = self.quals(loc, succ, scope, sp or call.span, "compare-exchange")
        self.emit(f"iatom.{loc.space}{q}.cas.32b {old}, [@{loc.name}], {expected}, {desired};")
        p = self.temp("p")
        self.emit(f"ucmp.eq.32b {p}, {old}, {expected};")
        if dst is not None:
            self.emit(f"sel.32b {dst}, 1, 0, {p};")
        if exp_reg is not None:
            self.emit(f"mov.32b {exp_reg}, {old};")  # equal to it on success
            self.write(exp_reg[1:])
        elif exp_loc is not None:
            done = self.label()
            self.emit(f"goto.cond {p}, {done};")
            self.emit(f"st.{exp_loc.space}.32b [@{exp_loc.name}], {old};")
            self.emit(f"{done}:")

    def spaces(self, e: S.Expr) -> set[str]:
        out: set[str] = set()
        for name, span in _flags(e):
            if name not in FENCE_FLAGS:
                raise Unsupported(
                    Reason.FENCE_SPACES,
                    f"fence flag {name} (expected CLK_GLOBAL_MEM_FENCE, CLK_LOCAL_MEM_FENCE)",
                    span,
                )
            out.add(FENCE_FLAGS[name])
        return out

    def fence(self, call: S.Call) -> None:
        flags, order_e, _ = call.args
        spaces = self.spaces(flags)
        order = self.order(order_e, frozenset(ORDERS.values()), call.func)
        scope, sp = self.scope(call.args, 2)
        if order == "relaxed":
            return  # a relaxed fence has no effect
        if scope == "subgroup":
            if order != "acq_rel":
                raise Unsupported(
                    Reason.SUBGROUP_FENCE,
                    f"a {order} sub-group fence: PISA's fence.subgroup is acq_rel only",
                    sp,
                )
            if not self.ctx.used_spaces <= spaces:
                raise Unsupported(
                    Reason.FENCE_SPACES,
                    "a sub-group fence over one space in a test that uses both: "
                    "fence.subgroup orders both",
                    call.span,
                )
            self.emit("fence.subgroup;")
            return
        if scope == "system" and "shared" in spaces:
            if "shared" in self.ctx.used_spaces:
                raise Unsupported(
                    Reason.SYSTEM_LOCAL_FENCE,
                    "a system-scope fence over local memory (PISA 9.2 allows .system only on "
                    "fence.global)",
                    sp,
                )
            spaces = {"global"}  # no local location: ordering local memory is vacuous
        if spaces == {"global"}:
            self.emit(f"fence.global.{order}.{scope};")
        elif spaces == {"shared"}:
            self.emit(f"fence.shared.{order}.{scope};")
        else:
            self.emit(f"fence.{order}.{scope};")

    def barrier(self, call: S.Call) -> None:
        self.nargs(call, 1, 2)
        spaces = self.spaces(call.args[0])
        if len(call.args) == 2:
            scope, sp = self.scope(call.args, 1)
            if scope != "workgroup":
                raise Unsupported(
                    Reason.BARRIER, f"a work-group barrier at {scope} scope", sp or call.span
                )
        if not self.ctx.used_spaces <= spaces:
            raise Unsupported(
                Reason.BARRIER,
                "the barrier fences only some of the spaces the test uses; PISA's "
                "barrier.workgroup fences both global and local memory",
                call.span,
            )
        self.emit("barrier.workgroup;")


def _fold_binop(op: str, a: int, b: int) -> int | None:
    def signed(v: int) -> int:
        return v - (1 << 32) if v & 0x80000000 else v

    match op:
        case "+":
            return (a + b) & 0xFFFFFFFF
        case "-":
            return (a - b) & 0xFFFFFFFF
        case "*":
            return (a * b) & 0xFFFFFFFF
        case "&":
            return a & b
        case "|":
            return a | b
        case "^":
            return a ^ b
        case "==":
            return int(a == b)
        case "!=":
            return int(a != b)
        case "<":
            return int(signed(a) < signed(b))
        case "<=":
            return int(signed(a) <= signed(b))
        case ">":
            return int(signed(a) > signed(b))
        case ">=":
            return int(signed(a) >= signed(b))
        case "&&":
            return int(bool(a) and bool(b))
        case "||":
            return int(bool(a) or bool(b))
    return None


class _CondTranslator:
    """herd's condition -> PISA condition text; records the registers it observes."""

    def __init__(self, ctx: _Context, threads: list[_ThreadTranslator]) -> None:
        self.ctx = ctx
        self.threads = threads
        self.regs: dict[int, set[str]] = {}

    def loc(self, loc: S.CLoc) -> str:
        if loc.thread is not None:
            if loc.thread >= len(self.threads):
                raise Unsupported(
                    Reason.CONDITION, f"the condition names thread P{loc.thread}", loc.span
                )
            t = self.threads[loc.thread]
            if loc.name not in t.regs:
                raise Unsupported(
                    Reason.CONDITION, f"P{loc.thread} has no register {loc.name}", loc.span
                )
            self.regs.setdefault(loc.thread, set()).add(loc.name)
            return f"P{loc.thread}:%{loc.name}"
        if loc.index is not None:
            raise Unsupported(Reason.CONDITION, "array elements are not imported", loc.span)
        if loc.name not in self.ctx.locs:
            raise Unsupported(Reason.CONDITION, f"unknown location {loc.name}", loc.span)
        var = self.ctx.locs[loc.name]
        if var.space == "shared":
            users = sorted(self.ctx.users.get(var.name, set()))
            wgs = {self.ctx.places[p].wg for p in self.ctx.places}
            if users and len(wgs) > 1:
                return f"wg{self.ctx.places[users[0]].wg}:@{var.name}"
        return f"@{var.name}"

    def prop(self, p: S.HProp) -> str:
        return self._prop(p, top=True)

    def _prop(self, p: S.HProp, top: bool = False) -> str:
        match p:
            case S.PAtom():
                return f"{self.loc(p.loc)} {'!=' if p.negated else '=='} {p.value}"
            case S.PBool():
                return "true" if p.value else "false"
            case S.PNot():
                return (
                    f"~{self._prop(p.arg)}"
                    if isinstance(p.arg, S.PBool)
                    else f"~({self._prop(p.arg, True)})"
                )
            case S.PBin():
                text = f"{self._prop(p.lhs)} {p.op} {self._prop(p.rhs)}"
                return text if top else f"({text})"
