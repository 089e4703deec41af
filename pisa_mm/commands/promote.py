"""`pisa-mm promote`: write or rewrite the `.expected` files of litmus tests, on purpose."""

from __future__ import annotations

import argparse
import os

from pisa_mm.commands.run import (
    add_engine_argument,
    add_model_argument,
    collect_tests,
    crash_message,
    disagreements,
    engine_names,
    print_warnings,
    run_tests,
)
from pisa_mm.engines import EXACT_ENGINES
from pisa_mm.errors import PisaMMError, read_source
from pisa_mm.outcomes.expectations import expected_path, render_expectation
from pisa_mm.outcomes.model import Verdict
from pisa_mm.runner.console import Console
from pisa_mm.runner.files import not_regular, write_atomic
from pisa_mm.runner.job import EngineTask, cached_model
from pisa_mm.runner.options import add_pool_arguments, model_path_of, plan_of
from pisa_mm.runner.outcome import Exit, worst
from pisa_mm.runner.reporters import Kind, unanswered


def add_arguments(parser: argparse.ArgumentParser) -> None:
    parser.add_argument(
        "tests",
        nargs="+",
        metavar="TEST_OR_DIR",
        help="litmus files, or directories searched recursively for *.litmus",
    )
    add_model_argument(parser)
    add_engine_argument(parser)
    add_pool_arguments(parser)
    parser.add_argument(
        "--strict",
        action="store_true",
        help="make the documented input assumptions (e.g. a missing scope) errors",
    )


def main(args: argparse.Namespace) -> int:
    """Expectations are recorded at each test's own unroll bound (its metadata, else 2)."""
    files = collect_tests(args.tests)
    model = cached_model(args.model, model_path_of(args))
    # By default every exact engine: an expectation is recorded only where they agree, and
    # with herd's execution counts (the explicit engine counts executions).
    engines = engine_names(args.engine, model, default="exact")
    if inexact := [e for e in engines if e not in EXACT_ENGINES]:
        # An expectation is the exact answer; the machine misses allowed outcomes (load
        # buffering, docs/operational.md), so what it finds is no expectation.
        raise PisaMMError.at(
            None,
            f"promote records only exact answers, and the {', '.join(inexact)} engine is not "
            f"exact for model {model.name}: use --engine "
            f"{', '.join(sorted(EXACT_ENGINES))} or exact (the default); nothing was written",
            "usage",
        )
    counts = {"created": 0, "updated": 0, "unchanged": 0}
    errors = disagreeing = unknown = crashed = 0
    console = Console(len(files), "promoting")
    task = EngineTask((args.model,), engines, model_path_of(args))
    try:
        for i, record in enumerate(
            run_tests(files, task, plan_of(args), unroll=None, strict=args.strict)
        ):
            path = record.path
            console.progress(i + 1, f"{sum(counts.values())} promoted", path)
            print_warnings(console, record)
            kind = unanswered(record)
            if kind is Kind.BAD_INPUT:
                errors += 1
                console.err(record.message)
                continue
            if kind is Kind.INTERNAL:
                crashed += 1
                console.err(crash_message(record, args))
                continue
            if kind is Kind.UNKNOWN or not record.value:
                unknown += 1
                console.err(f"NOT PROMOTED {path}: unknown ({record.message})")
                continue
            (results,) = record.value
            if undecided := [r.engine for r in results if r.verdict is Verdict.UNKNOWN]:
                # A result cut short by the budget is not an answer: never record it.
                unknown += 1
                console.err(
                    f"NOT PROMOTED {path}: the result of {', '.join(undecided)} is Unknown "
                    "(a budget ran out or the solver gave up); rerun with a larger --timeout"
                )
                continue
            if diffs := disagreements(results):
                # Never record an answer the engines do not agree on.
                disagreeing += 1
                console.err(f"NOT PROMOTED {path}: engines disagree")
                for d in diffs:
                    console.err(f"  {d}")
                continue
            target = expected_path(path, model.name)
            # herd's counts are of executions: record them when an engine counts them
            best = next((r for r in results if r.counts_executions), results[0])
            text = render_expectation(best)
            try:
                old = _old_expectation(target)
                if old == text:
                    counts["unchanged"] += 1
                    continue
                write_atomic(target, text)
            except PisaMMError as exc:  # this test's file only: the others are promoted
                errors += 1
                console.err(exc.render())
                continue
            what = "created" if old is None else "updated"
            counts[what] += 1
            console.out(f"{what} {target}\n")
    finally:
        console.close()
    console.out(
        f"{len(files)} tests: {counts['created']} created, {counts['updated']} updated, "
        f"{counts['unchanged']} unchanged"
        + (f", {disagreeing} not promoted (engines disagree)" if disagreeing else "")
        + (f", {unknown} not promoted (unknown)" if unknown else "")
        + (f", {errors} bad input" if errors else "")
        + (f", {crashed} internal errors" if crashed else "")
        + f" ({', '.join(engines)}, model {model.name})\n"
    )
    codes = [
        Exit.INTERNAL if crashed else Exit.OK,
        Exit.BAD_INPUT if errors else Exit.OK,
        Exit.NEGATIVE if disagreeing else Exit.OK,
        Exit.UNKNOWN if unknown else Exit.OK,
    ]
    return int(worst(codes))


def _old_expectation(target: str) -> str | None:
    """The text of the `.expected` file promote would replace (None: there is none; "" when
    it is no UTF-8 text or too long, so it is replaced). A FIFO or a device in its place
    (or a link to one) is refused: reading it would block or never end."""
    if not os.path.lexists(target):
        return None
    if (what := not_regular(target)) or (what := _device(target)):
        raise PisaMMError.at(None, f"cannot write {target}: it is {what}", "io")
    try:
        return read_source(target)
    except PisaMMError:
        return ""


def _device(path: str) -> str | None:
    import stat

    try:
        return "a device" if stat.S_ISCHR(os.stat(path).st_mode) else None
    except OSError:
        return None
