"""The runner as a separate process sees it: signals, terminals, pipes, files, clusters."""

from __future__ import annotations

import importlib.util
import json
import os
import pty
import random
import re
import signal
import socket
import subprocess
import sys
import time
import xml.etree.ElementTree as ET
from pathlib import Path
from types import ModuleType
from typing import Any

import pytest
from cli_helpers import BAD, LB, MP, write

ROOT = Path(__file__).resolve().parents[2]
PISA_MM = [sys.executable, "-m", "pisa_mm.cli"]


def _families() -> ModuleType:
    spec = importlib.util.spec_from_file_location("bench_families", ROOT / "bench" / "families.py")
    assert spec is not None and spec.loader is not None
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module


def _suite(tmp_path: Path, n: int) -> Path:
    for i in range(n):
        text = (MP if i % 2 else LB).replace("PISA MP+rel+acq", f"PISA MP{i}")
        write(tmp_path / "suite", f"t{i:02}.litmus", text.replace("PISA LB", f"PISA LB{i}"))
    return tmp_path / "suite"


def _hard(tmp_path: Path) -> Path:
    """A test whose smt run takes far longer than the test waits (IRIW with 18 work-items).

    Listing its 2^18 states takes the smt engine over 15 s in under 100 MB; 14 work-items
    no longer sufficed once the engine listed 16,384 states in under 2 s.
    """
    return write(tmp_path, "hard.litmus", _families().iriw(18))


def _cli(*argv: str, timeout: float = 300) -> subprocess.CompletedProcess[str]:
    """`pisa-mm ARGV` as a process of its own: its exit code, stdout and stderr as text (the
    timeout only keeps a regression from hanging the suite)."""
    return subprocess.run([*PISA_MM, *argv], capture_output=True, text=True, timeout=timeout)


def _local_cluster() -> Any:
    """A Dask cluster of two worker processes on this machine, as a test starts one."""
    distributed = pytest.importorskip("distributed")
    return distributed.LocalCluster(
        processes=True, n_workers=2, threads_per_worker=1, dashboard_address=None
    )


@pytest.mark.parametrize(
    ("signum", "code", "jobs"),
    [(signal.SIGINT, 130, "1"), (signal.SIGTERM, 143, "1"), (signal.SIGINT, 130, "2")],
)
def test_a_signal_stops_the_run_promptly_even_inside_z3(
    tmp_path: Path, signum: int, code: int, jobs: str
) -> None:
    hard = _hard(tmp_path)
    # one test: in this process, inside a Z3 check; two tests, -j 2: in the workers
    tests = [str(hard)] if jobs == "1" else [str(hard), str(write(tmp_path, "MP.litmus", MP))]
    proc = subprocess.Popen(
        [*PISA_MM, "run", *tests, "--engine", "smt", "-j", jobs],
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
        text=True,
    )
    time.sleep(4)  # start-up, then well into the solver
    assert proc.poll() is None
    sent = time.monotonic()
    proc.send_signal(signum)
    _, err = proc.communicate(timeout=30)
    assert time.monotonic() - sent < 1.5
    assert proc.returncode == code
    assert "interrupted" in err
    assert "Unknown" not in err


# What the progress tally writes on a terminal: its line, then a carriage return and
# erase-line before anything else is written (runner/console.py).
_TALLY = re.compile(rb"[^\n\r]*\r\x1b\[K")


def _read_terminal(master: int) -> bytes:
    """Everything written to a pseudo-terminal until its last writer closes it."""
    seen = b""
    while True:
        try:
            chunk = os.read(master, 65536)
        except OSError:  # EIO: the child closed the terminal
            return seen
        if not chunk:
            return seen
        seen += chunk


