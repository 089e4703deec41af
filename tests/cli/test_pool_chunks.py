"""Where tests run: in-process for one worker without a timeout, else in the pool, several
tests per pool task (runner/pool.py); the output is the same whichever way."""

from __future__ import annotations

import argparse
import os
import signal
from pathlib import Path

import pytest
from cli_helpers import LB, MP, write

from pisa_mm import cli
from pisa_mm.commands.run import crash_message
from pisa_mm.explicit.engine import run_test as explicit_run_test
from pisa_mm.runner import job as job_mod
from pisa_mm.runner import pool
from pisa_mm.runner.budget import Budget
from pisa_mm.runner.job import Record, Status
from pisa_mm.runner.outcome import Exit

Capture = pytest.CaptureFixture[str]


def _suite(tmp_path: Path, n: int) -> Path:
    for i in range(n):
        text = (MP if i % 2 else LB).replace("PISA MP+rel+acq", f"PISA MP{i}")
        write(tmp_path / "suite", f"t{i:02}.litmus", text.replace("PISA LB", f"PISA LB{i}"))
    return tmp_path / "suite"


def test_tasks_shrink_as_the_tests_run_out() -> None:
    assert pool.chunk_sizes(1, 2) == [1]
    assert pool.chunk_sizes(0, 2) == []
    for jobs, workers in ((40, 2), (1061, 2), (100_000, 2), (1530, 8), (7, 3)):
        sizes = pool.chunk_sizes(jobs, workers)
        assert sum(sizes) == jobs
        assert sizes == sorted(sizes, reverse=True)  # never a big task after small ones
        assert max(sizes) <= pool.MAX_CHUNK
        assert sizes[-workers:] == [1] * workers  # every worker ends on a single test
        # a few tasks per worker at least, and not a task per test on big suites
        assert len(sizes) >= min(jobs, 4 * workers)
        assert len(sizes) <= jobs // pool.MAX_CHUNK + 32 * workers
    assert pool.chunk_sizes(100_000, 2)[0] == pool.MAX_CHUNK


def test_one_worker_without_a_timeout_runs_in_this_process(
    tmp_path: Path, capsys: Capture, monkeypatch: pytest.MonkeyPatch
) -> None:
    def no_pool(*args: object) -> None:
        raise AssertionError("a pool was started")

    monkeypatch.setattr(pool, "_execute_in_pool", no_pool)
    suite = _suite(tmp_path, 3)
    assert cli.main(["run", str(suite), "--engine", "explicit", "-j", "1"]) == 0
    assert capsys.readouterr().out.count("\nObservation ") == 3


def test_a_worker_dying_in_a_chunk_loses_only_its_test(
    tmp_path: Path, capsys: Capture, monkeypatch: pytest.MonkeyPatch
) -> None:
    suite = _suite(tmp_path, 40)  # 40 tests on 2 workers: tasks of 5 tests down to 1
    assert cli.main(["run", str(suite), "--engine", "explicit", "--no-time", "-j", "1"]) == 0
    alone = capsys.readouterr().out

    def engine(test, es, model, options):  # type: ignore[no-untyped-def]
        if test.name == "LB4":
            os._exit(7)
        return explicit_run_test(test, es, model, options)

    real = job_mod.get_engine
    monkeypatch.setattr(job_mod, "get_engine", lambda n: engine if n == "explicit" else real(n))
    args = ["run", str(suite), "--engine", "explicit", "--no-time", "-j", "2"]
    assert cli.main(args) == Exit.INTERNAL
    captured = capsys.readouterr()
    assert f"{suite / 't04.litmus'}: internal error on this test" in captured.err
    assert "died (exit code 7)" in captured.err
    assert "--traceback" not in captured.err  # a dead worker leaves no traceback to show
    blocks = [b for b in alone.split("\n\n") if "Observation" in b]
    assert len(blocks) == 40
    for block in blocks:
        if "LB4" not in block:
            assert block in captured.out
    assert "1 internal error" in captured.out


def test_a_dead_worker_is_reported_by_how_it_ended() -> None:
    budget = Budget()
    assert pool._died("t.litmus", 7, budget).message.endswith("died (exit code 7)")
    assert pool._died("t.litmus", -signal.SIGSEGV, budget).message.endswith("died by SIGSEGV")
    killed = pool._died("t.litmus", -signal.SIGKILL, budget)
    assert killed.status is Status.CRASH
    assert "was killed by SIGKILL (by the system, perhaps for want of memory)" in killed.message
    assert pool._died("t.litmus", -200, budget).message.endswith("died by signal 200")


def test_only_a_crash_with_a_traceback_suggests_rerunning_with_it() -> None:
    args = argparse.Namespace(traceback=False)
    trace = "Traceback (most recent call last):\n  ...\nValueError: boom\n"
    shown = crash_message(Record("t.litmus", Status.CRASH, message=trace), args)
    assert shown.endswith("(a bug in pisa-mm; rerun with --traceback): ValueError: boom")
    died = Record("t.litmus", Status.CRASH, message="the worker process running it died by SIGSEGV")
    assert crash_message(died, args).endswith(
        "(a bug in pisa-mm): the worker process running it died by SIGSEGV"
    )
