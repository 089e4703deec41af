"""The machine's transitions: eager thread-local steps, and the memory steps that interleave."""

from __future__ import annotations

from collections.abc import Iterable

from pisa_mm.errors import PisaMMError, Span
from pisa_mm.events import semantics as sem
from pisa_mm.events.addressing import QUALIFIED, allowed_spaces, invalid_copy, is_target, owns
from pisa_mm.events.build import make_layout, placements
from pisa_mm.events.kinds import Kind, Order, Scope, Space
from pisa_mm.events.layout import Layout
from pisa_mm.events.model import Location, Placement
from pisa_mm.litmus.program import (
    AddrOf,
    AddrSpace,
    Alu,
    Barrier,
    Collective,
    CommitGroup,
    Compare,
    CpAsync,
    FAtom,
    Fence,
    Goto,
    IAtom,
    Instruction,
    LitmusTest,
    Load,
    MemObs,
    Observable,
    Pred,
    Reg,
    RegObs,
    Return,
    Select,
    Store,
    VarDecl,
    VarRef,
    WaitGroup,
)
from pisa_mm.operational.atoms import BOTH, INIT, Actor, Clock, Ev, Flag, MsgId, Node
from pisa_mm.operational.psc import Graph, close
from pisa_mm.operational.state import (
    Access,
    AgentState,
    Config,
    Entries,
    Message,
    Status,
    ThreadState,
    View,
    merge_entries,
    set_coh,
    set_regs,
)
from pisa_mm.records import record
from pisa_mm.values.expr import BOOL, Const, Expr

ACQUIRING = frozenset({Order.ACQ, Order.ACQ_REL, Order.SC})
RELEASING = frozenset({Order.REL, Order.ACQ_REL, Order.SC})
_LOCAL_SPACES = frozenset({Space.PRIVATE, Space.CONST})
# Work-items whose path ended without `return` (the builder's plain EXIT): they executed
# fewer barriers than a work-group that waits at one (PISA 9.1, `bfewer`).
_ENDED = frozenset({Status.DONE, Status.CUT, Status.INVALID})


@record
class Step:
    """One machine step, as `trace` prints it."""

    actor: str  # "P0", or "P0.cp1" for the agent of P0's second cp.async
    line: int | None
    text: str
    details: tuple[str, ...] = ()

    def __str__(self) -> str:
        where = f"line {self.line}" if self.line is not None else "agent"
        head = f"{self.actor:<7} {where:<9} {self.text}"
        return "\n".join([head, *(f"{'':<18}{d}" for d in self.details)])


@record
class Future:
    """The `.global`/`.shared` locations an actor may still read and write; `anywhere`:
    some access has an address computed from registers (it may touch any location)."""

    reads: frozenset[Location]
    writes: frozenset[Location]
    anywhere: bool

    def conflicts(self, loc: Location, write: bool) -> bool:
        """Whether a step accessing `loc` (writing it if `write`) may conflict with one of
        these accesses: the same location, and one of the two writes."""
        if loc.space not in BOTH:
            return False
        if self.anywhere or loc in self.writes:
            return True
        return write and loc in self.reads


Successor = tuple[tuple[Step, ...], Config]


def _unsupported(span: Span | None, what: str) -> PisaMMError:
    return PisaMMError.at(span, f"the operational engine does not support {what}", "operational")


