"""`pisa-mm gen` end to end: files written atomically, --list, --max, errors, exit codes."""

from __future__ import annotations

from pathlib import Path

import pytest

from pisa_mm.cli import main
from pisa_mm.litmus import load_test


def test_writes_one_file_per_test_under_its_shape(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    assert main(["gen", "MP", "SB", "--orders", "rlx,sync", "-o", str(tmp_path)]) == 0
    files = sorted(p.relative_to(tmp_path).as_posix() for p in tmp_path.rglob("*.litmus"))
    assert files == [
        "MP/MP+rlx-po-rlx+rlx-po-rlx.litmus",
        "MP/MP+weak-po-rel.gpu+acq.gpu-po-weak.litmus",
        "SB/SB+rlx-po-rlx+rlx-po-rlx.litmus",
        "SB/SB+weak-po-weak+weak-po-weak.litmus",
    ]
    assert not [p for p in tmp_path.rglob("*") if p.name.endswith(".tmp")]
    for p in tmp_path.rglob("*.litmus"):
        test = load_test(str(p), strict=True)
        assert test.name == p.stem
        assert ("generator", "pisa-mm gen") in test.metadata
    err = capsys.readouterr().err
    assert err.startswith("4 tests, 0 duplicates removed")
    assert "by shape: MP 2, SB 2" in err


def test_list_and_max(capsys: pytest.CaptureFixture[str]) -> None:
    assert main(["gen", "all", "--list", "--max", "3"]) == 0
    out, err = capsys.readouterr()
    assert out.splitlines() == [
        "MP+rlx-po-rlx+rlx-po-rlx",
        "SB+rlx-po-rlx+rlx-po-rlx",
        "LB+rlx-po-rlx+rlx-po-rlx",
    ]
    assert "3 tests (stopped at --max)" in err


def test_cycle_with_name_prints_to_stdout(capsys: pytest.CaptureFixture[str]) -> None:
    assert main(["gen", "--cycle", "PodWW rel Rfe acq PodRR Fre", "--name", "MP+mine"]) == 0
    out = capsys.readouterr().out
    assert out.startswith("PISA MP+mine\n")
    assert "st.global.release.gpu.32b [@y], 1;" in out


def test_bad_cycle_is_a_located_error(capsys: pytest.CaptureFixture[str]) -> None:
    assert main(["gen", "--cycle", "PodWW Rfe PodRR Fxe"]) == 2
    err = capsys.readouterr().err.splitlines()
    assert err[0].startswith("<cycle>:1:17: error: unknown edge 'Fxe'")
    assert err[1:] == ["PodWW Rfe PodRR Fxe", "                ^~~"]


@pytest.mark.parametrize(
    ("argv", "message"),
    [
        (["gen"], "give shape names (or `all`) or --cycle"),
        (["gen", "XY"], "unknown shape 'XY'"),
        (["gen", "MP", "--orders", "strong"], "unknown --orders value 'strong'"),
        (["gen", "MP", "--fences", "sg.global"], "unknown --fences value 'sg.global'"),
        (["gen", "MP", "--max", "0"], "--max must be at least 1"),
        (["gen", "MP", "SB", "--name", "X"], "--name needs exactly one generated test, not 2"),
    ],
)
def test_usage_errors(argv: list[str], message: str, capsys: pytest.CaptureFixture[str]) -> None:
    assert main(argv) == 2
    assert message in capsys.readouterr().err


def test_everything_skipped_exits_1(capsys: pytest.CaptureFixture[str]) -> None:
    assert main(["gen", "MP", "--spaces", "shared", "--placements", "diff-gpu"]) == 1
    err = capsys.readouterr().err
    assert "0 tests" in err and "skipped 1: a .shared variable is per work-group" in err
    assert "every combination was skipped" in err


def test_list_shapes(capsys: pytest.CaptureFixture[str]) -> None:
    assert main(["gen", "--list-shapes"]) == 0
    out = capsys.readouterr().out
    assert "Z6.3     PodWW Coe PodWW Rfe PodRR Fre" in out
