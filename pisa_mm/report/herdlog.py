"""Result blocks in herd7's log format, as herd's log tools (mcompare7, msort7) parse them.

The grammar is that of herdtools7's tools/lexLog_tools.mll (the `main`/`pstate`/`plines`/
`pwitnesses`/`pcond`/`phash` rules) and lib/stateParser.mly for the `Condition` line: docs/cli.md
(`run --herd-log`) lists the lines and how pisa-mm's names are spelt in herd's.
"""

from __future__ import annotations

import re

from pisa_mm.outcomes.condition import observation
from pisa_mm.outcomes.model import TestResult, Verdict
from pisa_mm.report.herd import KIND_OF_QUANTIFIER

__all__ = ["herd_condition", "herd_location", "render_herd_log"]

# herd's validation words (lexLog_tools.mll `validation`): a solver that gave up is `??`.
_VALIDATION = {Verdict.OK: "Ok", Verdict.NO: "No", Verdict.UNKNOWN: "??"}

# pisa-mm's observable spellings (RegObs / MemObs __str__) inside states and conditions.
_OBSERVABLE = re.compile(
    r"P(?P<thread>[0-9]+):%(?P<reg>[A-Za-z_$.][A-Za-z0-9_$.]*)"
    r"|(?:wg(?P<wg>[0-9]+):)?@(?P<var>[A-Za-z_$.][A-Za-z0-9_$.]*)"
)


def _rename(m: re.Match[str]) -> str:
    if m.group("thread") is not None:
        return f"{m.group('thread')}:{m.group('reg')}"
    if m.group("wg") is not None:
        # herd has no per-work-group instances: `wg1.s` is a plain name its lexers accept
        return f"wg{m.group('wg')}.{m.group('var')}"
    return m.group("var")


def herd_location(text: str) -> str:
    """`P1:%r0` -> `1:r0`, `@x` -> `x`, `@a[2]` -> `a[2]`, `wg1:@s` -> `wg1.s`."""
    return _OBSERVABLE.sub(_rename, text)


def herd_condition(text: str) -> str:
    """A condition in herd's syntax: herd's names, and `=>` for implication."""
    return herd_location(text).replace(" -> ", " => ")


def render_herd_log(result: TestResult) -> str:
    """One result block followed by a blank line, as herd7 prints it.

    Unlike `render_result` there is no pisa-mm extra: the witnesses line is the plain
    `Witnesses` (for an engine that counts states, Positive/Negative count states), an
    execution cut by the unroll bound is herd's `Loop` prefix on the validation line, and
    an Unknown verdict is herd's `??`.
    """
    name = result.name
    lines = [f"Test {name} {KIND_OF_QUANTIFIER[result.quantifier]}"]
    lines.append(f"States {len(result.states)}")
    for state in sorted(result.states):
        lines.append(" ".join(f"{herd_location(k)}={v};" for k, v in state.values))
    lines.append(("Loop " if result.cut else "") + _VALIDATION[result.verdict])
    lines.append("Witnesses")
    lines.append(f"Positive: {result.positive} Negative: {result.negative}")
    lines.extend(f"Flag {flag}" for flag in sorted({f.name for f in result.flags}))
    lines.append(f"Condition {herd_condition(result.condition_text)}")
    obs = (
        "Unknown"
        if result.verdict is Verdict.UNKNOWN
        else observation(result.positive, result.negative)
    )
    lines.append(f"Observation {name} {obs} {result.positive} {result.negative}")
    lines.append(f"Time {name} {result.seconds:.2f}")
    return "\n".join(lines) + "\n\n"
