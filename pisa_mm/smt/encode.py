"""Candidate executions as z3 constraints: paths, values, addresses, rf, co, final state."""

from __future__ import annotations

from collections import defaultdict
from collections.abc import Iterable
from typing import Any

import z3

from pisa_mm.errors import PisaMMError
from pisa_mm.events.kinds import Kind, Space, Tag
from pisa_mm.events.model import Event, EventStructure, Location
from pisa_mm.litmus.program import MemObs, Observable, RegObs
from pisa_mm.outcomes.condition import reg_key
from pisa_mm.smt.lits import Circuit, Lit, lnot
from pisa_mm.smt.values import ValueEncoder
from pisa_mm.values.eval import postorder
from pisa_mm.values.expr import Apply, Const, Contribution, Expr, ReadValue

Pair = tuple[int, int]


def _sccs(nodes: Iterable[int], succ: dict[int, list[int]]) -> list[list[int]]:
    """Strongly connected components (iterative Tarjan)."""
    index: dict[int, int] = {}
    low: dict[int, int] = {}
    on_stack: set[int] = set()
    stack: list[int] = []
    out: list[list[int]] = []
    counter = 0
    for root in nodes:
        if root in index:
            continue
        work: list[tuple[int, int]] = [(root, 0)]
        while work:
            v, i = work.pop()
            if i == 0:
                index[v] = low[v] = counter
                counter += 1
                stack.append(v)
                on_stack.add(v)
            children = succ.get(v, [])
            recurse = False
            while i < len(children):
                w = children[i]
                i += 1
                if w not in index:
                    work.append((v, i))
                    work.append((w, 0))
                    recurse = True
                    break
                if w in on_stack:
                    low[v] = min(low[v], index[w])
            if recurse:
                continue
            if low[v] == index[v]:
                comp = []
                while True:
                    w = stack.pop()
                    on_stack.discard(w)
                    comp.append(w)
                    if w == v:
                        break
                out.append(comp)
            if work:
                u = work[-1][0]
                low[u] = min(low[u], low[v])
    return out


def cyclic_parts(pairs: Iterable[Pair]) -> tuple[set[int], set[Pair]]:
    """The nodes in non-trivial SCCs of a may-graph and the edges inside them (self-loops
    included): only these can ever take part in a cycle."""
    succ: dict[int, list[int]] = defaultdict(list)
    edges = list(pairs)
    for a, b in edges:
        succ[a].append(b)
    comp_of: dict[int, int] = {}
    for k, comp in enumerate(_sccs(list(succ), succ)):
        for v in comp:
            comp_of[v] = k
    sizes: dict[int, int] = defaultdict(int)
    for k in comp_of.values():
        sizes[k] += 1
    inner = {
        (a, b)
        for a, b in edges
        if a == b or (comp_of.get(a) == comp_of.get(b) and sizes[comp_of[a]] > 1)
    }
    nodes = {a for a, _ in inner} | {b for _, b in inner}
    return nodes, inner


