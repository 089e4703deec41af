"""`pisa-mm import` as a user calls it: files written, skips summarised, bad input located."""

from __future__ import annotations

from pathlib import Path

import pytest

from pisa_mm import cli
from pisa_mm.litmus import load_test

DATA = Path(__file__).resolve().parents[2] / "data" / "import"
Capture = pytest.CaptureFixture[str]


def test_import_the_bundled_directory(tmp_path: Path, capsys: Capture) -> None:
    out = tmp_path / "out"
    assert cli.main(["import", str(DATA), "-o", str(out)]) == 0
    text = capsys.readouterr().out
    assert text.rstrip().endswith(
        "20 files: 16 imported, 4 skipped (barrier: 1, narrow-relaxed: 1, pointer: 1, "
        "seq_cst-rmw: 1)"
    )
    assert "RMW+sc.litmus:6:12: skipped: seq_cst atomic_fetch_add" in text
    written = sorted(p.name for p in out.iterdir())
    assert len(written) == 16 and "MP+rlx.litmus" in written
    assert not [p for p in out.iterdir() if p.name.startswith(".")]  # no temporary left
    for p in out.iterdir():
        load_test(str(p))  # every written file parses and validates


def test_imported_tests_run(tmp_path: Path, capsys: Capture) -> None:
    out = tmp_path / "out"
    cli.main(["import", str(DATA / "c11" / "MP+rel+acq.litmus"), "-o", str(out)])
    capsys.readouterr()
    assert cli.main(["run", str(out / "MP+rel+acq.litmus"), "--engine", "explicit"]) == 0
    assert "\nNo\n" in capsys.readouterr().out


def test_duplicate_names_and_bad_input(tmp_path: Path, capsys: Capture) -> None:
    src = tmp_path / "src"
    src.mkdir()
    mp = (DATA / "c11" / "MP+rlx.litmus").read_text()
    (src / "a.litmus").write_text(mp)
    (src / "b.litmus").write_text(mp)
    (src / "c.litmus").write_text("X86 SB\n{ }\n")
    assert cli.main(["import", str(src), "-o", str(tmp_path / "out")]) == 2
    captured = capsys.readouterr()
    assert "b.litmus: skipped: test name MP+rlx already imported from" in captured.out
    assert "c.litmus:1:1: error: not a test in an importable dialect (header 'X86')" in captured.err
    assert captured.out.rstrip().endswith(
        "3 files: 1 imported, 1 skipped (duplicate-name: 1), 1 bad input"
    )


def test_output_must_be_a_directory(tmp_path: Path, capsys: Capture) -> None:
    f = tmp_path / "file"
    f.write_text("")
    assert cli.main(["import", str(DATA / "c11"), "-o", str(f)]) == 2
    assert "is not a directory" in capsys.readouterr().err
