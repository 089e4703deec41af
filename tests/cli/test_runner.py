"""The runner as a user meets it: workers, budgets, crashes, exit codes, reports."""

from __future__ import annotations

import os
import time
import xml.etree.ElementTree as ET
from collections.abc import Iterator
from pathlib import Path

import pytest
from cli_helpers import BAD, LB, MP, Capture, pisa_mm, write

from pisa_mm.commands import run as run_cmd
from pisa_mm.explicit.engine import run_test as explicit_run_test
from pisa_mm.runner import job as job_mod
from pisa_mm.runner.outcome import Exit, worst


def _suite(tmp_path: Path, n: int = 6) -> Path:
    """n small tests (MP and LB shapes, with and without metadata) in one directory."""
    for i in range(n):
        text = (
            (MP if i % 2 else LB)
            .replace("PISA MP+rel+acq", f"PISA MP{i}")
            .replace("PISA LB", f"PISA LB{i}")
        )
        write(tmp_path / "suite", f"t{i:02}.litmus", text)
    return tmp_path / "suite"


def _engine_that(behaviour: str, victim: str, monkeypatch: pytest.MonkeyPatch) -> None:
    """Replace the explicit engine: on the test named `victim` it hangs in native code,
    crashes, kills its process or exhausts memory; on the others it is the real engine."""

    def engine(test, es, model, options):  # type: ignore[no-untyped-def]
        if test.name == victim:
            if behaviour == "hang":
                time.sleep(600)  # native code: no bytecode runs, the worker must be killed
            elif behaviour == "crash":
                raise RuntimeError("a bug")
            elif behaviour == "die":
                os._exit(7)
            elif behaviour == "memory":
                blocks = []
                for _ in range(1000):
                    blocks.append(bytearray(64 << 20))
        return explicit_run_test(test, es, model, options)

    real = job_mod.get_engine
    monkeypatch.setattr(job_mod, "get_engine", lambda n: engine if n == "explicit" else real(n))


def test_output_is_identical_for_every_worker_count(tmp_path: Path, capsys: Capture) -> None:
    suite = _suite(tmp_path)
    outs = []
    for jobs in ("1", "2", "3"):
        assert pisa_mm("run", str(suite), "--engine", "explicit", "--no-time", "-j", jobs) == 0
        outs.append(capsys.readouterr().out)
    assert outs[0] == outs[1] == outs[2]
    assert outs[0].count("\nObservation ") == 6
    assert "6 tests, 0 ok, 0 failed, 6 without expectation" in outs[0]


def test_a_test_hung_in_native_code_is_unknown_and_the_rest_go_on(
    tmp_path: Path, capsys: Capture, monkeypatch: pytest.MonkeyPatch
) -> None:
    suite = _suite(tmp_path, 4)
    _engine_that("hang", "MP1", monkeypatch)
    start = time.monotonic()
    # 3 s: a normal test here finishes well within it even on a loaded machine
    code = pisa_mm("run", str(suite), "--engine", "explicit", "--timeout", "3", "-j", "2")
    assert time.monotonic() - start < 30
    assert code == Exit.UNKNOWN
    captured = capsys.readouterr()
    assert f"Test {suite / 't01.litmus'}\nUnknown (timeout: over 3 s)\n" in captured.out
    assert captured.out.count("\nObservation ") == 3
    assert "4 tests, 0 ok, 0 failed, 3 without expectation, 1 unknown" in captured.out


@pytest.mark.parametrize("behaviour", ["crash", "die"])
def test_a_crash_is_an_internal_error_for_that_test_only(
    tmp_path: Path, capsys: Capture, monkeypatch: pytest.MonkeyPatch, behaviour: str
) -> None:
    suite = _suite(tmp_path, 4)
    _engine_that(behaviour, "LB2", monkeypatch)
    assert pisa_mm("run", str(suite), "--engine", "explicit", "-j", "2") == Exit.INTERNAL
    captured = capsys.readouterr()
    assert f"{suite / 't02.litmus'}: internal error on this test" in captured.err
    assert captured.out.count("\nObservation ") == 3
    assert "1 internal error" in captured.out


