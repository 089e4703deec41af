"""`pisa-mm crossval`: compare the operational machine with the axiomatic engine, test by test."""

from __future__ import annotations

import argparse
import sys
from collections import Counter
from collections.abc import Callable
from dataclasses import dataclass

from rich.console import Console
from rich.markup import escape
from rich.table import Table

from pisa_mm.cat.loader import load_model
from pisa_mm.commands.run import (
    Loaded,
    add_model_argument,
    add_selection_arguments,
    collect_tests,
    load,
    progress,
    render_error,
    run_engines,
)
from pisa_mm.engines import default_engine
from pisa_mm.operational.engine import ENGINE
from pisa_mm.operational.relation import Comparison, classify, machine_model
from pisa_mm.outcomes.model import TestResult

HELP = "cross-validate the operational machine against the axiomatic engine"


def add_arguments(parser: argparse.ArgumentParser) -> None:
    add_selection_arguments(parser)
    add_model_argument(parser)


@dataclass
class _Row:
    path: str
    name: str
    axiomatic: TestResult | None = None
    machine: TestResult | None = None
    comparison: Comparison | None = None
    error: str | None = None


def _states(r: TestResult | None) -> str:
    return "-" if r is None else str(len(r.states))


def _details(c: Comparison) -> str:
    parts = []
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


def main(args: argparse.Namespace) -> int:
    files = collect_tests(args.tests)
    model = load_model(args.model, search_path=args.model_path)
    axiom = default_engine()
    rows: list[_Row] = []
    with progress(len(files), "cross-validating") as advance:
        for path in files:
            loaded = load(path, unroll=args.unroll, strict=args.strict)
            results = run_engines(loaded, model, [axiom, ENGINE])
            advance()
            if loaded.error is not None or loaded.test is None:
                rows.append(_Row(path, path, error=render_error(loaded)))
                continue
            ax, op = results
            row = _Row(path, loaded.test.name, ax, op)

            row.comparison = classify(loaded.test, op, ax, _po_rf(loaded, axiom))
            rows.append(row)
    _print(rows, model.name, axiom)
    bad = [r for r in rows if r.error is not None or (r.comparison and not r.comparison.ok)]
    return 1 if bad else 0


def _print(rows: list[_Row], model: str, axiom: str) -> None:
    console = Console(
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
            tally["error"] += 1
            first = escape(r.error.splitlines()[0])
            table.add_row(escape(r.name), "-", "-", "[red]error[/red]", first)
            continue
        c = r.comparison
        assert c is not None
        tally[c.label] += 1
        label = escape(c.label) if c.ok else f"[red]{escape(c.label)}[/red]"
        details = escape(_details(c))
        table.add_row(escape(r.name), _states(r.axiomatic), _states(r.machine), label, details)
    console.print(table)
    summary = ", ".join(f"{n} {label}" for label, n in sorted(tally.items()))
    bad = sum(1 for r in rows if r.error is not None or (r.comparison and not r.comparison.ok))
    console.print(escape(f"{len(rows)} tests: {summary}; {bad} unexplained or failing"))
    for r in rows:
        if r.error is not None:
            print(r.error, file=sys.stderr)
