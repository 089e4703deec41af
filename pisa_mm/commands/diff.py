"""`pisa-mm diff`: regression-check a model change by running tests under two models."""

from __future__ import annotations

import argparse
import json
from collections.abc import Callable, Sequence
from typing import Any

from pisa_mm.cat.syntax import Model
from pisa_mm.commands.diffsearch import add_search_arguments, check_search_arguments, search
from pisa_mm.commands.pictures import DiffPictures, reload_test
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
from pisa_mm.events.model import EventStructure
from pisa_mm.litmus.program import LitmusTest
from pisa_mm.outcomes.expectations import compare, from_result
from pisa_mm.outcomes.model import TestResult, Verdict
from pisa_mm.report.diffexplain import (
    Explanation,
    explain_change,
    explanation_json,
    render_explanation,
    same_model,
)
from pisa_mm.runner.console import Console
from pisa_mm.runner.files import check_outputs, model_files, write_atomic
from pisa_mm.runner.job import EngineTask, cached_model
from pisa_mm.runner.options import (
    add_model_path_argument,
    add_pool_arguments,
    model_path_of,
    plan_of,
)
from pisa_mm.runner.outcome import Exit, worst
from pisa_mm.runner.reporters import Kind, unanswered


def add_arguments(parser: argparse.ArgumentParser) -> None:
    parser.add_argument("old", metavar="OLD", help="the model before: a .cat file or a name")
    parser.add_argument("new", metavar="NEW", help="the model after: a .cat file or a name")
    add_selection_arguments(parser, optional=True)
    add_model_path_argument(parser)
    add_engine_argument(parser)
    add_pool_arguments(parser)
    parser.add_argument(
        "--html",
        metavar="DIR",
        help="write a self-contained HTML report of the changed tests into DIR (index.html)",
    )
    parser.add_argument(
        "--json",
        metavar="FILE",
        help="also write the changes as JSON into FILE (per changed test: the separating "
        "state, the model allowing it, the witness, the forbidding axioms and cycle)",
    )
    parser.add_argument(
        "--fail-on-change",
        action="store_true",
        help="exit 1 when any test changed (for CI; default: exit 0 whatever changed)",
    )
    add_search_arguments(parser)


def main(args: argparse.Namespace) -> int:
    """Exit 0 whatever changed (the list is the answer), 1 with --fail-on-change when a test
    changed; 4 when a test is unknown on either side; 2 for bad input; 3 for an internal
    error. With --search: 0 when a test (of the suite, else found) separates the models, 1
    when none up to N does, 4 when none did but some candidate was unknown."""
    check_search_arguments(args)
    if not args.tests and args.search is None:
        raise PisaMMError.at(None, "give the tests to compare on, or --search N", "usage")
    if args.html and not args.tests:
        raise PisaMMError.at(None, "--html reports on the given tests: give some", "usage")
    files = collect_tests(args.tests)
    old = cached_model(args.old, model_path_of(args))
    new = cached_model(args.new, model_path_of(args))  # bad models fail before any test
    if args.engine == "operational":
        raise PisaMMError.at(
            None, "diff compares two cat models; the operational machine reads none "
            "(use an axiomatic engine: smt or explicit)", "usage"
        )  # fmt: skip
    # `all` means the engines that read the models
    engines = engine_names("exact" if args.engine == "all" else args.engine, old)
    names = (f"old ({args.old})", f"new ({args.new})")
    inputs = [*files, *model_files(old, new)]
    check_outputs([args.json, args.search_out], inputs, dirs=[(args.html, (".html",))])
    if same_model(old, new):
        print(
            f"{args.old} and {args.new} are the same model (the same text once loaded): "
            f"no test can change; nothing run"
        )
        if args.json:
            write_atomic(args.json, _json_text(_json_doc(args, len(files), [], {})))
        return int(Exit.OK if args.search is None else Exit.NEGATIVE)

    def compare_results(value: Sequence[tuple[TestResult, ...]]) -> list[str]:
        return _differences(value, engines, names)

    codes: list[Exit] = []
    changed = 0
    doc = _json_doc(args, 0, [], {})
    if files:
        changed, codes, doc = _run_suite(args, files, (old, new), engines, compare_results)
    if args.search is not None:
        console = Console(None, "searching")
        if changed:
            console.out(f"--search: {changed} of the tests separate the models; no search\n")
        else:
            code, doc["search"] = search(args, (old, new), engines, compare_results, console)
            codes.append(Exit(code))
    if args.json:
        write_atomic(args.json, _json_text(doc))
    return int(worst(codes))


