"""`pisa-mm query` from the command line: answers, exit statuses, --dot, bad input."""

from __future__ import annotations

from pathlib import Path

import pytest
from smt_factory import MP_REL_ACQ, XY

from pisa_mm.cli import main


def _write(tmp_path: Path, body: str = MP_REL_ACQ) -> str:
    path = tmp_path / "MP.litmus"
    path.write_text(f"PISA MP\n{{\n{XY}\n}}\n{body}\nexists (true)\n")
    return str(path)


def test_a_forbidden_outcome_exits_1_and_explains(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    dot = tmp_path / "why.dot"
    code = main(["query", _write(tmp_path), "--outcome", "P1:%r0 == 1 /\\ P1:%r1 == 0",
                 "--dot", str(dot)])  # fmt: skip
    out = capsys.readouterr().out
    assert code == 1
    assert ": forbidden" in out and "{coherence}" in out and "violating cycle" in out
    text = dot.read_text()
    assert text.startswith("digraph") and "penwidth" in text  # the cycle is drawn bold


def test_an_allowed_outcome_exits_0_with_a_witness(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    dot = tmp_path / "witness.dot"
    code = main(["query", _write(tmp_path), "--outcome", "P1:%r0 == 1 && P1:%r1 == 1",
                 "--dot", str(dot), "--timeout", "60"])  # fmt: skip
    out = capsys.readouterr().out
    assert code == 0
    assert ": allowed" in out and "-rf->" in out
    assert 'label="rf"' in dot.read_text()


def test_a_bad_outcome_is_a_diagnostic(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    code = main(["query", _write(tmp_path), "--outcome", "P1:%r7 == 1"])
    assert code == 2
    assert "error:" in capsys.readouterr().err


def test_a_non_positive_timeout_is_rejected(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    code = main(["query", _write(tmp_path), "--outcome", "true", "--timeout", "0"])
    assert code == 2
    assert "--timeout" in capsys.readouterr().err