def _on_terminal(argv: list[str], stdout: Path | None) -> tuple[int, bytes]:
    """Run with stderr (and stdin) a pseudo-terminal, and stdout the file `stdout`, or the
    terminal too when None: the exit code and what reached the terminal, its newlines as
    written (the terminal turns each into CR LF)."""
    master, slave = pty.openpty()
    out = stdout.open("wb") if stdout is not None else None
    try:
        proc = subprocess.Popen(
            argv, stdin=slave, stdout=slave if out is None else out, stderr=slave
        )
    finally:
        os.close(slave)
        if out is not None:
            out.close()
    seen = _read_terminal(master)
    os.close(master)
    return proc.wait(timeout=120), seen.replace(b"\r\n", b"\n")


# Each command on the suite, what it prints on stdout for each test it reports, and how
# many of the 6 good tests it reports (diff: the 3 LBs, which pisa-rc11 changes).
_PROGRESSING = {
    "run": (["run", "--no-time", "SUITE"], b"\nObservation ", 6),
    "diff": (["diff", "pisa", "pisa-rc11", "SUITE"], b"CHANGED ", 3),
    "promote": (["promote", "SUITE"], b"created ", 6),
}


@pytest.mark.parametrize("command", sorted(_PROGRESSING))
def test_the_progress_line_never_swallows_results(tmp_path: Path, command: str) -> None:
    """`pisa-mm run DIR > out.txt` with stderr on a terminal leaves in out.txt exactly what
    it writes to a file or pipe, in order; with stdout on the terminal too, nothing is lost
    or reordered either (once the tally's own lines are taken out). Without a terminal the
    output is plain: no escape sequence at all. A bad file puts a diagnostic on stderr
    among the results."""
    suite = _suite(tmp_path, 6)
    write(suite, "t02b.litmus", BAD.replace("PISA Bad", "PISA t02b"))
    words, per_test, reported = _PROGRESSING[command]
    argv = [*PISA_MM, *(str(suite) if w == "SUITE" else w for w in words)]
    argv += ["--engine", "explicit", "-j", "2"]

    def fresh() -> list[str]:
        for old in suite.glob("*.expected"):  # promote writes the same files each time
            old.unlink()
        return argv

    plain = subprocess.run(fresh(), capture_output=True)
    merged = subprocess.run(fresh(), stdout=subprocess.PIPE, stderr=subprocess.STDOUT)
    assert plain.returncode == merged.returncode == 2  # the bad file
    assert b"\x1b" not in plain.stdout + plain.stderr
    assert plain.stdout.count(per_test) == reported and b"t02b.litmus:" in plain.stderr

    out_file = tmp_path / "out.txt"
    code, terminal = _on_terminal(fresh(), out_file)
    assert code == 2
    assert b"\r\x1b[K" in terminal  # the tally was shown, and cleared
    assert out_file.read_bytes() == plain.stdout
    assert _TALLY.sub(b"", terminal) == plain.stderr

    code, terminal = _on_terminal(fresh(), None)
    assert code == 2
    assert b"\r\x1b[K" in terminal
    assert _TALLY.sub(b"", terminal) == merged.stdout


def test_a_closed_stdout_ends_the_run_quietly(tmp_path: Path) -> None:
    suite = _suite(tmp_path, 6)
    shell = f"{' '.join(PISA_MM)} run {suite} --engine explicit | head -1"
    done = subprocess.run(shell, shell=True, capture_output=True, text=True, timeout=120)
    assert done.stdout == "Test LB0 Allowed\n"
    assert done.stderr == ""


@pytest.mark.parametrize(
    "command", [["run"], ["diff", "pisa", "pisa-rc11"], ["promote"], ["crossval"]]
)
def test_a_stdout_closed_from_the_start_ends_the_command_quietly(
    tmp_path: Path, command: list[str]
) -> None:
    """The reader went away before the first line: every write fails, deterministically
    (`| head -1` races the command). crossval's table is rich's, which exited 1."""
    suite = _suite(tmp_path, 4)
    engine = [] if command == ["crossval"] else ["--engine", "explicit"]
    read_end, write_end = os.pipe()
    os.close(read_end)
    try:
        done = subprocess.run(
            [*PISA_MM, *command, str(suite), *engine],
            stdout=write_end,
            stderr=subprocess.PIPE,
            text=True,
            timeout=120,
        )
    finally:
        os.close(write_end)
    assert (done.returncode, done.stderr) == (141, "")


