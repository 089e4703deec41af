"""Hostile command lines for every command: absurd budgets are usage errors, non-regular files
are refused without blocking, and a model that includes a file outside the allowed directories
is refused without printing anything of that file (issue 14). `run`'s budgets and `parse`,
`run` and `query` on a FIFO are covered in tests/cli and test_frontend_limits.py."""

from __future__ import annotations

import os
import shutil
import subprocess
import sys
from pathlib import Path

import pytest

from pisa_mm.cli import main as cli_main

ROOT = Path(__file__).resolve().parents[2]
MP = ROOT / "litmus" / "pisa" / "mp" / "MP+rel.gpu+acq.gpu.litmus"
CLI = "import sys; from pisa_mm.cli import main; sys.exit(main(sys.argv[1:]))"
SECRET = "secret-content-of-the-target"

# The arguments each command needs around its test file.
BEFORE = {"diff": ["pisa", "pisa"]}
AFTER = {"query": ["--outcome", "true"], "trace": ["--outcome", "true"]}
BUDGETED = ("query", "trace", "crossval", "diff", "promote")
EVERY = ("parse", "run", "query", "trace", "crossval", "diff", "promote")


def argv(command: str, test: str, *options: str) -> list[str]:
    return [command, *options, *BEFORE.get(command, []), test, *AFTER.get(command, [])]


@pytest.mark.parametrize("value", ["nan", "inf", "-1", "-inf"])
@pytest.mark.parametrize("command", BUDGETED)
def test_absurd_timeouts_are_usage_errors(
    command: str, value: str, tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    test = tmp_path / MP.name
    shutil.copy(MP, test)
    assert cli_main(argv(command, str(test), f"--timeout={value}")) == 2
    err = capsys.readouterr().err
    assert "argument --timeout:" in err and "Traceback" not in err
    assert list(tmp_path.iterdir()) == [test]  # promote wrote nothing


@pytest.mark.parametrize("command", EVERY)
def test_a_device_is_refused_by_every_command(
    command: str, capsys: pytest.CaptureFixture[str]
) -> None:
    assert cli_main(argv(command, "/dev/zero")) == 2
    err = capsys.readouterr().err
    assert "character device" in err and "[io]" in err and "Traceback" not in err


@pytest.mark.parametrize("command", ["trace", "crossval", "diff", "promote"])
def test_a_fifo_is_refused_without_blocking(command: str, tmp_path: Path) -> None:
    fifo = tmp_path / "t.litmus"
    os.mkfifo(fifo)
    # a child process: a command that opened the FIFO would block forever, no writer comes
    proc = subprocess.run(
        [sys.executable, "-c", CLI, *argv(command, str(fifo))],
        capture_output=True,
        text=True,
        timeout=60,
        cwd=ROOT,
    )
    assert proc.returncode == 2, proc.stderr
    assert "[io]" in proc.stderr and "Traceback" not in proc.stderr


@pytest.fixture
def outside(tmp_path: Path) -> Path:
    secret = tmp_path / "outside" / "secret.cat"
    secret.parent.mkdir()
    secret.write_text(f"let leaked = po (* {SECRET} *)\n")
    (tmp_path / "model").mkdir()
    (tmp_path / "model" / "link.cat").symlink_to(secret)
    return secret


@pytest.mark.parametrize("how", ["absolute", "dotdot", "symlink"])
@pytest.mark.parametrize("command", ["run", "query", "crossval", "diff", "promote"])
def test_a_model_including_outside_files_is_refused_by_every_command(
    command: str, how: str, tmp_path: Path, outside: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    target = {"absolute": str(outside), "dotdot": "../outside/secret.cat", "symlink": "link.cat"}
    model = tmp_path / "model" / "m.cat"
    model.write_text(f'"m"\ninclude "{target[how]}"\nacyclic po as a\n')
    test = tmp_path / MP.name
    shutil.copy(MP, test)
    if command == "diff":
        args = ["diff", "pisa", str(model), str(test)]
    else:
        args = argv(command, str(test), "--model", str(model))
    assert cli_main(args) == 2
    out, err = capsys.readouterr()
    assert "[cat-include]" in err and "Traceback" not in err
    assert SECRET not in out + err and "leaked" not in out + err
    assert not (tmp_path / (MP.stem + ".expected")).exists()


@pytest.mark.parametrize("command", ["parse", "run", "crossval"])
def test_a_path_too_long_for_the_system_is_an_io_error(
    command: str, capsys: pytest.CaptureFixture[str]
) -> None:
    # found by tests/hostile/test_mutation_fuzz.py: stat() raised ENAMETOOLONG
    assert cli_main([command, "9" * 5000]) == 2
    err = capsys.readouterr().err
    assert "File name too long [io]" in err and "Traceback" not in err


def test_an_include_name_too_long_is_not_found(tmp_path: Path) -> None:
    # found by tests/hostile/test_mutation_fuzz.py: is_file() raised ENAMETOOLONG
    from pisa_mm.cat.loader import load_model
    from pisa_mm.errors import PisaMMError

    model = tmp_path / "long.cat"
    model.write_text(f'PISA\ninclude "{"a" * 5000}.cat"\n')
    with pytest.raises(PisaMMError) as info:
        load_model(str(model))
    assert info.value.diagnostics[0].code == "cat-include"


def test_a_model_name_too_long_is_an_unknown_model(capsys: pytest.CaptureFixture[str]) -> None:
    # found by tests/hostile/test_mutation_fuzz.py: `diff pisa <5,000 characters>` crashed
    test = str(Path(__file__).resolve().parents[2] / "litmus/pisa/address/Ptr+always-null.litmus")
    assert cli_main(["diff", "pisa", "0x" + "f" * 5000, test]) == 2
    err = capsys.readouterr().err
    assert "unknown model" in err and "[cat-model]" in err and "Traceback" not in err
