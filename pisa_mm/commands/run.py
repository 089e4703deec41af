"""`pisa-mm run`: run litmus tests under a model and print herd-style results."""

from __future__ import annotations

import argparse
import os
import sys
import time
from collections.abc import Callable, Iterator, Sequence
from contextlib import contextmanager
from dataclasses import dataclass, replace
from pathlib import Path

from pisa_mm.cat.loader import MODELS_DIR, load_model
from pisa_mm.cat.syntax import Model
from pisa_mm.commands import pictures
from pisa_mm.engines import (
    DEFAULT_UNROLL,
    ENGINES,
    EXACT_ENGINES,
    EngineOptions,
    available_engines,
    default_engine,
    get_engine,
)
from pisa_mm.errors import PisaMMError
from pisa_mm.events.build import build
from pisa_mm.events.model import EventStructure
from pisa_mm.litmus import load_test
from pisa_mm.litmus.program import LitmusTest
from pisa_mm.outcomes.expectations import (
    DEFAULT_MODEL,
    compare,
    expected_path,
    from_result,
    read_expectation,
)
from pisa_mm.outcomes.model import TestResult
from pisa_mm.report.herd import render_flag_witnesses, render_result
from pisa_mm.report.json import results_to_json

__all__ = [
    "HELP",
    "Loaded",
    "add_arguments",
    "add_engine_argument",
    "add_model_argument",
    "add_selection_arguments",
    "collect_tests",
    "disagreements",
    "engine_names",
    "load",
    "load_test",
    "main",
    "progress",
    "render_error",
    "run_engines",
    "test_unroll",
]

HELP = "run litmus tests under a model and print herd-style results"

# A progress bar is shown for runs of more than this many tests (and only on a terminal).
_PROGRESS_MIN = 4


def add_arguments(parser: argparse.ArgumentParser) -> None:
    add_selection_arguments(parser)
    add_model_argument(parser)
    add_engine_argument(parser)
    parser.add_argument(
        "--json", metavar="FILE", help="also write the results as JSON to FILE ('-': stdout)"
    )
    parser.add_argument(
        "--check",
        action="store_true",
        help="require an expectation file for every test (X.litmus.expected) and compare",
    )
    parser.add_argument(
        "-v", "--verbose", action="store_true", help="print the witness events of each flag"
    )
    pictures.add_run_arguments(parser)


def add_selection_arguments(parser: argparse.ArgumentParser) -> None:
    parser.add_argument(
        "tests",
        nargs="+",
        metavar="TEST_OR_DIR",
        help="litmus files, or directories searched recursively for *.litmus",
    )
    parser.add_argument(
        "--unroll",
        type=int,
        metavar="N",
        help=f"loop unrolling bound (default: the test's `unroll =` metadata, else "
        f"{DEFAULT_UNROLL})",
    )
    parser.add_argument(
        "--strict",
        action="store_true",
        help="make the documented input assumptions (e.g. a missing scope) errors",
    )


def add_model_argument(parser: argparse.ArgumentParser) -> None:
    parser.add_argument(
        "--model",
        default=DEFAULT_MODEL,
        metavar="NAME|PATH",
        help=f"a shipped model name or a .cat file (default: {DEFAULT_MODEL})",
    )


def add_engine_argument(parser: argparse.ArgumentParser) -> None:
    parser.add_argument(
        "--engine",
        choices=(*ENGINES, "all"),
        help="the engine to use; 'all' runs every available engine and compares them "
        "(default: smt when available, else explicit)",
    )
    parser.add_argument(
        "--timeout",
        type=float,
        metavar="S",
        help="give up on a test after S seconds in a solver-based engine: its verdict is then "
        "Unknown, never Allowed or Forbidden (default: no limit)",
    )


# ---------------------------------------------------------------- shared with promote, diff


