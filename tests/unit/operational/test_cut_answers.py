"""`query` and `trace` on outcomes that only executions cut by the unroll bound reach, and
`trace`'s reasons when the machine reaches no state with the outcome."""

from __future__ import annotations

from pathlib import Path

import pytest
from cli_helpers import LB, MP, write

from pisa_mm.cli import main

SPIN = """PISA SPIN
{
  .global .32b @y = 0;
}
P0 @ wg 0, sg 0 {
  st.global.release.workgroup.32b [@y], 1;
}
P1 @ wg 0, sg 1 {
  .pred %p0;
spin:
  ld.global.acquire.workgroup.32b %r0, [@y];
  ucmp.eq.32b %p0, %r0, 0;
  goto.cond %p0, spin;
}
exists (P1:%r0 == 1)
"""


def test_query_on_an_outcome_only_cut_executions_reach_exits_5(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    path = str(write(tmp_path, "SPIN.litmus", SPIN))
    # P1 still reading 0 has not left its loop: no final state has %r0 == 0
    assert main(["query", path, "--outcome", "P1:%r0 == 0"]) == 5
    out = capsys.readouterr().out
    assert "reached only by executions cut by the unroll bound" in out
    assert "No complete allowed execution ends in this state" in out
    assert main(["query", path, "--outcome", "P1:%r0 == 1"]) == 0
    assert main(["query", path, "--outcome", "P1:%r0 == 2"]) == 1


def test_trace_on_an_outcome_only_cut_runs_reach_exits_5(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    path = str(write(tmp_path, "SPIN.litmus", SPIN))
    assert main(["trace", path, "--outcome", "P1:%r0 == 0"]) == 5
    out = capsys.readouterr().out
    assert "Only runs cut by the unroll bound reach these values" in out
    assert "State at the cut: P1:%r0=0;" in out
    assert main(["trace", path, "--outcome", "P1:%r0 == 1"]) == 0
    assert "Final state: P1:%r0=1;" in capsys.readouterr().out


def test_trace_explains_load_buffering(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    path = str(write(tmp_path, "LB.litmus", LB))
    assert main(["trace", path, "--outcome", "P0:%r0 == 1 /\\ P1:%r0 == 1"]) == 1
    out = capsys.readouterr().out
    assert "No schedule" in out and "po | rf cycle" in out and "no promises" in out


def test_trace_says_when_pisa_forbids_the_outcome_too(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    path = str(write(tmp_path, "MP.litmus", MP))
    assert main(["trace", path, "--outcome", "P1:%r0 == 1 /\\ P1:%r1 == 0"]) == 1
    assert "pisa forbids it too" in capsys.readouterr().out