def test_a_test_with_only_liveness_metadata_is_compared(tmp_path: Path) -> None:
    """`liveness.pisa = ...` is an expectation too: a match is `ok`, never `without
    expectation`; a mismatch fails."""
    spin = (ROOT / "litmus/pisa/progress/MP+barrier+spin.litmus").read_text(encoding="utf-8")
    only = "".join(
        line for line in spin.splitlines(keepends=True) if not line.startswith(("expect", "flags"))
    )
    assert "liveness.pisa = terminates" in only
    write(tmp_path, "a/Live.litmus", only)
    argv = [*PISA_MM, "run", str(tmp_path / "a"), "--no-time"]
    done = subprocess.run(argv, capture_output=True, text=True)
    assert done.returncode == 0, done.stderr
    assert done.stdout.endswith("1 tests, 1 ok, 0 failed (auto, model pisa)\n")
    wrong = only.replace("liveness.pisa = terminates", "liveness.pisa = may hang")
    write(tmp_path, "a/Live.litmus", wrong)
    done = subprocess.run(argv, capture_output=True, text=True)
    assert done.returncode == 1
    assert "metadata expects may hang (--progress pisa), got terminates" in done.stderr
    assert done.stdout.endswith("1 tests, 0 ok, 1 failed (auto, model pisa)\n")


def _interrupted_promotes(tmp_path: Path, runs: int) -> None:
    suite = _suite(tmp_path, 8)
    tests = sorted(suite.glob("*.litmus"))
    stale = "Test stale\nStates 0\n"
    for t in tests:
        Path(f"{t}.expected").write_text(stale, encoding="utf-8")
    subprocess.run(
        [*PISA_MM, "promote", str(suite), "--engine", "explicit"], check=True, capture_output=True
    )
    final = {t: Path(f"{t}.expected").read_text(encoding="utf-8") for t in tests}
    rng = random.Random(14)
    for _ in range(runs):
        for t in tests:
            Path(f"{t}.expected").write_text(stale, encoding="utf-8")
        proc = subprocess.Popen(
            [*PISA_MM, "promote", str(suite), "--engine", "explicit", "-j", "2"],
            stdout=subprocess.DEVNULL,
            stderr=subprocess.DEVNULL,
        )
        time.sleep(rng.uniform(0.3, 2.0))
        proc.send_signal(rng.choice([signal.SIGINT, signal.SIGTERM]))
        proc.wait(timeout=30)
        for t in tests:
            assert Path(f"{t}.expected").read_text(encoding="utf-8") in (stale, final[t])
        assert not [p for p in suite.iterdir() if p.name.endswith(".tmp")]


def test_an_interrupted_promote_leaves_old_or_new_files(tmp_path: Path) -> None:
    _interrupted_promotes(tmp_path, 3)


@pytest.mark.slow
def test_thirty_interrupted_promotes_leave_old_or_new_files(tmp_path: Path) -> None:
    _interrupted_promotes(tmp_path, 30)


def _run_with_files(suite: Path, out: Path, *options: str) -> tuple[int, str, bytes, bytes]:
    """`run --no-time` with --json and --junit into `out`: exit code, stdout, the files."""
    out.mkdir()
    json_file, junit_file = out / "r.json", out / "r.xml"
    argv = ["run", str(suite), "--no-time", "--json", str(json_file), "--junit", str(junit_file)]
    done = _cli(*argv, *options)
    return done.returncode, done.stdout, json_file.read_bytes(), junit_file.read_bytes()