def collect_tests(args: Sequence[str]) -> list[str]:
    """Files as given; directories searched recursively for *.litmus, sorted."""
    out: list[str] = []
    for arg in args:
        p = Path(arg)
        if p.is_dir():
            found = sorted(str(f) for f in p.rglob("*.litmus") if f.is_file())
            if not found:
                raise PisaMMError.at(None, f"no *.litmus files under {arg}", "io")
            out.extend(found)
        elif p.is_file():
            out.append(arg)
        else:
            raise PisaMMError.at(None, f"no such file or directory: {arg}", "io")
    return out


def test_unroll(test: LitmusTest, override: int | None) -> int:
    """The unroll bound: --unroll, else the test's `unroll = N` metadata, else the default."""
    if override is not None:
        return override
    for key, value in test.metadata:
        if key == "unroll" and value.strip().isdigit():
            return int(value)
    return DEFAULT_UNROLL


def engine_names(
    choice: str | None, model: Model, *, default: str | None = None
) -> tuple[str, ...]:
    """The engines to run: one named engine, or for `all` every available engine.

    The operational machine implements the shipped models' semantics only (it claims a
    relation to them, docs/operational.md), so `all` leaves it out under a user's model.
    `default` replaces a missing choice (`promote` records with every exact engine).
    """
    choice = choice if choice is not None else default
    if choice is None:
        return (default_engine(),)
    if choice in ("all", "exact"):
        names = tuple(
            n
            for n in available_engines()
            if (choice == "all" or n in EXACT_ENGINES)
            and (n in EXACT_ENGINES or is_shipped_model(model))
        )
        if not names:
            raise PisaMMError.at(None, "no engine is available", "engine")
        return names
    get_engine(choice)  # a clear error now if it cannot be imported
    return (choice,)


def is_shipped_model(model: Model) -> bool:
    return Path(model.path).resolve().parent == MODELS_DIR.resolve()


@dataclass
class Loaded:
    """A test file, parsed and built, or the error that stopped it."""

    path: str
    test: LitmusTest | None = None
    structure: EventStructure | None = None
    unroll: int = DEFAULT_UNROLL
    error: PisaMMError | None = None
    source: str | None = None


def load(path: str, *, unroll: int | None, strict: bool) -> Loaded:
    """Parse, validate and build one file; a bad file gives its error instead."""
    loaded = Loaded(path)
    try:
        test = load_test(path, strict=strict)
        loaded.test, loaded.source = test, test.source
        loaded.unroll = test_unroll(test, unroll)
        loaded.structure = build(test, unroll=loaded.unroll)
    except PisaMMError as exc:
        # parse errors carry their source (`exc.sources`); later ones use `loaded.source`
        loaded.error = exc
    return loaded


def run_engines(
    loaded: Loaded, model: Model, engines: Sequence[str], *, timeout: float | None = None
) -> list[TestResult]:
    """Results of every engine; an engine's PisaMMError (unsupported input) is recorded on
    `loaded` and gives no results."""
    if loaded.test is None or loaded.structure is None:
        return []
    if timeout is not None and timeout <= 0:
        raise PisaMMError.at(None, f"--timeout must be positive, not {timeout}", "usage")
    results = []
    options = EngineOptions(unroll=loaded.unroll, timeout=timeout)
    try:
        for name in engines:
            start = time.perf_counter()
            result = get_engine(name)(loaded.test, loaded.structure, model, options)
            results.append(replace(result, seconds=time.perf_counter() - start))
    except PisaMMError as exc:
        loaded.error = exc
        return []
    return results


def render_error(loaded: Loaded) -> str:
    assert loaded.error is not None
    sources = {loaded.path: loaded.source} if loaded.source is not None else {}
    sources.update(getattr(loaded.error, "sources", None) or {})
    return loaded.error.render(sources)


def disagreements(results: Sequence[TestResult]) -> list[str]:
    """How the engines' results differ, each line naming both engines.

    Exact engines must agree with the first exact one; an engine that under-approximates
    (not in EXACT_ENGINES) must only not find states or flags the exact answer lacks.
    """
    out: list[str] = []
    exact = [r for r in results if r.engine in EXACT_ENGINES]
    if not exact:
        return out
    ref = exact[0]
    for other in results:
        if other is ref:
            continue
        diffs = compare(
            from_result(ref),
            from_result(other),
            (ref.engine, other.engine),
            below=other.engine not in EXACT_ENGINES,
        )
        out.extend(f"{ref.engine} vs {other.engine}: {d}" for d in diffs)
    return out


