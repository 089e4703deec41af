"""`pisa-mm crossval`: compare the operational machine with the axiomatic engine, test by test."""

from __future__ import annotations

import argparse
import sys
from collections import Counter
from collections.abc import Callable

from rich.console import Console
from rich.markup import escape
from rich.table import Table

from pisa_mm.commands.run import (
    add_model_argument,
    add_selection_arguments,
    collect_tests,
    crash_message,
    print_warnings,
    run_tests,
)
from pisa_mm.engines import default_engine
from pisa_mm.operational.engine import ENGINE
from pisa_mm.operational.relation import Comparison, classify, machine_model
from pisa_mm.outcomes.model import TestResult
from pisa_mm.records import record
from pisa_mm.runner.console import Console as Streams
from pisa_mm.runner.console import StdoutClosed, silence_stdout
from pisa_mm.runner.job import Loaded, cached_model, run_engines
from pisa_mm.runner.options import add_pool_arguments, model_path_of, plan_of
from pisa_mm.runner.outcome import Exit, worst
from pisa_mm.runner.reporters import Kind, unanswered


def add_arguments(parser: argparse.ArgumentParser) -> None:
    add_selection_arguments(parser)
    add_model_argument(parser)
    add_pool_arguments(parser)


@record(frozen=False, slots=False)
class _Row:
    path: str
    name: str
    axiomatic: TestResult | None = None
    machine: TestResult | None = None
    comparison: Comparison | None = None
    error: str | None = None
    crashed: bool = False
    unknown: bool = False  # no answer within the budget: neither agreement nor a failure


def _states(r: TestResult | None) -> str:
    return "-" if r is None else str(len(r.states))


def _details(c: Comparison, axiomatic: TestResult | None, machine: TestResult | None) -> str:
    parts = []
    if axiomatic is not None and machine is not None:
        # the flags both raise (UB such as invalid-address): agreement, but worth seeing
        both = {f.name for f in axiomatic.flags} & {f.name for f in machine.flags}
        if both:
            parts.append("flags: " + ", ".join(sorted(both)))
    if c.extra:
        parts.append("extra: " + " | ".join(str(s) for s in c.extra))
    if c.extra_flags:
        parts.append("extra flags: " + ", ".join(c.extra_flags))
    if c.missing:
        parts.append("missing: " + " | ".join(str(s) for s in c.missing))
    if c.missing_flags:
        parts.append("missing flags: " + ", ".join(c.missing_flags))
    return "; ".join(parts)


def _po_rf(loaded: Loaded, axiom: str) -> Callable[[], TestResult]:
    """The axiomatic result under the machine's model (`pisa` with acyclic (po | rf | aso),
    operational/machine.cat: what a machine without promises can reach), on demand."""

    def compute() -> TestResult:
        got = run_engines(loaded, machine_model(), [axiom])
        if not got:
            assert loaded.error is not None
            raise loaded.error
        return got[0]

    return compute


@record
class CrossvalTask:
    """The axiomatic and the machine's results on one test, and how they relate."""

    model: str
    axiom: str
    model_path: tuple[str, ...] = ()

    def warm(self) -> None:
        cached_model(self.model, self.model_path)
        machine_model()

    def __call__(self, loaded: Loaded) -> tuple[TestResult, TestResult, Comparison] | None:
        results = run_engines(
            loaded, cached_model(self.model, self.model_path), [self.axiom, ENGINE]
        )
        if loaded.error is not None or loaded.test is None:
            return None
        ax, op = results
        return ax, op, classify(loaded.test, op, ax, _po_rf(loaded, self.axiom))


def main(args: argparse.Namespace) -> int:
    files = collect_tests(args.tests)
    model = cached_model(args.model, model_path_of(args))
    axiom = default_engine()
    rows: list[_Row] = []
    console = Streams(len(files), "cross-validating")
    task = CrossvalTask(args.model, axiom, model_path_of(args))
    records = run_tests(files, task, plan_of(args), unroll=args.unroll, strict=args.strict)
    try:
        for i, record in enumerate(records):
            console.progress(i + 1, "", record.path)
            print_warnings(console, record)
            kind = unanswered(record)
            if kind is None and record.value is not None:
                ax, op, comparison = record.value
                rows.append(_Row(record.path, record.label, ax, op, comparison))
            elif kind is Kind.INTERNAL:
                rows.append(
                    _Row(record.path, record.label, error=crash_message(record, args), crashed=True)
                )
            elif kind is Kind.UNKNOWN and record.status.unknown:
                message = f"Unknown ({record.message})"
                rows.append(_Row(record.path, record.label, error=message, unknown=True))
            else:
                rows.append(_Row(record.path, record.label, error=record.message))
    finally:
        console.close()
    _print(rows, model.name, axiom)
    codes = [Exit.OK]
    for r in rows:
        if r.crashed:
            codes.append(Exit.INTERNAL)
        elif r.unknown:
            codes.append(Exit.UNKNOWN)
        elif r.error is not None:
            codes.append(Exit.BAD_INPUT)
        elif r.comparison is not None and not r.comparison.ok:
            codes.append(Exit.NEGATIVE)
    return int(worst(codes))


class _TableConsole(Console):
    """rich's Console, but a closed stdout (`| head -1`) ends the command as it ends every
    other one (exit 141, quietly): rich's own answer is SystemExit(1), a negative answer."""

    def on_broken_pipe(self) -> None:
        self.quiet = True
        silence_stdout()
        raise StdoutClosed


def _print(rows: list[_Row], model: str, axiom: str) -> None:
    console = _TableConsole(
        highlight=False, soft_wrap=False, width=200 if not sys.stdout.isatty() else None
    )
    table = Table(title=f"operational vs {axiom} (model {model})")
    table.add_column("test")
    table.add_column(f"{axiom} states", justify="right")
    table.add_column("machine states", justify="right")
    table.add_column("relation")
    table.add_column("details")
    tally: Counter[str] = Counter()
    for r in rows:
        if r.error is not None:
            label = "unknown" if r.unknown else "error"
            tally[label] += 1
            first = escape(r.error.splitlines()[0])
            shown = f"[yellow]{label}[/yellow]" if r.unknown else f"[red]{label}[/red]"
            table.add_row(escape(r.name), "-", "-", shown, first)
            continue
        c = r.comparison
        assert c is not None
        tally[c.label] += 1
        label = escape(c.label) if c.ok else f"[red]{escape(c.label)}[/red]"
        details = escape(_details(c, r.axiomatic, r.machine))
        table.add_row(escape(r.name), _states(r.axiomatic), _states(r.machine), label, details)
    console.print(table)
    summary = ", ".join(f"{n} {label}" for label, n in sorted(tally.items()))
    bad = sum(
        1
        for r in rows
        if (r.error is not None and not r.unknown) or (r.comparison and not r.comparison.ok)
    )
    console.print(escape(f"{len(rows)} tests: {summary}; {bad} unexplained or failing"))
    for r in rows:
        if r.error is not None:
            print(r.error, file=sys.stderr)