def test_json_and_junit_files_are_the_same_for_every_worker_count(tmp_path: Path) -> None:
    """With --no-time, no time is written into them either (they varied from run to run)."""
    suite = _suite(tmp_path, 6)
    write(suite, "bad.litmus", BAD)
    runs = [_run_with_files(suite, tmp_path / f"j{jobs}", "-j", jobs) for jobs in ("1", "2", "3")]
    assert runs[0][0] == 2  # the bad file
    assert runs[0] == runs[1] == runs[2]
    doc = json.loads(runs[0][2])
    assert [r["seconds"] for r in doc["results"]] == [None] * 6
    root = ET.fromstring(runs[0][3])
    assert len(root.findall("./testsuite/testcase")) == 7
    assert {el.get("time") for el in root.iter() if el.tag in ("testsuite", "testcase")} == {"0"}


def test_dask_gives_the_output_of_a_local_run(tmp_path: Path) -> None:
    suite = _suite(tmp_path, 5)
    local = _run_with_files(suite, tmp_path / "local", "-j", "1")
    with _local_cluster() as cluster:
        remote = _run_with_files(suite, tmp_path / "dask", "--dask", cluster.scheduler_address)
    assert remote[0] == local[0] == 0
    assert remote == local  # stdout, --json and --junit files


def test_dask_diff_and_promote_give_the_output_of_a_local_run(tmp_path: Path) -> None:
    suite = _suite(tmp_path, 5)
    tests = sorted(suite.glob("*.litmus"))
    diff = [*PISA_MM, "diff", "pisa", "pisa-rc11", str(suite)]
    promote = [*PISA_MM, "promote", str(suite), "--engine", "explicit"]
    local_diff = subprocess.run([*diff, "-j", "1"], capture_output=True, text=True)
    local_promote = subprocess.run([*promote, "-j", "1"], capture_output=True, text=True)
    local_files = {t: Path(f"{t}.expected").read_text(encoding="utf-8") for t in tests}
    for t in tests:
        Path(f"{t}.expected").unlink()
    with _local_cluster() as cluster:
        address = cluster.scheduler_address
        remote_diff = subprocess.run([*diff, "--dask", address], capture_output=True, text=True)
        remote_promote = subprocess.run(
            [*promote, "--dask", address], capture_output=True, text=True
        )
    assert remote_diff.returncode == local_diff.returncode == 0, remote_diff.stderr
    assert remote_diff.stdout == local_diff.stdout
    assert "5 tests, 3 changed, 2 unchanged" in remote_diff.stdout  # the LBs: no-thin-air
    assert remote_promote.returncode == local_promote.returncode == 0, remote_promote.stderr
    assert remote_promote.stdout == local_promote.stdout
    assert {t: Path(f"{t}.expected").read_text(encoding="utf-8") for t in tests} == local_files


@pytest.mark.slow
def test_the_bundled_suite_is_identical_across_jobs_and_dask() -> None:
    suite = str(ROOT / "litmus")
    runs = [
        subprocess.run([*PISA_MM, "run", suite, "--no-time", "-j", jobs], capture_output=True)
        for jobs in ("1", "2")
    ]
    with _local_cluster() as cluster:
        runs.append(
            subprocess.run(
                [*PISA_MM, "run", suite, "--no-time", "--dask", cluster.scheduler_address],
                capture_output=True,
            )
        )
    assert [r.returncode for r in runs] == [0, 0, 0], runs[-1].stderr
    assert runs[0].stdout == runs[1].stdout == runs[2].stdout
    assert runs[0].stderr == runs[1].stderr == runs[2].stderr
    assert b" 0 failed" in runs[0].stdout.splitlines()[-1]


