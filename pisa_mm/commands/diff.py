"""`pisa-mm diff`: regression-check a model change by running tests under two models."""

from __future__ import annotations

import argparse

from pisa_mm.commands.run import (
    add_engine_argument,
    add_selection_arguments,
    collect_tests,
    crash_message,
    engine_names,
    print_warnings,
    run_tests,
)
from pisa_mm.errors import PisaMMError
from pisa_mm.outcomes.expectations import compare, from_result
from pisa_mm.outcomes.model import Verdict
from pisa_mm.runner.console import Console
from pisa_mm.runner.files import check_outputs
from pisa_mm.runner.job import EngineTask, Status, cached_model
from pisa_mm.runner.options import add_pool_arguments, plan_of
from pisa_mm.runner.outcome import Exit, worst

HELP = "list the tests whose verdict, states or flags differ between two models"


def add_arguments(parser: argparse.ArgumentParser) -> None:
    parser.add_argument("old", metavar="OLD", help="the model before: a .cat file or a name")
    parser.add_argument("new", metavar="NEW", help="the model after: a .cat file or a name")
    add_selection_arguments(parser)
    add_engine_argument(parser)
    add_pool_arguments(parser)
    parser.add_argument(
        "--html",
        metavar="DIR",
        help="write a self-contained HTML report of the changed tests into DIR (index.html)",
    )


def main(args: argparse.Namespace) -> int:
    """Exit 0 whatever changed (the list is the answer); 4 when a test is unknown on either
    side; 2 for bad input; 3 for an internal error."""
    files = collect_tests(args.tests)
    old = cached_model(args.old)
    cached_model(args.new)  # a bad model is an error before any test runs
    if args.engine == "operational":
        raise PisaMMError.at(
            None, "diff compares two cat models; the operational machine reads none "
            "(use an axiomatic engine: smt or explicit)", "usage"
        )  # fmt: skip
    # `all` means the engines that read the models
    engines = engine_names("exact" if args.engine == "all" else args.engine, old)
    changed = errors = unknown = crashed = 0
    names = (f"old ({args.old})", f"new ({args.new})")
    check_outputs([args.html], [])
    drawing = None
    if args.html:
        from pisa_mm.commands.pictures import DiffPictures

        drawing = DiffPictures(args.html, old, cached_model(args.new), args.timeout)
    console = Console(len(files), "comparing")
    task = EngineTask((args.old, args.new), engines)
    records = run_tests(files, task, plan_of(args), unroll=args.unroll, strict=args.strict)
    try:
        for i, record in enumerate(records):
            console.progress(i + 1, f"{changed} changed", record.path)
            print_warnings(console, record)
            if record.status is Status.BAD_INPUT:
                errors += 1
                console.err(record.message)
                continue
            if record.status is Status.CRASH:
                crashed += 1
                console.err(crash_message(record, args))
                continue
            if record.status.unknown or not record.value:
                unknown += 1
                console.out(f"UNKNOWN {record.label} ({record.path}): {record.message}\n")
                continue
            old_results, new_results = record.value
            gave_up = [
                side
                for side, results in zip(names, record.value, strict=True)
                if any(r.verdict is Verdict.UNKNOWN for r in results)
            ]
            if gave_up:
                # an unknown side can hide any change: never "unchanged"
                unknown += 1
                console.out(
                    f"UNKNOWN {record.label} ({record.path}): the solver gave up under "
                    f"{' and '.join(gave_up)}\n"
                )
                continue
            lines: list[str] = []
            for a, b in zip(old_results, new_results, strict=True):
                prefix = f"[{a.engine}] " if len(engines) > 1 else ""
                lines.extend(prefix + d for d in compare(from_result(a), from_result(b), names))
            if lines:
                changed += 1
                console.out(
                    f"CHANGED {old_results[0].name} ({record.path})\n"
                    + "".join(f"  {line}\n" for line in lines)
                )
                if drawing is not None:
                    drawing.changed(record.path, old_results[0], new_results[0], lines, args)
    finally:
        console.close()
    if drawing is not None:
        drawing.close(len(files))
    unchanged = len(files) - changed - errors - unknown - crashed
    console.out(
        f"{len(files)} tests, {changed} changed, {unchanged} unchanged"
        + (f", {unknown} unknown" if unknown else "")
        + (f", {errors} bad input" if errors else "")
        + (f", {crashed} internal errors" if crashed else "")
        + f" ({', '.join(engines)}: {args.old} -> {args.new})\n"
    )
    return int(
        worst(
            [
                Exit.INTERNAL if crashed else Exit.OK,
                Exit.BAD_INPUT if errors else Exit.OK,
                Exit.UNKNOWN if unknown else Exit.OK,
            ]
        )
    )
