"""herd7-compatible text for one test's result, and the one-line summary of a run."""

from __future__ import annotations

from pisa_mm.outcomes.condition import observation
from pisa_mm.outcomes.model import State, TestResult, Verdict

__all__ = [
    "CUT_NOTE",
    "CUT_UNITS",
    "KIND_OF_QUANTIFIER",
    "VERDICT_ONLY_NOTE",
    "cut_line",
    "render_flag_witnesses",
    "render_result",
]

# herd's word for each quantifier on the `Test` line.
KIND_OF_QUANTIFIER = {"exists": "Allowed", "~exists": "Forbidden", "forall": "Required"}

# Not herd: printed when some allowed execution was truncated by the unroll bound, so that
# a bounded answer is never mistaken for a complete one. Cut executions are no final
# states; complete executions stay complete at larger bounds, so a verdict that one of them
# witnesses (an Ok exists, a No ~exists or forall) holds at every larger bound.
CUT_NOTE = (
    "not final states: states and verdict come from complete executions only; "
    "a verdict witnessed by a complete execution holds at every larger bound"
)
# What the count of the Cut line counts: executions, or distinct states at the cut.
CUT_UNITS = {True: "executions", False: "distinct states of executions"}


def cut_line(cut: int, counts_executions: bool) -> str:
    """`Cut: 3 executions truncated by the unroll bound (...)`."""
    return f"Cut: {cut} {CUT_UNITS[counts_executions]} truncated by the unroll bound ({CUT_NOTE})"


def render_result(result: TestResult, *, time: bool = True) -> str:
    """The result block, one line per entry, ending with a newline.

    Without `time` it is exactly the content of an `.expected` file. An engine that counts
    distinct states instead of executions prints `Witnesses (states)` so that the counts are
    never compared with execution counts.
    """
    lines = [f"Test {result.name} {KIND_OF_QUANTIFIER[result.quantifier]}"]
    if result.verdict_only:
        return _verdict_block(lines, result, time=time)
    lines.append(f"States {len(result.states)}")
    # by their values, as State's order is (a key, not a comparison method call per pair)
    lines += [str(s) for s in sorted(result.states, key=_values)]
    lines.append(result.verdict.value)
    lines.append("Witnesses" if result.counts_executions else "Witnesses (states)")
    lines.append(f"Positive: {result.positive} Negative: {result.negative}")
    # A flag only cut executions raise is `Flag NAME (cut)`.
    if result.flags:
        lines += [f"Flag {label}" for label in sorted({f.label for f in result.flags})]
    if result.cut:
        lines.append(cut_line(result.cut, result.counts_executions))
    lines.append(f"Condition {result.condition_text}")
    # A solver that gave up saw only some executions: no Never/Sometimes/Always claim.
    obs = (
        "Unknown"
        if result.verdict is Verdict.UNKNOWN
        else observation(result.positive, result.negative)
    )
    lines.append(f"Observation {result.name} {obs} {result.positive} {result.negative}")
    if time:
        lines.append(f"Time {result.name} {result.seconds:.2f}")
    # Not herd: after herd's lines, for a test with spin loops (docs/progress.md).
    if result.liveness is not None:
        lines.append(result.liveness.line)
    return "\n".join(lines) + "\n"


def _values(state: State) -> tuple[tuple[str, int], ...]:
    return state.values


# Not herd (whose -speedcheck prints its usual block over the executions it saw before
# stopping): a verdict-only block lists no states, counts or flags, and says so.
VERDICT_ONLY_NOTE = "Verdict only: states, witnesses and flags not computed (--verdict-only)"


def _verdict_block(lines: list[str], result: TestResult, *, time: bool) -> str:
    lines += [VERDICT_ONLY_NOTE, result.verdict.value]
    if result.cut:
        lines.append(f"Cut: executions truncated by the unroll bound ({CUT_NOTE})")
    lines.append(f"Condition {result.condition_text}")
    if time:
        lines.append(f"Time {result.name} {result.seconds:.2f}")
    return "\n".join(lines) + "\n"


def render_flag_witnesses(result: TestResult) -> str:
    """One indented line per raised flag: its witness events, for `--verbose` output."""
    out = []
    for f in sorted(result.flags, key=lambda f: (f.name, f.events)):
        out.append(f"  {f.label}: {f.description}\n")
    return "".join(out)
