"""`pisa-mm run`: run litmus tests under a model and print herd-style results."""

from __future__ import annotations

import argparse
import functools
import os
import stat
from collections.abc import Iterator, Sequence

from pisa_mm.engines import (
    BOUNDED_BY,
    DEFAULT_UNROLL,
    ENGINES,
    EXACT_ENGINES,
    available_engines,
    default_engine,
    get_engine,
)
from pisa_mm.errors import MAX_TEST_BYTES, PisaMMError, clip, read_source
from pisa_mm.hints import TYPE_CHECKING, Any, TypeVar
from pisa_mm.outcomes.expectations import DEFAULT_MODEL
from pisa_mm.runner.console import Console
from pisa_mm.runner.files import check_outputs, model_files
from pisa_mm.runner.job import (
    NO_PROGRESS,
    EngineTask,
    Job,
    Loaded,
    Record,
    Status,
    Task,
    cached_model,
    load,
    render_error,
    run_engines,
    test_unroll,
)
from pisa_mm.runner.options import (
    add_model_path_argument,
    add_pool_arguments,
    model_path_of,
    plan_of,
)
from pisa_mm.runner.outcome import Exit, worst
from pisa_mm.runner.pool import Plan, execute
from pisa_mm.runner.reporters import (
    HerdText,
    JsonReport,
    JUnitReport,
    Kind,
    Reporter,
    Summary,
    TestReport,
    unanswered,
)

if TYPE_CHECKING:
    from pisa_mm.cat.syntax import Model
    from pisa_mm.litmus.program import LitmusTest
    from pisa_mm.outcomes.model import TestResult

__all__ = [
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
    "make_reporters",
    "render_error",
    "run_engines",
    "run_tests",
    "test_unroll",
]

T = TypeVar("T")


def load_test(path: str, *, strict: bool = False) -> LitmusTest:
    """The litmus frontend's `load_test` (imported on first use: start-up time)."""
    from pisa_mm.litmus import load_test as frontend_load

    return frontend_load(path, strict=strict)


def add_arguments(parser: argparse.ArgumentParser) -> None:
    add_selection_arguments(parser)
    add_model_argument(parser)
    add_engine_argument(parser)
    add_pool_arguments(parser)
    parser.add_argument(
        "--json", metavar="FILE", help="also write the results as JSON to FILE ('-': stdout)"
    )
    parser.add_argument(
        "--junit", metavar="FILE", help="also write JUnit XML to FILE (one testcase per test)"
    )
    parser.add_argument(
        "--check",
        action="store_true",
        help="require an expectation file for every test (X.litmus.expected) and compare",
    )
    parser.add_argument(
        "--no-time",
        action="store_true",
        help="omit the `Time` lines, and the times in --json and --junit (reproducible output)",
    )
    parser.add_argument(
        "--verdict-only",
        action="store_true",
        help="decide each condition's verdict without listing the final states (as herd's "
        "-speedcheck): engines stop at the first execution that decides it; the blocks "
        "omit states, counts and flags, and expectations are compared on the verdict only",
    )
    parser.add_argument(
        "-v", "--verbose", action="store_true", help="print the witness events of each flag"
    )
    parser.add_argument(
        "--herd-log",
        action="store_true",
        help="print the result blocks in herd7's log format for mcompare7/msort7 (states as "
        "1:r0=0; x=1;); the summary goes to stderr",
    )
    parser.add_argument(
        "--baseline",
        metavar="FILE",
        help="compare every test's verdict, states and flags with the results recorded in "
        "FILE (one JSON file for the suite); exit 1 listing the tests that differ",
    )
    parser.add_argument(
        "--update-baseline",
        action="store_true",
        help="with --baseline: record this run's results in FILE instead of comparing",
    )
    from pisa_mm.liveness.progress import PROGRESS_MODELS

    add_picture_arguments(parser)
    parser.add_argument(
        "--progress",
        choices=(*PROGRESS_MODELS, NO_PROGRESS),
        default="pisa",
        help="the forward-progress model of the Liveness line of tests with spin loops: "
        "pisa (PISA 1.1.1), obe (occupancy-bound), fair, unfair; none skips the check "
        "(docs/progress.md)",
    )


