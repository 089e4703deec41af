"""`pisa-mm promote` records only exact answers: no Unknown result, no inexact engine."""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import replace
from pathlib import Path
from typing import Any

import pytest
from cli_helpers import MP, write

from pisa_mm import cli
from pisa_mm.commands import promote as promote_cmd
from pisa_mm.commands import run as run_cmd
from pisa_mm.outcomes.model import TestResult, Verdict

Capture = pytest.CaptureFixture[str]


def test_the_operational_engine_is_refused_and_nothing_is_written(
    tmp_path: Path, capsys: Capture
) -> None:
    test = write(tmp_path, "MP.litmus", MP)
    for engine in ("operational", "all"):
        assert cli.main(["promote", str(test), "--engine", engine]) == 2
        err = capsys.readouterr().err
        assert "promote records only exact answers" in err and "operational" in err
        assert "nothing was written" in err
    assert not Path(f"{test}.expected").exists()


def test_an_unknown_result_is_not_promoted(
    tmp_path: Path, capsys: Capture, monkeypatch: pytest.MonkeyPatch
) -> None:
    test = write(tmp_path, "MP.litmus", MP)

    def unknown(*args: Any, **kwargs: Any) -> Sequence[TestResult]:
        return [replace(r, verdict=Verdict.UNKNOWN) for r in run_cmd.run_engines(*args, **kwargs)]

    monkeypatch.setattr(promote_cmd, "run_engines", unknown)
    assert cli.main(["promote", str(test), "--engine", "explicit"]) == 1
    captured = capsys.readouterr()
    assert f"NOT PROMOTED {test}: the result of explicit is Unknown" in captured.err
    assert "1 not promoted (Unknown)" in captured.out
    assert not Path(f"{test}.expected").exists()
