"""Symbolic execution of a litmus test's threads into an EventStructure (see docs/events.md)."""

from __future__ import annotations

from collections.abc import Iterable

from pisa_mm.errors import PisaMMError, Span
from pisa_mm.events import deps as dp
from pisa_mm.events import semantics as sem
from pisa_mm.events.addressing import allowed_spaces, invalid_copy, is_target, owns
from pisa_mm.events.kinds import Kind, Order, Scope, Space, Tag
from pisa_mm.events.layout import Layout, Variable
from pisa_mm.events.model import (
    Event,
    EventStructure,
    Location,
    Path,
    Placement,
    ProgramOrder,
    ThreadStructure,
)
from pisa_mm.events.shift import shift_pairs
from pisa_mm.hints import NoReturn
from pisa_mm.litmus.decode.declarations import MAX_UNROLL, unroll_limit_message
from pisa_mm.litmus.program import (
    AddrOf,
    AddrSpace,
    Alu,
    And,
    Atom,
    Barrier,
    Collective,
    CommitGroup,
    Compare,
    CpAsync,
    FAtom,
    FAtomOp,
    Fence,
    Goto,
    IAtom,
    IAtomOp,
    Implies,
    Instruction,
    LitmusTest,
    Load,
    MemObs,
    Not,
    Or,
    Pred,
    Prop,
    Reg,
    Return,
    Select,
    Store,
    Thread,
    VarDecl,
    VarRef,
    WaitGroup,
)
from pisa_mm.records import field, record
from pisa_mm.values.eval import postorder
from pisa_mm.values.expr import BOOL, TRUE, Const, Contribution, Expr, Op, ReadValue

DEFAULT_UNROLL = 2

# Disjoint address regions per space, so that a generic address names its space (PISA 3.3.1).
_REGION = {
    Space.GLOBAL: 0x1000,
    Space.CONST: 0x1000,
    Space.SHARED: 0x100000,
    Space.PRIVATE: 0x200000,
}
_ALIGN = 16

_BOTH = frozenset({Space.GLOBAL, Space.SHARED})
_ADDR_MASK = (1 << sem.ADDR_WIDTH) - 1


# ---------------------------------------------------------------- layout and placement


# The layouts and placements made, by what they are made of (the tests of a suite declare a
# few shapes of variables and place their threads a few ways); emptied past _MAX_SHAPES.
_LAYOUTS: dict[tuple[tuple[str, Space, int, int], ...], Layout] = {}
_PLACEMENTS: dict[
    tuple[tuple[bool, int | None, int | None, int | None], ...], tuple[Placement, ...]
] = {}
_MAX_SHAPES = 1024


def make_layout(variables: Iterable[VarDecl]) -> Layout:
    """Give each variable a disjoint, aligned byte range in its space's region.

    `.private` variables of the same name declared by several threads share one range:
    every work-item has its own instance of it anyway.
    """
    decls = tuple(variables)
    key = tuple((d.name, d.space, d.width, d.count) for d in decls)
    layout = _LAYOUTS.get(key)
    if layout is None:
        layout = _make_layout(decls)  # an error (a duplicate) is raised, never remembered
        if len(_LAYOUTS) >= _MAX_SHAPES:
            _LAYOUTS.clear()
        _LAYOUTS[key] = layout
    return layout


