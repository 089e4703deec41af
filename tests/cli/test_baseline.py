"""`run --baseline FILE` / `--update-baseline`: a suite's results recorded once, compared after."""

from __future__ import annotations

import json
from pathlib import Path

import pytest
from cli_helpers import LB, MP, Capture, pisa_mm, write

from pisa_mm.cat.loader import MODELS_DIR
from pisa_mm.runner import job as job_mod


def suite(tmp_path: Path) -> Path:
    write(tmp_path / "suite", "MP.litmus", MP)
    write(tmp_path / "suite", "LB.litmus", LB)
    return tmp_path / "suite"


def record(tests: Path, base: Path, *extra: str) -> None:
    args = ("run", str(tests), "--baseline", str(base), "--update-baseline", "--engine", "explicit")
    assert pisa_mm(*args, *extra) == 0


def test_a_recorded_baseline_matches_the_same_run(tmp_path: Path, capsys: Capture) -> None:
    tests, base = suite(tmp_path), tmp_path / "base.json"
    record(tests, base)
    doc = json.loads(base.read_text())
    assert doc["format"] == "pisa-mm baseline" and doc["version"] == 1
    assert doc["model"]["name"] == "pisa" and doc["model"]["hash"].startswith("sha256:")
    assert (doc["engine"], doc["unroll"]) == ("explicit", None)
    assert sorted(doc["tests"]) == ["suite/LB.litmus", "suite/MP.litmus"]  # relative to base
    assert doc["tests"]["suite/LB.litmus"]["verdict"] == "Ok"
    capsys.readouterr()
    assert pisa_mm("run", str(tests), "--baseline", str(base), "--engine", "explicit") == 0
    err = capsys.readouterr().err
    assert err.splitlines()[0] == f"baseline {base}: 0 of 2 compared tests differ"


def edited_pisa(dir: Path, thin_air: str) -> Path:
    """A copy of the shipped pisa.cat with its thin-air decision replaced."""
    text = (MODELS_DIR / "pisa.cat").read_text()
    assert "let thin-air = rf | dep\n" in text
    path = dir / "pisa.cat"
    path.write_text(text.replace("let thin-air = rf | dep\n", f"let thin-air = {thin_air}\n"))
    return path


def test_a_deliberate_model_edit_is_caught(tmp_path: Path, capsys: Capture) -> None:
    tests, base = suite(tmp_path), tmp_path / "base.json"
    model = edited_pisa(tests, "rf | dep")  # the shipped text, next to the tests
    record(tests, base, "--model", str(model))
    capsys.readouterr()
    edited_pisa(tests, "po | rf")  # one decision changed: RC11's no-thin-air
    job_mod.cached_model.cache_clear()  # a new process in real use: the file is read again
    argv = ("run", str(tests), "--baseline", str(base), "--engine", "explicit")
    assert pisa_mm(*argv, "--model", str(model)) == 1
    captured = capsys.readouterr()
    lines = captured.err.splitlines()
    assert lines[0].startswith(
        f"baseline {base} recorded under model pisa with a different text (hash sha256:"
    )
    assert lines[0].endswith("; comparing anyway")
    assert "  suite/LB.litmus: verdict: baseline Ok, explicit No" in lines
    assert not any(line.startswith("  suite/MP.litmus") for line in lines)
    assert lines[-1] == f"baseline {base}: 1 of 2 compared tests differ"
    assert "1 differ from the baseline" in captured.out


def test_another_unroll_bound_is_compared_and_said(tmp_path: Path, capsys: Capture) -> None:
    tests, base = suite(tmp_path), tmp_path / "base.json"
    record(tests, base)
    capsys.readouterr()
    argv = ("run", str(tests), "--baseline", str(base), "--engine", "explicit", "--unroll", "3")
    assert pisa_mm(*argv) == 0  # loop-free tests: same answers
    first = capsys.readouterr().err.splitlines()[0]
    assert first == (
        f"baseline {base} recorded with each test's own unroll bound, this run uses unroll "
        "bound 3; comparing anyway"
    )


def test_a_new_test_differs_from_the_baseline(tmp_path: Path, capsys: Capture) -> None:
    tests, base = suite(tmp_path), tmp_path / "base.json"
    record(tests, base)
    write(tests, "MP2.litmus", MP.replace("PISA MP+rel+acq", "PISA MP2"))
    capsys.readouterr()
    assert pisa_mm("run", str(tests), "--baseline", str(base), "--engine", "explicit") == 1
    assert "  suite/MP2.litmus: not in the baseline" in capsys.readouterr().err.splitlines()


@pytest.mark.parametrize(
    ("text", "message"),
    [
        ("{not json", "corrupt baseline {base}: not JSON"),
        ('{"format": "other"}', "corrupt baseline {base}: not a pisa-mm baseline"),
        (
            '{"format": "pisa-mm baseline", "version": 99}',
            "baseline {base} has format version 99; this pisa-mm reads version 1",
        ),
        (
            '{"format": "pisa-mm baseline", "version": 1, "model": {"name": "pisa", "hash": "x"}'
            ', "engine": "smt", "unroll": null, "tests": {"a.litmus": {"name": "a"}}}',
            "corrupt baseline {base}: test 'a.litmus': missing 'quantifier'",
        ),
    ],
)
def test_a_bad_baseline_is_an_error_not_a_pass(
    tmp_path: Path, capsys: Capture, text: str, message: str
) -> None:
    tests, base = suite(tmp_path), tmp_path / "base.json"
    base.write_text(text)
    assert pisa_mm("run", str(tests), "--baseline", str(base), "--engine", "explicit") == 2
    captured = capsys.readouterr()
    assert message.format(base=base) in captured.err
    assert "Test " not in captured.out  # refused before any work


def test_a_missing_baseline_and_a_lone_update_are_errors(tmp_path: Path, capsys: Capture) -> None:
    tests = suite(tmp_path)
    assert pisa_mm("run", str(tests), "--baseline", str(tmp_path / "none.json")) == 2
    assert "record one with --update-baseline" in capsys.readouterr().err
    assert pisa_mm("run", str(tests), "--update-baseline") == 2
    assert "--update-baseline needs --baseline FILE" in capsys.readouterr().err


def test_an_unknown_test_is_never_a_pass(tmp_path: Path, capsys: Capture) -> None:
    tests, base = suite(tmp_path), tmp_path / "base.json"
    record(tests, base)
    capsys.readouterr()
    argv = ("run", str(tests / "LB.litmus"), "--baseline", str(base), "--engine", "explicit")
    assert pisa_mm(*argv, "--timeout", "0.001") == 4
    err = capsys.readouterr().err
    assert "  suite/LB.litmus: unknown, not compared" in err.splitlines()