@pytest.mark.parametrize("jobs", ["in-process", "pool"])
def test_memory_exhaustion_is_unknown_memory(
    tmp_path: Path, capsys: Capture, monkeypatch: pytest.MonkeyPatch, jobs: str
) -> None:
    test = write(tmp_path, "a/MP.litmus", MP.replace("PISA MP+rel+acq", "PISA Hog"))
    if jobs == "pool":
        write(tmp_path, "a/LB.litmus", LB)
    _engine_that("memory", "Hog", monkeypatch)
    # in this process (one test, no timeout), the limit is lifted again afterwards
    code = pisa_mm("run", str(test.parent), "--engine", "explicit", "--max-memory", "256M")
    assert code == Exit.UNKNOWN
    assert "Unknown (memory: over 256 MiB)" in capsys.readouterr().out
    assert bytearray(512 << 20)  # the limit did not outlive the test


@pytest.mark.parametrize("value", ["0", "12", "1e99T", "lots", "-5G"])
def test_absurd_memory_limits_are_usage_errors(tmp_path: Path, value: str) -> None:
    test = write(tmp_path, "MP.litmus", MP)
    assert pisa_mm("run", str(test), "--max-memory", value) == 2


@pytest.mark.parametrize("value", ["0", "-2", "two"])
def test_jobs_must_be_positive(tmp_path: Path, value: str) -> None:
    test = write(tmp_path, "MP.litmus", MP)
    assert pisa_mm("run", str(test), "--jobs", value) == 2


def test_exit_code_precedence() -> None:
    assert worst([Exit.UNKNOWN, Exit.NEGATIVE]) is Exit.NEGATIVE
    assert worst([Exit.UNKNOWN, Exit.OK]) is Exit.UNKNOWN
    assert worst([Exit.BAD_INPUT, Exit.NEGATIVE, Exit.INTERNAL]) is Exit.INTERNAL
    assert worst([Exit.NEGATIVE, Exit.BAD_INPUT]) is Exit.BAD_INPUT
    assert worst([]) is Exit.OK


def test_unknown_is_never_success_even_when_it_matches(
    tmp_path: Path, capsys: Capture, monkeypatch: pytest.MonkeyPatch
) -> None:
    from dataclasses import replace

    from pisa_mm.outcomes.model import Verdict

    test = write(tmp_path, "MP.litmus", MP)
    real = job_mod.get_engine

    def gives_up(*args):  # type: ignore[no-untyped-def]
        return replace(explicit_run_test(*args), verdict=Verdict.UNKNOWN)

    monkeypatch.setattr(job_mod, "get_engine", lambda n: gives_up if n == "explicit" else real(n))
    assert pisa_mm("run", str(test), "--engine", "explicit") == Exit.UNKNOWN
    assert "1 tests, 0 ok, 0 failed, 1 unknown" in capsys.readouterr().out


def test_diff_reports_unknown_never_unchanged(tmp_path: Path, capsys: Capture) -> None:
    suite = _suite(tmp_path, 2)
    code = pisa_mm(
        "diff", "pisa", "pisa-rc11", str(suite), "--engine", "explicit", "--timeout", "1e-6"
    )
    assert code == Exit.UNKNOWN
    out = capsys.readouterr().out
    assert out.count("UNKNOWN ") == 2
    assert "2 tests, 0 changed, 0 unchanged, 2 unknown" in out


def test_metadata_expectations_are_checked_without_an_expectation_file(
    tmp_path: Path, capsys: Capture
) -> None:
    good = MP.replace("PISA MP+rel+acq\n", "PISA MP+rel+acq\nexpect = No\nflags = data-race\n")
    bad = LB.replace("PISA LB\n", "PISA LB\nexpect = No\nflags = none\n")
    write(tmp_path, "a/MP.litmus", good)
    lb = write(tmp_path, "a/LB.litmus", bad)
    assert pisa_mm("run", str(tmp_path / "a"), "--engine", "explicit") == Exit.NEGATIVE
    captured = capsys.readouterr()
    assert f"{lb}: verdict: metadata expects No, explicit Ok" in captured.err
    assert "2 tests, 1 ok, 1 failed (explicit, model pisa)" in captured.out