def add_picture_arguments(parser: argparse.ArgumentParser) -> None:
    """--graphs and --html (drawn by commands/pictures.py, imported only when asked)."""
    from pisa_mm.report import DEFAULT_MAX_GRAPHS

    parser.add_argument(
        "--graphs",
        metavar="DIR",
        help="draw one execution graph per allowed final state of each test into DIR "
        "(DOT, and SVG when Graphviz is installed)",
    )
    parser.add_argument(
        "--all-executions",
        action="store_true",
        help="with --graphs/--html: one graph per allowed execution, not per final state",
    )
    parser.add_argument(
        "--max-graphs",
        type=int,
        default=DEFAULT_MAX_GRAPHS,
        metavar="N",
        help=f"draw at most N graphs per test and say when more exist "
        f"(default: {DEFAULT_MAX_GRAPHS})",
    )
    parser.add_argument(
        "--derived",
        action="store_true",
        help="also draw the model's derived orders (hb, hb_G, ...) in the graphs",
    )
    parser.add_argument(
        "--html",
        metavar="DIR",
        help="write a self-contained HTML report of the run into DIR (index.html)",
    )


def add_selection_arguments(parser: argparse.ArgumentParser, *, optional: bool = False) -> None:
    """The tests (`optional`: none may be given, `diff --search`), --unroll and --strict."""
    parser.add_argument(
        "tests",
        nargs="*" if optional else "+",
        default=[] if optional else None,  # an empty default: optional, not "required"
        metavar="TEST_OR_DIR",
        help="litmus files, or directories searched recursively for *.litmus"
        + (" (none: with --search only)" if optional else ""),
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
    add_model_path_argument(parser)


def add_engine_argument(parser: argparse.ArgumentParser) -> None:
    parser.add_argument(
        "--engine",
        choices=(*ENGINES, "all"),
        help="the engine to use; 'auto' runs explicit on small tests and smt on large "
        "ones (by an estimate of the candidate space); 'all' runs every available engine "
        "and compares them (default: auto)",
    )


# ---------------------------------------------------------------- shared with promote, diff


def collect_tests(args: Sequence[str]) -> list[str]:
    """Files as given; directories searched recursively for *.litmus, sorted."""
    out: list[str] = []
    for arg in args:
        try:
            mode: int | None = os.stat(arg).st_mode
        except FileNotFoundError:
            mode = None  # said below
        except OSError as exc:  # a name too long, a loop of symlinks, no permission
            shown = arg if len(arg) <= 80 else arg[:77] + "..."
            raise PisaMMError.at(None, f"cannot access {shown}: {exc.strerror}", "io") from None
        if mode is not None and stat.S_ISDIR(mode):
            found = sorted(litmus_files(arg))
            if not found:
                raise PisaMMError.at(None, f"no *.litmus files under {arg}", "io")
            out.extend(found)
        elif mode is not None and stat.S_ISREG(mode):
            out.append(arg)
        elif mode is not None:
            read_source(arg)  # a FIFO or a device: refused with what it is
        else:
            raise PisaMMError.at(None, f"no such file or directory: {arg}", "io")
    return out


def litmus_files(top: str) -> list[str]:
    """The files named *.litmus under the directory `top`, as `Path(top).rglob("*.litmus")`
    gives them that are files: named from `top` as pathlib writes it, in directories that
    are not links (links to files count). From the entries' types, as `os.scandir` reads
    them: pathlib's `is_file` asked the system about each file again (half the 30 ms it
    took to list the 1,530 generated tests, before the first one could run)."""
    from pathlib import PurePath  # a suite: a single test needs no pathlib

    base = str(PurePath(top))
    found: list[str] = []
    pending = ["" if base == "." else base if base.endswith("/") else base + "/"]
    while pending:
        prefix = pending.pop()
        try:
            with os.scandir(prefix or ".") as entries:
                listed = list(entries)
        except OSError as exc:
            # not skipped (as pathlib does): the run would count its tests as none, and a
            # suite with an unreadable (or, past PATH_MAX, unnamable) part would pass
            where, why = clip(prefix or ".", 80), exc.strerror or str(exc)
            raise PisaMMError.at(None, f"cannot read the directory {where}: {why}", "io") from None
        for entry in listed:
            try:
                if entry.is_dir(follow_symlinks=False):
                    pending.append(prefix + entry.name + "/")
                elif entry.name.endswith(".litmus"):
                    if entry.is_symlink():  # whether or not its target exists
                        _check_link(prefix + entry.name)
                    if entry.is_file():
                        found.append(prefix + entry.name)
            except OSError:
                continue
    return found


def _check_link(path: str) -> None:
    """A test found in a directory may be a link only to a `*.litmus` file: a suite from
    someone else could otherwise hold `t.litmus -> ~/.ssh/id_rsa`, and the diagnostics and
    reports (HTML pages show a bad test's text) would print that file. Refused before it is
    read, without saying whether the target exists."""
    if not os.path.realpath(path).endswith(".litmus"):
        raise PisaMMError.at(
            None,
            f"{path}: a link to a file that is not a *.litmus file; not read (name the file "
            "itself to run it)",
            "io",
        )


def make_jobs(
    files: Sequence[str], task: Task[T], *, unroll: int | None, strict: bool
) -> tuple[list[Job[T]], list[Record[T]]]:
    """A job per readable file, with its text read here (workers may not share our files);
    an unreadable one (missing, a FIFO, not UTF-8) is a bad-input record at its place."""
    jobs: list[Job[T]] = []
    failed: list[Record[T]] = []
    for path in files:
        try:
            jobs.append(Job(path, read_source(path, MAX_TEST_BYTES), task, unroll, strict))
        except PisaMMError as exc:
            failed.append(Record(path, Status.BAD_INPUT, message=exc.render()))
    return jobs, failed


def run_tests(
    files: Sequence[str], task: Task[T], plan: Plan, *, unroll: int | None, strict: bool
) -> Iterator[Record[T]]:
    """The records of `task` on every file, in the files' order (the one scheduling path of
    run, diff and promote)."""
    jobs, failed = make_jobs(files, task, unroll=unroll, strict=strict)
    bad = {r.path: r for r in failed}
    results = execute(jobs, plan)
    try:
        for path in files:
            yield bad[path] if path in bad else next(results)
    finally:
        # The pool stops in `execute`'s cleanup, which a signal can interrupt: closed here,
        # the Interrupted reaches the command; left to the garbage collector, Python would
        # print it as ignored and the run would end as if no signal had come.
        results.close()


def engine_names(
    choice: str | None, model: Model, *, default: str | None = None
) -> tuple[str, ...]:
    """The engines to run: one named engine, or for `all` every available engine.

    The operational machine implements pisa's decisions only (it claims a relation to the
    shipped models in `BOUNDED_BY`, docs/operational.md), so `all` leaves it out under a
    user's model and under pisa-rs11.
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
            and (
                n in EXACT_ENGINES
                or (is_shipped_model(model) and model.name in BOUNDED_BY.get(n, ()))
            )
        )
        if not names:
            raise PisaMMError.at(None, "no engine is available", "engine")
        return names
    get_engine(choice)  # a clear error now if it cannot be imported
    return (choice,)


def is_shipped_model(model: Model) -> bool:
    return _in_models_dir(model.path)


@functools.cache
def _in_models_dir(path: str) -> bool:
    """Whether the model file at `path` is a shipped one (asked for every test: the path
    resolution is done once per model and process)."""
    from pisa_mm.cat.loader import MODELS_PATH

    return os.path.dirname(os.path.realpath(path)) == os.path.realpath(MODELS_PATH)


def disagreements(results: Sequence[TestResult]) -> list[str]:
    """How the engines' results differ, each line naming both engines.

    Exact engines must agree with the first exact one; an engine that under-approximates
    (not in EXACT_ENGINES) must only not find states or flags the exact answer lacks.
    """
    from pisa_mm.outcomes.expectations import compare, from_result

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
            verdict_only=other.verdict_only,
        )
        out.extend(f"{ref.engine} vs {other.engine}: {d}" for d in diffs)
    return out


def print_warnings(console: Console, record: Record[Any]) -> None:
    for w in record.warnings:
        console.err(w)


# ---------------------------------------------------------------- run


def make_reporters(
    args: argparse.Namespace,
    console: Console,
    model: Model,
    engines: tuple[str, ...] = (),
    inputs: Sequence[str] = (),
) -> list[Reporter]:
    """The outputs of `run`: herd text, and JSON / JUnit / baseline when asked. Add new ones
    here. The baseline comes first: its count of changed tests is in the summary line.
    `inputs`: every file the run reads (tests, expectations, model files), which a
    recorded baseline must not replace."""
    reporters: list[Reporter] = []
    if args.update_baseline and args.baseline is None:
        raise PisaMMError.at(None, "--update-baseline needs --baseline FILE", "usage")
    if args.baseline is not None:
        from pisa_mm.runner.baseline import BaselineReport

        reporters.append(
            BaselineReport(
                args.baseline,
                console,
                model,
                engines=engines,
                unroll=args.unroll,
                update=args.update_baseline,
                inputs=list(inputs),
            )
        )
    reporters.append(
        HerdText(
            console,
            verbose=args.verbose,
            time=not args.no_time,
            blocks=args.json != "-",
            herd_log=args.herd_log,
        )
    )
    if args.json is not None:
        reporters.append(JsonReport(args.json, console, time=not args.no_time))
    if args.junit is not None:
        reporters.append(JUnitReport(args.junit, time=not args.no_time))
    if args.graphs is not None or args.html is not None:
        from pisa_mm.commands.pictures import PicturesReport

        reporters.append(PicturesReport.from_args(args, model))
    return reporters


def main(args: argparse.Namespace) -> int:
    from pisa_mm.outcomes.expectations import expected_path

    files = collect_tests(args.tests)
    model = cached_model(args.model, model_path_of(args))
    # the expectation files are inputs too
    inputs = [*files, *(expected_path(f, model.name) for f in files), *model_files(model)]
    baseline_out = args.baseline if args.update_baseline else None
    if args.baseline is not None and baseline_out is None:
        inputs.append(args.baseline)
    check_outputs(
        [None if args.json == "-" else args.json, args.junit, baseline_out],
        inputs,
        dirs=[(args.html, (".html",)), (args.graphs, (".dot", ".svg"))],
    )
    engines = engine_names(args.engine, model)
    if args.check and args.unroll is not None:
        raise PisaMMError.at(
            None, "--check compares with expectations recorded at each test's own unroll "
            "bound; drop --unroll", "usage"
        )  # fmt: skip
    if args.herd_log and (args.json == "-" or len(engines) > 1):
        raise PisaMMError.at(
            None, "--herd-log prints one block per test on stdout: use one engine, no --json -",
            "usage",
        )  # fmt: skip
    if args.verdict_only:
        check_verdict_only(args)
    console = Console(len(files), "running")
    reporters = make_reporters(args, console, model, engines, inputs)
    summary = Summary(engines=engines, model=model.name)
    progress = getattr(args, "progress", "pisa")
    for flag, given in (("--check", args.check), ("--baseline", getattr(args, "baseline", None))):
        if given and progress != "pisa":
            raise PisaMMError.at(
                None,
                f"{flag} compares with Liveness lines recorded under --progress pisa; "
                "drop --progress",
                "usage",
            )
    task = EngineTask(
        (args.model,),
        engines,
        model_path_of(args),
        progress,
        getattr(args, "verdict_only", False),
    )
    records = run_tests(files, task, plan_of(args), unroll=args.unroll, strict=args.strict)
    try:
        for i, record in enumerate(records):
            print_warnings(console, record)
            report = judge(record, model, args)
            summary.add(report.kind)
            for reporter in reporters:
                reporter.add(report)
            if console.live and i + 1 < len(files):  # the tally only for a progress line
                console.progress(i + 1, summary.tally(), files[i + 1])
    finally:
        console.close()
    for reporter in reporters:
        reporter.finish(summary)
    return exit_code(summary)


def check_verdict_only(args: argparse.Namespace) -> None:
    """The outputs that need the final states cannot come from a verdict-only run."""
    needs_states = [
        ("--baseline", args.baseline is not None),
        ("--herd-log", args.herd_log),
        ("--graphs", getattr(args, "graphs", None) is not None),
        ("--html", getattr(args, "html", None) is not None),
    ]
    for flag, given in needs_states:
        if given:
            raise PisaMMError.at(
                None, f"--verdict-only lists no final states, which {flag} needs: drop one",
                "usage",
            )  # fmt: skip


def exit_code(summary: Summary) -> int:
    codes = {
        Kind.OK: Exit.OK,
        Kind.UNCHECKED: Exit.OK,
        Kind.FAILED: Exit.NEGATIVE,
        Kind.UNKNOWN: Exit.UNKNOWN,
        Kind.BAD_INPUT: Exit.BAD_INPUT,
        Kind.INTERNAL: Exit.INTERNAL,
    }
    found = [codes[k] for k, n in summary.counts.items() if n]
    if summary.baseline_changed:
        found.append(Exit.NEGATIVE)
    return int(worst(found))


def judge(
    record: Record[tuple[tuple[TestResult, ...], ...]], model: Model, args: argparse.Namespace
) -> TestReport:
    """Compare a record's results with the test's expectation (file, else metadata)."""
    from pisa_mm.outcomes.expectations import compare, expected_path, from_result, read_expectation
    from pisa_mm.outcomes.model import Verdict

    name, path = record.label, record.path
    kind = unanswered(record)
    if kind is Kind.BAD_INPUT:
        return TestReport(path, name, model.name, Kind.BAD_INPUT, message=record.message)
    if kind is Kind.INTERNAL:
        return TestReport(
            path, name, model.name, Kind.INTERNAL, message=crash_message(record, args)
        )
    if kind is Kind.UNKNOWN or record.value is None:
        return TestReport(
            path, name, model.name, Kind.UNKNOWN, message=record.message, status=record.status
        )
    (results,) = record.value
    progress = getattr(args, "progress", "pisa")  # promote and diff judge without --progress
    problems = disagreements(results) if len(results) > 1 else []
    compared = False
    exp_file = expected_path(path, model.name)
    if args.unroll is None and os.path.exists(exp_file):
        try:
            expected = read_expectation(exp_file)
        except PisaMMError as exc:
            return TestReport(path, name, model.name, Kind.BAD_INPUT, message=exc.render())
        compared = True
        for r in results:
            diffs = compare(
                expected,
                from_result(r),
                ("expected", r.engine),
                below=r.engine not in EXACT_ENGINES,
                verdict_only=r.verdict_only,
                liveness=progress == "pisa",  # expectations record pisa's Liveness line
            )
            problems.extend(f"{exp_file}: {d}" for d in diffs)
    elif args.check:
        problems.append(f"{exp_file}: no expectation file (create it with promote)")
    elif args.unroll is None and is_shipped_model(model):
        found = metadata_problems(record.metadata, model.name, results)
        if found is not None:
            compared = True
            problems.extend(f"{path}: {p}" for p in found)
    if args.unroll is None and is_shipped_model(model):
        from pisa_mm.liveness.metadata import liveness_problems

        live = liveness_problems(record.metadata, progress, results)
        if live is not None:  # stated, and compared: a match is `ok`
            compared = True
            problems.extend(f"{path}: {p}" for p in live)
    if problems:
        kind = Kind.FAILED
    elif any(r.verdict is Verdict.UNKNOWN for r in results):
        kind = Kind.UNKNOWN  # a solver gave up: never success, even when it matched
    else:
        kind = Kind.OK if compared else Kind.UNCHECKED
    message = "the solver gave up" if kind is Kind.UNKNOWN else ""
    return TestReport(path, name, model.name, kind, results, tuple(problems), message)


def _flag_set(text: str) -> set[str]:
    if text.strip() == "none":
        return set()
    return {f.strip() for f in text.split(",") if f.strip()}


def metadata_problems(
    metadata: Sequence[tuple[str, str]], model: str, results: Sequence[TestResult]
) -> list[str] | None:
    """The test's `expect =` / `flags =` lines (`expect.MODEL` / `flags.MODEL` first; see
    litmus/README.md) against the engines' results; None when the test states neither.
    An engine that finds a subset of what the model allows (the operational machine, under
    the models of BOUNDED_BY) contradicts them only by a verdict it witnessed or a flag
    beyond them: a machine Ok for `exists` under `expect = No` is a failure, not "ok"."""
    from pisa_mm.outcomes.condition import witnessed
    from pisa_mm.outcomes.model import Verdict

    meta = dict(metadata)
    verdict = meta.get(f"expect.{model}", meta.get("expect"))
    flags = meta.get(f"flags.{model}", meta.get("flags"))
    if verdict is None and flags is None:
        return None
    out: list[str] = []
    for r in results:
        below = r.engine not in EXACT_ENGINES
        if below and model not in BOUNDED_BY.get(r.engine, ()):
            continue
        decided = not below or witnessed(r.quantifier, r.verdict is Verdict.OK)
        if verdict is not None and decided and verdict.strip() != r.verdict.value:
            out.append(f"verdict: metadata expects {verdict.strip()}, {r.engine} {r.verdict.value}")
        if flags is not None and not r.verdict_only:  # no flags are decided then
            got = {f.name for f in r.flags}
            want = _flag_set(flags)
            if got - want if below else got != want:
                out.append(
                    f"flags: metadata expects {', '.join(sorted(want)) or 'none'}, "
                    f"{r.engine} {', '.join(sorted(got)) or 'none'}"
                )
    return out


def crash_message(record: Record[Any], args: argparse.Namespace) -> str:
    """An internal error on one test: its name, and the traceback with --traceback."""
    head = f"{record.path}: internal error on this test (a bug in pisa-mm"
    if getattr(args, "traceback", False):
        return f"{head}):\n{record.message.rstrip()}"
    lines = record.message.strip().splitlines()
    if len(lines) <= 1:  # no traceback to show (a worker that died): nothing to rerun for
        return f"{head}): {lines[0] if lines else ''}"
    return f"{head}; rerun with --traceback): {lines[-1]}"
