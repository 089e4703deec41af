"""Stuck executions: the consistent cut executions in which a spin loop can wait forever."""

from __future__ import annotations

from collections.abc import Iterable, Mapping

from pisa_mm.enums import IntEnum
from pisa_mm.events.model import EventStructure, Kind, Path
from pisa_mm.hints import TYPE_CHECKING
from pisa_mm.litmus.program import LitmusTest
from pisa_mm.liveness.blocking import Stopped, block
from pisa_mm.liveness.loops import SpinLoop, spin_loops
from pisa_mm.liveness.progress import Progress, starvable
from pisa_mm.outcomes.model import Liveness, LivenessStatus
from pisa_mm.records import record

# the explicit engine is imported only for a test with a spin loop (start-up time)
if TYPE_CHECKING:
    from pisa_mm.cat.syntax import Model
    from pisa_mm.explicit.candidates import Candidate

__all__ = ["Analysis", "Hang", "Stopped", "analyse", "check_liveness"]


class _Found(IntEnum):
    NOTHING = 0  # this execution shows no hang (some write releases the waiter)
    UNDECIDED = 1  # a work-item that must keep running is cut by the bound elsewhere
    HANG = 2


@record
class Hang:
    """A starving schedule and its stuck execution: `waiter` spins for ever at `loop`,
    continuing the consistent prefix `prefix` (the cut execution without the events of
    the stopped work-items) by repeating its last iteration, whose reads `reads` read
    the co-last writes of the prefix; `stuck` are the other work-items spinning for ever
    too. The work-items in neither `stopped` nor `stuck` have finished."""

    prefix: Candidate
    waiter: int
    loop: SpinLoop
    reads: tuple[int, ...]
    stopped: tuple[Stopped, ...]
    stuck: tuple[int, ...]


@record
class Analysis:
    """The Liveness answer for the spin loops `loops` and, when it may hang, the hang."""

    liveness: Liveness
    loops: tuple[SpinLoop, ...]
    hang: Hang | None


def _where(loop: SpinLoop) -> str:
    return f"P{loop.thread} spins at line {loop.line} ({loop.text})"


def _last_iteration(es: EventStructure, cand: Candidate, path: Path, loop: SpinLoop) -> list[int]:
    """The reads of the last iteration of `loop` on a path cut at its back-edge."""
    seen: set[tuple[int, Kind]] = set()  # an RMW's read and write share an instruction
    reads = []
    for eid in reversed(path.events[:-1]):
        if eid not in cand.events:
            continue
        ev = es.events[eid]
        if (
            ev.instr is None
            or not loop.head <= ev.instr <= loop.edge
            or (ev.instr, ev.kind) in seen
        ):
            break
        seen.add((ev.instr, ev.kind))
        if ev.kind is Kind.READ:
            reads.append(eid)
    return reads


def _blockers(cand: Candidate, reads: Iterable[int], source: Mapping[int, int]) -> set[int]:
    """The writes co-after what `reads` read: only they could change what they read."""
    out: set[int] = set()
    for r in reads:
        order = cand.co[cand.locs[r]]
        out.update(order[order.index(source[r]) + 1 :])
    return out


def _cut_at(es: EventStructure, path: Path) -> int | None:
    """The back-edge instruction at which the bound cut `path`, None if it was not cut."""
    return es.events[path.events[-1]].instr if path.cut else None


def _spinning(
    es: EventStructure, cand: Candidate, loops: Mapping[tuple[int, int], SpinLoop]
) -> dict[int, SpinLoop]:
    """The work-items whose path the bound cut at a spin loop's back-edge."""
    out = {}
    for t, path in enumerate(cand.paths):
        loop = loops.get((t, _cut_at(es, path) or -1))
        if loop is not None:
            out[t] = loop
    return out


def _instruction_start(es: EventStructure, path: Path, i: int) -> int:
    """The index on `path` of the first event of the instruction of its i-th event: a
    work-item is stopped between instructions (an RMW's read and write stay together)."""
    instr = es.events[path.events[i]].instr
    while i > 0 and es.events[path.events[i - 1]].instr == instr:
        i -= 1
    return i


