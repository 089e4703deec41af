"""Budgets at their edges, found by the second round of scripted attacks of issue 14 (kept
outside the repo): a deadline that fires at any moment of a test ends it as Unknown, with
nothing printed but the answer."""

from __future__ import annotations

import signal
import subprocess
import sys
import time
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[2]
MP = ROOT / "litmus" / "pisa" / "mp" / "MP+rel.gpu+acq.gpu.litmus"
CLI = "import sys; from pisa_mm.cli import main; sys.exit(main(sys.argv[1:]))"


@pytest.mark.parametrize("timeout", ["1e-4", "3e-3"])
def test_a_deadline_during_the_solvers_first_use_prints_no_traceback(timeout: str) -> None:
    # was: z3's context was made lazily inside the budget; the deadline's OutOfTime landed
    # in its __init__ and the half-built context's __del__ printed a traceback (a fresh
    # process is needed: the context is made once per process)
    argv = ["query", str(MP), "--outcome", "P1:%r0 == 1", "--timeout", timeout]
    proc = subprocess.run(
        [sys.executable, "-c", CLI, *argv], capture_output=True, text=True, timeout=60
    )
    assert proc.returncode == 4, proc.stderr
    assert "Unknown (timeout" in proc.stdout
    assert proc.stderr == ""


@pytest.mark.parametrize("command", ["query", "trace", "liveness"])
def test_the_budget_of_query_and_trace_bounds_the_parse(
    command: str, monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]
) -> None:
    # was: query and trace parsed the test before their budget started: `query --timeout 1`
    # on a test of 200,000 lines took 65 s
    from pisa_mm.cli import main
    from pisa_mm.commands import query, trace

    module = trace if command == "trace" else query
    real = module.load_test
    finished = []

    def slow_parse(path: str, strict: bool = False) -> object:
        for _ in range(3000):  # 30 s, unless the budget stops it
            time.sleep(0.01)
        finished.append(True)
        return real(path, strict=strict)

    monkeypatch.setattr(module, "load_test", slow_parse)
    what = ["--liveness"] if command == "liveness" else ["--outcome", "P1:%r0 == 1"]
    verb = "query" if command == "liveness" else command
    assert main([verb, str(MP), *what, "--timeout", "0.2"]) == 4
    assert not finished
    out = capsys.readouterr().out
    assert out.startswith(f"Test {MP}: ") and "Unknown (timeout: over 0.2 s)" in out


REGISTER_BASE = """PISA RegisterBase
{
  .global .32b @x = 0;
  .global .32b @y = 0;
  P1:%r5 = @x;
}
P0 @ wg 0 {
  st.global.relaxed.32b [@y], 1;
}
P1 @ wg 1 {
  .pred %p0;
  ld.global.relaxed.32b %r1, [@y];
  ucmp.eq.32b %p0, %r1, 1;
  goto.cond !%p0, done;
  ld.global.32b %r2, [%r5 + OFFSET];
done:
}
exists (P1:%r1 == 0)
"""


@pytest.mark.parametrize("offset", ["4096", "2"])
@pytest.mark.parametrize("engine", ["explicit", "smt", "operational"])
def test_a_register_held_address_past_its_variable_raises_invalid_address(
    tmp_path: Path, capsys: pytest.CaptureFixture[str], engine: str, offset: str
) -> None:
    # was: `[%r5 + 4096]` with %r5 = @x an input error ([bounds]; misaligned: [alignment]),
    # though an address held in a register is computed: undefined behaviour, if reached
    from pisa_mm.cli import main

    test = tmp_path / "base.litmus"
    test.write_text(REGISTER_BASE.replace("OFFSET", offset))
    assert main(["run", "--engine", engine, "--no-time", str(test)]) == 0
    out = capsys.readouterr().out
    assert "States 1\nP1:%r1=0;\nOk" in out and "Flag invalid-address" in out


NULL = ROOT / "litmus" / "pisa" / "address" / "Ptr+always-null.litmus"
PAST_END = ROOT / "litmus" / "pisa" / "address" / "Array+past-end.litmus"


@pytest.mark.parametrize(
    ("test", "outcome", "code"),
    [(NULL, "@x == 2", 1), (NULL, "P1:%r0 == 0", 1), (PAST_END, "P1:%r1 == 7", 0)],
)
def test_query_says_when_an_execution_reaches_an_invalid_address(
    capsys: pytest.CaptureFixture[str], test: Path, outcome: str, code: int
) -> None:
    # was: "forbidden: no candidate execution ends in this state", silent on the null
    # dereference every execution reaches (and silent on the allowed past-the-end read)
    from pisa_mm.cli import main

    assert main(["query", str(test), "--outcome", outcome]) == code
    out = capsys.readouterr().out
    assert "Flag invalid-address: an allowed execution reaches an invalid address" in out
    assert "at address 0x" in out and "flags raised: invalid-address" in out


def test_query_without_undefined_behaviour_says_nothing_of_it(
    capsys: pytest.CaptureFixture[str],
) -> None:
    from pisa_mm.cli import main

    assert main(["query", str(MP), "--outcome", "P1:%r0 == 1"]) == 0
    assert "invalid" not in capsys.readouterr().out


@pytest.mark.parametrize(("test", "outcome"), [(NULL, "@x == 2"), (PAST_END, "P1:%r1 == 8")])
def test_trace_shows_the_schedule_to_an_invalid_address(
    capsys: pytest.CaptureFixture[str], test: Path, outcome: str
) -> None:
    # was: "No schedule of the operational machine reaches this outcome." and nothing more
    from pisa_mm.cli import main

    assert main(["trace", str(test), "--outcome", outcome]) == 1
    out = capsys.readouterr().out
    assert "Flag invalid-address: this schedule reaches an invalid address" in out
    assert "is no location: undefined" in out and "State at the invalid access:" in out


