"""`.expected` files: the herd-style result block of a test, parsed and compared."""

from __future__ import annotations

import re

from pisa_mm.errors import PisaMMError, Span, int_literal, read_source
from pisa_mm.outcomes.condition import witnessed
from pisa_mm.outcomes.model import TestResult, Verdict
from pisa_mm.records import record
from pisa_mm.report.herd import CUT_UNITS, render_result

__all__ = [
    "DEFAULT_MODEL",
    "Expectation",
    "compare",
    "expected_path",
    "from_result",
    "parse_expectation",
    "read_expectation",
    "render_expectation",
]

# `X.litmus.expected` records the answers of this model; `X.litmus.NAME.expected` those of
# model NAME, for the few tests that pin down what a variant changes.
DEFAULT_MODEL = "pisa"

_QUANTIFIER_OF_KIND = {"Allowed": "exists", "Forbidden": "~exists", "Required": "forall"}

_CUT = re.compile(
    r"Cut: ([0-9]+) (" + "|".join(map(re.escape, CUT_UNITS.values())) + r") truncated by the "
    r"unroll bound\b"
)


@record
class Expectation:
    """The facts of a result block that must not change silently (everything but Time)."""

    name: str
    quantifier: str
    states: frozenset[str]
    verdict: str
    positive: int
    negative: int
    counts_executions: bool
    flags: frozenset[str]  # `name`, or `name (cut)` when only cut executions raise it
    cut: int  # cut executions (or distinct cut states, without counts_executions)
    condition: str
    liveness: str | None = None  # the `Liveness ...` line of a test with spin loops


def expected_path(test_path: str, model: str = DEFAULT_MODEL) -> str:
    """`X.litmus` -> `X.litmus.expected` (model pisa) or `X.litmus.MODEL.expected`."""
    if model == DEFAULT_MODEL:
        return test_path + ".expected"
    return f"{test_path}.{model}.expected"


def from_result(result: TestResult) -> Expectation:
    return Expectation(
        name=result.name,
        quantifier=result.quantifier,
        states=frozenset(str(s) for s in result.states),
        verdict=result.verdict.value,
        positive=result.positive,
        negative=result.negative,
        counts_executions=result.counts_executions,
        flags=frozenset(f.label for f in result.flags),
        cut=result.cut,
        condition=result.condition_text,
        liveness=None if result.liveness is None else result.liveness.line,
    )


def render_expectation(result: TestResult) -> str:
    """The text of an `.expected` file: the result block without the Time line."""
    return render_result(result, time=False)


class _Lines:
    def __init__(self, path: str, text: str) -> None:
        self.path = path
        self.lines = text.splitlines()
        self.pos = 0

    def error(self, message: str) -> PisaMMError:
        line = min(self.pos + 1, max(len(self.lines), 1))
        return PisaMMError.at(Span(self.path, line, 1), message, "expected-file")

    def next(self, what: str) -> str:
        if self.pos >= len(self.lines):
            raise self.error(f"malformed expectation: missing {what}")
        line = self.lines[self.pos]
        self.pos += 1
        return line

    def peek(self) -> str | None:
        return self.lines[self.pos] if self.pos < len(self.lines) else None

    def count(self, index: int, what: str) -> int | None:
        """Word `index` of the line just read as a count, located at its column; None: none.

        str.isdigit admits Unicode digits (`²`, which int() refuses); a count past the
        literal limit is a located `limit` error rather than a malformed line.
        """
        words = list(re.finditer(r"\S+", self.lines[self.pos - 1]))
        token = words[index].group() if index < len(words) else ""
        if not (token.isascii() and token.isdigit()):
            return None
        col = words[index].start() + 1
        return int_literal(token, Span(self.path, self.pos, col, self.pos, col + len(token)), what)


def parse_expectation(text: str, path: str = "<expected>") -> Expectation:
    """Parse a result block as written by `render_expectation` (a Time line is ignored)."""
    src = _Lines(path, text)
    head = src.next("the `Test NAME KIND` line").split()
    if len(head) != 3 or head[0] != "Test" or head[2] not in _QUANTIFIER_OF_KIND:
        src.pos -= 1
        raise src.error("malformed expectation: expected `Test NAME Allowed|Forbidden|Required`")
    name, quantifier = head[1], _QUANTIFIER_OF_KIND[head[2]]
    states_line = src.next("the `States N` line").split()
    n_states = src.count(1, "state count") if len(states_line) == 2 else None
    if states_line[:1] != ["States"] or n_states is None:
        src.pos -= 1
        raise src.error("malformed expectation: expected `States N`")
    states = frozenset(src.next("a state line").strip() for _ in range(n_states))
    verdict = src.next("the verdict line").strip()
    if verdict not in ("Ok", "No", "Unknown"):
        src.pos -= 1
        raise src.error("malformed expectation: expected `Ok`, `No` or `Unknown`")
    witnesses = src.next("the `Witnesses` line").strip()
    if witnesses not in ("Witnesses", "Witnesses (states)"):
        src.pos -= 1
        raise src.error("malformed expectation: expected `Witnesses`")
    counts = src.next("the `Positive: P Negative: N` line").split()
    shaped = len(counts) == 4 and counts[0] == "Positive:" and counts[2] == "Negative:"
    positive = src.count(1, "positive count") if shaped else None
    negative = src.count(3, "negative count") if shaped else None
    if positive is None or negative is None:
        src.pos -= 1
        raise src.error("malformed expectation: expected `Positive: P Negative: N`")
    flags: set[str] = set()
    cut = 0
    condition: str | None = None
    liveness: str | None = None
    while (line := src.peek()) is not None:
        src.pos += 1
        if line.startswith("Flag "):
            flags.add(line[5:].strip())
        elif line.startswith("Cut:"):
            match = _CUT.match(line.strip())
            if match is None:
                src.pos -= 1
                raise src.error(
                    "malformed expectation: expected `Cut: N executions truncated by the "
                    "unroll bound (...)`"
                )
            cut = int_literal(
                match.group(1), Span(src.path, src.pos, len("Cut: ") + 1), "cut count"
            )
        elif line.startswith("Condition "):
            condition = line[len("Condition ") :].strip()
        elif line.startswith("Liveness "):
            liveness = line.strip()
        elif line.startswith(("Observation ", "Time ")) or not line.strip():
            continue
        else:
            src.pos -= 1
            raise src.error(f"malformed expectation: unexpected line {line.strip()!r}")
    if condition is None:
        raise src.error("malformed expectation: missing the `Condition` line")
    return Expectation(
        name=name,
        quantifier=quantifier,
        states=states,
        verdict=verdict,
        positive=positive,
        negative=negative,
        counts_executions=witnesses == "Witnesses",
        flags=frozenset(flags),
        cut=cut,
        condition=condition,
        liveness=liveness,
    )