def _judge(
    es: EventStructure,
    cand: Candidate,
    waiter: int,
    spinning: Mapping[int, SpinLoop],
    progress: Progress,
) -> tuple[_Found, str, Hang | None]:
    """Can `waiter` spin for ever, continuing `cand` under `progress`? The starving
    schedule stops each work-item that would write what releases the waiter before that
    write (when `progress` lets it be starved), and with it those that wait for a stopped
    or spinning work-item at a barrier; every other one must be finished or stuck."""
    nothing = (_Found.NOTHING, "", None)
    source = {r: w for w, r in cand.rf}
    place = [t.placement for t in es.threads]
    pos = {eid: (t, i) for t, p in enumerate(cand.paths) for i, eid in enumerate(p.events)}
    loop = spinning[waiter]
    reads = _last_iteration(es, cand, cand.paths[waiter], loop)
    stop: dict[int, Stopped] = {}
    stuck: set[int] = set()
    forever: set[int] = {waiter}  # spinning or starved at the bound: no barrier after

    def removed() -> set[int]:
        return {e for s in stop.values() for e in cand.paths[s.thread].events[s.index :]}

    while True:
        progressed = True
        while progressed:  # stuck spinners and starvable runners, and who they block
            block(es, cand, stop, forever)
            gone = removed()
            progressed = False
            for u, path in enumerate(cand.paths):
                if u in forever or u in stop or not path.cut:
                    continue
                own = spinning.get(u)
                if own is not None and not (
                    _blockers(cand, _last_iteration(es, cand, path, own), source) - gone
                ):
                    stuck.add(u)
                    forever.add(u)
                    progressed = True
                    continue
                why = starvable(progress, place[waiter], place[u])
                if why is not None and not why.unstarted:  # stopped at the bound
                    stop[u] = Stopped(u, len(path.events) - 1, why.reason)
                    forever.add(u)
                    progressed = True
        if waiter in stop:
            return nothing  # the waiter would wait at a barrier before its loop
        remaining = _blockers(cand, reads, source) - gone
        if not remaining:
            break
        for w in sorted(remaining):
            t, i = pos[w]
            i = _instruction_start(es, cand.paths[t], i)
            why = None if t == waiter else starvable(progress, place[waiter], place[t])
            if why is None:
                return nothing  # that write comes, and (eventual visibility) W reads it
            if why.unstarted:  # the whole work-group never starts
                for u, pl in enumerate(place):
                    if not pl.host and (pl.gpu, pl.wg) == (place[t].gpu, place[t].wg):
                        stop[u] = Stopped(u, 0, why.reason)
                        stuck.discard(u)  # it does not spin: it never starts
            elif t not in stop or i < stop[t].index:
                stop[t] = Stopped(t, i, why.reason)
    if any(w in gone and r not in gone for w, r in cand.rf):
        return nothing  # what remains read a removed write: no such schedule
    for u, path in enumerate(cand.paths):
        if u in forever or u in stop or not path.cut:
            continue
        if u in spinning:
            # u leaves its spin loop on a write it has yet to read: the execution with
            # u's stale iterations dropped (one fewer iteration each) covers this one.
            return nothing
        span = es.events[path.events[-1]].span
        return (
            _Found.UNDECIDED,
            f"{_where(loop)} while P{u}, which must keep running, is still in its loop at "
            f"line {span.line if span else '?'} at the bound",
            None,
        )
    from pisa_mm.explicit.candidates import Candidate

    prefix = Candidate(
        paths=cand.paths,
        path_indices=cand.path_indices,
        events=cand.events - gone,
        rf=frozenset(p for p in cand.rf if p[1] not in gone),
        co={loc: tuple(w for w in o if w not in gone) for loc, o in cand.co.items()},
        locs={e: loc for e, loc in cand.locs.items() if e not in gone},
        values={e: v for e, v in cand.values.items() if e not in gone},
        contributions=cand.contributions,
    )
    stopped = tuple(sorted(stop.values(), key=_tid))
    hang = Hang(prefix, waiter, loop, tuple(reads), stopped, tuple(sorted(stuck)))
    return _Found.HANG, _hang_text(hang), hang


def _tid(s: Stopped) -> int:
    return s.thread


def _hang_text(hang: Hang) -> str:
    starved = [s for s in hang.stopped if not s.blocked]
    blocked = ", ".join(
        f"P{s.thread} {s.reason.removeprefix('it ')}" for s in hang.stopped if s.blocked
    )
    if not starved:
        waits = f"; {blocked}" if blocked else ""
        return (
            f"{_where(hang.loop)}: it reads the last writes to its locations and every "
            f"other work-item has finished or spins too{waits}, so no write can release it "
            "(under any progress model)"
        )
    waits = "; ".join(f"P{s.thread} need not run: {s.reason}" for s in starved)
    also = f"; {blocked}" if blocked else ""
    return f"{_where(hang.loop)} waiting for a write that may never come ({waits}{also})"


def analyse(
    test: LitmusTest,
    es: EventStructure,
    model: Model,
    progress: Progress,
    only: SpinLoop | None = None,
) -> Analysis | None:
    """The Liveness answer for the test's spin loops (or only for `only`) under
    `progress`; None when it has no spin loop. Only the executions in which the bound cuts
    some work-item at a spin loop are enumerated, and the search stops at the first hang."""
    every = spin_loops(test)
    found = every if only is None else (only,)
    if not found:
        return None
    from pisa_mm.explicit.engine import executions

    loops = {(sl.thread, sl.edge): sl for sl in every}
    asked = {(sl.thread, sl.edge) for sl in found}

    def wanted(paths: tuple[Path, ...]) -> bool:
        return any((t, _cut_at(es, p) or -1) in asked for t, p in enumerate(paths))

    best: tuple[_Found, str, Hang | None] = (_Found.NOTHING, "", None)
    for ex in executions(es, model, paths_wanted=wanted):
        if not ex.allowed:
            continue
        spinning = _spinning(es, ex.candidate, loops)
        for waiter in sorted(t for t, sl in spinning.items() if (t, sl.edge) in asked):
            answer = _judge(es, ex.candidate, waiter, spinning, progress)
            if answer[0] > best[0]:
                best = answer
        if best[0] is _Found.HANG:
            break
    status = {
        _Found.NOTHING: LivenessStatus.TERMINATES,
        _Found.UNDECIDED: LivenessStatus.UNDECIDED,
        _Found.HANG: LivenessStatus.MAY_HANG,
    }[best[0]]
    return Analysis(Liveness(status, best[1]), found, best[2])


def check_liveness(
    test: LitmusTest, es: EventStructure, model: Model, progress: Progress
) -> Liveness | None:
    """The test's `Liveness` answer under `progress`, None when it has no spin loop."""
    result = analyse(test, es, model, progress)
    return None if result is None else result.liveness
