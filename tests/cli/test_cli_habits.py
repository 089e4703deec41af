"""The command line forgives herd habits and typos with a pointer to the right spelling."""

from __future__ import annotations

from pathlib import Path

import pytest
from cli_helpers import MP, write

from pisa_mm import cli
from pisa_mm.commands import diff as diff_cmd
from pisa_mm.commands import run as run_cmd

Capture = pytest.CaptureFixture[str]


def test_a_single_dash_option_suggests_the_double_dash(tmp_path: Path, capsys: Capture) -> None:
    test = write(tmp_path, "MP.litmus", MP)
    assert cli.main(["run", str(test), "-model", "pisa"]) == 2
    assert "did you mean --model?" in capsys.readouterr().err


def test_a_misspelt_option_gets_a_suggestion(tmp_path: Path, capsys: Capture) -> None:
    test = write(tmp_path, "MP.litmus", MP)
    assert cli.main(["run", str(test), "--modle", "pisa"]) == 2
    assert "did you mean --model?" in capsys.readouterr().err


@pytest.mark.parametrize("option", ["-variant", "-through", "-skipcheck"])
def test_herd_options_say_what_to_use_instead(tmp_path: Path, capsys: Capture, option: str) -> None:
    test = write(tmp_path, "MP.litmus", MP)
    assert cli.main(["run", str(test), option, "x"]) == 2
    err = capsys.readouterr().err
    assert f"pisa-mm has no {option}" in err and "--model" in err


def test_a_test_file_without_a_subcommand_suggests_run(tmp_path: Path, capsys: Capture) -> None:
    assert cli.main(["MP.litmus"]) == 2
    assert "did you mean: pisa-mm run MP.litmus" in capsys.readouterr().err


@pytest.mark.parametrize("where", ["before", "after"])
def test_traceback_works_before_or_after_the_subcommand(
    tmp_path: Path, capsys: Capture, monkeypatch: pytest.MonkeyPatch, where: str
) -> None:
    test = write(tmp_path, "MP.litmus", MP)

    def broken(*args: object, **kwargs: object) -> object:
        raise RuntimeError("deliberately broken")

    monkeypatch.setattr(run_cmd, "collect_tests", broken)
    argv = (
        ["--traceback", "run", str(test)]
        if where == "before"
        else ["run", str(test), "--traceback"]
    )
    assert cli.main(argv) == 3
    assert "RuntimeError: deliberately broken" in capsys.readouterr().err


def test_only_the_chosen_subcommand_is_imported() -> None:
    import subprocess
    import sys

    code = (
        "import sys; from pisa_mm import cli; cli.build_parser('parse'); "
        "print(sorted(m for m in sys.modules if m.startswith('pisa_mm.commands.')))"
    )
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True)
    assert out.stdout.strip() == "['pisa_mm.commands.parse']"


def test_parse_accepts_directories(tmp_path: Path, capsys: Capture) -> None:
    write(tmp_path, "a/MP.litmus", MP)
    write(tmp_path, "a/b/MP2.litmus", MP.replace("PISA MP+rel+acq", "PISA MP2"))
    assert cli.main(["parse", str(tmp_path / "a"), "--json"]) == 0
    assert capsys.readouterr().out.count('"name"') >= 2


def test_warnings_are_printed_by_every_command_that_reads_the_test(
    tmp_path: Path, capsys: Capture
) -> None:
    test = write(
        tmp_path,
        "MP.litmus",
        MP.replace("st.global.release.gpu.32b", "st.global.release.32b"),
    )
    for argv in (
        ["query", str(test), "--outcome", "P1:%r0 == 1"],
        ["trace", str(test), "--outcome", "P1:%r0 == 1"],
        ["promote", str(test), "--engine", "explicit"],
        ["diff", "pisa", "pisa-rc11", str(test), "--engine", "explicit"],
        ["crossval", str(test)],
    ):
        cli.main(argv)
        assert "warning: st.release has no memory scope" in capsys.readouterr().err, argv


# Each subcommand with its positional arguments (P) and one of its options (O): the options
# may come before, between or after the positionals (cli.py `_CommandParser`).
INTERMIXED = {
    "parse": (["T"], ["--unroll", "2"]),
    "run": (["T"], ["--engine", "explicit"]),
    "query": (["T"], ["--outcome", "true"]),
    "trace": (["T"], ["--outcome", "true"]),
    "crossval": (["T"], ["--unroll", "2"]),
    "diff": (["pisa", "pisa-rc11", "T"], ["--engine", "explicit"]),
    "promote": (["T"], ["--engine", "explicit"]),
    "gen": (["MP"], ["--list"]),
}


@pytest.mark.parametrize("where", ["before", "between", "after"])
@pytest.mark.parametrize("command", sorted(INTERMIXED))
def test_options_may_come_before_between_or_after_the_positionals(
    tmp_path: Path, capsys: Capture, command: str, where: str
) -> None:
    test = str(write(tmp_path, "MP.litmus", MP))
    positionals, option = INTERMIXED[command]
    positionals = [test if p == "T" else p for p in positionals]
    at = {"before": 0, "between": max(0, len(positionals) - 1), "after": len(positionals)}[where]
    argv = [command, *positionals[:at], *option, *positionals[at:]]
    code = cli.main(argv)
    err = capsys.readouterr().err
    assert code in (0, 1), err
    assert "unrecognized arguments" not in err and "required" not in err


def test_diff_takes_its_tests_after_options(tmp_path: Path, capsys: Capture) -> None:
    # an optional positional (diff's tests) is no longer given its empty match before them
    test = str(write(tmp_path, "MP.litmus", MP))
    argv = ["diff", "pisa", "pisa-rc11", "--engine", "explicit", "--timeout", "30", test]
    assert cli.main(argv) == 0
    assert "1 tests, 0 changed" in capsys.readouterr().out


@pytest.mark.parametrize("where", range(5))
def test_traceback_works_anywhere_on_the_line(
    tmp_path: Path, capsys: Capture, monkeypatch: pytest.MonkeyPatch, where: int
) -> None:
    test = str(write(tmp_path, "MP.litmus", MP))

    def broken(*args: object, **kwargs: object) -> object:
        raise RuntimeError("deliberately broken")

    monkeypatch.setattr(diff_cmd, "collect_tests", broken)
    argv = ["diff", "pisa", "pisa-rc11", test]
    argv.insert(where, "--traceback")
    assert cli.main(argv) == 3
    assert "RuntimeError: deliberately broken" in capsys.readouterr().err
