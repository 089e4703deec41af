"""`diff --search N`: run gen's tests of growing size under both models until one separates them.

The candidates are `pisa_mm.gen.search.candidates` (gen's shapes and sweep, smallest first).
They run as `diff` runs a suite: the same `EngineTask` over both models, the same pool and
per-test budget (`--timeout`, `--max-memory`, `-j`), exact engines only; each candidate's
text travels in its job, so nothing is written until one is found.
"""

from __future__ import annotations

import argparse
import collections
import os
import time
from collections.abc import Callable, Generator, Iterator, Sequence
from typing import TYPE_CHECKING, Any

from pisa_mm.cat.syntax import Model
from pisa_mm.commands.gen import add_sweep_arguments, parse_sweep
from pisa_mm.commands.run import crash_message
from pisa_mm.errors import PisaMMError
from pisa_mm.gen.cycle import parse_cycle
from pisa_mm.gen.shapes import SHAPES
from pisa_mm.outcomes.model import TestResult, Verdict
from pisa_mm.records import record
from pisa_mm.runner.console import Console
from pisa_mm.runner.files import write_atomic
from pisa_mm.runner.job import EngineTask, Job, Record, load_source
from pisa_mm.runner.options import model_path_of, plan_of
from pisa_mm.runner.outcome import Exit
from pisa_mm.runner.pool import Plan, execute_stream
from pisa_mm.runner.reporters import Kind, unanswered

if TYPE_CHECKING:
    from pisa_mm.gen.search import Candidate
    from pisa_mm.gen.sweep import Source

__all__ = ["SEARCH_DEFAULTS", "add_search_arguments", "search"]

# The sweep of a search unless the options say otherwise: the orders that synchronise and
# those that do not, placements within and across work-groups, with and without SC fences.
SEARCH_DEFAULTS = {
    "orders": "rlx,rel-acq,sc",
    "scopes": "gpu",
    "spaces": "global",
    "placements": "same-wg,diff-wg",
    "fences": "none,sc",
    "rmw": "none",
}

# Candidates scheduled ahead of the one waited for, per worker: enough to keep the workers
# busy, few enough that the work past the first separating test is small.
AHEAD = 4

# The largest size a search may ask for: gen's cycles have at most 16 edges.
MAX_SIZE = 16


def add_search_arguments(parser: argparse.ArgumentParser) -> None:
    group = parser.add_argument_group(
        "search",
        "with --search N: when the tests separate nothing (or without tests), generate tests "
        "(pisa-mm gen's shapes and sweep, see docs/gen.md) of growing size up to N memory "
        "accesses until one separates the models, and print it",
    )
    group.add_argument(
        "--search",
        type=int,
        metavar="N",
        help="search generated tests of at most N accesses (2 to 16; e.g. 6 reaches IRIW) "
        "for one that separates the models; exit 0 when found, 1 when none up to N does",
    )
    group.add_argument(
        "--search-out",
        metavar="FILE",
        help="write the separating test found into FILE (a litmus file)",
    )
    group.add_argument(
        "--search-cycle",
        action="append",
        default=[],
        metavar="CYCLE",
        help="search this diy-style cycle (gen --cycle's syntax) besides the shapes (repeatable)",
    )
    group.add_argument(
        "--search-shapes",
        default="all",
        metavar="LIST",
        help=f"the shapes to search: a comma-separated list of {', '.join(SHAPES)}, or all, "
        "or none (default: all)",
    )
    add_sweep_arguments(group, SEARCH_DEFAULTS)


def check_search_arguments(args: argparse.Namespace) -> None:
    """Refuse a meaningless combination before anything runs."""
    if args.search is None:
        given = [("--search-out", bool(args.search_out)),
                 ("--search-cycle", bool(args.search_cycle)),
                 ("--search-shapes", args.search_shapes != "all")]  # fmt: skip
        given += [(f"--{k}", getattr(args, k) != v) for k, v in SEARCH_DEFAULTS.items()]
        for flag, value in given:
            if value:
                raise PisaMMError.at(None, f"{flag} needs --search N", "usage")
        return
    if not 2 <= args.search <= MAX_SIZE:
        raise PisaMMError.at(
            None, f"--search takes a size from 2 to {MAX_SIZE} accesses, not {args.search}",
            "usage",
        )  # fmt: skip
    if args.fail_on_change:
        raise PisaMMError.at(
            None, "--search exits 0 when it finds a separating test and 1 when none exists up "
            "to N: do not combine it with --fail-on-change", "usage"
        )  # fmt: skip
    _sources(args)
    parse_sweep(args)


