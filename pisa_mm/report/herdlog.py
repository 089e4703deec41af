"""Result blocks in herd7's log format, as herd's log tools (mcompare7, msort7) parse them.

The grammar is that of herdtools7's tools/lexLog_tools.mll (the `main`/`pstate`/`plines`/
`pwitnesses`/`pcond`/`phash` rules) and lib/stateParser.mly for the `Condition` line: docs/cli.md
(`run --herd-log`) lists the lines and how pisa-mm's names are spelt in herd's.
"""

from __future__ import annotations

import re
from collections.abc import Mapping

from pisa_mm.litmus.program import Observable
from pisa_mm.outcomes.condition import observation
from pisa_mm.outcomes.model import TestResult, Verdict
from pisa_mm.report.herd import KIND_OF_QUANTIFIER

__all__ = ["herd_condition", "herd_location", "herd_value", "render_herd_log"]

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


# An atom of a condition's text (prop_text): an observable, `=` or `!=`, an integer.
_ATOM = re.compile(
    rf"(?P<obs>(?:{_OBSERVABLE.pattern})(?:\[[0-9]+\])?)(?P<op>!?=)(?P<v>[0-9]+)\b(?!\.)"
)


def herd_condition(text: str, typed: Mapping[str, Observable] | None = None) -> str:
    """A condition in herd's syntax: herd's names, `=>` for implication, and the values of
    the observables in `typed` (by their text) as `herd_value` prints them."""
    if typed:

        def signed(m: re.Match[str]) -> str:
            value = herd_value(int(m.group("v")), typed.get(m.group("obs")))
            return f"{m.group('obs')}{m.group('op')}{value}"

        text = _ATOM.sub(signed, text)
    return herd_location(text).replace(" -> ", " => ")


def herd_value(value: int, obs: Observable | None) -> int:
    """A final value as herd prints it: herd types every location and register (a plain
    one is an `int`) and prints a signed type's value signed (herdtools7's typed printing),
    so PISA's untyped `.32b`/`.64b` bit patterns print as signed integers of their width:
    4294967295 in a 32-bit register is -1. A float-typed value keeps its bits."""
    width = obs.width if obs is not None and obs.fmt is None else None
    if width is None or not 0 <= value < 1 << width:
        return value
    return value - (1 << width) if value >> (width - 1) else value


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
    typed = {str(o): o for o in result.observables}
    for state in sorted(result.states):
        lines.append(
            " ".join(f"{herd_location(k)}={herd_value(v, typed.get(k))};" for k, v in state.values)
        )
    lines.append(("Loop " if result.cut else "") + _VALIDATION[result.verdict])
    lines.append("Witnesses")
    lines.append(f"Positive: {result.positive} Negative: {result.negative}")
    lines.extend(f"Flag {flag}" for flag in sorted({f.name for f in result.flags}))
    lines.append(f"Condition {herd_condition(result.condition_text, typed)}")
    obs = (
        "Unknown"
        if result.verdict is Verdict.UNKNOWN
        else observation(result.positive, result.negative)
    )
    lines.append(f"Observation {name} {obs} {result.positive} {result.negative}")
    lines.append(f"Time {name} {result.seconds:.2f}")
    return "\n".join(lines) + "\n\n"
