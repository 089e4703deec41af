"""herd's `filter (PROP)`: executions whose final state fails it are discarded before the
condition is evaluated (not listed, counted or used), the same in every engine."""

from __future__ import annotations

from pathlib import Path

import pytest

from pisa_mm.cat.loader import load_model
from pisa_mm.engines import EngineOptions, get_engine
from pisa_mm.errors import PisaMMError
from pisa_mm.events.build import build
from pisa_mm.litmus import load_test
from pisa_mm.outcomes.model import Verdict

SB = """PISA SB+filter
{{
  .global .32b @x = 0;
  .global .32b @y = 0;
}}
P0 @ wg 0 {{
  st.global.relaxed.32b [@x], 1;
  ld.global.relaxed.32b %r0, [@y];
}}
P1 @ wg 1 {{
  st.global.relaxed.32b [@y], 1;
  ld.global.relaxed.32b %r0, [@x];
}}
{tail}
"""


def _run(tmp_path: Path, tail: str, engine: str) -> tuple[set[str], Verdict, int, int]:
    path = tmp_path / "t.litmus"
    path.write_text(SB.format(tail=tail), encoding="utf-8")
    test = load_test(str(path))
    r = get_engine(engine)(test, build(test), load_model("pisa"), EngineOptions())
    return {str(s) for s in r.states}, r.verdict, r.positive, r.negative


@pytest.mark.parametrize("engine", ["smt", "explicit", "operational"])
def test_filtered_executions_are_not_listed_counted_or_used(tmp_path: Path, engine: str) -> None:
    # without the filter the forall fails (some state has P0:%r0 == 0)
    states, verdict, _, negative = _run(tmp_path, "forall (P0:%r0 == 1)", engine)
    assert states == {"P0:%r0=0;", "P0:%r0=1;"} and verdict is Verdict.NO and negative > 0
    states, verdict, positive, negative = _run(
        tmp_path, "filter (P1:%r0 == 1)\nforall (P0:%r0 == 1)", engine
    )
    # the filter's observables are shown; the states with P1:%r0 == 0 are discarded, and
    # one of those left has P0:%r0 == 0
    assert states == {"P0:%r0=0; P1:%r0=1;", "P0:%r0=1; P1:%r0=1;"}
    assert verdict is Verdict.NO and positive > 0 and negative > 0
    states, verdict, _, negative = _run(
        tmp_path, "filter (P1:%r0 == 1 /\\ P0:%r0 == 1)\nforall (P0:%r0 == 1)", engine
    )
    assert states == {"P0:%r0=1; P1:%r0=1;"} and verdict is Verdict.OK and negative == 0


def test_filter_after_locations_and_before_them(tmp_path: Path) -> None:
    for tail in (
        "locations [@x;]\nfilter (P1:%r0 == 1)\nexists (P0:%r0 == 0)",
        "filter (P1:%r0 == 1)\nlocations [@x;]\nexists (P0:%r0 == 0)",
    ):
        states, verdict, _, _ = _run(tmp_path, tail, "explicit")
        assert all("P1:%r0=1;" in s and "@x=1;" in s for s in states)
        assert verdict is Verdict.OK


def test_filter_observables_are_checked_like_the_condition(tmp_path: Path) -> None:
    with pytest.raises(PisaMMError) as info:
        _run(tmp_path, "filter (P1:%r9 == 1)\nexists (P0:%r0 == 0)", "explicit")
    assert "P1 has no register %r9" in info.value.diagnostics[0].message
