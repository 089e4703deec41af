"""Text of `query --liveness`: per spin loop its answer, starving schedule and stuck execution."""

from __future__ import annotations

from collections.abc import Sequence

from pisa_mm.events.model import EventStructure, Placement
from pisa_mm.liveness.check import Analysis, Hang
from pisa_mm.records import replace
from pisa_mm.report.explain import render_execution

__all__ = ["render_liveness"]


def _placement(p: Placement) -> str:
    if p.host:
        return "host"
    return f"gpu {p.gpu}, wg {p.wg}, sg {p.sg}"


def _at(es: EventStructure, eid: int) -> str:
    e = es.events[eid]
    line = f"line {e.span.line}" if e.span is not None else "its end"
    return f"{line} ({e.text})" if e.text else line


def _schedule(es: EventStructure, hang: Hang) -> list[str]:
    """Which work-items run (and how they end), which never run again, and why."""
    cand = hang.prefix
    stopped = {s.thread: s for s in hang.stopped}
    out = ["Starving schedule:"]
    for t, path in enumerate(cand.paths):
        who = f"  P{t} ({_placement(es.threads[t].placement)}):"
        if t == hang.waiter:
            out.append(f"{who} runs, and spins for ever at line {hang.loop.line}")
        elif t in hang.stuck:
            out.append(f"{who} runs, and spins for ever too (it reads the last writes)")
        elif t in stopped:
            s = stopped[t]
            if s.index == 0:
                where = "never runs"
            elif s.index == len(path.events) - 1 and path.cut:
                where = f"runs up to the bound, then never again ({_at(es, path.events[-1])})"
            else:
                where = f"runs, then never again from {_at(es, path.events[s.index])}"
            out.append(f"{who} {where}: {s.reason}")
        else:
            out.append(f"{who} runs to its end")
    return out


def _execution(es: EventStructure, hang: Hang) -> list[str]:
    """The stuck execution's events (with PISA source lines), rf, and co of the
    locations the spinning work-items read."""
    cand = hang.prefix
    relevant = {cand.locs[r] for r in hang.reads}
    shown = replace(cand, co={loc: o for loc, o in cand.co.items() if loc in relevant})
    reads = ", ".join(f"e{r}" for r in sorted(hang.reads))
    return [
        f"Stuck execution (what runs; P{hang.waiter}'s last iteration, reads {reads}, "
        "repeats for ever reading the co-last writes):",
        *render_execution(es, shown),
    ]


def render_liveness(
    test_name: str,
    es: EventStructure,
    progress: str,
    unroll: int,
    analyses: Sequence[Analysis],
) -> str:
    """One section per spin loop; a test without one says so."""
    head = f"Test {test_name}: liveness under --progress {progress} (unroll {unroll})"
    if not analyses:
        return f"{head}\nNo spin loop: no Liveness answer (docs/progress.md)\n"
    lines = [head]
    for i, a in enumerate(analyses):
        (loop,) = a.loops
        lines.append("")
        lines.append(
            f"Spin loop {i + 1} of {len(analyses)}: P{loop.thread} at line {loop.line} "
            f"({loop.text})"
        )
        lines.append(a.liveness.line)
        if a.hang is not None:
            lines.extend(_schedule(es, a.hang))
            lines.extend(_execution(es, a.hang))
    return "\n".join(lines) + "\n"
