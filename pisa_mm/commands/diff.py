"""`pisa-mm diff`: regression-check a model change by running tests under two models."""

from __future__ import annotations

import argparse
import sys

from pisa_mm.cat.loader import load_model
from pisa_mm.commands import pictures
from pisa_mm.commands.run import (
    add_engine_argument,
    add_selection_arguments,
    collect_tests,
    engine_names,
    load,
    progress,
    render_error,
    run_engines,
)
from pisa_mm.errors import PisaMMError
from pisa_mm.outcomes.expectations import compare, from_result

HELP = "list the tests whose verdict, states or flags differ between two models"


def add_arguments(parser: argparse.ArgumentParser) -> None:
    parser.add_argument("old", metavar="OLD", help="the model before: a .cat file or a name")
    parser.add_argument("new", metavar="NEW", help="the model after: a .cat file or a name")
    add_selection_arguments(parser)
    add_engine_argument(parser)
    pictures.add_diff_arguments(parser)


def main(args: argparse.Namespace) -> int:
    """Exit 0 whatever changed (the list is the answer); 2 for bad input."""
    files = collect_tests(args.tests)
    old, new = load_model(args.old), load_model(args.new)
    if args.engine == "operational":
        raise PisaMMError.at(
            None, "diff compares two cat models; the operational machine reads none "
            "(use an axiomatic engine: smt or explicit)", "usage"
        )  # fmt: skip
    # `all` means the engines that read the models
    engines = engine_names("exact" if args.engine == "all" else args.engine, old)
    changed = errors = 0
    names = (f"old ({args.old})", f"new ({args.new})")
    drawing = pictures.DiffPictures(args.html, old, new, args.timeout) if args.html else None
    with progress(len(files), "comparing") as advance:
        for path in files:
            loaded = load(path, unroll=args.unroll, strict=args.strict)
            old_results = run_engines(loaded, old, engines, timeout=args.timeout)
            new_results = run_engines(loaded, new, engines, timeout=args.timeout)
            advance()
            if loaded.error is not None:
                errors += 1
                print(render_error(loaded), file=sys.stderr)
                continue
            lines: list[str] = []
            for a, b in zip(old_results, new_results, strict=True):
                prefix = f"[{a.engine}] " if len(engines) > 1 else ""
                lines.extend(prefix + d for d in compare(from_result(a), from_result(b), names))
            if lines:
                changed += 1
                test = old_results[0].name
                print(f"CHANGED {test} ({path})")
                for line in lines:
                    print(f"  {line}")
                if drawing is not None and loaded.test and loaded.structure is not None:
                    a, b = old_results[0], new_results[0]
                    drawing.test_done(path, loaded.test, loaded.structure, a, b, lines)
    if drawing is not None:
        drawing.close(len(files))
    print(
        f"{len(files)} tests, {changed} changed, {len(files) - changed - errors} unchanged"
        + (f", {errors} bad input" if errors else "")
        + f" ({', '.join(engines)}: {args.old} -> {args.new})"
    )
    return 2 if errors else 0
