"""What `run` reports about each test, and the reporters that write it.

The command feeds every reporter the same `TestReport`s in the tests' order (whatever the
number of workers), then the `Summary`. A new output format (an HTML report, a herd log) is
a new class with `add` and `finish`, added to the list in `commands/run.py`'s
`make_reporters`; the scheduling does not change.
"""

from __future__ import annotations

from collections.abc import Sequence

from pisa_mm.enums import Enum
from pisa_mm.hints import Any, Protocol
from pisa_mm.outcomes.model import TestResult
from pisa_mm.records import field, record
from pisa_mm.runner.console import Console
from pisa_mm.runner.files import write_atomic
from pisa_mm.runner.job import Record, Status

__all__ = [
    "HerdText",
    "JUnitReport",
    "JsonReport",
    "Kind",
    "Reporter",
    "Summary",
    "TestReport",
    "unanswered",
]


class Kind(Enum):
    """Where a test lands in the summary."""

    OK = "ok"  # compared with an expectation (file or metadata) and matched
    FAILED = "failed"  # an expectation mismatch or an engine disagreement
    UNCHECKED = "without expectation"  # ran, nothing to compare with
    UNKNOWN = "unknown"  # a budget ran out, or a solver gave up
    BAD_INPUT = "bad input"
    INTERNAL = "internal error"


def unanswered(record: Record[Any]) -> Kind | None:
    """Where a record without an answer lands (bad input, an internal error, a spent budget),
    or None when its task's value is there to judge: the first step of every command that
    runs tests (run, diff, promote, crossval)."""
    if record.status is Status.BAD_INPUT:
        return Kind.BAD_INPUT
    if record.status is Status.CRASH:
        return Kind.INTERNAL
    if record.status.unknown or not record.value:
        return Kind.UNKNOWN
    return None


@record
class TestReport:
    """One test of a run under one model."""

    path: str
    name: str
    model: str
    kind: Kind
    results: tuple[TestResult, ...] = ()
    problems: tuple[str, ...] = ()  # mismatches and disagreements, one line each
    message: str = ""  # the error, the budget that ran out, or the crash
    status: Status = Status.DONE

    @property
    def seconds(self) -> float:
        return sum(r.seconds for r in self.results)


@record(frozen=False)
class Summary:
    tests: int = 0
    counts: dict[Kind, int] = field(default_factory=lambda: {k: 0 for k in Kind})
    engines: tuple[str, ...] = ()
    model: str = ""
    baseline_changed: int = 0  # tests that differ from `--baseline` (runner/baseline.py)

    def add(self, kind: Kind) -> None:
        self.tests += 1
        self.counts[kind] += 1

    def tally(self) -> str:
        """`ok, failed` always; the other kinds when they occurred."""
        parts = [f"{self.counts[Kind.OK]} ok", f"{self.counts[Kind.FAILED]} failed"]
        parts += [
            f"{self.counts[k]} {k.value}"
            for k in Kind
            if k not in (Kind.OK, Kind.FAILED) and self.counts[k]
        ]
        if self.baseline_changed:
            parts.append(f"{self.baseline_changed} differ from the baseline")
        return ", ".join(parts)

    def line(self) -> str:
        return f"{self.tests} tests, {self.tally()} ({', '.join(self.engines)}, model {self.model})"


class Reporter(Protocol):
    def add(self, report: TestReport) -> None: ...

    def finish(self, summary: Summary) -> None: ...


def _unknown_block(report: TestReport) -> str:
    """In place of a result block: the test ended without an answer."""
    return f"Test {report.name}\nUnknown ({report.message})\n\n"


class HerdText:
    """herd-style result blocks on stdout, mismatches and errors on stderr, the summary.

    With `herd_log`, stdout holds nothing but herd7's log grammar (mcompare7, msort7):
    its blocks (report/herdlog.py), no block for a test without an answer, and the summary
    on stderr."""

    def __init__(
        self, console: Console, *, verbose: bool, time: bool, blocks: bool, herd_log: bool = False
    ) -> None:
        self.console = console
        self.verbose = verbose
        self.time = time
        self.blocks = blocks  # False when JSON goes to stdout instead
        self.herd_log = herd_log

    def add(self, report: TestReport) -> None:
        from pisa_mm.report.herd import render_flag_witnesses, render_result

        if report.kind in (Kind.BAD_INPUT, Kind.INTERNAL):
            self.console.err(report.message)
            return
        if self.blocks and self.herd_log:
            from pisa_mm.report.herdlog import render_herd_log

            for r in report.results:
                self.console.out(render_herd_log(r))
        elif self.blocks:
            if report.status.unknown:
                self.console.out(_unknown_block(report))
            for r in report.results:
                text = render_result(r, time=self.time)
                if self.verbose:
                    text += render_flag_witnesses(r)
                self.console.out(text + "\n")
        if report.kind is Kind.FAILED:
            self.console.err(f"FAIL {report.path}")
            for p in report.problems:
                self.console.err(f"  {p}")
        elif report.kind is Kind.UNKNOWN:
            self.console.err(
                f"UNKNOWN {report.path}" + (f": {report.message}" if report.message else "")
            )

    def finish(self, summary: Summary) -> None:
        line = summary.line()
        if self.blocks and not self.herd_log:
            self.console.out(line + "\n")
        else:
            self.console.err(line)


class JsonReport:
    """`--json FILE`: every result with its mismatches, one document (report/json.py)."""

    def __init__(self, target: str, console: Console, *, time: bool = True) -> None:
        self.target = target
        self.console = console
        self.time = time  # False (--no-time): no `seconds`
        self.records: list[tuple[str, TestResult, Sequence[str]]] = []

    def add(self, report: TestReport) -> None:
        self.records.extend((report.path, r, report.problems) for r in report.results)

    def finish(self, summary: Summary) -> None:
        from pisa_mm.report.json import results_to_json

        text = results_to_json(self.records, time=self.time)
        if self.target == "-":
            self.console.out(text)
        else:
            write_atomic(self.target, text)


class JUnitReport:
    """`--junit FILE`: one testcase per test and model."""

    def __init__(self, target: str, *, time: bool = True) -> None:
        self.target = target
        self.time = time  # False (--no-time): every `time` attribute is 0
        self.cases: list[object] = []

    def add(self, report: TestReport) -> None:
        from pisa_mm.report.herd import render_result
        from pisa_mm.report.junit import Case

        failure = error = None
        if report.kind is Kind.FAILED:
            failure = "\n".join(report.problems)
        elif report.kind is Kind.UNKNOWN:
            error = f"Unknown: {report.message or 'the solver gave up'}"
        elif report.kind in (Kind.BAD_INPUT, Kind.INTERNAL):
            error = report.message or report.kind.value
        output = "".join(render_result(r, time=False) for r in report.results)
        self.cases.append(
            Case(report.path, f"pisa-mm.{report.model}", report.seconds, failure, error, output)
        )

    def finish(self, summary: Summary) -> None:
        from pisa_mm.report.junit import Case, render_junit

        cases = [c for c in self.cases if isinstance(c, Case)]
        write_atomic(self.target, render_junit("pisa-mm run", cases, time=self.time))
