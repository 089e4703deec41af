"""`pisa-mm query TEST --liveness`: the answer per spin loop, its schedule, its exit code."""

from __future__ import annotations

import json
import shutil
from pathlib import Path

import pytest

from pisa_mm.cli import main
from pisa_mm.runner.outcome import Exit

DIR = "litmus/pisa/progress/"


def test_may_hang_shows_the_starving_schedule_and_the_stuck_execution(
    capsys: pytest.CaptureFixture[str],
) -> None:
    assert main(["query", DIR + "SpinMP+workgroups.litmus", "--liveness"]) == Exit.NEGATIVE
    out = capsys.readouterr().out
    assert "liveness under --progress pisa (unroll 2)" in out
    assert "Spin loop 1 of 1: P1 at line 29 (goto.cond %p0, spin)" in out
    assert "Liveness may hang: P1 spins at line 29" in out
    # P0 ran its store of @x, then was never scheduled again before its release of @y
    assert (
        "P0 (gpu 0, wg 0, sg 0): runs, then never again from line 21 "
        "(st.global.release.gpu.32b [@y], 1): it is in another work-group" in out
    )
    assert "P1 (gpu 0, wg 1, sg 0): runs, and spins for ever at line 29" in out
    assert "SpinMP+workgroups.litmus:27" in out  # the spinning load, with its source line
    assert "init -rf-> e7  (@y=0)" in out


def test_obe_never_starts_the_other_work_group(capsys: pytest.CaptureFixture[str]) -> None:
    code = main(["query", DIR + "SpinMP+workgroups.litmus", "--liveness", "--progress", "obe"])
    assert code == Exit.NEGATIVE
    out = capsys.readouterr().out
    assert "P0 (gpu 0, wg 0, sg 0): never runs: its work-group may not have started" in out
    assert "@x=1" not in out  # so its store of @x is not in the stuck execution


def test_an_atomic_is_never_split_by_the_schedule(capsys: pytest.CaptureFixture[str]) -> None:
    assert main(["query", DIR + "Barrier+atomics+workgroups.litmus", "--liveness"]) == 1
    out = capsys.readouterr().out
    assert "Spin loop 2 of 2" in out
    assert "P1 (gpu 0, wg 1, sg 0): never runs" in out
    assert "runs, then never again from line 26 (iatom.global.acq_rel.gpu.add.32b" in out


def test_terminates_and_undecided_exit_codes(capsys: pytest.CaptureFixture[str]) -> None:
    assert main(["query", DIR + "SpinMP+subgroups.litmus", "--liveness"]) == Exit.OK
    assert "Liveness terminates" in capsys.readouterr().out
    code = main(["query", DIR + "SpinMP+writer-loop.litmus", "--liveness", "--unroll", "1"])
    assert code == Exit.CUT
    assert "Liveness undecided within the bound" in capsys.readouterr().out


def test_no_spin_loop(capsys: pytest.CaptureFixture[str]) -> None:
    test = "litmus/pisa/barrier/SB+barrier+shared.litmus"
    assert main(["query", test, "--liveness"]) == Exit.NO_SPIN_LOOP
    assert "No spin loop" in capsys.readouterr().out


@pytest.mark.parametrize(
    ("args", "message"),
    [
        ([], "query needs --outcome PROP (or --liveness)"),
        (["--liveness", "--outcome", "P1:%r1 == 0"], "not both"),
        (["--liveness", "--dot", "x.dot"], "not with --liveness"),
        (["--outcome", "P1:%r1 == 0", "--progress", "obe"], "--progress is an option of"),
    ],
)
def test_usage_errors(args: list[str], message: str, capsys: pytest.CaptureFixture[str]) -> None:
    assert main(["query", DIR + "SpinMP+lanes.litmus", *args]) == Exit.BAD_INPUT
    assert message in capsys.readouterr().err


def test_unknown_progress_lists_the_valid_ones(capsys: pytest.CaptureFixture[str]) -> None:
    for command in (["run"], ["query", "--liveness"]):
        code = main([*command, DIR + "SpinMP+lanes.litmus", "--progress", "bogus"])
        assert code == Exit.BAD_INPUT
        assert "invalid choice: 'bogus' (choose from 'pisa', 'obe', 'fair', 'unfair'" in (
            capsys.readouterr().err
        )


def test_run_prints_no_liveness_line_without_spin_loops_or_with_none(
    capsys: pytest.CaptureFixture[str],
) -> None:
    main(["run", "--no-time", "litmus/pisa/barrier/SB+barrier+shared.litmus"])
    assert "Liveness" not in capsys.readouterr().out
    assert main(["run", "--no-time", "--progress", "none", DIR + "SpinMP+lanes.litmus"]) == 0
    assert "Liveness" not in capsys.readouterr().out


def test_baselines_record_the_liveness_line(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    test, base = tmp_path / "SpinMP+lanes.litmus", tmp_path / "base.json"
    shutil.copy(DIR + "SpinMP+lanes.litmus", test)
    assert main(["run", str(test), "--baseline", str(base), "--update-baseline"]) == 0
    (recorded,) = json.loads(base.read_text())["tests"].values()
    assert recorded["liveness"].startswith("Liveness may hang: P1 spins at line 28")
    assert main(["run", str(test), "--baseline", str(base)]) == 0
    assert "0 of 1 compared tests differ" in capsys.readouterr().err
    assert main(["run", str(test), "--baseline", str(base), "--progress", "fair"]) == 2