def _make_layout(variables: Iterable[VarDecl]) -> Layout:
    nxt = dict(_REGION)
    nxt[Space.CONST] = -1  # const shares the global region
    out: list[Variable] = []
    seen: dict[str, VarDecl] = {}
    for decl in variables:
        prev = seen.get(decl.name)
        if prev is not None:
            same = (prev.space, prev.width, prev.count) == (decl.space, decl.width, decl.count)
            if decl.space is Space.PRIVATE and same:
                continue
            raise PisaMMError.at(
                decl.span, f"memory variable @{decl.name} declared twice", "duplicate"
            )
        seen[decl.name] = decl
        region = Space.GLOBAL if decl.space is Space.CONST else decl.space
        align = max(_ALIGN, decl.width // 8)
        base = -(-nxt[region] // align) * align
        var = Variable(decl.name, decl.space, base, decl.width, decl.count)
        nxt[region] = base + max(var.size, 1)
        out.append(var)
    return Layout(tuple(out))


def placements(test: LitmusTest) -> tuple[Placement, ...]:
    """Each thread's placement, defaults completed, lanes numbered within sub-groups."""
    key = tuple((p.host, p.gpu, p.wg, p.sg) for p in (t.placement for t in test.threads))
    made = _PLACEMENTS.get(key)
    if made is None:
        made = _placements(test)
        if len(_PLACEMENTS) >= _MAX_SHAPES:
            _PLACEMENTS.clear()
        _PLACEMENTS[key] = made
    return made


def _placements(test: LitmusTest) -> tuple[Placement, ...]:
    used_wg = {t.placement.wg for t in test.threads if t.placement.wg is not None}
    used_sg = {t.placement.sg for t in test.threads if t.placement.sg is not None}
    fresh_wg = max(used_wg, default=-1) + 1
    fresh_sg = max(used_sg, default=-1) + 1
    lanes: dict[tuple[int, int, int], int] = {}
    out: list[Placement] = []
    for t in test.threads:
        p = t.placement
        if p.host:
            out.append(Placement(True, None, None, None, None))
            continue
        wg, sg = p.wg, p.sg
        if wg is None:
            wg, fresh_wg = fresh_wg, fresh_wg + 1
        if sg is None:
            sg, fresh_sg = fresh_sg, fresh_sg + 1
        gpu = 0 if p.gpu is None else p.gpu
        key = (gpu, wg, sg)
        lane = lanes.get(key, 0)
        lanes[key] = lane + 1
        out.append(Placement(False, gpu, wg, sg, lane))
    return tuple(out)


def _reg_widths(thread: Thread) -> dict[str, int]:
    """Declared widths, then undeclared registers at the width of their first writer."""
    widths = dict(thread.regs)

    def note(reg: Reg | Pred, width: int, vec: int = 1) -> None:
        if isinstance(reg, Pred):
            widths.setdefault(reg.name, 1)
        elif vec > 1:
            for i in range(vec):
                widths.setdefault(sem.elem_key(reg, i), width)
        else:
            widths.setdefault(sem.reg_key(reg), width)

    for ins in thread.body:
        match ins.op:
            case Load(dst=dst, width=w, vec=vec):
                note(dst, w, vec)
            case IAtom(dst=dst, width=w):
                note(dst, w)
            case FAtom(dst=dst, fmt=fmt):
                note(dst, fmt.width)
            case Alu(dst=dst, width=w) | Select(dst=dst, width=w) | AddrOf(dst=dst, width=w):
                note(dst, w)
            case Compare(dst=dst):
                note(dst, 1)
            case Collective(dst=dst, width=w):
                note(dst, w)
            case _:
                pass
    return widths


# ---------------------------------------------------------------- per-path state


@record(frozen=False, slots=False)
class _State:
    pc: int
    regs: dict[str, Expr]
    guard: Expr
    parent: int | None = None  # last po event (async events are not in po)
    events: list[int] = field(default_factory=list)  # path events, async ones included
    back: dict[int, int] = field(default_factory=dict)  # back-edge (goto index) -> times taken
    barriers: int = 0
    collectives: int = 0
    group: list[int] = field(default_factory=list)  # uncommitted cp.async events
    groups: list[tuple[int, ...]] = field(default_factory=list)  # committed, oldest first
    completed: frozenset[int] = frozenset()  # async events completed by a wait
    deps: dict[str, dp.Sources] = field(default_factory=dict)  # register -> its sources
    cdeps: dp.Sources = dp.NONE  # sources of the branch conditions passed on this path
    address: Expr | None = None  # of the invalid access that ends this state's path

    def fork(self, guard: Expr) -> _State:
        return _State(
            self.pc,
            dict(self.regs),
            guard,
            self.parent,
            list(self.events),
            dict(self.back),
            self.barriers,
            self.collectives,
            list(self.group),
            list(self.groups),
            self.completed,
            dict(self.deps),
            self.cdeps,
        )


# The events and final registers the paths of one test may hold in all: each path lists its
# events and every register's final value, and the paths are made eagerly, before any
# budget can act. A spin loop at the largest bound (256) takes about 100,000; a loop with
# two back-edges has exponentially many paths in the bound (at 16: over 100 s and 2 GB
# before this limit, 7 s to reach it), and a spin loop at 256 over 20,000 registers
# 5,000,000 (2 GB to `parse`).
MAX_PATH_ENTRIES = 1 << 20


class _Builder:
    """Accumulates the threads' events.

    Each event has two ids: its own, `first` (the number of init writes, which come first:
    `build` guesses it and builds again when the guess was wrong) plus its local id, the
    count of events before it. The Events, their parents and the values of reads
    (`ReadValue`) carry the own id, made once; the bookkeeping of pairs and sources (paths'
    events, `rmw`, `aso`, dependency sources) the local one, shifted at the end as it was
    before ids were assigned right the first time: a set of pairs iterates in an order that
    depends on how its ints were inserted, and the smt encoder's constraint order (hence a
    `query` witness) follows that iteration.
    """

    def __init__(
        self,
        test: LitmusTest,
        unroll: int,
        first: int,
        layout: Layout,
        places: tuple[Placement, ...],
    ) -> None:
        self.test = test
        self.unroll = unroll
        self.first = first
        self.layout = layout
        self.decls = {d.name: d for d in test.variables}
        self.places = places
        self.lanes: dict[tuple[int | None, int | None, int | None], list[int]] = {}
        for i, p in enumerate(self.places):
            if not p.host:
                self.lanes.setdefault((p.gpu, p.wg, p.sg), []).append(i)
        self.events: list[Event] = []  # the threads' events, in local id order
        self.rmw: set[tuple[int, int]] = set()
        self.aso: set[tuple[int, int]] = set()
        self.async_ids: set[int] = set()
        self.paths: list[list[Path]] = []
        self.entries = 0  # the events and final registers of every path so far
        # syntactic sources of each event's address, written value and control (events/deps)
        self.src_addr: dict[int, dp.Sources] = {}
        self.src_data: dict[int, dp.Sources] = {}
        self.src_ctrl: dict[int, dp.Sources] = {}
        self.contributed: dict[tuple[int, int], list[dp.Sources]] = {}

    # ------------------------------------------------------------ events

    def _event(
        self,
        st: _State,
        ins: Instruction,
        thread: int,
        *,
        po: bool = True,
        addr_src: dp.Sources = dp.NONE,
        data_src: dp.Sources = dp.NONE,
        ctrl_src: dp.Sources = dp.NONE,
        **fields: object,
    ) -> int:
        """Add an event of `ins` on the path of `st`, its local id returned; `po`: it is
        the path's next po event (an async copy's events are not in po)."""
        eid = len(self.events)
        # only the events that have sources: most have none (`_dependencies` reads these)
        if addr_src:
            self.src_addr[eid] = addr_src
        if data_src:
            self.src_data[eid] = data_src
        ctrl = st.cdeps | ctrl_src if ctrl_src else st.cdeps
        if ctrl:
            self.src_ctrl[eid] = ctrl
        fields.setdefault("guard", st.guard)
        first = self.first
        parent = None if st.parent is None else st.parent + first
        self.events.append(
            Event(
                id=eid + first, thread=thread, parent=parent, instr=ins.index, span=ins.span,
                text=ins.text,
                **fields,  # type: ignore[arg-type]  # Event's fields, checked by Event
            )
        )  # fmt: skip
        st.events.append(eid)
        if po:
            st.parent = eid
            if st.completed:
                self.aso.update((a, eid) for a in st.completed)
        return eid

    def _exit(
        self,
        st: _State,
        thread: int,
        ins: Instruction | None = None,
        *,
        returned: bool = False,
        cut: bool = False,
        invalid: bool = False,
    ) -> None:
        """End a path: `ins` is the `return` taken, the back-edge the bound cut, or the
        access whose address is invalid (`invalid`: the EXIT event carries the address)."""
        eid = len(self.events)
        if st.cdeps:
            self.src_ctrl[eid] = st.cdeps
        if ins is None:
            span, text = self.test.threads[thread].span, f"end of P{thread}"
        elif cut:
            span, text = ins.span, f"{ins.text}  (cut: taken more than {self.unroll} times)"
        elif invalid:
            span, text = ins.span, f"{ins.text}  (invalid address)"
        else:
            span, text = ins.span, ins.text
        ev = Event(
            id=eid + self.first,
            thread=thread,
            kind=Kind.EXIT,
            tag=Tag.RETURN if returned else Tag.INVALID if invalid else Tag.PLAIN,
            order=Order.NA,
            scope=None,
            spaces=frozenset(),
            width=0,
            addr=st.address if invalid else None,
            locs=frozenset(),
            value=None,
            guard=st.guard,
            parent=None if st.parent is None else st.parent + self.first,
            instr=None if ins is None else ins.index,
            span=span,
            text=text,
        )
        self.events.append(ev)
        st.events.append(eid)
        if st.completed:
            self.aso.update((a, eid) for a in st.completed)
        self.entries += len(st.events) + len(st.regs)
        if self.entries > MAX_PATH_ENTRIES:
            self._too_many_paths(thread)
        final = tuple(sorted(st.regs.items()))
        events = tuple(e + self.first for e in st.events)
        self.paths[thread].append(Path(events, st.guard, final, returned, cut, invalid))

    def _too_many_paths(self, thread: int) -> NoReturn:
        paths = sum(len(p) for p in self.paths) + 1
        raise PisaMMError.at(
            self.test.threads[thread].span,
            f"the test unrolls into more than {MAX_PATH_ENTRIES} events and final registers "
            f"on its paths ({paths} paths so far, P{thread} at unroll {self.unroll}): lower "
            "the unroll bound, or use fewer branches or registers",
            "limit",
        )

    # ------------------------------------------------------------ memory resolution

    def _instance(self, space: Space, thread: int, span: Span) -> int | tuple[int, int] | None:
        if space is Space.PRIVATE:
            return thread
        if space is Space.SHARED:
            p = self.places[thread]
            if p.host or p.gpu is None or p.wg is None:
                raise PisaMMError.at(span, "a host thread cannot access .shared memory", "host")
            return (p.gpu, p.wg)  # a work-group is (NDRange, number)
        return None

    def _allowed(self, qual: AddrSpace, atomic: bool, thread: int) -> frozenset[Space]:
        return allowed_spaces(qual, atomic, self.places[thread].host)

    def _resolve(
        self,
        addr: Expr,
        allowed: frozenset[Space],
        width: int,
        thread: int,
        span: Span,
        *,
        write: bool,
    ) -> frozenset[Location]:
        """Every location instance an access of `width` bits at `addr` may touch."""
        nbytes = width // 8
        if isinstance(addr, Const):
            found = self.layout.find(addr.value)
            if found is None:
                raise PisaMMError.at(
                    span, f"address {addr.value:#x} is outside every variable", "address"
                )
            var, off = found
            if var.space not in allowed:
                names = ", ".join(sorted(s.value for s in allowed)) or "no space"
                raise PisaMMError.at(
                    span,
                    f"@{var.name} is in .{var.space.value} memory; this access may reach "
                    f"only {names}",
                    "space",
                )
            if write and var.space is Space.CONST:
                raise PisaMMError.at(span, f"store to .const variable @{var.name}", "const-store")
            if var.width != width:
                raise PisaMMError.at(
                    span,
                    f"mixed-size access: {width}-bit access to @{var.name}, whose elements "
                    f"are {var.width}-bit, is not supported",
                    "mixed-size",
                )
            if off % nbytes:
                raise PisaMMError.at(
                    span,
                    f"misaligned {width}-bit access at {addr.value:#x} (PISA 5.1)",
                    "alignment",
                )
            self._check_private(var, thread, span)
            return frozenset(
                {Location(var.name, off, self._instance(var.space, thread, span), var.space)}
            )
        locs = self._targets(allowed, width, thread, span, write=write)
        if not locs:
            raise PisaMMError.at(
                span,
                f"no {width}-bit variable can be the target of this computed address",
                "address",
            )
        return locs

    def _targets(
        self, allowed: frozenset[Space], width: int, thread: int, span: Span, *, write: bool
    ) -> frozenset[Location]:
        """Every location instance a computed address of an access may touch (none: every
        address it computes is invalid)."""
        nbytes = width // 8
        locs: set[Location] = set()
        for var in self.layout.variables:
            owned = var.space is not Space.PRIVATE or self._owns(var.name, thread)
            if var.name not in self.decls or not is_target(
                var, allowed, width, write=write, owned=owned
            ):
                continue
            inst = self._instance(var.space, thread, span)
            locs.update(Location(var.name, i * nbytes, inst, var.space) for i in range(var.count))
        return frozenset(locs)

    def _owns(self, name: str, thread: int) -> bool:
        return owns(self.test.variables, name, thread)

    def _check_private(self, var: Variable, thread: int, span: Span) -> None:
        if var.space is Space.PRIVATE and not self._owns(var.name, thread):
            raise PisaMMError.at(span, f"@{var.name} is private to another thread", "private")

    @staticmethod
    def _scope(
        order: Order, scope: Scope | None, locs: frozenset[Location], relaxed_sys: bool = True
    ) -> Scope | None:
        if order is Order.NA:
            return None
        if order is Order.RLX and relaxed_sys:
            eff = Scope.SYS  # model-decisions: relaxed atomics have system scope
        else:
            eff = Scope.GPU if scope is None else scope
        if locs and all(loc.space is Space.SHARED for loc in locs) and eff > Scope.WG:
            eff = Scope.WG  # every accessor of shared memory is in one work-group
        return eff

    # ------------------------------------------------------------ execution

    def run_thread(self, thread: Thread) -> None:
        self.paths.append([])
        widths = _reg_widths(thread)
        regs: dict[str, Expr] = {}
        for name, w in widths.items():
            regs[name] = _zero(BOOL if w == 1 else w)
        for name, count in thread.vectors:
            w = widths.pop(name, 32)
            regs.pop(name, None)
            for i in range(count):
                key = sem.elem_key(Reg(name), i)
                widths[key] = w
                regs[key] = _zero(w)
        for init in self.test.reg_inits:
            if init.thread != thread.index:
                continue
            if isinstance(init.reg, Pred):
                regs[init.reg.name] = Const(int(init.value != 0), BOOL)
                continue
            key = sem.reg_key(init.reg)
            if isinstance(init.value, VarRef):
                w = widths.get(key, sem.ADDR_WIDTH)
                regs[key] = Const(sem.var_address(self.layout, init.value, init.span), w)
            else:
                w = widths.get(key, 32)
                regs[key] = Const(init.value & ((1 << w) - 1), w)
        self._thread = thread
        barriers = [ins.index for ins in thread.body if isinstance(ins.op, Barrier)]
        self._sites = {index: site for site, index in enumerate(barriers)}
        stack = [_State(0, regs, TRUE)]
        while stack:
            self._run(stack.pop(), thread, stack)

    def _run(self, st: _State, thread: Thread, stack: list[_State]) -> None:
        t = thread.index
        body = thread.body
        while True:
            if st.pc >= len(body):
                self._exit(st, t)
                return
            ins = body[st.pc]
            op = ins.op
            match op:
                case Goto() | Return():
                    # a branch on a register makes what follows depend on its sources,
                    # whether or not its value decides the branch statically
                    st.cdeps = st.cdeps | dp.operand_sources(st.deps, op.cond)
                    cond = TRUE if op.cond is None else sem.pred_value(st.regs, op.cond)
                    if cond == TRUE:
                        taken: _State | None = st
                        fall: _State | None = None
                    elif isinstance(cond, Const):
                        taken, fall = None, st
                    else:
                        taken = st.fork(sem.conj(st.guard, cond))
                        fall = st
                        fall.guard = sem.conj(st.guard, sem.neg(cond))
                    if fall is not None and taken is not None:
                        fall.pc += 1
                        stack.append(fall)
                    if taken is None:
                        st.pc += 1
                        continue
                    if isinstance(op, Return):
                        self._exit(taken, t, ins, returned=True)
                        return
                    target = self._target(op, len(body), ins.span)
                    if target <= ins.index:
                        count = taken.back.get(ins.index, 0)
                        if count >= self.unroll:
                            self._exit(taken, t, ins, cut=True)
                            return
                        taken.back[ins.index] = count + 1
                    taken.pc = target
                    st = taken
                    continue
                case Load() | Store() | IAtom() | FAtom():
                    # the address is computed once for the check and the access: splitting
                    # off the invalid addresses changes only the guard
                    base = sem.address(st.regs, op.addr, self.layout)
                    if (bad := self._invalid_address(st, ins, op, t, base)) is not None:
                        self._exit(bad, t, ins, invalid=True)
                        if bad is st:  # invalid on every execution of this path
                            return
                    if isinstance(op, Load):
                        self._load(st, ins, op, t, base)
                    elif isinstance(op, Store):
                        self._store(st, ins, op, t, base)
                    else:
                        self._atomic(st, ins, op, t, base)
                case CpAsync() if (wild := self._invalid_copy(st, op)) is not None:
                    st.address = wild
                    self._exit(st, t, ins, invalid=True)
                    return
                case _:
                    self._step(st, ins, t)
            st.pc += 1

    def _invalid_address(
        self, st: _State, ins: Instruction, op: Load | Store | IAtom | FAtom, t: int, base: Expr
    ) -> _State | None:
        """Split off the executions where the access's computed address `base` is none of
        the locations it may touch (undefined behaviour, `invalid-address`): the returned
        state ends there; `st` continues where every address is valid. None when every
        address is surely valid. A constant address written in the instruction (`[@x + 8]`)
        is checked, with a located error, when it is resolved; one held in a register (a
        null pointer moved there) is computed, and when it is invalid `st` itself is
        returned: the path ends at the access."""
        if isinstance(base, Const) and not (
            isinstance(op.addr.base, Reg) or isinstance(op.addr.offset, Reg)
        ):
            return None  # checked when resolved (most accesses: `[@x]`)
        if isinstance(op, IAtom | FAtom):
            width, count, atomic, write = sem.atom_width(op), 1, True, True
        else:
            width, count = op.width, op.vec
            atomic, write = op.order not in (None, Order.NA), isinstance(op, Store)
        allowed = self._allowed(op.space, atomic, t)
        if isinstance(base, Const):
            for i in range(count):
                if not self._valid_constant(base.value + i * width // 8, allowed, width, t, write):
                    st.address = base
                    return st
            return None
        valid: list[Expr] = []
        locs = self._targets(allowed, width, t, ins.span, write=write)
        if not locs:  # no location it may touch (a store through a pointer to .const)
            st.address = base
            return st
        for i in range(count):
            addr = _element(base, i * width // 8)
            hits = sorted({self._address(loc) for loc in locs})
            valid.append(
                sem.mk(
                    Op.BOR,
                    [sem.mk(Op.EQ, (addr, Const(a, addr.width)), BOOL) for a in hits],
                    BOOL,
                )
            )
        ok = sem.conj(*valid)
        if isinstance(ok, Const) and ok.value:
            return None
        bad = st.fork(sem.conj(st.guard, sem.neg(ok)))
        bad.address = base
        st.guard = sem.conj(st.guard, ok)
        return bad

    def _invalid_copy(self, st: _State, op: CpAsync) -> Const | None:
        """A `cp.async` address held in a register that is no location it may copy between
        (a constant one: one computed from a loaded value is unsupported): the path ends
        there (`invalid-address`), as at a load's."""
        if not any(isinstance(a.base, Reg) or isinstance(a.offset, Reg) for a in (op.src, op.dst)):
            return None
        src = sem.address(st.regs, op.src, self.layout)
        dst = sem.address(st.regs, op.dst, self.layout)
        if not isinstance(src, Const) or not isinstance(dst, Const):
            return None
        bad = invalid_copy(self.layout, src.value, dst.value, op.size)
        return None if bad is None else Const(bad, sem.ADDR_WIDTH)

    def _valid_constant(
        self, address: int, allowed: frozenset[Space], width: int, t: int, write: bool
    ) -> bool:
        """Whether a computed constant address is one of the locations the access may touch
        (the rule of `_resolve`'s computed addresses and of the machine's `invalid_address`)."""
        found = self.layout.find(address)
        if found is None:
            return False
        var, off = found
        owned = var.space is not Space.PRIVATE or self._owns(var.name, t)
        return (
            var.name in self.decls
            and off % (width // 8) == 0
            and is_target(var, allowed, width, write=write, owned=owned)
        )

    def _address(self, loc: Location) -> int:
        var = self.layout.variable(loc.var)
        assert var is not None  # locations come from the layout
        return var.base + loc.offset

    def _target(self, op: Goto, n: int, span: Span) -> int:
        try:
            return self._thread.label_index(op.label)
        except KeyError:
            raise PisaMMError.at(
                op.label_span or span, f"unknown label {op.label}", "label"
            ) from None

    def _step(self, st: _State, ins: Instruction, t: int) -> None:
        op = ins.op
        regs = st.regs
        lay = self.layout
        match op:
            case Fence():
                self._event(
                    st, ins, t, kind=Kind.FENCE, tag=Tag.PLAIN, order=op.order,
                    scope=op.scope, spaces=op.spaces, width=0, addr=None,
                    locs=frozenset(), value=None,
                )  # fmt: skip
            case Barrier():
                for tag, order in ((Tag.ARRIVE, Order.REL), (Tag.DEPART, Order.ACQ)):
                    self._event(
                        st, ins, t, kind=Kind.FENCE, tag=tag, order=order, scope=Scope.WG,
                        spaces=_BOTH, width=0, addr=None, locs=frozenset(), value=None,
                        barrier_index=st.barriers, barrier_site=self._sites[ins.index],
                    )  # fmt: skip
                st.barriers += 1
            case CpAsync():
                self._cp_async(st, ins, op, t)
            case CommitGroup():
                st.groups.append(tuple(st.group))
                st.group = []
            case WaitGroup(n=n):
                keep = len(st.groups) - n if n < len(st.groups) else 0
                done = [e for g in st.groups[:keep] for e in g]
                st.groups = st.groups[keep:]
                st.completed = st.completed | frozenset(done)
            case Alu():
                regs[sem.reg_key(op.dst)] = sem.alu(op, regs, lay, ins.span)
                st.deps[sem.reg_key(op.dst)] = dp.operand_sources(st.deps, *op.srcs)
            case Compare():
                regs[op.dst.name] = sem.compare(op, regs, lay, ins.span)
                st.deps[op.dst.name] = dp.operand_sources(st.deps, op.a, op.b)
            case Select():
                regs[sem.reg_key(op.dst)] = sem.select(op, regs, lay, ins.span)
                st.deps[sem.reg_key(op.dst)] = dp.operand_sources(st.deps, op.cond, op.a, op.b)
            case AddrOf():
                addr = sem.var_address(lay, op.var, ins.span)
                regs[sem.reg_key(op.dst)] = Const(addr & ((1 << op.width) - 1), op.width)
                st.deps[sem.reg_key(op.dst)] = dp.NONE
            case Collective():
                self._collective(st, ins, op, t)
            case Goto() | Return() | Load() | Store() | IAtom() | FAtom():
                raise AssertionError("control flow and accesses are handled by _run")

    def _load(self, st: _State, ins: Instruction, op: Load, t: int, base: Expr) -> None:
        addr_src = dp.address_sources(st.deps, op.addr)
        order = Order.NA if op.order is None else op.order
        allowed = self._allowed(op.space, order is not Order.NA, t)
        nbytes = op.width // 8
        for i in range(op.vec):
            addr = _element(base, i * nbytes)
            locs = self._resolve(addr, allowed, op.width, t, ins.span, write=False)
            eid = self._event(
                st, ins, t, addr_src=addr_src, kind=Kind.READ, tag=Tag.PLAIN, order=order,
                scope=self._scope(order, op.scope, locs), spaces=_spaces(locs),
                width=op.width, addr=addr, locs=locs, value=None,
                generic=op.space is AddrSpace.GENERIC,
            )  # fmt: skip
            key = sem.reg_key(op.dst) if op.vec == 1 else sem.elem_key(op.dst, i)
            st.regs[key] = ReadValue(eid + self.first, op.width)
            st.deps[key] = frozenset({ReadValue(eid, op.width)})  # a source: local id

    def _store(self, st: _State, ins: Instruction, op: Store, t: int, base: Expr) -> None:
        addr_src = dp.address_sources(st.deps, op.addr)
        order = Order.NA if op.order is None else op.order
        allowed = self._allowed(op.space, order is not Order.NA, t)
        nbytes = op.width // 8
        for i in range(op.vec):
            addr = _element(base, i * nbytes)
            locs = self._resolve(addr, allowed, op.width, t, ins.span, write=True)
            src = op.src
            if op.vec > 1 and isinstance(src, Reg):
                value = sem.read_reg(st.regs, sem.elem_key(src, i), op.width)
                data_src = st.deps.get(sem.elem_key(src, i), dp.NONE)
            else:
                value = sem.operand(st.regs, src, op.width, self.layout, ins.span)
                data_src = dp.operand_sources(st.deps, src)
            self._event(
                st, ins, t, addr_src=addr_src, data_src=data_src,
                kind=Kind.WRITE, tag=Tag.PLAIN, order=order,
                scope=self._scope(order, op.scope, locs), spaces=_spaces(locs),
                width=op.width, addr=addr, locs=locs, value=value,
                generic=op.space is AddrSpace.GENERIC,
            )  # fmt: skip

    def _atomic(self, st: _State, ins: Instruction, op: IAtom | FAtom, t: int, addr: Expr) -> None:
        width = sem.atom_width(op)
        allowed = self._allowed(op.space, True, t)
        locs = self._resolve(addr, allowed, width, t, ins.span, write=True)
        r_order, w_order = sem.rmw_orders(op.order)
        scope = self._scope(op.order, op.scope, locs)
        common: dict[str, object] = dict(
            tag=Tag.RMW, scope=scope, spaces=_spaces(locs), width=width, addr=addr, locs=locs,
            generic=op.space is AddrSpace.GENERIC,
        )  # fmt: skip
        addr_src = dp.address_sources(st.deps, op.addr)
        rid = self._event(
            st, ins, t, addr_src=addr_src, kind=Kind.READ, order=r_order, value=None,
            **common,  # type: ignore[arg-type]  # Event fields, checked by Event itself
        )  # fmt: skip
        old = ReadValue(rid + self.first, width)
        cond, new = sem.rmw_write(op, old, st.regs, self.layout, ins.span)
        source = ReadValue(rid, width)  # local id
        data_src, ctrl_src = _rmw_sources(op, source, st.deps)
        wid = self._event(
            st, ins, t, addr_src=addr_src, data_src=data_src, ctrl_src=ctrl_src,
            kind=Kind.WRITE, order=w_order, value=new, guard=sem.conj(st.guard, cond),
            **common,  # type: ignore[arg-type]  # Event fields, checked by Event itself
        )  # fmt: skip
        self.rmw.add((rid, wid))
        st.regs[sem.reg_key(op.dst)] = old
        st.deps[sem.reg_key(op.dst)] = frozenset({source})

    def _cp_async(self, st: _State, ins: Instruction, op: CpAsync, t: int) -> None:
        src = sem.address(st.regs, op.src, self.layout)
        dst = sem.address(st.regs, op.dst, self.layout)
        if not isinstance(src, Const) or not isinstance(dst, Const):
            raise PisaMMError.at(
                ins.span,
                "cp.async with an address computed from a loaded value is not supported",
                "unsupported",
            )
        found = self.layout.find(src.value)
        if found is None:
            raise PisaMMError.at(
                ins.span, f"cp.async source {src.value:#x} is outside every variable", "async-src"
            )
        ew = found[0].width
        dfound = self.layout.find(dst.value)
        if dfound is not None and dfound[0].width != ew:
            raise PisaMMError.at(
                ins.span,
                f"cp.async between @{found[0].name} ({ew}-bit elements) and "
                f"@{dfound[0].name} ({dfound[0].width}-bit elements): mixed widths "
                "are not supported",
                "async",
            )
        nbytes = ew // 8
        if op.size % nbytes:
            raise PisaMMError.at(
                ins.span,
                f"cp.async size {op.size} is not a multiple of {nbytes}-byte elements",
                "async",
            )
        before = [e for e in st.events if e not in self.async_ids] + sorted(st.completed)
        for i in range(op.size // nbytes):
            sa = Const(src.value + i * nbytes, sem.ADDR_WIDTH)
            da = Const(dst.value + i * nbytes, sem.ADDR_WIDTH)
            slocs = self._resolve(sa, frozenset({Space.GLOBAL}), ew, t, ins.span, write=False)
            dlocs = self._resolve(da, frozenset({Space.SHARED}), ew, t, ins.span, write=True)
            rid = self._event(
                st, ins, t, po=False, kind=Kind.READ, tag=Tag.ASYNC, order=Order.NA, scope=None,
                spaces=_spaces(slocs), width=ew, addr=sa, locs=slocs, value=None,
            )  # fmt: skip
            wid = self._event(
                st, ins, t, po=False, data_src=frozenset({ReadValue(rid, ew)}),
                kind=Kind.WRITE, tag=Tag.ASYNC, order=Order.NA, scope=None,
                spaces=_spaces(dlocs), width=ew, addr=da, locs=dlocs,
                value=ReadValue(rid + self.first, ew),
            )  # fmt: skip
            self.async_ids.update((rid, wid))
            self.aso.add((rid, wid))
            self.aso.update((b, e) for b in before for e in (rid, wid))
            st.group.extend((rid, wid))

    def _collective(self, st: _State, ins: Instruction, op: Collective, t: int) -> None:
        p = self.places[t]
        if p.host:
            raise PisaMMError.at(
                ins.span, "a host thread cannot execute a sub-group collective", "host"
            )
        k = st.collectives
        own = sem.collective_contribution(op, st.regs, self.layout, ins.span)
        own_src = dp.operand_sources(st.deps, op.srcs[0])
        self.contributed.setdefault((t, k), []).append(own_src)
        self._event(
            st, ins, t, data_src=own_src,
            kind=Kind.COLLECTIVE, tag=Tag.PLAIN, order=Order.NA, scope=None,
            spaces=frozenset(), width=0, addr=None, locs=frozenset(), value=own,
            collective_index=k,
        )  # fmt: skip
        members = self.lanes[(p.gpu, p.wg, p.sg)]
        assert p.lane is not None

        def contribution(lane: int) -> Expr:
            if lane == p.lane:
                return own
            return Contribution(members[lane], k, own.width)

        result = sem.collective_result(
            op, st.regs, self.layout, p.lane, range(len(members)), contribution, ins.span
        )
        assert isinstance(op.dst, Reg)
        st.regs[sem.reg_key(op.dst)] = result
        # every operand (the destination too: lanes outside the mask keep it) and every
        # other lane's contribution the result can take
        others = frozenset(e for e in postorder(result) if isinstance(e, Contribution))
        st.deps[sem.reg_key(op.dst)] = dp.operand_sources(st.deps, *op.srcs, op.dst) | others
        st.collectives += 1


def _element(base: Expr, offset: int) -> Expr:
    """The address of the element at byte `offset` from `base` (`mk` folds a constant)."""
    if isinstance(base, Const):
        value = (base.value + offset) & _ADDR_MASK
        if value == base.value and base.width == sem.ADDR_WIDTH:
            return base  # the element at offset 0 (every scalar access): no new Const
        return Const(value, sem.ADDR_WIDTH)
    return sem.mk(Op.ADD, (base, Const(offset, sem.ADDR_WIDTH)), sem.ADDR_WIDTH)


# The zero of each width, shared by every register that starts at zero (values are
# immutable, and compared by value, not identity).
_ZEROS: dict[int, Const] = {}


def _zero(width: int) -> Const:
    zero = _ZEROS.get(width)
    if zero is None:
        zero = _ZEROS[width] = Const(0, width)
    return zero


def _spaces(locs: frozenset[Location]) -> frozenset[Space]:
    if len(locs) == 1:  # a constant address (almost every access): no generator
        (loc,) = locs
        return frozenset((loc.space,))
    return frozenset(loc.space for loc in locs)


# ---------------------------------------------------------------- the structure


def _init_value(decl: VarDecl, offset: int) -> int:
    idx = offset // (decl.width // 8)
    return decl.init[idx] if idx < len(decl.init) else 0


def _observed(test: LitmusTest, layout: Layout) -> set[Location]:
    """Locations named by the condition or `locations` (their init values are needed)."""
    out: set[Location] = set()
    obs = [o for o in test.locations if isinstance(o, MemObs)]
    stack: list[Prop] = [test.condition.prop]
    while stack:  # by the proposition's node types: five getattr a node cost 3% of a build
        p = stack.pop()
        if isinstance(p, Atom):
            if isinstance(p.obs, MemObs):
                obs.append(p.obs)
        elif isinstance(p, And | Or):
            stack += p.args
        elif isinstance(p, Not):
            stack.append(p.arg)
        elif isinstance(p, Implies):
            stack += (p.lhs, p.rhs)
    for o in obs:
        var = layout.variable(o.var)
        if var is None or var.space is Space.PRIVATE:
            continue
        if var.space is Space.SHARED and o.wg is None:
            continue
        inst = o.instance if var.space is Space.SHARED else None
        out.add(Location(var.name, o.index * (var.width // 8), inst, var.space))
    return out


def _rmw_sources(op: IAtom | FAtom, old: ReadValue, deps: dp.Deps) -> tuple[dp.Sources, dp.Sources]:
    """(data, extra ctrl) sources of an RMW's write: a cas writes src1 when old equals src0
    (its guard), an exchange writes src0, every other operation combines old with src0."""
    if op.op in (IAtomOp.CAS, FAtomOp.CAS):
        return dp.operand_sources(deps, op.src1), frozenset({old}) | dp.operand_sources(
            deps, op.src0
        )
    if op.op is IAtomOp.XCHG:
        return dp.operand_sources(deps, op.src0), dp.NONE
    return frozenset({old}) | dp.operand_sources(deps, op.src0, op.src1), dp.NONE


def _dependencies(
    b: _Builder, n: int
) -> tuple[set[tuple[int, int]], set[tuple[int, int]], set[tuple[int, int]]]:
    """addr, data and ctrl: from each read to the events whose address, written value or
    preceding branch conditions syntactically come from it (events/deps), ids shifted by n."""
    out: list[set[tuple[int, int]]] = []
    for recorded in (b.src_addr, b.src_data, b.src_ctrl):
        pairs: set[tuple[int, int]] = set()
        for eid, reads in dp.resolve(recorded, b.contributed).items():
            pairs.update((r + n, eid + n) for r in reads if r != eid)
        out.append(pairs)
    return out[0], out[1], out[2]


def _guess_inits(test: LitmusTest, layout: Layout, places: tuple[Placement, ...]) -> int:
    """How many init writes a build will make, guessed before the threads run: one per
    location instance a thread could reach (every element of a global variable, of a shared
    one per work-group, of a private one per owner), the count when every location is
    accessed, as in almost every test. A wrong guess costs a second build, never a result."""
    groups = len({(p.gpu, p.wg) for p in places if not p.host})
    owners = _private_owners(test.variables, len(places))
    count = 0
    for var in layout.variables:
        if var.space is Space.SHARED:
            count += var.count * groups
        elif var.space is Space.PRIVATE:
            count += var.count * owners.get(var.name, 0)
        else:
            count += var.count
    return count


def _private_owners(variables: Iterable[VarDecl], threads: int) -> dict[str, int]:
    """How many of the `threads` threads own each private variable (addressing.owns: it is
    declared for all, or for them), counted in one pass: a test of thousands of threads
    declares thousands of them."""
    owners: dict[str, set[int] | None] = {}  # None: declared for every thread
    for d in variables:
        if d.space is not Space.PRIVATE:
            continue
        if d.thread is None:
            owners[d.name] = None
        else:
            held = owners.setdefault(d.name, set())
            if held is not None and 0 <= d.thread < threads:
                held.add(d.thread)
    return {name: threads if held is None else len(held) for name, held in owners.items()}


def _run_threads(
    test: LitmusTest, unroll: int, first: int, layout: Layout, places: tuple[Placement, ...]
) -> tuple[_Builder, set[Location]]:
    """The threads' events with ids from `first`, and the locations they access."""
    b = _Builder(test, unroll, first, layout, places)
    for thread in test.threads:
        b.run_thread(thread)
    accessed: set[Location] = set()
    for ev in b.events:
        accessed.update(ev.locs)
    return b, accessed


def build(test: LitmusTest, *, unroll: int = DEFAULT_UNROLL) -> EventStructure:
    """Symbolically execute every thread along every path, loops unrolled `unroll` times."""
    if unroll < 0:
        raise PisaMMError.at(None, f"--unroll must be at least 0, not {unroll}", "usage")
    if unroll > MAX_UNROLL:
        raise PisaMMError.at(None, unroll_limit_message(unroll), "limit")
    # The init writes come first, and their number is known only once the threads have
    # run: the threads run with the ids of a guess, and again in the rare test it misses
    # (3 of the 1,234 bundled tests). Shifting every id afterwards rebuilt every event and
    # expression, about 12% of a build.
    layout, places = make_layout(test.variables), placements(test)
    guess = _guess_inits(test, layout, places)
    b, accessed = _run_threads(test, unroll, guess, layout, places)
    n = len(accessed)
    if n != guess:
        b, accessed = _run_threads(test, unroll, n, layout, places)
    # the init writes, in the order of their locations' addresses
    init_locs = sorted(accessed, key=lambda loc: (_addr_of(layout, loc), loc))
    inits: list[Event] = []
    init_values: dict[Location, int] = {}
    for i, loc in enumerate(init_locs):
        decl = b.decls[loc.var]
        var = layout.variable(loc.var)
        assert var is not None
        value = _init_value(decl, loc.offset)
        init_values[loc] = value
        inits.append(
            Event(
                id=i, thread=None, kind=Kind.WRITE, tag=Tag.INIT, order=Order.NA, scope=None,
                spaces=frozenset({loc.space}), width=var.width,
                addr=Const(var.base + loc.offset, sem.ADDR_WIDTH), locs=frozenset({loc}),
                value=Const(value, var.width), guard=TRUE, parent=None, span=decl.span,
                text=f"init {loc} = {value}",
            )
        )  # fmt: skip
    unaccessed = _observed(test, layout) - accessed
    for loc in unaccessed:
        init_values[loc] = _init_value(b.decls[loc.var], loc.offset)
    if unaccessed:
        init = tuple(sorted(init_values.items(), key=lambda kv: (_addr_of(layout, kv[0]), kv[0])))
    else:  # the accessed locations only, already in that order
        init = tuple(init_values.items())

    events = (*inits, *b.events)
    threads = tuple(
        ThreadStructure(
            index=t.index,
            name=f"P{t.index}",
            placement=b.places[t.index],
            paths=tuple(b.paths[t.index]),
        )
        for t in test.threads
    )
    # po as parent links (the closure is quadratic in a long thread; ProgramOrder defers it)
    po = ProgramOrder(
        tuple(None if ev.thread is None or ev.tag is Tag.ASYNC else ev.parent for ev in events)
    )
    addr, data, ctrl = _dependencies(b, n)
    return EventStructure(
        name=test.name,
        events=events,
        threads=threads,
        po=po,
        aso=_closure(shift_pairs(b.aso, n)),
        rmw=shift_pairs(b.rmw, n),
        addr=frozenset(addr),
        data=frozenset(data),
        ctrl=frozenset(ctrl),
        init=init,
        layout=b.layout,
        unroll=unroll,
    )


def _addr_of(layout: Layout, loc: Location) -> tuple[int, tuple[int, ...]]:
    var = layout.variable(loc.var)
    base = 0 if var is None else var.base
    inst = loc.instance
    key = () if inst is None else (inst,) if isinstance(inst, int) else inst
    return base + loc.offset, key


def _closure(pairs: frozenset[tuple[int, int]]) -> frozenset[tuple[int, int]]:
    succ: dict[int, set[int]] = {}
    for a, c in pairs:
        succ.setdefault(a, set()).add(c)
    out: set[tuple[int, int]] = set()
    for start in succ:
        seen: set[int] = set()
        todo = list(succ[start])
        while todo:
            x = todo.pop()
            if x in seen:
                continue
            seen.add(x)
            todo.extend(succ.get(x, ()))
        out.update((start, x) for x in seen)
    return frozenset(out)