def test_junit_xml(tmp_path: Path, capsys: Capture) -> None:
    write(
        tmp_path, "a/MP.litmus", MP.replace("PISA MP+rel+acq\n", "PISA MP+rel+acq\nexpect = Ok\n")
    )
    write(tmp_path, "a/LB.litmus", LB)
    write(tmp_path, "a/Bad.litmus", BAD)
    report = tmp_path / "junit.xml"
    code = pisa_mm("run", str(tmp_path / "a"), "--engine", "explicit", "--junit", str(report))
    assert code == Exit.BAD_INPUT
    root = ET.parse(report).getroot()
    suite = root.find("testsuite")
    assert suite is not None
    cases = {c.get("name"): c for c in suite.findall("testcase")}
    assert set(cases) == {str(tmp_path / "a" / n) for n in ("Bad.litmus", "LB.litmus", "MP.litmus")}
    mp = cases[str(tmp_path / "a" / "MP.litmus")]
    failure = mp.find("failure")
    assert failure is not None and "metadata expects Ok, explicit No" in failure.get("message", "")
    bad = cases[str(tmp_path / "a" / "Bad.litmus")].find("error")
    assert bad is not None and "unknown instruction" in (bad.text or "")
    lb = cases[str(tmp_path / "a" / "LB.litmus")]
    assert lb.find("failure") is None and lb.find("error") is None
    assert (suite.get("tests"), suite.get("failures"), suite.get("errors")) == ("3", "1", "1")
    assert cases[str(tmp_path / "a" / "LB.litmus")].get("classname") == "pisa-mm.pisa"


def test_a_run_never_writes_over_its_inputs(tmp_path: Path, capsys: Capture) -> None:
    test = write(tmp_path, "MP.litmus", MP)
    assert pisa_mm("run", str(test), "--json", str(test)) == Exit.BAD_INPUT
    assert "refusing to write over an input of this run" in capsys.readouterr().err
    assert test.read_text(encoding="utf-8") == MP


def test_output_paths_are_checked_before_the_work(
    tmp_path: Path, capsys: Capture, monkeypatch: pytest.MonkeyPatch
) -> None:
    test = write(tmp_path, "MP.litmus", MP)
    monkeypatch.setattr(run_cmd, "run_tests", lambda *a, **k: pytest.fail("ran"))
    assert pisa_mm("run", str(test), "--junit", str(tmp_path / "no" / "dir.xml")) == 2
    assert "no directory" in capsys.readouterr().err


def test_a_fifo_is_refused(tmp_path: Path, capsys: Capture) -> None:
    fifo = tmp_path / "f.litmus"
    os.mkfifo(fifo)
    assert pisa_mm("run", str(fifo)) == Exit.BAD_INPUT
    assert "it is a FIFO" in capsys.readouterr().err


def test_promote_never_records_an_unknown(tmp_path: Path, capsys: Capture) -> None:
    test = write(tmp_path, "MP.litmus", MP)
    assert pisa_mm("promote", str(test), "--engine", "explicit", "--timeout", "1e-6") == 4
    assert not Path(f"{test}.expected").exists()
    assert "NOT PROMOTED" in capsys.readouterr().err


@pytest.mark.parametrize("command", ["query", "trace"])
def test_query_and_trace_answer_unknown_when_the_budget_runs_out(
    tmp_path: Path, capsys: Capture, command: str
) -> None:
    test = write(tmp_path, "MP.litmus", MP)
    code = pisa_mm(command, str(test), "--outcome", "P1:%r0 == 1", "--timeout", "1e-6")
    assert code == Exit.UNKNOWN
    assert "Unknown (timeout: over 1e-06 s)" in capsys.readouterr().out


@pytest.mark.parametrize("timeout", [None, 60.0])
def test_a_stream_of_jobs_is_scheduled_only_a_few_ahead(timeout: float | None) -> None:
    """`execute_stream` (diff --search) takes jobs as they are made and stops when closed:
    an endless stream yields its first records in order."""
    from pisa_mm.runner.budget import Budget
    from pisa_mm.runner.job import EngineTask, Job
    from pisa_mm.runner.pool import Plan, execute_stream

    made: list[int] = []
    task = EngineTask(("pisa",), ("explicit",))

    def endless() -> Iterator[Job[tuple[tuple[object, ...], ...]]]:
        i = 0
        while True:
            made.append(i)
            yield Job(f"t{i}.litmus", MP.replace("PISA MP+rel+acq", f"PISA T{i}"), task)
            i += 1

    records = execute_stream(endless(), Plan(jobs=2, budget=Budget(timeout=timeout)), ahead=3)
    names = [next(records).name for _ in range(5)]
    records.close()
    assert names == [f"T{i}" for i in range(5)]
    assert len(made) <= 5 + 3 + 1  # never the whole stream
