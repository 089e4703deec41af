"""Work-items blocked at a barrier or collective that another work-item never reaches."""

from __future__ import annotations

from collections.abc import Iterable, Mapping

from pisa_mm.events.model import EventStructure, Kind, Tag
from pisa_mm.hints import TYPE_CHECKING
from pisa_mm.records import record

if TYPE_CHECKING:
    from pisa_mm.explicit.candidates import Candidate

__all__ = ["Stopped", "block"]


@record
class Stopped:
    """A work-item that never runs again from event `index` of its path on: starved by the
    scheduler (`reason` cites the progress rule), or, `blocked`, waiting at a barrier or
    collective that a work-item which never gets there takes part in."""

    thread: int
    index: int
    reason: str
    blocked: bool = False


Group = tuple[object, ...]  # ("barrier", gpu, wg) or ("collective", gpu, wg, sg)


def _group(es: EventStructure, thread: int, kind: str) -> Group:
    p = es.threads[thread].placement
    return ("barrier", p.gpu, p.wg) if kind == "barrier" else ("collective", p.gpu, p.wg, p.sg)


def _sync(es: EventStructure, eid: int, tag: Tag) -> tuple[Group, int] | None:
    """The group and index of the barrier (at its event tagged `tag`) or collective that
    event `eid` takes part in, None for other events."""
    e = es.events[eid]
    if e.thread is None:
        return None
    if e.tag is tag and e.barrier_index is not None:
        return _group(es, e.thread, "barrier"), e.barrier_index
    if e.kind is Kind.COLLECTIVE and e.collective_index is not None:
        return _group(es, e.thread, "collective"), e.collective_index
    return None


def _never_reached(
    es: EventStructure, cand: Candidate, stop: Mapping[int, Stopped], spinning: Iterable[int]
) -> dict[Group, int]:
    """Per group, the first barrier (collective) index that some member never reaches: a
    stopped work-item's first one among its removed events, a spinning one's next one."""
    out: dict[Group, int] = {}

    def note(key: tuple[Group, int] | None) -> None:
        if key is not None and key[1] < out.get(key[0], key[1] + 1):
            out[key[0]] = key[1]

    for s in stop.values():
        for eid in cand.paths[s.thread].events[s.index :]:
            note(_sync(es, eid, Tag.ARRIVE))
    for t in spinning:
        done = [eid for eid in cand.paths[t].events if eid in cand.events]
        arrived = sum(1 for eid in done if es.events[eid].tag is Tag.ARRIVE)
        collected = sum(1 for eid in done if es.events[eid].kind is Kind.COLLECTIVE)
        note((_group(es, t, "barrier"), arrived))
        note((_group(es, t, "collective"), collected))
    return out


def block(
    es: EventStructure, cand: Candidate, stop: dict[int, Stopped], spinning: Iterable[int]
) -> None:
    """Add to `stop` the work-items of `cand` that wait for ever at a barrier (at its
    depart) or collective that a stopped or `spinning` (for ever) work-item never reaches
    (PISA 1.1.1: waiting at a work-group barrier is how a sub-group may depend on
    another), until nothing changes."""
    spinning = tuple(spinning)
    changed = True
    while changed:
        changed = False
        missing = _never_reached(es, cand, stop, spinning)
        for u, path in enumerate(cand.paths):
            for i, eid in enumerate(path.events):
                if u in stop and stop[u].index <= i:
                    break
                key = _sync(es, eid, Tag.DEPART) if eid in cand.events else None
                if key is not None and key[0] in missing and key[1] >= missing[key[0]]:
                    span = es.events[eid].span
                    at = f"line {span.line if span else '?'} ({es.events[eid].text})"
                    reason = f"it waits at {at} for a work-item that never gets there"
                    stop[u] = Stopped(u, i, reason, blocked=True)
                    changed = True
                    break
