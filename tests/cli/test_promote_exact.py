"""`pisa-mm promote` records only exact answers: no Unknown result, no inexact engine."""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import replace
from pathlib import Path
from typing import Any

import pytest
from cli_helpers import MP, write

from pisa_mm import cli
from pisa_mm.outcomes.model import TestResult, Verdict
from pisa_mm.runner import job as job_mod

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

    real = job_mod.run_engines

    def unknown(*args: Any, **kwargs: Any) -> Sequence[TestResult]:
        return [replace(r, verdict=Verdict.UNKNOWN) for r in real(*args, **kwargs)]

    monkeypatch.setattr(job_mod, "run_engines", unknown)
    # one test without --timeout runs in this process, so the patched engines are used
    assert cli.main(["promote", str(test), "--engine", "explicit"]) == 4
    captured = capsys.readouterr()
    assert f"NOT PROMOTED {test}: the result of explicit is Unknown" in captured.err
    assert "1 not promoted (unknown)" in captured.out
    assert not Path(f"{test}.expected").exists()