def _nothing() -> None:
    pass


@contextmanager
def progress(total: int, label: str) -> Iterator[Callable[[], None]]:
    """A rich progress bar on stderr for long runs on a terminal; yields its step function."""
    if total < _PROGRESS_MIN or not sys.stderr.isatty():
        yield _nothing
        return
    from rich.console import Console
    from rich.progress import Progress

    with Progress(console=Console(stderr=True), transient=True) as bar:
        task = bar.add_task(label, total=total)
        yield lambda: bar.advance(task)


# ---------------------------------------------------------------- run


@dataclass
class _Tally:
    tests: int = 0
    ok: int = 0
    failed: int = 0
    errors: int = 0


def main(args: argparse.Namespace) -> int:
    files = collect_tests(args.tests)
    model = load_model(args.model)
    engines = engine_names(args.engine, model)
    check_expected = args.unroll is None
    if args.check and args.unroll is not None:
        raise PisaMMError.at(
            None, "--check compares with expectations recorded at each test's own unroll "
            "bound; drop --unroll", "usage"
        )  # fmt: skip
    tally = _Tally()
    records: list[tuple[str, TestResult, Sequence[str]]] = []
    text_output = args.json != "-"  # JSON on stdout replaces the text blocks
    drawing = pictures.RunPictures.from_args(args, model)
    with progress(len(files), "running") as advance:
        for path in files:
            tally.tests += 1
            loaded = load(path, unroll=args.unroll, strict=args.strict)
            results = run_engines(loaded, model, engines, timeout=args.timeout)
            advance()
            if loaded.error is not None:
                tally.errors += 1
                print(render_error(loaded), file=sys.stderr, flush=True)
                if drawing is not None:
                    drawing.test_done(path, loaded.test, None, [], [], render_error(loaded))
                continue
            assert loaded.test is not None
            for w in loaded.test.warnings:
                print(w, file=sys.stderr)
            problems: list[str] = []
            if len(results) > 1:
                problems.extend(disagreements(results))
            exp_file = expected_path(path, model.name)
            if check_expected and os.path.exists(exp_file):
                try:
                    expected = read_expectation(exp_file)
                except PisaMMError as exc:
                    tally.errors += 1
                    print(exc.render(), file=sys.stderr, flush=True)
                    continue
                for r in results:
                    diffs = compare(
                        expected,
                        from_result(r),
                        ("expected", r.engine),
                        below=r.engine not in EXACT_ENGINES,
                    )
                    problems.extend(f"{exp_file}: {d}" for d in diffs)
            elif args.check:
                problems.append(f"{exp_file}: no expectation file (create it with promote)")
            for r in results:
                records.append((path, r, problems))
                if text_output:
                    text = render_result(r)
                    if args.verbose:
                        text += render_flag_witnesses(r)
                    print(text, flush=True)
            if drawing is not None:
                drawing.test_done(path, loaded.test, loaded.structure, results, problems, None)
            if problems:
                tally.failed += 1
                print(f"FAIL {path}", file=sys.stderr)
                for p in problems:
                    print(f"  {p}", file=sys.stderr)
            else:
                tally.ok += 1
    if drawing is not None:
        drawing.close()
    if args.json is not None:
        text = results_to_json(records)
        if args.json == "-":
            sys.stdout.write(text)
        else:
            try:
                with open(args.json, "w", encoding="utf-8") as fh:
                    fh.write(text)
            except OSError as exc:
                raise PisaMMError.at(None, f"cannot write {args.json}: {exc}", "io") from exc
    summary = (
        f"{tally.tests} tests, {tally.ok} ok, {tally.failed} failed"
        + (f", {tally.errors} bad input" if tally.errors else "")
        + f" ({', '.join(engines)}, model {model.name})"
    )
    print(summary, file=sys.stdout if text_output else sys.stderr)
    if tally.errors:
        return 2
    return 1 if tally.failed else 0