def test_dask_workers_release_z3_terms_only_in_the_thread_that_solves(tmp_path: Path) -> None:
    """A worker's other threads run Python's cyclic collector too (its event loop does, as
    it allocates), and z3's context is not thread-safe: a term freed there could be released
    while the test's thread is inside a check. A probe on each worker records the thread
    of every Z3_dec_ref, while a neighbour thread collects garbage all the time."""
    suite = _suite(tmp_path, 12)

    def probe() -> bool:
        import collections
        import gc
        import threading

        # the probe watches z3 itself, in the worker: the one import of z3 outside smt/
        import z3.z3 as z3_module  # noqa: TID251

        seen: collections.Counter[str] = collections.Counter()
        release = z3_module.Z3_dec_ref

        def dec_ref(*args: object) -> object:
            seen[threading.current_thread().name] += 1
            return release(*args)

        def collect() -> None:
            while True:
                gc.collect()

        z3_module.Z3_dec_ref = dec_ref
        z3_module.released_by = seen  # type: ignore[attr-defined]
        threading.Thread(target=collect, name="collector", daemon=True).start()
        return True

    def released_by() -> dict[str, int]:
        import z3.z3 as z3_module  # noqa: TID251

        return dict(z3_module.released_by)  # type: ignore[attr-defined]

    with _local_cluster() as cluster:
        distributed = pytest.importorskip("distributed")
        with distributed.Client(cluster.scheduler_address) as client:
            client.run(probe)
            argv = ["run", str(suite), "--engine", "smt", "--no-time"]
            done = _cli(*argv, "--dask", cluster.scheduler_address)
            threads = [name for counts in client.run(released_by).values() for name in counts]
    assert done.returncode == 0, done.stderr
    assert threads and all("Dask-Default-Threads" in name for name in threads), threads


def test_a_dask_worker_with_several_threads_runs_one_test_at_a_time(tmp_path: Path) -> None:
    """Z3's context and the process's caches are shared by a worker's threads: a worker
    started without `--nthreads 1` must still run its tests one after the other. A probe
    on the worker wraps the test runner and records how many tests run at once (each
    lingers, so that threads running freely would overlap)."""
    suite = _suite(tmp_path, 6)

    def probe() -> bool:
        import threading
        import time

        from pisa_mm.runner import dask as backend

        run, lock = backend.run_job, threading.Lock()
        state = {"now": 0, "most": 0}

        def counted(*args: object) -> object:
            with lock:
                state["now"] += 1
                state["most"] = max(state["most"], state["now"])
            try:
                time.sleep(0.2)
                return run(*args)  # type: ignore[arg-type]
            finally:
                with lock:
                    state["now"] -= 1

        backend.run_job = counted  # type: ignore[assignment]
        backend.at_once = state  # type: ignore[attr-defined]
        return True

    def most_at_once() -> int:
        from pisa_mm.runner import dask as backend

        return int(backend.at_once["most"])  # type: ignore[attr-defined]

    distributed = pytest.importorskip("distributed")
    local = _cli("run", str(suite), "--engine", "smt", "--no-time", "-j", "1")
    with (
        distributed.LocalCluster(
            processes=True, n_workers=1, threads_per_worker=2, dashboard_address=None
        ) as cluster,
        distributed.Client(cluster.scheduler_address) as client,
    ):
        client.run(probe)
        argv = ["run", str(suite), "--engine", "smt", "--no-time"]
        done = _cli(*argv, "--dask", cluster.scheduler_address)
        most = list(client.run(most_at_once).values())
    assert done.returncode == local.returncode == 0, done.stderr
    assert done.stdout == local.stdout
    assert most == [1]


def test_worker_budget_sizes_a_default_memory_budget_for_the_worker() -> None:
    from pisa_mm.runner.budget import (
        DEFAULT_MEMORY_CAP,
        MIN_MEMORY,
        Budget,
        default_jobs,
        default_memory,
    )
    from pisa_mm.runner.dask import worker_budget

    given = Budget(timeout=5.0, max_memory=300 << 20)
    assert worker_budget(given, 1 << 30) is given  # the user's --max-memory stays
    default = Budget(timeout=5.0, max_memory=6 << 30, sized_here=True)
    assert worker_budget(default, 1 << 30).max_memory == 512 << 20
    assert worker_budget(default, 64 << 30).max_memory == DEFAULT_MEMORY_CAP
    assert worker_budget(default, 32 << 20).max_memory == MIN_MEMORY
    assert worker_budget(default, None).max_memory == default_memory(default_jobs())
    assert worker_budget(default, 1 << 30).timeout == 5.0