def _differences(
    value: Sequence[tuple[TestResult, ...]], engines: tuple[str, ...], names: tuple[str, str]
) -> list[str]:
    """How a test's results differ between the models (each engine's, when several ran)."""
    old_results, new_results = value
    lines: list[str] = []
    for a, b in zip(old_results, new_results, strict=True):
        prefix = f"[{a.engine}] " if len(engines) > 1 else ""
        lines.extend(prefix + d for d in compare(from_result(a), from_result(b), names))
    return lines


def _run_suite(
    args: argparse.Namespace,
    files: list[str],
    models: tuple[Model, Model],
    engines: tuple[str, ...],
    compare_results: Callable[[Sequence[tuple[TestResult, ...]]], list[str]],
) -> tuple[int, list[Exit], dict[str, Any]]:
    """Run and compare the suite, print the changes and the summary; the number of changed
    tests, the exit codes met and the --json document."""
    old, new = models
    changed = errors = unknown = crashed = 0
    names = (f"old ({args.old})", f"new ({args.new})")
    drawing = DiffPictures(args.html, old, new, args.timeout) if args.html else None
    explained: list[tuple[Explanation, EventStructure | None]] = []
    console = Console(len(files), "comparing")
    task = EngineTask((args.old, args.new), engines, model_path_of(args))
    records = run_tests(files, task, plan_of(args), unroll=args.unroll, strict=args.strict)
    try:
        for i, record in enumerate(records):
            console.progress(i + 1, f"{changed} changed", record.path)
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
            lines = compare_results(record.value)
            if lines:
                changed += 1
                console.out(
                    f"CHANGED {old_results[0].name} ({record.path})\n"
                    + "".join(f"  {line}\n" for line in lines)
                )
                results = (old_results[0], new_results[0])
                x, test, es = _explain(record.path, (old, new), results, lines, args)
                explained.append((x, es))
                if es is not None:
                    console.out("".join(f"{line}\n" for line in render_explanation(es, x)))
                    if drawing is not None and test is not None:
                        drawing.test_done(test, es, x)
    finally:
        console.close()
    if drawing is not None:
        drawing.close(len(files))
    groups = _groups([x for x, _ in explained])
    if groups:
        console.out("Changed tests by responsible axiom (or flag):\n" + "".join(
            f"  {key}: {len(names)} ({', '.join(names)})\n" for key, names in groups.items()
        ))  # fmt: skip
    unchanged = len(files) - changed - errors - unknown - crashed
    console.out(
        f"{len(files)} tests, {changed} changed, {unchanged} unchanged"
        + (f", {unknown} unknown" if unknown else "")
        + (f", {errors} bad input" if errors else "")
        + (f", {crashed} internal errors" if crashed else "")
        + f" ({', '.join(engines)}: {args.old} -> {args.new})\n"
    )
    codes = [
        Exit.INTERNAL if crashed else Exit.OK,
        Exit.BAD_INPUT if errors else Exit.OK,
        Exit.UNKNOWN if unknown else Exit.OK,
        Exit.NEGATIVE if changed and args.fail_on_change else Exit.OK,
    ]
    return changed, codes, _json_doc(args, len(files), explained, groups)


# The version of `diff --json`'s format; a tool reading it checks this first.
JSON_FORMAT = 1


def _explain(
    path: str,
    models: tuple[Model, Model],
    results: tuple[TestResult, TestResult],
    differences: Sequence[str],
    args: argparse.Namespace,
) -> tuple[Explanation, LitmusTest | None, EventStructure | None]:
    """Explain one changed test in this process: the workers return results only, so the
    test and its event structure are built again here."""
    test, es = reload_test(path, args)
    if test is None or es is None:
        name = results[0].name
        note = "no explanation: the test could not be built again"
        return Explanation(name, path, tuple(differences), None, (), note), None, None
    x = explain_change(path, test, es, models, results, differences, args.timeout)
    return x, test, es


def _groups(explained: Sequence[Explanation]) -> dict[str, list[str]]:
    """Changed tests by responsible axiom (or flag), the keys sorted."""
    groups: dict[str, list[str]] = {}
    for x in explained:
        groups.setdefault(x.responsible, []).append(x.name)
    return {k: groups[k] for k in sorted(groups)}


def _json_doc(
    args: argparse.Namespace,
    total: int,
    explained: Sequence[tuple[Explanation, EventStructure | None]],
    groups: dict[str, list[str]],
) -> dict[str, Any]:
    doc: dict[str, Any] = {
        "format": JSON_FORMAT,
        "old": args.old,
        "new": args.new,
        "tests": total,
        "changed": [
            explanation_json(es, x) if es is not None else {"name": x.name, "path": x.path,
             "differences": list(x.differences), "note": x.note}
            for x, es in explained
        ],
        "by_responsible": groups,
    }  # fmt: skip
    return doc


def _json_text(doc: dict[str, Any]) -> str:
    return json.dumps(doc, indent=2) + "\n"