class Machine:
    """A litmus test's machine: the initial state and the transitions from any state."""

    def __init__(self, test: LitmusTest, unroll: int, *, tracing: bool = False) -> None:
        self.test = test
        self.unroll = unroll
        self.layout: Layout = make_layout(test.variables)
        self.places: tuple[Placement, ...] = placements(test)
        self.decls: dict[str, VarDecl] = {d.name: d for d in test.variables}
        self.tracing = tracing  # build step descriptions (only `trace` reads them)
        self._static_local: dict[tuple[int, int], bool] = {}
        self._futures: dict[tuple[int, int], Future] = {}
        self._static_locs: dict[tuple[int, int, int], Location] = {}
        self.races_possible = self._races_possible()
        # psc is tracked (and needs hb clocks) only when some instruction is seq_cst
        self.track_sc = uses_sc(test)
        wgs: dict[tuple[object, ...], list[int]] = {}
        for t, p in enumerate(self.places):
            if not p.host:
                wgs.setdefault((p.gpu, p.wg), []).append(t)
        self.workgroups = [wgs[k] for k in sorted(wgs, key=repr)]
        self.keep_hb = self.races_possible or self.track_sc

    # ------------------------------------------------------------ static helpers

    def instance(self, thread: int, level: Scope) -> tuple[object, ...]:
        """The scope instance of `thread` at `level` (host threads share only `system`)."""
        p = self.places[thread]
        if level is Scope.SYS:
            return ("sys",)
        if p.host:
            return ("host", thread)
        match level:
            case Scope.GPU:
                return ("gpu", p.gpu)
            case Scope.WG:
                return ("wg", p.gpu, p.wg)
            case _:
                return ("sg", p.gpu, p.wg, p.sg)

    def incl(self, a: int, sa: Scope, b: int, sb: Scope) -> bool:
        """Scope inclusion, inclusive and mutual (model-decisions "Scopes"): both threads
        share the instance of the narrower of the two scopes, as scope instances nest."""
        low = min(sa, sb)
        return self.instance(a, low) == self.instance(b, low)

    def _races_possible(self) -> bool:
        """Whether two accesses of this program can race at all: some access is non-atomic,
        or two atomics can be non-inclusive. When not, hb clocks and access records are
        dropped: they only serve race detection, and they keep equal states apart."""
        scopes: list[Scope] = []
        for th in self.test.threads:
            for ins in th.body:
                match ins.op:
                    case Load(order=None) | Store(order=None) | CpAsync():
                        return True
                    case Load() | Store() | IAtom() | FAtom():
                        # unclamped: accesses to one .shared location share a work-group
                        order, scope = ins.op.order, ins.op.scope
                        relaxed = order is Order.RLX
                        scopes.append(Scope.SYS if relaxed else scope or Scope.GPU)
                    case _:
                        pass
        if not scopes:
            return False
        low = min(scopes)
        return len({self.instance(t, low) for t in range(len(self.places))}) > 1

    def init_value(self, loc: Location) -> int:
        decl = self.decls[loc.var]
        idx = loc.offset // (decl.width // 8)
        return decl.init[idx] if idx < len(decl.init) else 0

    def _flag(self, cfg: Config, name: str, description: str) -> None:
        # raised by the step that builds `cfg`: it counts if some complete run takes that
        # step (the explorer checks that the state reaches a final state)
        cfg.raised.append(Flag(name, description))

    def _ins(self, t: int, ts: ThreadState) -> Instruction:
        return self.test.threads[t].body[ts.pc]

    def _label(self, t: int, ins: Instruction) -> str:
        return f"P{t}:{ins.span.line} `{ins.text}`"

    # ------------------------------------------------------------ initial state

    def initial(self) -> Config:
        threads: list[ThreadState] = []
        for th in self.test.threads:
            widths = dict(th.regs)
            regs: dict[str, Expr] = {}
            for ri in self.test.reg_inits:
                if ri.thread != th.index:
                    continue
                if isinstance(ri.reg, Pred):
                    regs[ri.reg.name] = Const(
                        ri.value & 1 if isinstance(ri.value, int) else 1, BOOL
                    )
                    continue
                key = sem.reg_key(ri.reg)
                if isinstance(ri.value, int):
                    width = widths.get(key, 64)
                    regs[key] = Const(ri.value & ((1 << width) - 1), width)
                else:
                    regs[key] = Const(sem.var_address(self.layout, ri.value, ri.span), 64)
            threads.append(ThreadState(0, tuple(sorted(regs.items())), View()))
        return Config(threads, {})

    # ------------------------------------------------------------ addresses and locations

    def locate(
        self, t: int, regs: dict[str, Expr], ins: Instruction, space: AddrSpace, width: int, k: int
    ) -> Location:
        """The location instance of element `k` of a memory instruction's address operand."""
        key = (t, ins.index, k)
        loc = self._static_locs.get(key)
        if loc is not None:
            return loc
        addr = getattr(ins.op, "addr", None)
        assert addr is not None
        value = sem.address(regs, addr, self.layout)
        assert isinstance(value, Const)
        loc = self.resolve(t, value.value + k * (width // 8), space, width, ins.span)
        if not isinstance(addr.base, Reg) and not isinstance(addr.offset, Reg):
            self._static_locs[key] = loc  # the address does not depend on registers
        return loc

    def resolve(self, t: int, address: int, space: AddrSpace, width: int, span: Span) -> Location:
        found = self.layout.find(address)
        if found is None:
            raise PisaMMError.at(
                span, f"address {address:#x} does not point into any variable", "address"
            )
        var, off = found
        qual = QUALIFIED.get(space)
        if qual is not None and var.space is not qual:
            raise PisaMMError.at(
                span,
                f"a .{space.value} access to @{var.name}, a .{var.space.value} variable",
                "space",
            )
        if width != var.width:
            raise _unsupported(
                span, f"mixed-size accesses ({width}-bit access to {var.width}-bit @{var.name})"
            )
        if off % (width // 8):
            raise PisaMMError.at(
                span, f"misaligned {width}-bit access to @{var.name}+{off}", "alignment"
            )
        instance: int | tuple[int, int] | None = None
        if var.space is Space.SHARED:
            p = self.places[t]
            if p.gpu is None or p.wg is None:
                raise PisaMMError.at(span, "a host thread cannot access .shared memory", "host")
            instance = (p.gpu, p.wg)  # a work-group is (NDRange, number)
        elif var.space is Space.PRIVATE:
            instance = t
        return Location(var.name, off, instance, var.space)

    def invalid_address(self, t: int, ts: ThreadState, ins: Instruction) -> int | None:
        """The address of the next element of a memory instruction when it is computed from
        registers and is none of the locations it may touch (undefined behaviour: the
        builder's `invalid-address` branch); None when it is valid or constant (a constant
        address is checked, with a located error, by `resolve`)."""
        op = ins.op
        assert isinstance(op, Load | Store | IAtom | FAtom)
        if not (isinstance(op.addr.base, Reg) or isinstance(op.addr.offset, Reg)):
            return None
        atomic = isinstance(op, IAtom | FAtom) or op.order not in (None, Order.NA)
        width = sem.atom_width(op) if isinstance(op, IAtom | FAtom) else op.width
        elem = 0 if isinstance(op, IAtom | FAtom) else ts.elem
        base = sem.address(ts.reg_env(), op.addr, self.layout)
        assert isinstance(base, Const)
        address = base.value + elem * (width // 8)
        found = self.layout.find(address)
        if found is None:
            return address
        var, off = found
        # the builder's rule (events/addressing.py), on the one address this run computed
        allowed = allowed_spaces(op.space, atomic, self.places[t].host)
        owned = var.space is not Space.PRIVATE or owns(self.test.variables, var.name, t)
        write = not isinstance(op, Load)
        if off % (width // 8) or not is_target(var, allowed, width, write=write, owned=owned):
            return address
        return None

    def _invalid_copy(self, ts: ThreadState, op: CpAsync) -> int | None:
        """The builder's rule (`_invalid_copy`) on the addresses a `cp.async` holds in
        registers: the first that is no location it may copy between, or None."""
        if not any(isinstance(a.base, Reg) or isinstance(a.offset, Reg) for a in (op.src, op.dst)):
            return None
        regs = ts.reg_env()
        src = sem.address(regs, op.src, self.layout)
        dst = sem.address(regs, op.dst, self.layout)
        assert isinstance(src, Const) and isinstance(dst, Const)
        return invalid_copy(self.layout, src.value, dst.value, op.size)

    def _stop_invalid(self, cfg: Config, t: int, ins: Instruction, address: int) -> None:
        """Work-item `t` of `cfg` stops at an access with an invalid address, raising the
        flag; it ends without `return` (its work-group's barriers diverge)."""
        cfg.threads[t] = cfg.threads[t]._replace(status=Status.INVALID)
        text = f"P{t}: {ins.text}  (invalid address) at address {address:#x}"
        self._flag(cfg, "invalid-address", text)
        self._left_behind(cfg, t)

    def _invalid(self, cfg: Config, t: int, ins: Instruction, address: int) -> list[Successor]:
        """The work-item stops at an access with an invalid address, raising the flag."""
        new = cfg.clone()
        self._stop_invalid(new, t, ins, address)
        detail = (f"address {address:#x} is no location: undefined, P{t} stops",)
        return [((Step(f"P{t}", ins.span.line, ins.text, detail),), new)]

    def _ensure(self, cfg: Config, loc: Location) -> tuple[Message, ...]:
        msgs = cfg.mem.get(loc)
        if msgs is None:
            msgs = (Message(INIT, self.init_value(loc), atomic=False),)
            cfg.mem[loc] = msgs
        return msgs

    # ------------------------------------------------------------ views

    def _acquire(
        self,
        cfg: Config,
        t: int,
        cur: View,
        entries: Entries,
        scope: Scope,
        spaces: frozenset[Space],
    ) -> View:
        for rt, rs, v in entries:
            if self.incl(rt, rs, t, scope):
                cur = cfg.join(cur, v if spaces >= BOTH else v.restrict(spaces))
        return cur

    def _tick(self, ts: ThreadState, loc: Location | None) -> tuple[ThreadState, Clock | None]:
        """Count one event of the work-item (at `loc`, None for a fence or collective).

        With psc tracking, also returns the clock of the latest earlier event that is not an
        access to `loc` (the `d` of po-nl;hb;po-nl before this event; None: none yet)."""
        if not self.track_sc:
            return ts._replace(events=ts.events + 1), None
        if loc is not None and loc == ts.last_loc:
            dhb = ts.run_dhb
        else:
            dhb = ts.cur.hb if ts.events else None
        return ts._replace(events=ts.events + 1, last_loc=loc, run_dhb=dhb), dhb

    def _psc(self, cfg: Config, ev: Ev, details: list[str] | None = None) -> bool:
        """Add `ev` to the psc log of `cfg`; False when its psc edges close a cycle (the step
        is refused: no consistent execution extends this run)."""
        if not self.track_sc:
            return True
        relevant = ev.sc or (ev.loc is not None and ev.loc.space in BOTH)
        if not relevant:
            return True
        graph = Graph(cfg.log, cfg.pos, self.incl)
        new = graph.edges(ev)
        scopes = {e.node: e.scope for e in cfg.log if e.sc and e.scope is not None}
        if ev.sc and ev.scope is not None:
            scopes[ev.node] = ev.scope

        def inclusive(a: Node, b: Node) -> bool:
            return self.incl(a[0], scopes[a], b[0], scopes[b])

        closed = close(cfg.psc, new, inclusive)
        if closed is None:
            return False
        if details is not None and self.tracing:
            lines = {e.node: e.line for e in cfg.log}
            lines[ev.node] = ev.line
            added = sorted((closed - cfg.psc) & frozenset(new))
            if added:
                text = ", ".join(f"P{a[0]}:{lines[a]} -> P{b[0]}:{lines[b]}" for a, b in added)
                details.append(f"psc += {{{text}}}")
        cfg.psc = closed
        cfg.log = tuple(sorted((*cfg.log, ev), key=Ev.key))
        return True

    def _fence_entries(self, t: int, ts: ThreadState) -> list[tuple[int, Scope, View]]:
        return [(t, s, v) for s, v in ts.relf]

    def _moved(self, cfg: Config, before: View, after: View) -> tuple[str, ...]:
        if not self.tracing:
            return ()
        out = []
        for loc, mid in after.coh:
            old = before.msg(loc)
            if old != mid:
                out.append(f"{loc}@{cfg.pos(loc, mid)}")
        return (f"view += {{{', '.join(out)}}}",) if out else ()

    # ------------------------------------------------------------ race detection

    def _races(
        self,
        cfg: Config,
        actor: Actor,
        view: View,
        loc: Location,
        write: bool,
        atomic: bool,
        scope: Scope | None,
        text: str,
    ) -> None:
        if loc.space not in BOTH:
            return
        for a in cfg.accesses.get(loc, ()):
            if a.actor[0] == actor[0] or not (a.write or write):
                continue
            if view.clock(loc.space, a.actor) >= a.seq:
                continue
            pair = f"{a.text} and {text} on {loc}"
            if not (a.atomic and atomic):
                self._flag(cfg, "data-race", f"conflicting accesses not ordered by hb: {pair}")
            else:
                assert a.scope is not None and scope is not None
                if not self.incl(a.actor[0], a.scope, actor[0], scope):
                    self._flag(cfg, "heterogeneous-race", f"atomics not scope-inclusive: {pair}")

    def _async_race(self, cfg: Config, t: int, loc: Location, write: bool, text: str) -> None:
        for (owner, k), ag in cfg.agents.items():
            if owner != t:
                continue
            if any(dst == loc or (write and src == loc) for src, dst in ag.pairs):
                self._flag(
                    cfg, "async-race", f"{text} conflicts with incomplete copy `{ag.text}` #{k}"
                )

    def _own(self, view: View, actor: Actor, count: int) -> View:
        return view.with_clock(actor, count) if self.keep_hb else view

    def _record(self, cfg: Config, loc: Location, acc: Access) -> None:
        # Of an actor's accesses of one kind only the latest matters: if it happens before a
        # later access, so do the earlier ones (po is in hb). Keeping a sorted set of those
        # makes interleavings that did the same accesses meet in one state.
        if loc.space not in BOTH or not self.races_possible:
            return
        kind = (acc.actor, acc.write, acc.atomic, acc.scope)
        kept = [
            a for a in cfg.accesses.get(loc, ()) if (a.actor, a.write, a.atomic, a.scope) != kind
        ]
        kept.append(acc)
        cfg.accesses[loc] = tuple(sorted(kept, key=lambda a: (a.actor, a.seq)))

    # ------------------------------------------------------------ eager (thread-local) steps

    def settle(
        self, cfg: Config, log: list[Step] | None, threads: Iterable[int] | None = None
    ) -> bool:
        """Run every step that commutes with all others until none applies (in place):
        first those of `threads` (default: all; after a step, only the work-item that took
        it can have new ones, or the owner of a copy), then, whenever a barrier or a
        collective completes, those of every work-item. False when one of them closed a
        psc cycle or reached a barrier passed without it (the state is dead)."""
        todo = range(len(cfg.threads)) if threads is None else threads
        while True:
            for t in todo:
                while self._local(cfg, t, log):
                    pass
                if _dead(cfg):
                    return False
            waiting = any(ts.status in (Status.BARRIER, Status.COLLECTIVE) for ts in cfg.threads)
            if not (waiting and self._complete_groups(cfg, log, force=False)):
                return True
            todo = range(len(cfg.threads))

    def _local(self, cfg: Config, t: int, log: list[Step] | None) -> bool:
        ts = cfg.threads[t]
        if ts.status is not Status.RUN:
            return False
        body = self.test.threads[t].body
        if ts.pc >= len(body):
            cfg.threads[t] = _finish(ts, Status.DONE)
            self._left_behind(cfg, t)
            return True
        ins = body[ts.pc]
        op = ins.op
        if isinstance(op, Load | Store | IAtom | FAtom):
            return self._local_access(cfg, t, ins, log)
        regs = ts.reg_env()
        notes: list[str] = []
        nxt = ts._replace(pc=ts.pc + 1)
        match op:
            case Alu():
                val = sem.alu(op, regs, self.layout, ins.span)
                nxt = nxt._replace(regs=set_regs(ts.regs, {sem.reg_key(op.dst): val}))
            case Compare():
                val = sem.compare(op, regs, self.layout, ins.span)
                nxt = nxt._replace(regs=set_regs(ts.regs, {op.dst.name: val}))
            case Select():
                val = sem.select(op, regs, self.layout, ins.span)
                nxt = nxt._replace(regs=set_regs(ts.regs, {sem.reg_key(op.dst): val}))
            case AddrOf():
                addr = sem.var_address(self.layout, op.var, ins.span) & ((1 << op.width) - 1)
                nxt = nxt._replace(
                    regs=set_regs(ts.regs, {sem.reg_key(op.dst): Const(addr, op.width)})
                )
            case Goto():
                taken = op.cond is None or _true(sem.pred_value(regs, op.cond))
                if taken:
                    target = self.test.threads[t].label_index(op.label)
                    if target <= ts.pc:
                        back = dict(ts.backedges)
                        n = back.get(ts.pc, 0)
                        if n >= self.unroll:
                            cfg.threads[t] = _finish(ts, Status.CUT)
                            self._left_behind(cfg, t)
                            _log(
                                log,
                                Step(
                                    f"P{t}",
                                    ins.span.line,
                                    ins.text,
                                    ("unroll bound reached: run cut",),
                                ),
                            )
                            return True
                        back[ts.pc] = n + 1
                        nxt = nxt._replace(backedges=tuple(sorted(back.items())))
                    nxt = nxt._replace(pc=target)
            case Return():
                if op.cond is None or _true(sem.pred_value(regs, op.cond)):
                    nxt = _finish(ts, Status.RETURNED)
            case Fence():
                # every fence is eager: an SC fence only adds psc edges, whatever the order
                # in which the other events of the run are added (psc.py)
                fenced = self._fence(cfg, t, nxt, op, op.scope, ins.span.line, notes)
                if fenced is None:
                    cfg.dead = True
                    return False
                nxt = fenced
            case CommitGroup():
                # an empty group is a group too (PTX: trivially complete): wait_group N
                # counts it among the N most recent
                nxt = nxt._replace(groups=(*ts.groups, ts.open_group), open_group=())
            case WaitGroup():
                # wait_group N completes all but the N most recently committed groups
                cut = len(ts.groups) if op.n == 0 else max(0, len(ts.groups) - op.n)
                ids = [(t, k) for g in ts.groups[:cut] for k in g]
                if not all(cfg.agents[a].done for a in ids):
                    return False
                cur = ts.cur
                for a in ids:
                    cur = cfg.join(cur, cfg.agents.pop(a).view)
                if ids:
                    notes.append(f"completes copies {sorted(k for _, k in ids)}")
                nxt = nxt._replace(cur=cur, groups=ts.groups[cut:])
            case CpAsync():
                if (bad := self._invalid_copy(ts, op)) is not None:
                    self._stop_invalid(cfg, t, ins, bad)
                    return True
                nxt = self._issue(cfg, t, nxt, ins, op)
            case Barrier():
                if ts.barred:
                    # its work-group already passed this barrier instance without it
                    cfg.dead = True
                    return False
                arrived = self._fence(cfg, t, ts, Fence(BOTH, Order.REL, Scope.WG), Scope.WG)
                assert arrived is not None
                nxt = arrived._replace(status=Status.BARRIER)
                notes.append("arrive (release, workgroup)")
            case Collective():
                nxt, _ = self._tick(ts._replace(status=Status.COLLECTIVE), None)
                notes.append("arrive")
        cfg.threads[t] = nxt
        _log(log, Step(f"P{t}", ins.span.line, ins.text, tuple(notes)))
        return True

    def _local_access(self, cfg: Config, t: int, ins: Instruction, log: list[Step] | None) -> bool:
        # .private and .const locations are touched by one work-item only (or never
        # written): their accesses commute with every other step.
        op = ins.op
        assert isinstance(op, Load | Store | IAtom | FAtom)
        key = (t, ins.index)
        local = self._static_local.get(key)
        if local is None:
            ts = cfg.threads[t]
            if self.invalid_address(t, ts, ins) is not None:
                return False
            width = op.fmt.width if isinstance(op, FAtom) else op.width
            loc = self.locate(t, ts.reg_env(), ins, op.space, width, ts.elem)
            local = loc.space in _LOCAL_SPACES
            addr = op.addr
            if isinstance(addr.base, VarRef) and not isinstance(addr.offset, Reg):
                self._static_local[key] = local
        if not local:
            return False
        succ = self._memory(cfg, t, ins)
        # one message to read (the work-item's own latest write, or init), one place to
        # write (the end); only po-ordered psc edges end at it, so it is never refused
        assert len(succ) == 1
        steps, new = succ[0]
        cfg.assign(new)
        if log is not None:
            log.extend(steps)
        return True

    def _fence(
        self,
        cfg: Config,
        t: int,
        ts: ThreadState,
        op: Fence,
        scope: Scope,
        line: int = 0,
        notes: list[str] | None = None,
    ) -> ThreadState | None:
        """A fence event of `t` (ts already past it); None when seq_cst and refused by psc."""
        ts, _ = self._tick(ts, None)
        cur = ts.cur
        if op.order in ACQUIRING:
            cur = self._acquire(cfg, t, cur, ts.pending, scope, op.spaces)
        ts = ts._replace(cur=cur)
        if op.order is Order.SC:
            ev = Ev((t, -1), ts.events, Kind.FENCE, None, op.spaces, True, scope, None, cur.hb,
                    line=line)  # fmt: skip
            if not self._psc(cfg, ev, notes):
                return None
        if op.order in RELEASING:
            own = self._own(cur, (t, -1), ts.events).restrict(op.spaces)
            relf = dict(ts.relf)
            old = relf.get(scope)
            relf[scope] = own if old is None else cfg.join(old, own)
            ts = ts._replace(relf=tuple(sorted(relf.items())))
        return ts

    def _issue(
        self, cfg: Config, t: int, ts: ThreadState, ins: Instruction, op: CpAsync
    ) -> ThreadState:
        regs = ts.reg_env()
        src = sem.address(regs, op.src, self.layout)
        dst = sem.address(regs, op.dst, self.layout)
        assert isinstance(src, Const) and isinstance(dst, Const)
        found = self.layout.find(src.value)
        if found is None:
            raise PisaMMError.at(
                ins.span, f"cp.async source {src.value:#x} is no variable", "async-src"
            )
        width = found[0].width
        dfound = self.layout.find(dst.value)
        if dfound is not None and dfound[0].width != width:
            raise _unsupported(ins.span, "cp.async between variables of different element widths")
        step = width // 8
        if op.size % step:
            raise _unsupported(ins.span, f"a cp.async size that is not a multiple of {step} bytes")
        pairs = tuple(
            (
                self.resolve(t, src.value + i, AddrSpace.GLOBAL, width, ins.span),
                self.resolve(t, dst.value + i, AddrSpace.SHARED, width, ins.span),
            )
            for i in range(0, op.size, step)
        )
        # Two copies of one work-item that no wait separates are unordered by aso (only a
        # wait orders a copy before later ones): a common destination is an async-race.
        # Copies write `.shared` and read `.global`, so destinations are the only conflict.
        dsts = {d for _, d in pairs}
        for (owner, k), ag in sorted(cfg.agents.items()):
            if owner == t and dsts.intersection(d for _, d in ag.pairs):
                self._flag(
                    cfg,
                    "async-race",
                    f"P{t}:{ins.span.line} `{ins.text}` and copy `{ag.text}` #{k} write "
                    "one location and no wait separates them",
                )
        k = ts.agents
        view = self._own(ts.cur, (t, -1), ts.events)
        cfg.agents[(t, k)] = AgentState(
            pairs, view, tuple(range(len(pairs))), text=ins.text, line=ins.span.line
        )
        return ts._replace(agents=k + 1, open_group=(*ts.open_group, k))

    # ------------------------------------------------------------ rendezvous

    def _complete_groups(self, cfg: Config, log: list[Step] | None, *, force: bool) -> bool:
        done = False
        sgs: dict[tuple[object, ...], list[int]] = {}
        for t, p in enumerate(self.places):
            if not p.host:
                sgs.setdefault((p.gpu, p.wg, p.sg), []).append(t)
        for members in self.workgroups:
            if self._barrier(cfg, members, log, force=force):
                done = True
        for members in sgs.values():
            if self._collective(cfg, members, log, force=force):
                done = True
        return done

    def _left_behind(self, cfg: Config, t: int) -> None:
        """A work-item its work-group left behind at a barrier ends without `return`: it
        executed fewer barriers than the others (PISA 9.1, `bfewer`)."""
        if cfg.threads[t].barred:
            self._flag(
                cfg,
                "barrier-divergence",
                f"P{t} ends without return after its work-group passed a barrier without it",
            )

    def _barrier(
        self,
        cfg: Config,
        members: list[int],
        log: list[Step] | None,
        *,
        force: bool,
        early: bool = False,
    ) -> bool:
        """Complete the barrier the waiting members of a work-group wait at: when every
        member waits or has finished; when `force`d (a deadlock); or, `early`, leaving the
        members still running behind: they are then `barred` from every later barrier, as
        in an execution where they execute fewer barriers (the work-group does not wait for
        work-items that never arrive; a run in which one does arrive is refused)."""
        waiting = [t for t in members if cfg.threads[t].status is Status.BARRIER]
        if not waiting:
            return False
        absent = [t for t in members if not cfg.threads[t].status.finished and t not in waiting]
        if early:
            # only work-items running code are left behind (one waiting at a collective
            # cannot move on until a collective completes: see `force`)
            running = [t for t in absent if cfg.threads[t].status is Status.RUN]
            if not running:
                return False
            for t in running:
                cfg.threads[t] = cfg.threads[t]._replace(barred=True)
        elif absent and not force:
            return False
        # Every work-item has a body of its own, so "the same barrier instruction" (PISA 9.1)
        # means the same ordinal among the barrier instructions of each body, as for the
        # builder's `sinstr` (docs/operational.md, "Barrier").
        sites = {self._barrier_site(t, cfg.threads[t].pc) for t in waiting}
        # a work-item that ended without `return` (its path's EXIT, as in the builder)
        laggards = [t for t in members if cfg.threads[t].status in _ENDED]
        stuck = [] if early else absent
        if len(sites) > 1 or laggards or stuck:
            names = ", ".join(f"P{t}" for t in members)
            self._flag(cfg, "barrier-divergence", f"work-items {names} do not meet at one barrier")
        joined = cfg.join_all(
            self._own(cfg.threads[t].cur, (t, -1), cfg.threads[t].events) for t in waiting
        )
        for t in waiting:
            ts = cfg.threads[t]
            ins = self._ins(t, ts)
            before = ts.cur
            ts = ts._replace(
                cur=cfg.join(before, joined), status=Status.RUN, barriers=ts.barriers + 1
            )
            departed = self._fence(cfg, t, ts, Fence(BOTH, Order.ACQ, Scope.WG), Scope.WG)
            assert departed is not None
            ts = departed
            cfg.threads[t] = ts._replace(pc=ts.pc + 1)
            others = ", ".join(f"P{u}" for u in waiting if u != t)
            behind = [f"P{u}" for u in absent] if early else []
            if behind:
                others += f"; {', '.join(behind)} left behind (they reach no further barrier)"
            _log(
                log,
                Step(
                    f"P{t}",
                    ins.span.line,
                    ins.text,
                    (
                        f"depart: joins the views of {others or 'no one'}",
                        *self._moved(cfg, before, ts.cur),
                    ),
                ),
            )
        return True

    def _collective(
        self, cfg: Config, members: list[int], log: list[Step] | None, *, force: bool
    ) -> bool:
        waiting = [t for t in members if cfg.threads[t].status is Status.COLLECTIVE]
        if not waiting:
            return False
        if not force and any(
            not cfg.threads[t].status.finished and t not in waiting for t in members
        ):
            return False
        lanes = {self.places[t].lane: t for t in waiting}
        contrib: dict[int, Expr] = {}
        for lane, t in lanes.items():
            ts = cfg.threads[t]
            ins = self._ins(t, ts)
            assert isinstance(ins.op, Collective) and lane is not None
            contrib[lane] = sem.collective_contribution(ins.op, ts.reg_env(), self.layout, ins.span)
        results: dict[int, Expr] = {}
        for lane, t in lanes.items():
            ts = cfg.threads[t]
            ins = self._ins(t, ts)
            assert isinstance(ins.op, Collective) and lane is not None
            if not isinstance(ins.op.dst, Reg):
                raise _unsupported(ins.span, "collectives with a predicate destination")
            results[t] = sem.collective_result(
                ins.op,
                ts.reg_env(),
                self.layout,
                lane,
                sorted(contrib),
                contrib.__getitem__,
                ins.span,
            )
        for t in waiting:
            ts = cfg.threads[t]
            ins = self._ins(t, ts)
            assert isinstance(ins.op, Collective) and isinstance(ins.op.dst, Reg)
            key = sem.reg_key(ins.op.dst)
            cfg.threads[t] = ts._replace(
                regs=set_regs(ts.regs, {key: results[t]}),
                pc=ts.pc + 1,
                status=Status.RUN,
                collectives=ts.collectives + 1,
            )
            _log(
                log,
                Step(
                    f"P{t}",
                    ins.span.line,
                    ins.text,
                    (f"%{key} = {_val(results[t])} (lock-step with {len(waiting)} lanes)",),
                ),
            )
        return True

    def _barrier_site(self, t: int, pc: int) -> int:
        body = self.test.threads[t].body
        return sum(1 for ins in body[:pc] if isinstance(ins.op, Barrier))

    def force(self, cfg: Config, log: list[Step] | None) -> bool:
        """Break a deadlock of work-items waiting at rendezvous that can never complete."""
        return self._complete_groups(cfg, log, force=True)

    # ------------------------------------------------------------ interleaved steps

    def terminal(self, cfg: Config) -> bool:
        return all(ts.status.finished for ts in cfg.threads) and all(
            a.done for a in cfg.agents.values()
        )

    def enabled(self, cfg: Config) -> list[Actor]:
        """The actors with an interleaved step from a settled state: work-items at a
        `.global`/`.shared` access, and agents with elements left to copy."""
        out: list[Actor] = []
        for t, ts in enumerate(cfg.threads):
            # a running thread that did not settle waits at a memory step or a wait_group
            if ts.status is Status.RUN and not isinstance(self._ins(t, ts).op, WaitGroup):
                out.append((t, -1))
        out.extend(a for a in sorted(cfg.agents) if not cfg.agents[a].done)
        # a work-group some of whose members wait at a barrier while others run may also
        # pass it without them (actor (-1, g): the g-th work-group)
        for g, members in enumerate(self.workgroups):
            statuses = [cfg.threads[t].status for t in members]
            if Status.BARRIER in statuses and Status.RUN in statuses:
                out.append((-1, g))
        return out

    def footprint(self, cfg: Config, actor: Actor) -> tuple[Location, bool] | None:
        """The location an enabled actor's next step accesses and whether it writes there;
        None for a work-group passing a barrier without some of its members."""
        t, k = actor
        if t < 0:
            return None
        if k >= 0:
            ag = cfg.agents[actor]
            moves = ag.moves()
            return moves[0][:2] if len(moves) == 1 else None
        ts = cfg.threads[t]
        ins = self._ins(t, ts)
        op = ins.op
        assert isinstance(op, Load | Store | IAtom | FAtom)
        if self.invalid_address(t, ts, ins) is not None:
            return None
        width = sem.atom_width(op) if isinstance(op, IAtom | FAtom) else op.width
        elem = 0 if isinstance(op, IAtom | FAtom) else ts.elem
        loc = self.locate(t, ts.reg_env(), ins, op.space, width, elem)
        return loc, not isinstance(op, Load)

    # ------------------------------------------------------------ partial-order reduction

    def _static_access(
        self, t: int, ins: Instruction
    ) -> tuple[frozenset[Location], frozenset[Location]] | None:
        """(locations read, locations written) by one instruction of `t`, whatever its
        registers hold; None when its addresses depend on registers (any location)."""
        op = ins.op
        try:
            match op:
                case Load() | Store() | IAtom() | FAtom():
                    if isinstance(op.addr.base, Reg) or isinstance(op.addr.offset, Reg):
                        return None
                    base = sem.address({}, op.addr, self.layout)
                    assert isinstance(base, Const)
                    vec = 1 if isinstance(op, IAtom | FAtom) else op.vec
                    width = sem.atom_width(op) if isinstance(op, IAtom | FAtom) else op.width
                    locs = frozenset(
                        self.resolve(t, base.value + k * (width // 8), op.space, width, ins.span)
                        for k in range(vec)
                    )
                    reads = locs if not isinstance(op, Store) else frozenset()
                    writes = locs if not isinstance(op, Load) else frozenset()
                    return reads, writes
                case CpAsync():
                    addrs = (op.src, op.dst)
                    if any(isinstance(a.base, Reg) or isinstance(a.offset, Reg) for a in addrs):
                        return None
                    src = sem.address({}, op.src, self.layout)
                    dst = sem.address({}, op.dst, self.layout)
                    if not isinstance(src, Const) or not isinstance(dst, Const):
                        return None
                    found = self.layout.find(src.value)
                    if found is None:
                        return None
                    w = found[0].width
                    steps = range(0, op.size, w // 8)
                    return (
                        frozenset(
                            self.resolve(t, src.value + i, AddrSpace.GLOBAL, w, ins.span)
                            for i in steps
                        ),
                        frozenset(
                            self.resolve(t, dst.value + i, AddrSpace.SHARED, w, ins.span)
                            for i in steps
                        ),
                    )
                case _:
                    return frozenset(), frozenset()
        except PisaMMError:
            return None  # the run raises the error if it gets there

    def _future(self, t: int, pc: int) -> Future:
        """What work-item t may still access from instruction `pc` on (its copies included):
        locations read and written, and whether some access has a computed address."""
        key = (t, pc)
        got = self._futures.get(key)
        if got is not None:
            return got
        body = self.test.threads[t].body
        seen: set[int] = set()
        work = [pc]
        reads: set[Location] = set()
        writes: set[Location] = set()
        anywhere = False
        while work:
            i = work.pop()
            if i in seen or i >= len(body):
                continue
            seen.add(i)
            ins = body[i]
            match ins.op:
                case Goto(cond=cond):
                    target = self.test.threads[t].label_index(ins.op.label)
                    work.extend([target] if cond is None else [target, i + 1])
                case Return(cond=cond):
                    work.extend([] if cond is None else [i + 1])
                case _:
                    work.append(i + 1)
            acc = self._static_access(t, ins)
            if acc is None:
                anywhere = True
            else:
                reads |= acc[0]
                writes |= acc[1]
        got = Future(frozenset(reads), frozenset(writes), anywhere)
        self._futures[key] = got
        return got

    def persistent(
        self, cfg: Config, enabled: list[Actor], prints: dict[Actor, tuple[Location, bool] | None]
    ) -> Actor | None:
        """An enabled actor whose next step commutes with every step any other actor may
        still take (no other actor may ever access its location, or only read it if it
        reads): exploring that step alone loses no execution (a persistent set)."""
        if any(a[0] < 0 for a in enabled):
            return None  # a work-group may pass a barrier without a member: keep it simple
        futures: dict[Actor, Future] = {}
        for u, ts in enumerate(cfg.threads):
            if not ts.status.finished:
                futures[(u, -1)] = self._future(u, ts.pc)
        for a, ag in cfg.agents.items():
            if not ag.done:
                moves = ag.moves()
                futures[a] = Future(
                    frozenset(loc for loc, w, _ in moves if not w),
                    frozenset(ag.pairs[i][1] for _, _, i in moves),
                    False,
                )
        for a in enabled:
            fp = prints[a]
            if fp is None:
                continue
            loc, write = fp
            if not any(f.conflicts(loc, write) for u, f in futures.items() if u != a):
                return a
        return None

    def successors(self, cfg: Config, actors: list[Actor] | None = None) -> list[Successor]:
        """The non-local steps of `actors` (default: every enabled one) from a settled
        state, each followed by its eager steps; steps refused by psc are left out."""
        settled: list[Successor] = []
        for actor in self.enabled(cfg) if actors is None else actors:
            t, k = actor
            if t < 0:
                out = self._leave_behind(cfg, k)
                movers: list[int] | None = self.workgroups[k]
            else:
                # a copy's step may let its work-item pass a wait
                out = self._memory(cfg, t, self._ins(t, cfg.threads[t])) if k < 0 else (
                    self._agent(cfg, actor))  # fmt: skip
                movers = [t]
            for steps, new in out:
                log = list(steps)
                if self.settle(new, log, movers):
                    settled.append((tuple(log), new))
        return settled

    def _leave_behind(self, cfg: Config, g: int) -> list[Successor]:
        new = cfg.clone()
        log: list[Step] = []
        done = self._barrier(new, self.workgroups[g], log, force=False, early=True)
        assert done
        return [(tuple(log), new)]

    def _memory(self, cfg: Config, t: int, ins: Instruction) -> list[Successor]:
        op = ins.op
        if (bad := self.invalid_address(t, cfg.threads[t], ins)) is not None:
            return self._invalid(cfg, t, ins, bad)
        match op:
            case Load():
                return self._load(cfg, t, ins, op)
            case Store():
                return self._store(cfg, t, ins, op)
            case IAtom() | FAtom():
                return self._rmw(cfg, t, ins, op)
            case _:
                raise AssertionError(f"not a memory step: {ins.text}")

    def _after_element(self, ts: ThreadState, vec: int) -> ThreadState:
        if ts.elem + 1 < vec:
            return ts._replace(elem=ts.elem + 1)
        return ts._replace(elem=0, pc=ts.pc + 1)

    def _load(self, cfg: Config, t: int, ins: Instruction, op: Load) -> list[Successor]:
        ts = cfg.threads[t]
        regs = ts.reg_env()
        loc = self.locate(t, regs, ins, op.space, op.width, ts.elem)
        msgs = self._ensure(cfg, loc)
        atomic = op.order is not None
        scope = _access_scope(op.order, op.scope, loc)
        cur = ts.cur
        start = cfg.pos(loc, cur.msg(loc))
        key = sem.elem_key(op.dst, ts.elem) if op.vec > 1 else sem.reg_key(op.dst)
        nts, dhb = self._tick(ts, loc)
        count = nts.events
        text = self._label(t, ins)
        out: list[Successor] = []
        for i in range(start, len(msgs)):
            m = msgs[i]
            new = cfg.clone()
            self._races(new, (t, -1), cur, loc, False, atomic, scope, text)
            self._async_race(new, t, loc, False, text)
            self._record(new, loc, Access((t, -1), count, False, atomic, scope, text))
            ncur = set_coh(cur, loc, m.id)
            pending = ts.pending
            if atomic and m.released:
                if op.order in ACQUIRING:
                    ncur = self._acquire(new, t, ncur, m.released, scope, BOTH)
                pending = merge_entries((*pending, *m.released), new)
            detail = [f"read {loc} = {m.value} (ts {i}{_from(m.id)})"]
            ev = Ev((t, -1), count, Kind.READ, loc, frozenset({loc.space}),
                    op.order is Order.SC, scope if atomic else None, m.id, ncur.hb, dhb,
                    line=ins.span.line)  # fmt: skip
            if not self._psc(new, ev, detail):
                continue
            nts2 = nts._replace(
                cur=ncur,
                pending=pending,
                regs=set_regs(ts.regs, {key: Const(m.value, op.width)}),
            )
            new.threads[t] = self._after_element(nts2, op.vec)
            detail.extend(self._moved(new, ts.cur, ncur))
            out.append(((Step(f"P{t}", ins.span.line, ins.text, tuple(detail)),), new))
        return out

    def _slots(self, cfg: Config, loc: Location, after: MsgId) -> list[int]:
        """Where a new write may go: after `after`, never between an RMW and what it read."""
        msgs = cfg.mem[loc]
        start = cfg.pos(loc, after) + 1
        return [p for p in range(start, len(msgs) + 1) if p == len(msgs) or not msgs[p].glued]

    def _store(self, cfg: Config, t: int, ins: Instruction, op: Store) -> list[Successor]:
        ts = cfg.threads[t]
        regs = ts.reg_env()
        loc = self.locate(t, regs, ins, op.space, op.width, ts.elem)
        self._ensure(cfg, loc)
        if isinstance(op.src, Reg) and op.vec > 1:
            value = sem.read_reg(regs, sem.elem_key(op.src, ts.elem), op.width)
        else:
            value = sem.operand(regs, op.src, op.width, self.layout, ins.span)
        assert isinstance(value, Const)
        atomic = op.order is not None
        scope = _access_scope(op.order, op.scope, loc)
        cur = ts.cur
        nts, dhb = self._tick(ts, loc)
        count = nts.events
        mid: MsgId = (t, -1, count)
        text = self._label(t, ins)
        out: list[Successor] = []
        for p in self._slots(cfg, loc, cur.msg(loc)):
            new = cfg.clone()
            self._races(new, (t, -1), cur, loc, True, atomic, scope, text)
            self._async_race(new, t, loc, True, text)
            self._record(new, loc, Access((t, -1), count, True, atomic, scope, text))
            ncur = set_coh(cur, loc, mid)
            released: Entries = ()
            if atomic:
                entries = self._fence_entries(t, ts)
                if op.order in RELEASING:
                    entries.append((t, scope, self._own(ncur, (t, -1), count)))
                msgs = new.mem[loc]
                new.mem[loc] = (*msgs[:p], Message(mid, value.value), *msgs[p:])
                released = merge_entries(entries, new)
            msgs = cfg.mem[loc]
            new.mem[loc] = (
                *msgs[:p],
                Message(mid, value.value, released, atomic=atomic),
                *msgs[p:],
            )
            detail = [f"write {loc} = {value.value} (ts {p})"]
            ev = Ev((t, -1), count, Kind.WRITE, loc, frozenset({loc.space}),
                    op.order is Order.SC, scope if atomic else None, mid, cur.hb, dhb,
                    line=ins.span.line)  # fmt: skip
            if not self._psc(new, ev, detail):
                continue
            new.threads[t] = self._after_element(nts._replace(cur=ncur), op.vec)
            detail.extend(self._moved(new, ts.cur, ncur))
            out.append(((Step(f"P{t}", ins.span.line, ins.text, tuple(detail)),), new))
        return out

    def _rmw(self, cfg: Config, t: int, ins: Instruction, op: IAtom | FAtom) -> list[Successor]:
        ts = cfg.threads[t]
        regs = ts.reg_env()
        width = sem.atom_width(op)
        loc = self.locate(t, regs, ins, op.space, width, 0)
        msgs = self._ensure(cfg, loc)
        r_order, w_order = sem.rmw_orders(op.order)
        scope = _access_scope(op.order, op.scope, loc)
        cur = ts.cur
        rts, rdhb = self._tick(ts, loc)
        text = self._label(t, ins)
        out: list[Successor] = []
        for i in range(cfg.pos(loc, cur.msg(loc)), len(msgs)):
            m = msgs[i]
            old = Const(m.value, width)
            cond, value = sem.rmw_write(op, old, regs, self.layout, ins.span)
            if _true(cond) and i + 1 < len(msgs) and msgs[i + 1].glued:
                continue  # another RMW already wrote directly after this message
            new = cfg.clone()
            self._races(new, (t, -1), cur, loc, False, True, scope, text)
            self._async_race(new, t, loc, _true(cond), text)  # a failed cas only reads
            self._record(new, loc, Access((t, -1), rts.events, False, True, scope, text))
            ncur = set_coh(cur, loc, m.id)
            if r_order in ACQUIRING:
                ncur = self._acquire(new, t, ncur, m.released, scope, BOTH)
            pending = merge_entries((*ts.pending, *m.released), new)
            detail = [f"read {loc} = {m.value} (ts {i}{_from(m.id)})"]
            events = [
                Ev((t, -1), rts.events, Kind.READ, loc, frozenset({loc.space}),
                   r_order is Order.SC, scope, m.id, ncur.hb, rdhb, line=ins.span.line)
            ]  # fmt: skip
            nts = rts
            if _true(cond):
                assert isinstance(value, Const)
                nts, wdhb = self._tick(rts, loc)
                count = nts.events
                self._races(new, (t, -1), ncur, loc, True, True, scope, text)
                self._record(new, loc, Access((t, -1), count, True, True, scope, text))
                mid: MsgId = (t, -1, count)
                entries = [*m.released, *self._fence_entries(t, ts)]
                if w_order in RELEASING:
                    entries.append((t, scope, self._own(set_coh(ncur, loc, mid), (t, -1), count)))
                new.mem[loc] = (
                    *msgs[: i + 1],
                    Message(mid, value.value, glued=True),
                    *msgs[i + 1 :],
                )
                # the released view mentions the new message: merge once it is in memory
                msg = Message(mid, value.value, merge_entries(entries, new), glued=True)
                new.mem[loc] = (*msgs[: i + 1], msg, *msgs[i + 1 :])
                ncur = set_coh(ncur, loc, mid)
                detail.append(f"write {loc} = {value.value} (ts {i + 1}, adjacent)")
                events.append(
                    Ev((t, -1), count, Kind.WRITE, loc, frozenset({loc.space}),
                       w_order is Order.SC, scope, mid, events[0].hb, wdhb, line=ins.span.line)
                )  # fmt: skip
            else:
                detail.append("compare failed: no write")
            if not all(self._psc(new, ev, detail) for ev in events):
                continue
            new.threads[t] = nts._replace(
                cur=ncur,
                pending=pending,
                pc=ts.pc + 1,
                regs=set_regs(ts.regs, {sem.reg_key(op.dst): old}),
            )
            detail.extend(self._moved(new, ts.cur, ncur))
            out.append(((Step(f"P{t}", ins.span.line, ins.text, tuple(detail)),), new))
        return out

    def _agent(self, cfg: Config, actor: Actor) -> list[Successor]:
        """Every next step of a copy: read the source of an element not read yet (any
        message at or after its view), or write an element it holds (any place after its
        view)."""
        ag = cfg.agents[actor]
        t, k = actor
        name = f"P{t}.cp{k}"
        text = f"{name} `{ag.text}`"
        count = ag.events + 1
        out: list[Successor] = []
        for i in ag.unread:
            src = ag.pairs[i][0]
            msgs = self._ensure(cfg, src)
            unread = tuple(j for j in ag.unread if j != i)
            for pos in range(cfg.pos(src, ag.view.msg(src)), len(msgs)):
                m = msgs[pos]
                new = cfg.clone()
                self._races(new, actor, ag.view, src, False, False, None, text)
                self._record(new, src, Access(actor, count, False, False, None, text))
                ev = Ev(actor, count, Kind.READ, src, frozenset({src.space}), False, None,
                        m.id, ag.view.hb)  # fmt: skip
                if not self._psc(new, ev):
                    continue
                view = self._own(set_coh(ag.view, src, m.id), actor, count)
                held = tuple(sorted((*ag.held, (i, m.value))))
                new.agents[actor] = ag._replace(view=view, unread=unread, held=held, events=count)
                detail = (f"read {src} = {m.value} (ts {pos}{_from(m.id)})",)
                out.append(((Step(name, None, ag.text, detail),), new))
        mid: MsgId = (t, k, count)
        for i, value in ag.held:
            dst = ag.pairs[i][1]
            self._ensure(cfg, dst)
            held = tuple(h for h in ag.held if h[0] != i)
            for p in self._slots(cfg, dst, ag.view.msg(dst)):
                new = cfg.clone()
                self._races(new, actor, ag.view, dst, True, False, None, text)
                self._record(new, dst, Access(actor, count, True, False, None, text))
                msgs = new.mem[dst]
                new.mem[dst] = (*msgs[:p], Message(mid, value, atomic=False), *msgs[p:])
                ev = Ev(actor, count, Kind.WRITE, dst, frozenset({dst.space}), False, None, mid,
                        ag.view.hb)  # fmt: skip
                if not self._psc(new, ev):
                    continue
                view = self._own(set_coh(ag.view, dst, mid), actor, count)
                new.agents[actor] = ag._replace(view=view, held=held, events=count)
                out.append(
                    ((Step(name, None, ag.text, (f"write {dst} = {value} (ts {p})",)),), new)
                )
        return out

    # ------------------------------------------------------------ final states

    def final_values(
        self, cfg: Config, observables: tuple[Observable, ...]
    ) -> dict[Observable, int]:
        out: dict[Observable, int] = {}
        for obs in observables:
            match obs:
                case RegObs():
                    regs = dict(cfg.threads[obs.thread].regs)
                    key = obs.reg if obs.elem is None else sem.reg_key(Reg(obs.reg, obs.elem))
                    val = regs.get(key)
                    out[obs] = val.value if isinstance(val, Const) else 0
                case MemObs():
                    var = self.layout.variable(obs.var)
                    assert var is not None
                    inst = obs.instance if var.space is Space.SHARED else None
                    loc = Location(var.name, obs.index * (var.width // 8), inst, var.space)
                    msgs = cfg.mem.get(loc)
                    out[obs] = msgs[-1].value if msgs else self.init_value(loc)
        return out


def uses_sc(test: LitmusTest) -> bool:
    """Whether any instruction of `test` is seq_cst (access or fence)."""
    for th in test.threads:
        for ins in th.body:
            if (
                isinstance(ins.op, Load | Store | IAtom | FAtom | Fence)
                and ins.op.order is Order.SC
            ):
                return True
    return False


def _access_scope(order: Order | None, scope: Scope | None, loc: Location) -> Scope:
    """The effective scope of an access (as the event builder computes it): relaxed atomics
    have system scope, a missing scope is gpu, and on `.shared` memory a scope wider than
    workgroup is workgroup (model-decisions). Non-atomic accesses get `system`, which is
    never used for them."""
    if order is None or order is Order.RLX:
        eff = Scope.SYS
    else:
        eff = Scope.GPU if scope is None else scope
    if loc.space is Space.SHARED and eff > Scope.WG:
        eff = Scope.WG
    return eff


def _finish(ts: ThreadState, status: Status) -> ThreadState:
    """A work-item that ends: its views and pending releases no longer matter (no step of
    it will read them, and race checks and psc use the records of its accesses), so they
    are dropped, which lets runs that differ only in them meet."""
    return ts._replace(
        status=status, cur=View(), pending=(), relf=(), last_loc=None, run_dhb=None, elem=0
    )


def _dead(cfg: Config) -> bool:
    return cfg.dead


def _true(expr: Expr) -> bool:
    assert isinstance(expr, Const), expr
    return expr.value != 0


def _val(expr: Expr) -> str:
    return str(expr.value) if isinstance(expr, Const) else "?"


def _from(mid: MsgId) -> str:
    if mid == INIT:
        return ", init"
    t, k, _ = mid
    return f", from P{t}" if k < 0 else f", from P{t}.cp{k}"


def _log(log: list[Step] | None, step: Step) -> None:
    if log is not None:
        log.append(step)