def test_a_dask_worker_sizes_the_default_memory_budget_for_itself(tmp_path: Path) -> None:
    """The client's machine may have more memory than a worker's, or less: a default memory
    budget is half the worker's Dask memory limit (here 1 GiB), one given with
    --max-memory is the user's. A probe on the worker records the budgets tests run under."""
    suite = _suite(tmp_path, 2)

    def probe() -> bool:
        from pisa_mm.runner import dask as backend

        run, seen = backend.run_job, []

        def recorded(job: object, budget: Any) -> object:
            seen.append(budget.max_memory)
            return run(job, budget)  # type: ignore[arg-type]

        backend.run_job = recorded  # type: ignore[assignment]
        backend.seen = seen  # type: ignore[attr-defined]
        return True

    def seen() -> list[int]:
        from pisa_mm.runner import dask as backend

        got = list(backend.seen)  # type: ignore[attr-defined]
        backend.seen.clear()  # type: ignore[attr-defined]
        return got

    distributed = pytest.importorskip("distributed")
    with (
        distributed.LocalCluster(
            processes=True,
            n_workers=1,
            threads_per_worker=1,
            memory_limit="1GiB",
            dashboard_address=None,
        ) as cluster,
        distributed.Client(cluster.scheduler_address) as client,
    ):
        client.run(probe)
        budgets = []
        for extra in ([], ["--max-memory", "200M"]):
            argv = ["run", str(suite), "--no-time", *extra, "--dask", cluster.scheduler_address]
            done = _cli(*argv, timeout=120)
            assert done.returncode == 0, done.stderr
            budgets.append(next(iter(client.run(seen).values())))
    assert budgets == [[512 << 20] * 2, [200 << 20] * 2]


def test_an_unreachable_dask_scheduler_fails_at_once(tmp_path: Path) -> None:
    suite = _suite(tmp_path, 2)
    # "At once": the refused connection is reported by the probe, before distributed's
    # client would retry until its connect timeout (which reports a timeout instead). The
    # subprocess timeout only keeps a regression from hanging the suite.
    done = _cli("run", str(suite), "--dask", "tcp://127.0.0.1:9", timeout=120)
    assert done.returncode == 2
    assert "cannot reach the Dask scheduler at tcp://127.0.0.1:9: Connection refused" in done.stderr


def test_a_server_that_is_not_a_dask_scheduler_fails_the_run(tmp_path: Path) -> None:
    """A listener that accepts and never answers (another service on that port): distributed
    alone would wait for its handshake for ever."""
    suite = _suite(tmp_path, 2)
    with socket.create_server(("127.0.0.1", 0)) as server:
        port = server.getsockname()[1]
        done = _cli("run", str(suite), "--dask", f"tcp://127.0.0.1:{port}", timeout=120)
    assert done.returncode == 2, done.stderr
    assert f"cannot reach the Dask scheduler at tcp://127.0.0.1:{port}: no answer" in done.stderr
    assert "internal error" not in done.stderr


def test_a_dask_cluster_without_workers_fails_the_run(tmp_path: Path) -> None:
    suite = _suite(tmp_path, 2)
    distributed = pytest.importorskip("distributed")
    with distributed.LocalCluster(processes=True, n_workers=0, dashboard_address=None) as cluster:
        address = cluster.scheduler_address
        done = _cli("run", str(suite), "--timeout", "1", "--dask", address, timeout=120)
    assert done.returncode == 2, done.stderr
    assert f"the Dask scheduler at {address} has no workers" in done.stderr
    assert "Unknown" not in done.stdout  # never a timeout for a test that never started


