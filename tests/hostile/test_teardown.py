"""pisa_mm/entry.py's `_finish`: the console script exits with `os._exit` after the part of
Python's finalisation that matters (so a signal in its last milliseconds still meets its
handler), and loses nothing on the way: atexit hooks run, buffered output is written, a
signal then still says `interrupted`, and a thread that is not a daemon is waited for."""

from __future__ import annotations

import subprocess
import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parents[2]

PRELUDE = """
import atexit, os, signal, sys, threading, time
from pisa_mm import entry
for signum in (signal.SIGINT, signal.SIGTERM):
    signal.signal(signum, entry._stop)
"""


def _run(body: str, tmp_path: Path) -> tuple[int, str, str]:
    out, err = tmp_path / "out", tmp_path / "err"
    with out.open("wb") as stdout, err.open("wb") as stderr:
        code = subprocess.run(
            [sys.executable, "-c", PRELUDE + body],
            stdout=stdout,
            stderr=stderr,
            cwd=ROOT,
            timeout=60,
        ).returncode
    return code, out.read_text(), err.read_text()


def test_hooks_run_and_buffered_output_is_written_before_the_exit(tmp_path: Path) -> None:
    code, out, err = _run(
        "atexit.register(lambda: print('hook ran'))\n"
        "sys.stdout.write('x' * 200_000)\n"  # more than one buffer, part of it still held
        "sys.stderr.write('to stderr')\n"
        "entry._finish(3)\n"
        "print('not reached')\n",
        tmp_path,
    )
    assert code == 3
    assert out == "x" * 200_000 + "hook ran\n"
    assert err == "to stderr"


def test_the_original_streams_are_flushed_when_stdout_is_redirected(tmp_path: Path) -> None:
    code, out, _ = _run(
        "import contextlib, io\n"
        "sys.__stdout__.write('to the real stdout')\n"
        "with contextlib.redirect_stdout(io.StringIO()):\n"
        "    entry._finish(0)\n",
        tmp_path,
    )
    assert (code, out) == (0, "to the real stdout")


def test_a_signal_during_the_exit_hooks_is_reported_as_an_interrupt(tmp_path: Path) -> None:
    code, out, err = _run(
        "def late():\n"
        "    os.kill(os.getpid(), signal.SIGTERM)\n"
        "    time.sleep(5)\n"
        "    print('slept through')\n"
        "atexit.register(late)\n"
        "entry._finish(0)\n",
        tmp_path,
    )
    assert code == 128 + 15
    assert err == "pisa-mm: interrupted\n"
    assert out == ""


def test_a_thread_that_is_not_a_daemon_is_waited_for(tmp_path: Path) -> None:
    code, out, _ = _run(
        "def later():\n"
        "    time.sleep(0.3)\n"
        "    print('thread done', flush=True)\n"
        "threading.Thread(target=later).start()\n"
        "sys.exit(entry._finish(5))\n",
        tmp_path,
    )
    assert (code, out) == (5, "thread done\n")