def _sources(args: argparse.Namespace) -> list[Source]:
    from pisa_mm.gen.sweep import Source  # the generator is imported on use (start-up)

    words = [w.strip() for w in args.search_shapes.split(",") if w.strip()]
    names: list[str] = []
    for word in words:
        if word == "all":
            names += [n for n in SHAPES if n not in names]
        elif word == "none":
            continue
        elif word in SHAPES:
            names += [word] if word not in names else []
        else:
            raise PisaMMError.at(
                None, f"unknown --search-shapes value '{word}' (choose from "
                f"{', '.join(SHAPES)}, all, none)", "usage"
            )  # fmt: skip
    out = [Source(n, parse_cycle(SHAPES[n])) for n in names]
    for text in args.search_cycle:
        cycle = parse_cycle(text)
        out.append(Source(cycle.text, cycle))
    if not out:
        raise PisaMMError.at(None, "--search has no shape or cycle to search", "usage")
    return out


@record(frozen=False)
class _Tally:
    tried: int = 0
    unknown: int = 0
    bad: int = 0
    crashed: int = 0


def _runs(
    cands: Iterator[Candidate], task: EngineTask, plan: Plan, unroll: int | None
) -> Generator[tuple[Candidate, Record[tuple[tuple[TestResult, ...], ...]]], None, None]:
    """Each candidate with its record, in the candidates' order, on one pool for the whole
    search (or, with one worker and no timeout, one by one in this process)."""
    made: collections.deque[Candidate] = collections.deque()

    def jobs() -> Iterator[Job[tuple[tuple[TestResult, ...], ...]]]:
        for c in cands:
            made.append(c)
            yield Job(_path(c), c.generated.text, task, unroll, True)

    records = execute_stream(jobs(), plan, AHEAD * max(1, plan.jobs))
    try:
        for record in records:
            yield made.popleft(), record
    finally:
        records.close()  # a found test stops the pool at once


def _count(n: int, one: str, many: str) -> str:
    return f"{n} {one if n == 1 else many}"


def _cpu() -> float:
    """CPU seconds of this process and of its workers once they are joined (the pool is, when
    the search stops)."""
    t = os.times()
    return t.user + t.system + t.children_user + t.children_system


def _path(c: Candidate) -> str:
    return f"{c.generated.test.name}.litmus"