def test_a_dask_cluster_that_loses_its_workers_ends_a_run_without_timeout(
    tmp_path: Path,
) -> None:
    """With `--timeout none` no test is ever given up; the run still ends, saying why, when
    the cluster's only worker (started as `dask worker --no-nanny`, so nothing restarts it)
    is killed while it runs a long test."""
    distributed = pytest.importorskip("distributed")
    hard = _hard(tmp_path)
    with distributed.LocalCluster(processes=True, n_workers=0, dashboard_address=None) as cluster:
        address = cluster.scheduler_address
        dask = Path(sys.executable).parent / "dask"
        worker = subprocess.Popen(
            [str(dask), "worker", address, "--no-nanny", "--nthreads", "1"],
            stdout=subprocess.DEVNULL,
            stderr=subprocess.DEVNULL,
        )
        try:
            with distributed.Client(address) as client:
                client.wait_for_workers(1, timeout=60)
                run = subprocess.Popen(
                    [
                        *PISA_MM,
                        "run",
                        str(hard),
                        "--engine",
                        "smt",
                        "--timeout",
                        "none",
                        "--dask",
                        address,
                    ],
                    stdout=subprocess.PIPE,
                    stderr=subprocess.PIPE,
                    text=True,
                )
                while not any(client.processing().values()):
                    time.sleep(0.05)
            worker.kill()
            out, err = run.communicate(timeout=60)
        finally:
            worker.kill()
            worker.wait()
    assert run.returncode == 2, out + err
    assert f"the Dask scheduler at {address} lost all its workers" in err
    assert "Unknown" not in out


def test_dask_tests_waiting_for_a_busy_worker_are_not_timeouts(tmp_path: Path) -> None:
    """The cluster's only worker runs another client's task for longer than the tests'
    timeout and its grace: the tests wait their turn, then run; that task is not killed."""
    suite = _suite(tmp_path, 3)
    distributed = pytest.importorskip("distributed")
    with (
        distributed.LocalCluster(
            processes=True, n_workers=1, threads_per_worker=1, dashboard_address=None
        ) as cluster,
        distributed.Client(cluster.scheduler_address) as other,
    ):
        busy = other.submit(time.sleep, 8, pure=False)
        while not any(busy.key in keys for keys in other.processing().values()):
            time.sleep(0.05)
        argv = ["run", str(suite), "--no-time", "--timeout", "1"]
        done = _cli(*argv, "--dask", cluster.scheduler_address, timeout=120)
        busy.result(timeout=60)  # finished, not cancelled by a restart of its worker
    assert done.returncode == 0, done.stdout + done.stderr
    assert done.stdout.count("\nObservation ") == 3
    assert "3 tests, 0 ok, 0 failed, 3 without expectation" in done.stdout


def test_a_full_disk_on_stdout_is_an_io_error(tmp_path: Path) -> None:
    test = write(tmp_path, "MP.litmus", MP)
    with open("/dev/full", "w") as full:
        done = subprocess.run(
            [*PISA_MM, "run", str(test), "--engine", "explicit"],
            stdout=full,
            stderr=subprocess.PIPE,
            text=True,
        )
    assert done.returncode == 2
    assert "cannot write the output: No space left on device [io]" in done.stderr


def test_dask_enforces_the_timeout(tmp_path: Path) -> None:
    hard, easy = _hard(tmp_path), write(tmp_path, "MP.litmus", MP)
    with _local_cluster() as cluster:
        address = cluster.scheduler_address
        argv = ["run", str(hard), str(easy), "--engine", "smt", "--timeout", "2"]
        done = _cli(*argv, "--dask", address, timeout=120)
    assert done.returncode == 4, done.stderr
    assert f"Test {hard}\nUnknown (timeout: over 2 s)\n" in done.stdout
    assert "Observation MP+rel+acq Never 0 3" in done.stdout
