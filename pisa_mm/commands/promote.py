"""`pisa-mm promote`: write or rewrite the `.expected` files of litmus tests, on purpose."""

from __future__ import annotations

import argparse
import os
import sys

from pisa_mm.cat.loader import load_model
from pisa_mm.commands.run import (
    add_engine_argument,
    add_model_argument,
    collect_tests,
    disagreements,
    engine_names,
    load,
    progress,
    render_error,
    run_engines,
)
from pisa_mm.engines import EXACT_ENGINES
from pisa_mm.errors import PisaMMError
from pisa_mm.outcomes.expectations import expected_path, render_expectation
from pisa_mm.outcomes.model import Verdict

HELP = "record the current results of litmus tests as their expectations (X.litmus.expected)"


def add_arguments(parser: argparse.ArgumentParser) -> None:
    parser.add_argument(
        "tests",
        nargs="+",
        metavar="TEST_OR_DIR",
        help="litmus files, or directories searched recursively for *.litmus",
    )
    add_model_argument(parser)
    add_engine_argument(parser)
    parser.add_argument(
        "--strict",
        action="store_true",
        help="make the documented input assumptions (e.g. a missing scope) errors",
    )


def _write(path: str, text: str) -> None:
    try:
        with open(path, "w", encoding="utf-8") as fh:
            fh.write(text)
    except OSError as exc:
        raise PisaMMError.at(None, f"cannot write {path}: {exc}", "io") from exc


def main(args: argparse.Namespace) -> int:
    """Expectations are recorded at each test's own unroll bound (its metadata, else 2)."""
    files = collect_tests(args.tests)
    model = load_model(args.model)
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
    errors = disagreeing = unknown = 0
    with progress(len(files), "promoting") as advance:
        for path in files:
            loaded = load(path, unroll=None, strict=args.strict)
            results = run_engines(loaded, model, engines, timeout=args.timeout)
            advance()
            if loaded.error is not None:
                errors += 1
                print(render_error(loaded), file=sys.stderr, flush=True)
                continue
            if undecided := [r.engine for r in results if r.verdict is Verdict.UNKNOWN]:
                # A result cut short by the budget is not an answer: never record it.
                unknown += 1
                print(
                    f"NOT PROMOTED {path}: the result of {', '.join(undecided)} is Unknown "
                    "(the --timeout ran out); rerun with a larger --timeout",
                    file=sys.stderr,
                )
                continue
            if diffs := disagreements(results):
                # Never record an answer the engines do not agree on.
                disagreeing += 1
                print(f"NOT PROMOTED {path}: engines disagree", file=sys.stderr)
                for d in diffs:
                    print(f"  {d}", file=sys.stderr)
                continue
            target = expected_path(path, model.name)
            # herd's counts are of executions: record them when an engine counts them
            best = next((r for r in results if r.counts_executions), results[0])
            text = render_expectation(best)
            old: str | None = None
            if os.path.exists(target):
                with open(target, encoding="utf-8") as fh:
                    old = fh.read()
            if old == text:
                counts["unchanged"] += 1
                continue
            _write(target, text)
            what = "created" if old is None else "updated"
            counts[what] += 1
            print(f"{what} {target}")
    print(
        f"{len(files)} tests: {counts['created']} created, {counts['updated']} updated, "
        f"{counts['unchanged']} unchanged"
        + (f", {disagreeing} not promoted (engines disagree)" if disagreeing else "")
        + (f", {unknown} not promoted (Unknown)" if unknown else "")
        + (f", {errors} bad input" if errors else "")
        + f" ({', '.join(engines)}, model {model.name})"
    )
    if errors:
        return 2
    return 1 if disagreeing or unknown else 0