def search(
    args: argparse.Namespace,
    models: tuple[Model, Model],
    engines: tuple[str, ...],
    compare: Callable[[Sequence[tuple[TestResult, ...]]], list[str]],
    console: Console,
) -> tuple[int, dict[str, Any]]:
    """Search, print what was found (or that nothing was); the exit code and the search's
    part of `--json` (`{"max_size", "tried", "unknown", "seconds", "cpu_seconds", "found"}`,
    `found` null or the test with `name`, `size`, `step`, `source`, `text`, `file` and
    diff's explanation of it)."""
    from pisa_mm.gen.search import STEPS, candidates
    from pisa_mm.gen.sweep import Summary

    sources = _sources(args)
    sweep = parse_sweep(args)
    summary = Summary()
    task = EngineTask((args.old, args.new), engines, model_path_of(args))
    start, cpu = time.perf_counter(), _cpu()
    tally = _Tally()
    what = _count(len(sources), "shape or cycle", "shapes or cycles")
    console.out(
        f"searching generated tests of 2 to {args.search} accesses for one that separates "
        f"{args.old} and {args.new} ({what}; --orders "
        f"{args.orders} --scopes {args.scopes} --spaces {args.spaces} --placements "
        f"{args.placements} --fences {args.fences} --rmw {args.rmw})\n"
    )
    found: tuple[Candidate, Record[tuple[tuple[TestResult, ...], ...]], list[str]] | None = None
    runs = _runs(candidates(sources, sweep, args.search, summary), task, plan_of(args),
                 args.unroll)  # fmt: skip
    try:
        for c, record in runs:
            tally.tried += 1
            console.progress(tally.tried, f"size {c.size}", c.generated.test.name)
            kind = unanswered(record)
            if kind is Kind.BAD_INPUT:  # gen checked it: the builder or an engine refused it
                tally.bad += 1
                console.err(record.message)
                continue
            if kind is Kind.INTERNAL:
                tally.crashed += 1
                console.err(crash_message(record, args))
                continue
            if (
                kind is not None
                or record.value is None
                or any(r.verdict is Verdict.UNKNOWN for side in record.value for r in side)
            ):
                # an unknown candidate may hide a separation: a search without one is no proof
                tally.unknown += 1
                continue
            lines = compare(record.value)
            if lines:
                found = (c, record, lines)
                break
    finally:
        runs.close()
        console.close()
    seconds, cpu = time.perf_counter() - start, _cpu() - cpu
    tail = (
        f"{_count(tally.tried, 'candidate', 'candidates')} tried in {seconds:.1f} s "
        f"(CPU {cpu:.1f} s)"
        + (f", {tally.unknown} unknown" if tally.unknown else "")
        + (f", {tally.bad} refused" if tally.bad else "")
        + (f", {tally.crashed} internal errors" if tally.crashed else "")
    )
    doc: dict[str, Any] = {
        "max_size": args.search,
        "tried": tally.tried,
        "unknown": tally.unknown,
        "seconds": round(seconds, 3),
        "cpu_seconds": round(cpu, 3),
        "found": None,
    }
    if found is None:
        console.out(
            f"NOT FOUND: no generated test of at most {args.search} accesses separates "
            f"{args.old} and {args.new}; {tail}; gen dropped {summary.duplicates} duplicates "
            f"and {sum(summary.skipped.values())} invalid combinations\n"
        )
        if tally.crashed:
            return int(Exit.INTERNAL), doc
        return int(Exit.UNKNOWN if tally.unknown else Exit.NEGATIVE), doc
    c, record, lines = found
    doc["found"] = _print_found(args, models, c, record, lines, console)
    console.out(f"found {c.generated.test.name} (size {c.size}, {STEPS[c.step]}); {tail}\n")
    return int(Exit.OK), doc


def _print_found(
    args: argparse.Namespace,
    models: tuple[Model, Model],
    c: Candidate,
    record: Record[tuple[tuple[TestResult, ...], ...]],
    lines: list[str],
    console: Console,
) -> dict[str, Any]:
    """Print the test as a litmus file, its differences and diff's explanation (built again
    in this process: the workers return results only); the same for --json."""
    from pisa_mm.gen.search import STEPS
    from pisa_mm.report.diffexplain import explain_change, explanation_json, render_explanation

    name, text = c.generated.test.name, c.generated.text
    path = args.search_out if args.search_out else f"{name}.litmus"
    if args.search_out:
        write_atomic(args.search_out, text)
    assert record.value is not None
    old_results, new_results = record.value
    console.out(
        f"FOUND {name} (size {c.size}, {STEPS[c.step]}; cycle {c.source})\n"
        + (f"written to {args.search_out}\n" if args.search_out else "")
        + f"----- {path}\n{text}----- end of {path}\n"
        + "".join(f"  {line}\n" for line in lines)
    )
    loaded = load_source(path, text, unroll=args.unroll, strict=True)
    if loaded.test is None or loaded.structure is None:  # it ran: it builds again
        raise AssertionError(f"the separating test {name} no longer builds")
    results = (old_results[0], new_results[0])
    x = explain_change(path, loaded.test, loaded.structure, models, results, lines, args.timeout)
    console.out("".join(f"{line}\n" for line in render_explanation(loaded.structure, x)))
    return {
        "name": name,
        "size": c.size,
        "step": STEPS[c.step],
        "source": c.source,
        "text": text,
        "file": args.search_out,
        "explanation": explanation_json(loaded.structure, x),
    }