def test_crossval_shows_the_flags_both_engines_raise(capsys: pytest.CaptureFixture[str]) -> None:
    from pisa_mm.cli import main

    assert main(["crossval", str(NULL), str(PAST_END)]) == 0
    out = capsys.readouterr().out
    assert out.count("flags: invalid-address") == 2


def test_the_console_script_handles_signals_before_the_cli_is_imported() -> None:
    # was: a Ctrl-C while `pisa_mm.cli` was imported printed a KeyboardInterrupt traceback
    # (cli.main's handler was not yet there); a SIGTERM killed it silently; and a background
    # job (`pisa-mm ... &` in a script: SIGINT inherited ignored) ran on
    code = (
        "import signal, sys\n"
        "sys.modules['pisa_mm.cli'] = None  # importing the CLI fails: the handlers are set\n"
        "from pisa_mm import entry\n"
        "try:\n"
        "    entry.main()\n"
        "except ImportError:\n"
        "    both = (signal.SIGINT, signal.SIGTERM)\n"
        "    ok = all(signal.getsignal(s) is entry._stop for s in both)\n"
        "    sys.exit(0 if ok else 1)\n"
    )
    assert subprocess.run([sys.executable, "-c", code], timeout=60).returncode == 0


@pytest.mark.parametrize(("signum", "code"), [(signal.SIGINT, 130), (signal.SIGTERM, 143)])
def test_a_signal_before_the_commands_handlers_is_an_interrupt(signum: int, code: int) -> None:
    program = (
        "import os, signal, time\n"
        "from pisa_mm import entry\n"
        "for s in (signal.SIGINT, signal.SIGTERM):\n"
        "    signal.signal(s, entry._stop)\n"
        f"os.kill(os.getpid(), {int(signum)})\n"
        "time.sleep(30)\n"
    )
    proc = subprocess.run(
        [sys.executable, "-c", program], capture_output=True, text=True, timeout=60
    )
    assert proc.returncode == code and proc.stderr == "pisa-mm: interrupted\n"


def test_a_child_forked_during_a_command_never_runs_its_handlers() -> None:
    # was: a pool worker forked just as a Ctrl-C reached the process group ran the parent's
    # handler before its initializer ignored interrupts: an `Interrupted` traceback
    # (1 of 30 interrupted `promote` runs)
    code = (
        "import os, signal, sys\n"
        "from pisa_mm.runner.guard import interruptible\n"
        "with interruptible():\n"
        "    pid = os.fork()\n"
        "    if pid == 0:\n"
        "        ok = signal.getsignal(signal.SIGINT) is signal.SIG_IGN\n"
        "        ok = ok and signal.getsignal(signal.SIGTERM) is signal.SIG_DFL\n"
        "        ok = ok and not signal.pthread_sigmask(signal.SIG_BLOCK, [])\n"
        "        os._exit(0 if ok else 1)\n"
        "    _, status = os.waitpid(pid, 0)\n"
        "    parent = not signal.pthread_sigmask(signal.SIG_BLOCK, [])\n"
        "sys.exit(0 if parent and os.waitstatus_to_exitcode(status) == 0 else 1)\n"
    )
    proc = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, timeout=60)
    assert proc.returncode == 0, proc.stderr


def test_a_model_is_size_limited_in_each_file_and_in_all(tmp_path: Path) -> None:
    # was: a 1 MiB include of nested parentheses took a minute to parse before its depth
    # error, and a --model file or a model with many includes had no limit at all
    from pisa_mm.cat.includes import MAX_INCLUDE_BYTES, MAX_MODEL_BYTES
    from pisa_mm.cat.loader import load_model
    from pisa_mm.errors import PisaMMError

    big = tmp_path / "big.cat"
    big.write_text("(*" + " " * MAX_INCLUDE_BYTES + "*)")
    with pytest.raises(PisaMMError, match=r"limited to 262144 bytes \[limit\]"):
        load_model(str(big))
    parts = MAX_MODEL_BYTES // (MAX_INCLUDE_BYTES - 16) + 1
    for i in range(parts):
        (tmp_path / f"part{i}.cat").write_text("(*" + " " * (MAX_INCLUDE_BYTES - 16) + "*)")
    wide = tmp_path / "wide.cat"
    wide.write_text("".join(f'include "part{i}.cat"\n' for i in range(parts)))
    with pytest.raises(PisaMMError, match=r"more than 1048576 bytes together \[cat-include\]"):
        load_model(str(wide))


@pytest.mark.parametrize("command", ["parse", "run", "query", "trace", "promote"])
def test_a_litmus_test_is_size_limited(
    tmp_path: Path, capsys: pytest.CaptureFixture[str], command: str
) -> None:
    # was: 16 MiB, which the frontend reads in minutes: `parse` of a 10 MB condition ran
    # past 90 s (and a 6 MB test of 200,000 stores took 103 s)
    from pisa_mm.cli import main
    from pisa_mm.errors import MAX_TEST_BYTES

    test = tmp_path / "big.litmus"
    text = MP.read_text()
    test.write_text(text.replace("exists", "// " + "x" * MAX_TEST_BYTES + "\nexists"))
    argv = [command, str(test)] + (["--outcome", "true"] if command in ("query", "trace") else [])
    assert main(argv) == 2
    assert f"limited to {MAX_TEST_BYTES} bytes [limit]" in capsys.readouterr().err