def read_expectation(path: str) -> Expectation:
    return parse_expectation(read_source(path), path)


def _set_diff(
    what: str, left: frozenset[str], right: frozenset[str], names: tuple[str, str]
) -> list[str]:
    out = []
    if only_left := sorted(left - right):
        out.append(f"{what} only in {names[0]}: " + ", ".join(only_left))
    if only_right := sorted(right - left):
        out.append(f"{what} only in {names[1]}: " + ", ".join(only_right))
    return out


def _counts(e: Expectation) -> str:
    return f"Positive: {e.positive} Negative: {e.negative}"


def _compare_verdicts(
    left: Expectation, right: Expectation, names: tuple[str, str], *, below: bool
) -> list[str]:
    a, b = names
    out: list[str] = []
    if not below and left.name != right.name:
        out.append(f"test name: {a} {left.name}, {b} {right.name}")
    if not below and (left.condition != right.condition or left.quantifier != right.quantifier):
        out.append(f"condition: {a} {left.condition}, {b} {right.condition}")
    decided = not below or witnessed(right.quantifier, right.verdict == Verdict.OK.value)
    if decided and left.verdict != right.verdict:
        out.append(f"verdict: {a} {left.verdict}, {b} {right.verdict}")
    return out


def compare(
    left: Expectation,
    right: Expectation,
    names: tuple[str, str] = ("expected", "result"),
    *,
    below: bool = False,
    verdict_only: bool = False,
    liveness: bool = True,
) -> list[str]:
    """Human-readable differences between two results, empty when they agree.

    `names` say what each side is (`expected`/`result`, two engines, two models). Counts are
    compared only when both sides count executions; otherwise only whether each is zero.
    With `below`, `right` comes from an engine that may miss allowed states and flags (the
    operational machine): only states and flags it has beyond `left` are differences.
    With `verdict_only` (`right` comes from `run --verdict-only`), only the test, condition
    and verdict compare; with `below`, the verdict only when `right` witnessed it (an
    execution that decides it, which an under-approximating engine finds only if it exists).
    Without `liveness`, the Liveness lines do not compare (`right` was computed under
    another --progress than the one `left` records).
    """
    a, b = names
    if verdict_only:
        return _compare_verdicts(left, right, names, below=below)
    if below:
        return [
            d
            for d in compare(left, right, names)
            if d.startswith((f"states only in {b}:", f"flags only in {b}:"))
        ]
    out: list[str] = []
    if left.name != right.name:
        out.append(f"test name: {a} {left.name}, {b} {right.name}")
    if left.condition != right.condition or left.quantifier != right.quantifier:
        out.append(f"condition: {a} {left.condition}, {b} {right.condition}")
    if left.verdict != right.verdict:
        out.append(f"verdict: {a} {left.verdict}, {b} {right.verdict}")
    out.extend(_set_diff("states", left.states, right.states, names))
    out.extend(_set_diff("flags", left.flags, right.flags, names))
    both_count = left.counts_executions and right.counts_executions
    if both_count:
        if (left.positive, left.negative) != (right.positive, right.negative):
            out.append(f"counts: {a} {_counts(left)}, {b} {_counts(right)}")
    elif (left.positive > 0, left.negative > 0) != (right.positive > 0, right.negative > 0):
        out.append(f"observation: {a} {_counts(left)}, {b} {_counts(right)}")
    # Cut counts compare when both count executions; otherwise only whether any was cut.
    if left.cut != right.cut if both_count else (left.cut > 0) != (right.cut > 0):
        out.append(f"unroll cut: {a} {left.cut}, {b} {right.cut}")
    if liveness and left.liveness != right.liveness:
        out.append(f"liveness: {a} {left.liveness or 'none'}, {b} {right.liveness or 'none'}")
    return out