class Encoding:
    """The symbolic candidate executions of one event structure.

    Invariant used everywhere: the literal of a pair implies that both its events happen,
    and the literal of a set member implies that the event happens.
    """

    def __init__(self, es: EventStructure, observables: Iterable[Observable] = ()) -> None:
        self.es = es
        self.c = Circuit()
        self.constraints: list[Lit] = []
        self._paths_of: dict[int, frozenset[tuple[int, int]]] = {}
        self.sel: dict[tuple[int, int], Lit] = {}
        self.exec: list[Lit] = [True] * len(es.events)
        self._read_vars: dict[int, Any] = {}
        self._contrib: dict[tuple[int, int], Any] = {}
        self.values = ValueEncoder(self._read_value, self._contribution)
        self.at: dict[int, dict[Location, Lit]] = {}
        self.rf: dict[Pair, Lit] = {}
        self.co: dict[Pair, Lit] = {}
        self.clock: dict[int, Any] = {}  # a bit-vector per access: see _encode_co
        self._before: dict[Pair, Lit] = {}
        self.obs_terms: dict[Observable, Any] = {}
        self.cut: Lit = False  # some picked path was cut by the unroll bound
        self.ended: Lit = False  # some picked path ended at an invalid address
        self._encode_paths()
        self._encode_addresses()
        self._encode_collectives()
        self._encode_rf()
        self._encode_co()
        self._encode_thin_air()
        for obs in observables:
            self.obs_terms[obs] = self._observable(obs)

    # ------------------------------------------------------------ helpers

    def value(self, expr: Expr) -> Any:
        """The z3 term of a value expression."""
        return self.values.encode(expr)

    def bool_value(self, expr: Expr) -> Lit:
        """The literal of a BOOL value expression."""
        return self.c.atom(self.values.encode(expr))

    def assert_z3(self, term: Any) -> None:
        self.constraints.append(self.c.atom(term))

    def both(self, a: int, b: int) -> Lit:
        """Both events happen (False when they lie on different paths of one work-item)."""
        pa, pb = self._paths_of.get(a), self._paths_of.get(b)
        if pa is not None and pb is not None:
            ta, tb = self.es.events[a].thread, self.es.events[b].thread
            if ta == tb:
                if not pa & pb:
                    return False
                if pa <= pb and self._guard_implied(a, b):
                    return self.exec[a]
                if pb <= pa and self._guard_implied(b, a):
                    return self.exec[b]
        return self.c.land(self.exec[a], self.exec[b])

    def _guard_implied(self, a: int, b: int) -> bool:
        """Whether a's guard implies b's, by syntax only."""
        ga, gb = self.es.events[a].guard, self.es.events[b].guard
        return _is_true(gb) or ga == gb

    def may_both(self, a: int, b: int) -> bool:
        return self.both(a, b) is not False

    def read_value(self, eid: int) -> Any:
        """The bit-vector variable of the value read by event `eid`."""
        return self._read_value(eid)

    def _read_value(self, eid: int) -> Any:
        v = self._read_vars.get(eid)
        if v is None:
            v = z3.BitVec(f"v{eid}", self.es.events[eid].width)
            self._read_vars[eid] = v
        return v

    def _contribution(self, thread: int, index: int) -> Any:
        v = self._contrib.get((thread, index))
        if v is None:
            raise PisaMMError.at(
                None, f"P{thread} has no collective number {index} on any path", "smt"
            )
        return v

    # ------------------------------------------------------------ paths

    def _encode_paths(self) -> None:
        for t in self.es.threads:
            for k, p in enumerate(t.paths):
                for eid in p.events:
                    self._paths_of[eid] = self._paths_of.get(eid, frozenset()) | {(t.index, k)}
        for t in self.es.threads:
            if len(t.paths) == 1:
                self.sel[(t.index, 0)] = True
                self.constraints.append(self.bool_value(t.paths[0].guard))
                continue
            sels = [z3.Bool(f"path_P{t.index}_{k}") for k in range(len(t.paths))]
            self.assert_z3(z3.Or(sels))
            self.assert_z3(z3.AtMost(*sels, 1))
            for k, (s, p) in enumerate(zip(sels, t.paths, strict=True)):
                sel = self.c.atom(s)
                self.sel[(t.index, k)] = sel
                self.constraints.append(self.c.implies(sel, self.bool_value(p.guard)))
        counts = {t.index: len(t.paths) for t in self.es.threads}
        for e in self.es.events:
            paths = self._paths_of.get(e.id)
            if paths is None:
                continue  # init writes always happen
            assert e.thread is not None
            on_path = (
                True
                if len(paths) == counts[e.thread]
                else self.c.lor_all(self.sel[p] for p in sorted(paths))
            )
            # the path's guard does not cover guards inside straight-line code (a cas's write)
            guard = True if _is_true(e.guard) else self.bool_value(e.guard)
            self.exec[e.id] = self.c.land(on_path, guard)
        self.cut = self.c.lor_all(
            self.sel[(t.index, k)] for t in self.es.threads for k, p in enumerate(t.paths) if p.cut
        )
        self.ended = self.c.lor_all(
            self.sel[(t.index, k)]
            for t in self.es.threads
            for k, p in enumerate(t.paths)
            if p.invalid
        )

    # ------------------------------------------------------------ addresses

    def _address_of(self, loc: Location) -> int:
        var = self.es.layout.variable(loc.var)
        if var is None:
            raise PisaMMError.at(None, f"location {loc} is not in the layout", "smt")
        return var.base + loc.offset

    def _encode_addresses(self) -> None:
        for e in self.es.events:
            if e.kind not in (Kind.READ, Kind.WRITE):
                continue
            if len(e.locs) == 1 and (e.addr is None or isinstance(e.addr, Const)):
                self.at[e.id] = {next(iter(e.locs)): True}
                continue
            if e.addr is None:
                raise PisaMMError.at(e.span, f"access '{e.text}' has no address", "smt")
            term = self.value(e.addr)
            choice: dict[Location, Lit] = {}
            for loc in sorted(e.locs):
                choice[loc] = self.c.atom(term == z3.BitVecVal(self._address_of(loc), term.size()))
            self.at[e.id] = choice
            self.constraints.append(
                self.c.implies(self.exec[e.id], self.c.lor_all(choice.values()))
            )

    def loc(self, a: int, b: int) -> Lit:
        """The two accesses touch the same location instance (addresses only, not exec)."""
        la, lb = self.at[a], self.at[b]
        if len(la) > len(lb):
            la, lb = lb, la
        return self.c.lor_all(self.c.land(lit, lb[loc]) for loc, lit in la.items() if loc in lb)

    # ------------------------------------------------------------ collectives

    def _encode_collectives(self) -> None:
        for e in self.es.events:
            if e.kind is not Kind.COLLECTIVE or e.value is None:
                continue
            assert e.thread is not None and e.collective_index is not None
            key = (e.thread, e.collective_index)
            if key not in self._contrib:
                self._contrib[key] = z3.BitVec(f"c{e.thread}_{e.collective_index}", e.value.width)
        for e in self.es.events:
            if e.kind is not Kind.COLLECTIVE or e.value is None:
                continue
            assert e.thread is not None and e.collective_index is not None
            var = self._contrib[(e.thread, e.collective_index)]
            same = self.c.atom(var == self.value(e.value))
            self.constraints.append(self.c.implies(self.exec[e.id], same))

    # ------------------------------------------------------------ rf

    def _encode_rf(self) -> None:
        writes = [e for e in self.es.events if e.kind is Kind.WRITE]
        for r in self.es.events:
            if r.kind is not Kind.READ:
                continue
            cands: list[tuple[Event, Lit]] = []
            for w in writes:
                if w.width != r.width or not (w.locs & r.locs):
                    continue
                cond = self.c.land(self.both(w.id, r.id), self.loc(w.id, r.id))
                if cond is False:
                    continue
                cands.append((w, cond))
            rv = self._read_value(r.id)
            if not cands:
                self.constraints.append(lnot(self.exec[r.id]))
                continue
            if len(cands) == 1 and self.exec[r.id] is True:
                only, cond = cands[0]
                self.rf[(only.id, r.id)] = True
                self.constraints.append(cond)
                self.assert_z3(rv == self._write_value(only))
                continue
            vs = []
            for src, cond in cands:
                v = z3.Bool(f"rf_{src.id}_{r.id}")
                vs.append(v)
                lit = self.c.atom(v)
                self.rf[(src.id, r.id)] = lit
                same = self.c.atom(rv == self._write_value(src))
                self.constraints.append(self.c.implies(lit, self.c.land(cond, same)))
            self.constraints.append(
                self.c.implies(self.exec[r.id], self.c.lor_all(self.c.atom(v) for v in vs))
            )
            if len(vs) > 1:
                self.assert_z3(z3.AtMost(*vs, 1))

    def _write_value(self, w: Event) -> Any:
        if w.value is None:
            raise PisaMMError.at(w.span, f"write '{w.text}' has no value", "smt")
        return self.value(w.value)

    # ------------------------------------------------------------ co

    def _encode_co(self) -> None:
        """co as clocks: a bit-vector per non-init write, distinct among writes that share a
        location, above the init write's 0; co(a, b) is `clock(a) < clock(b)` on the same
        location. A total order per location without transitivity clauses, and it gives the
        clock of every read (that of its source) that `order` compares.

        A write's clock is at most the number n of writes that may share one of its
        locations: every execution has such clocks (number each location's writes 1..k in co
        order, k <= n), and when all n happen they fill 1..n, so that "no write between a and
        b" becomes "clock(b) = clock(a) + 1" for the solver (k RMWs on one counter)."""
        writes = [e for e in self.es.events if e.kind is Kind.WRITE]
        inits = [w for w in writes if w.tag is Tag.INIT]
        others = [w for w in writes if w.tag is not Tag.INIT]
        sharing: dict[Location, int] = defaultdict(int)
        for w in others:
            for loc in w.locs:
                sharing[loc] += 1
        bits = max(1, max(sharing.values(), default=0).bit_length())
        zero = z3.BitVecVal(0, bits)
        for i in inits:
            self.clock[i.id] = zero
            (loc,) = i.locs
            for w in others:
                lit = w.id in self.at and self.at[w.id].get(loc, False)
                lit = self.c.land(self.exec[w.id], lit)
                if lit is not False:
                    self.co[(i.id, w.id)] = lit
        for w in others:
            self.clock[w.id] = z3.BitVec(f"clock{w.id}", bits)
            self.assert_z3(self.clock[w.id] != zero)
            top = max((sharing[loc] for loc in w.locs), default=0)
            if 0 < top < (1 << bits) - 1:
                self.assert_z3(z3.ULE(self.clock[w.id], top))
        for x, a in enumerate(others):
            for b in others[x + 1 :]:
                if not (a.locs & b.locs):
                    continue
                base = self.same(a.id, b.id)
                if base is False:
                    continue
                ca, cb = self.clock[a.id], self.clock[b.id]
                self.constraints.append(self.c.implies(base, self.c.atom(ca != cb)))
                before = self.c.atom(z3.ULT(ca, cb))
                self._before[(a.id, b.id)] = before
                self.co[(a.id, b.id)] = self.c.land(base, before)
                self.co[(b.id, a.id)] = self.c.land(base, lnot(before))
        # a read's clock is its source's (an unconstrained variable when it never happens)
        sources: dict[int, list[tuple[int, Lit]]] = defaultdict(list)
        for (src, rd), lit in self.rf.items():
            sources[rd].append((src, lit))
        for e in self.es.events:
            if e.kind is not Kind.READ:
                continue
            srcs = sources.get(e.id, [])
            if len(srcs) == 1 and srcs[0][1] is True:
                self.clock[e.id] = self.clock[srcs[0][0]]
                continue
            self.clock[e.id] = z3.BitVec(f"clock{e.id}", bits)
            for src, lit in srcs:
                same = self.c.atom(self.clock[e.id] == self.clock[src])
                self.constraints.append(self.c.implies(lit, same))

    def same(self, a: int, b: int) -> Lit:
        """Both accesses happen, at the same location instance."""
        return self.c.land(self.both(a, b), self.loc(a, b))

    def order(self, a: int, b: int) -> tuple[Lit, Lit, Lit]:
        """(clock(a) < clock(b), ==, >) for two distinct accesses, meaningful when they
        happen at one location (`same`): then exactly one holds. Equal clocks are a write and
        a read reading from it, or two reads from one write; distinct writes never tie."""
        ea, eb = self.es.events[a], self.es.events[b]
        wa, wb = ea.kind is Kind.WRITE, eb.kind is Kind.WRITE
        if wa and wb:
            lt = self._write_before(a, b)
            return lt, False, lnot(lt)
        if wb:
            lt, eq, gt = self.order(b, a)
            return gt, eq, lt
        ca, cb = self.clock[a], self.clock[b]
        if ca.eq(cb):  # reads with one sure source, or a read of that source
            return False, True, False
        if wa:
            eq = self.rf.get((a, b), False)
            if ea.tag is Tag.INIT:  # clock 0: every read of the location is at or above
                return lnot(eq), eq, False
        else:
            eq = self.c.atom(z3.simplify(ca == cb))
        return (
            self.c.atom(z3.simplify(z3.ULT(ca, cb))),
            eq,
            self.c.atom(z3.simplify(z3.ULT(cb, ca))),
        )

    def _write_before(self, a: int, b: int) -> Lit:
        ea, eb = self.es.events[a], self.es.events[b]
        if ea.tag is Tag.INIT:
            return True
        if eb.tag is Tag.INIT:
            return False
        if (a, b) in self._before:
            return self._before[(a, b)]
        if (b, a) in self._before:
            return lnot(self._before[(b, a)])
        return self.c.atom(z3.ULT(self.clock[a], self.clock[b]))  # never on one location

    # ------------------------------------------------------------ well-formedness

    def _encode_thin_air(self) -> None:
        """Value dependencies (rf with data and address dependencies) must be acyclic: no
        engine generates values out of thin air (docs/architecture.md). Only dependencies
        through which a value is actually computed count: `data`/`addr` are syntactic and
        also relate a read to a value that does not use it (`sel d, 1, 1, p`), which is a
        legitimate candidate (the explicit engine evaluates it), left to the model."""
        deps: set[Pair] = set()
        for a, b in set(self.es.data) | set(self.es.addr):
            used = self._value_sources(b)
            if used is None or a in used:
                deps.add((a, b))
        if not deps:
            return
        edges: dict[Pair, Lit] = {}
        for a, b in deps:
            lit = self.both(a, b)
            if lit is not False:
                edges[(a, b)] = lit
        for pair, lit in self.rf.items():
            edges[pair] = self.c.lor(edges.get(pair, False), lit)
        self.constraints.extend(acyclic_constraints(self.c, edges, "wf"))

    def _value_sources(self, eid: int) -> frozenset[int] | None:
        """The reads an event's written value and address mention; None (any read) when
        they mention a collective contribution (resolved only in `data`)."""
        e = self.es.events[eid]
        found: set[int] = set()
        for expr in (e.value, e.addr):
            if expr is None:
                continue
            for node in postorder(expr):
                if isinstance(node, ReadValue):
                    found.add(node.event)
                elif isinstance(node, Contribution):
                    return None
        return frozenset(found)

    # ------------------------------------------------------------ final state

    def _observable(self, obs: Observable) -> Any:
        match obs:
            case RegObs():
                return self._register(obs)
            case MemObs():
                return self._memory(obs)

    def _register(self, obs: RegObs) -> Any:
        thread = next((t for t in self.es.threads if t.index == obs.thread), None)
        if thread is None:
            raise PisaMMError.at(None, f"no thread P{obs.thread} for observable {obs}", "smt")
        key = reg_key(obs)
        found = [dict(p.final_regs).get(key) for p in thread.paths]
        width = next((e.width for e in found if e is not None), 64)
        terms: list[tuple[Lit, Any]] = []
        for k, expr in enumerate(found):
            # a register never written reads as 0 (as in events.semantics)
            term = z3.BitVecVal(0, width) if expr is None else self.value(expr)
            terms.append((self.sel[(thread.index, k)], term))
        result = terms[-1][1]
        for s, t in reversed(terms[:-1]):
            result = z3.If(self.c.to_z3(s), t, result)
        return result

    def observed_location(self, obs: MemObs) -> Location:
        var = self.es.layout.variable(obs.var)
        if var is None:
            raise PisaMMError.at(None, f"observable {obs} names no variable", "smt")
        instance = obs.instance if var.space is Space.SHARED else None
        return Location(obs.var, obs.index * var.width // 8, instance, var.space)

    def _memory(self, obs: MemObs) -> Any:
        loc = self.observed_location(obs)
        writes = [
            e for e in self.es.events if e.kind is Kind.WRITE and loc in e.locs and e.id in self.at
        ]
        init = next((w for w in writes if w.tag is Tag.INIT), None)
        if init is None:
            value = dict(self.es.init).get(loc)
            var = self.es.layout.variable(obs.var)
            assert var is not None
            return z3.BitVecVal(value or 0, var.width)
        result = self._write_value(init)
        for w in writes:
            if w is init:
                continue
            last = self.c.land_all(
                [self.exec[w.id], self.at[w.id][loc]]
                + [lnot(self.co.get((w.id, x.id), False)) for x in writes if x is not w]
            )
            result = z3.If(self.c.to_z3(last), self._write_value(w), result)
        return result


def uses_floats(es: EventStructure) -> bool:
    """Whether any value of the structure involves an IEEE operation (the SAT-based QF_BV
    solver would treat those as uninterpreted, so the problem needs z3's general solver)."""
    seen: set[int] = set()
    roots: list[Expr] = []
    for e in es.events:
        roots.extend(x for x in (e.value, e.addr, e.guard) if x is not None)
    for t in es.threads:
        for p in t.paths:
            roots.append(p.guard)
            roots.extend(expr for _, expr in p.final_regs)
    for root in roots:
        for node in postorder(root, seen):
            seen.add(id(node))
            if isinstance(node, Apply) and node.fmt is not None:
                return True
    return False


def _is_true(expr: Expr) -> bool:
    return isinstance(expr, Const) and expr.value != 0


_rank_counter = [0]


def acyclic_constraints(c: Circuit, edges: dict[Pair, Lit], prefix: str) -> list[Lit]:
    """acyclic(E) <=> ranks exist with E(a, b) -> rank(a) < rank(b); only edges inside
    non-trivial strongly connected components of the may-graph need a rank."""
    live = {p: lit for p, lit in edges.items() if lit is not False}
    nodes, inner = cyclic_parts(live)
    if not inner:
        return []
    _rank_counter[0] += 1
    tag = f"{prefix}{_rank_counter[0]}"
    # bit-vector ranks keep the whole problem in QF_BV (bit-blasted to SAT); n nodes need
    # only n distinct ranks
    bits = max(1, len(nodes).bit_length())
    rank = {n: z3.BitVec(f"rank_{tag}_{n}", bits) for n in sorted(nodes)}
    out: list[Lit] = []
    for a, b in sorted(inner):
        lit = live[(a, b)]
        if a == b:
            out.append(lnot(lit))
        else:
            out.append(c.implies(lit, c.atom(z3.ULT(rank[a], rank[b]))))
    return out
