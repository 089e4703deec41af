"""Stuck executions: the consistent cut executions in which a spin loop can wait forever."""

from __future__ import annotations

import enum
from collections.abc import Iterable

from pisa_mm.cat.syntax import Model
from pisa_mm.events.model import EventStructure, Kind, Path, Tag
from pisa_mm.explicit.candidates import Candidate
from pisa_mm.explicit.engine import executions
from pisa_mm.litmus.program import LitmusTest
from pisa_mm.liveness.loops import SpinLoop, spin_loops
from pisa_mm.liveness.progress import Progress, starvable
from pisa_mm.outcomes.model import Liveness, LivenessStatus

__all__ = ["check_liveness"]


class _Found(enum.Enum):
    NOTHING = 0  # a write the waiter needs comes from a work-item that must keep running
    UNDECIDED = 1  # some other work-item is still running at the bound
    HANG = 2


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


def _blockers(cand: Candidate, reads: Iterable[int], source: dict[int, int]) -> set[int]:
    """The writes co-after what `reads` read: those that could change what they read."""
    out: set[int] = set()
    for r in reads:
        order = cand.co[cand.locs[r]]
        out.update(order[order.index(source[r]) + 1 :])
    return out


def _spinning(
    es: EventStructure, cand: Candidate, loops: dict[tuple[int, int], SpinLoop]
) -> dict[int, SpinLoop]:
    """The work-items whose path the bound cut at a spin loop's back-edge."""
    out = {}
    for t, path in enumerate(cand.paths):
        if path.cut:
            loop = loops.get((t, es.events[path.events[-1]].instr or -1))
            if loop is not None:
                out[t] = loop
    return out


def _judge(
    es: EventStructure,
    cand: Candidate,
    waiter: int,
    spinning: dict[int, SpinLoop],
    progress: Progress,
) -> tuple[_Found, str]:
    """Can `waiter` spin for ever, continuing `cand` under `progress`? The starving
    schedule stops each work-item that would write what releases the waiter before that
    write (when `progress` lets it be starved); the rest must be finished or stuck."""
    source = {r: w for w, r in cand.rf}
    place = [t.placement for t in es.threads]
    pos = {eid: (t, i) for t, p in enumerate(cand.paths) for i, eid in enumerate(p.events)}
    reads = _last_iteration(es, cand, cand.paths[waiter], spinning[waiter])
    stop: dict[int, int] = {}  # starved work-item -> index on its path of its first removed event
    why: dict[int, str] = {}
    for w in _blockers(cand, reads, source):
        t, i = pos[w]
        if t == waiter:
            return _Found.NOTHING, ""
        reason = starvable(progress, place[waiter], place[t])
        if reason is None:
            return _Found.NOTHING, ""
        why[t] = reason
        if progress is Progress.OBE and reason.startswith("its work-group"):
            for u, pl in enumerate(place):  # the whole work-group has not started
                if not pl.host and (pl.gpu, pl.wg) == (place[t].gpu, place[t].wg):
                    stop[u] = 0
        else:
            stop[t] = min(i, stop.get(t, i))
    removed = {eid for t, i in stop.items() for eid in cand.paths[t].events[i:]}
    if any(w in removed and r not in removed for w, r in cand.rf):
        return _Found.NOTHING, ""  # what remains read a removed write: no such schedule
    if any(
        es.events[e].tag in (Tag.ARRIVE, Tag.DEPART) or es.events[e].kind is Kind.COLLECTIVE
        for e in removed & cand.events
    ):
        return _Found.NOTHING, ""  # starving a barrier's member is not modelled: no claim
    for u, path in enumerate(cand.paths):
        if u == waiter or u in stop or not path.cut:
            continue
        loop = spinning.get(u)
        if loop is not None and not (
            _blockers(cand, _last_iteration(es, cand, path, loop), source) - removed
        ):
            continue  # stuck itself
        reason = starvable(progress, place[waiter], place[u])
        if reason is None or (progress is Progress.OBE and reason.startswith("its work-group")):
            return (
                _Found.UNDECIDED,
                f"{_where(spinning[waiter])} while P{u} is still running at the bound",
            )
        why[u] = reason
    if not why:
        return _Found.HANG, (
            f"{_where(spinning[waiter])}: it reads the last writes to its locations and every "
            "other work-item has finished or spins too, so no write can release it (under any "
            "progress model)"
        )
    waits = "; ".join(f"P{t} need not run: {r}" for t, r in sorted(why.items()))
    return (
        _Found.HANG,
        f"{_where(spinning[waiter])} waiting for a write that may never come ({waits})",
    )


def check_liveness(
    test: LitmusTest, es: EventStructure, model: Model, progress: Progress
) -> Liveness | None:
    """The test's `Liveness` answer under `progress`, None when it has no spin loop."""
    loops = {(sl.thread, sl.edge): sl for sl in spin_loops(test)}
    if not loops:
        return None
    best: tuple[_Found, str] = (_Found.NOTHING, "")
    for ex in executions(es, model):
        if not ex.allowed or not ex.candidate.cut:
            continue
        spinning = _spinning(es, ex.candidate, loops)
        for waiter in sorted(spinning):
            found = _judge(es, ex.candidate, waiter, spinning, progress)
            if found[0].value > best[0].value:
                best = found
        if best[0] is _Found.HANG:
            break
    status = {
        _Found.NOTHING: LivenessStatus.TERMINATES,
        _Found.UNDECIDED: LivenessStatus.UNDECIDED,
        _Found.HANG: LivenessStatus.MAY_HANG,
    }[best[0]]
    return Liveness(status, best[1])
