"""`pisa-mm trace` and `pisa-mm crossval` end to end, on litmus files written here."""

from __future__ import annotations

from pathlib import Path

import pytest
from cli_helpers import LB, MP, write

from pisa_mm.cli import main
from pisa_mm.litmus import load_test
from pisa_mm.operational.explore import find_run
from pisa_mm.operational.step import Machine
from pisa_mm.outcomes.condition import eval_prop, observables

MP_OK = MP.replace("P1:%r1 == 0", "P1:%r1 == 1")


def test_find_run_reaches_an_allowed_outcome(tmp_path: Path) -> None:
    test = load_test(str(write(tmp_path, "MP_OK.litmus", MP_OK)))
    found = find_run(Machine(test, 2), observables(test),
                     lambda f: eval_prop(test.condition.prop, dict(f.values)))  # fmt: skip
    assert found is not None
    steps, final = found
    assert dict(final.values)
    assert any("read @y = 1" in d for s in steps for d in s.details)


def test_find_run_none_for_forbidden_outcome(tmp_path: Path) -> None:
    test = load_test(str(write(tmp_path, "MP.litmus", MP)))
    found = find_run(Machine(test, 2), observables(test),
                     lambda f: eval_prop(test.condition.prop, dict(f.values)))  # fmt: skip
    assert found is None


def test_trace_prints_a_schedule(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    path = str(write(tmp_path, "MP_OK.litmus", MP_OK))
    assert main(["trace", path, "--outcome", "P1:%r0 == 1 /\\ P1:%r1 == 1"]) == 0
    out = capsys.readouterr().out
    assert "  1. P" in out
    assert "write @y = 1" in out and "read @y = 1" in out
    assert "Final state:" in out


def test_trace_says_when_no_schedule_exists(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    path = str(write(tmp_path, "MP.litmus", MP))
    assert main(["trace", path, "--outcome", "P1:%r0 == 1 /\\ P1:%r1 == 0"]) == 1
    assert "No schedule" in capsys.readouterr().out


def test_crossval_classifies_load_buffering(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    write(tmp_path, "MP.litmus", MP)
    write(tmp_path, "LB.litmus", LB)
    assert main(["crossval", str(tmp_path)]) == 0
    out = capsys.readouterr().out
    assert "load-buffering" in out
    assert "equal" in out
    assert "0 unexplained or failing" in out


def test_crossval_reports_a_test_past_its_budget_as_unknown_not_as_an_error(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    write(tmp_path, "MP.litmus", MP)
    assert main(["crossval", str(tmp_path), "--timeout", "1e-6"]) == 4
    out = capsys.readouterr().out
    assert "│ unknown " in out and "Unknown (timeout" in out
    assert "1 tests: 1 unknown; 0 unexplained or failing" in out
    assert "error" not in out
