"""The sixth round of issue 14's attacks (scripts kept outside the repo): a case per input
that broke a promise. Each writes in its own temporary directory."""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path

import pytest

from tests.cli_helpers import MP, Capture, pisa_mm, write

ROOT = Path(__file__).resolve().parents[2]
ESCAPES = "\x1b\x07"

# ---------------------------------------------------------------- control characters


def _baseline(tmp_path: Path, capsys: Capture) -> tuple[Path, Path, dict[str, object]]:
    test = write(tmp_path, "T.litmus", MP)
    baseline = tmp_path / "b.json"
    assert pisa_mm("run", str(test), "--baseline", str(baseline), "--update-baseline") == 0
    capsys.readouterr()
    return test, baseline, json.loads(baseline.read_text())


@pytest.mark.parametrize(
    ("where", "code"),
    [
        (("model", "name"), 0),
        (("model", "hash"), 0),
        (("engine",), 0),
        (("tests", "T.litmus", "verdict"), 1),
        (("tests", "T.litmus", "name"), 1),
        (("tests", "T.litmus", "liveness"), 1),
        (("tests", "T.litmus", "states"), 1),
        (("tests", "T.litmus", "flags"), 1),
    ],
)
def test_a_baseline_s_control_characters_never_reach_the_terminal(
    tmp_path: Path, capsys: Capture, where: tuple[str, ...], code: int
) -> None:
    # was: every string of a baseline that differs was printed raw on stderr (`recorded
    # under model <ESC>]0;...<BEL>`, `verdict: baseline <ESC>[2J, explicit No`)
    test, baseline, doc = _baseline(tmp_path, capsys)
    hostile = "\x1b]0;owned\x07\x1b[2J"
    node: dict[str, object] = doc
    for key in where[:-1]:
        node = node[key]  # type: ignore[assignment]
    node[where[-1]] = [hostile] if where[-1] in ("states", "flags") else hostile
    baseline.write_text(json.dumps(doc))
    assert pisa_mm("run", str(test), "--baseline", str(baseline)) == code
    out, err = capsys.readouterr()
    assert not any(c in out + err for c in ESCAPES), err
    assert "\ufffd]0;owned\ufffd\ufffd[2J" in err


def test_an_expected_file_s_control_characters_never_reach_the_terminal(
    tmp_path: Path, capsys: Capture
) -> None:
    # was: `FAIL T.litmus` then `states only in expected: <ESC>[2J` raw on stderr
    test = write(tmp_path, "T.litmus", MP)
    assert pisa_mm("promote", str(test)) == 0
    expected = tmp_path / "T.litmus.expected"
    expected.write_text(expected.read_text().replace("P1:%r0=0;", "\x1b[2J", 1))
    capsys.readouterr()
    assert pisa_mm("run", str(test)) == 1
    out, err = capsys.readouterr()
    assert not any(c in out + err for c in ESCAPES), err
    assert "states only in expected: \ufffd[2J" in err


@pytest.mark.parametrize(
    "argv",
    [
        ["query", "--outcome", "P1:%r0 == 1"],
        ["promote"],
        ["trace", "--outcome", "P1:%r0 == 1", "--timeout", "1e-9"],
        ["run", "--no-time"],
    ],
)
def test_a_test_file_name_s_control_characters_never_reach_stdout(
    tmp_path: Path, capsys: Capture, argv: list[str]
) -> None:
    # was: query's events `(e<ESC>]0;t<BEL>.litmus:15)` and promote's `created ...` raw
    test = write(tmp_path, "e\x1b]0;t\x07.litmus", MP)
    pisa_mm(*argv, str(test))
    out, err = capsys.readouterr()
    assert not any(c in out + err for c in ESCAPES), out + err
    assert "\ufffd" in out or "Test MP" in out


# ---------------------------------------------------------------- baselines


@pytest.mark.parametrize("version", [True, 1.0, "1"])
def test_a_baseline_version_of_another_type_is_refused(
    tmp_path: Path, capsys: Capture, version: object
) -> None:
    # was: `"version": true` and `1.0` read as version 1 (`True == 1` in Python)
    test, baseline, doc = _baseline(tmp_path, capsys)
    doc["version"] = version
    baseline.write_text(json.dumps(doc))
    assert pisa_mm("run", str(test), "--baseline", str(baseline)) == 2
    assert "[baseline]" in capsys.readouterr().err


# ---------------------------------------------------------------- file names


@pytest.mark.parametrize("length", [230, 237, 246])
def test_an_output_whose_name_is_near_the_limit_is_written(
    tmp_path: Path, capsys: Capture, length: int
) -> None:
    # was: `cannot write X.expected: File name too long [io]` for a name that fits: the
    # temporary file's name (`.NAME.<12 hex>.tmp`) is 18 bytes longer than the target's
    name = "b" * (length - len(".litmus")) + ".litmus"
    test = write(tmp_path, name, MP)
    assert pisa_mm("promote", str(test)) == (0 if length + len(".expected") <= 255 else 2)
    report = tmp_path / ("é" * ((255 - length) // 2) + name)  # a multi-byte name too
    if len(report.name.encode()) <= 255:
        assert pisa_mm("run", str(test), "--json", str(report)) == 0
        assert json.loads(report.read_text())
    assert [p.name for p in tmp_path.iterdir() if p.name.endswith(".tmp")] == []


def test_a_test_named_with_a_leading_dash_runs_after_double_dash(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, capsys: Capture
) -> None:
    # was: `run -- -t.litmus`: "the following arguments are required: TEST_OR_DIR" (Python
    # 3.11's intermixed parsing drops the `--` before reading the positionals)
    write(tmp_path, "-t.litmus", MP)
    write(tmp_path, "--json.litmus", MP)
    monkeypatch.chdir(tmp_path)
    assert pisa_mm("run", "--no-time", "--", "-t.litmus", "--json.litmus") == 0
    assert capsys.readouterr().out.count("Test MP+rel+acq") == 2
    assert pisa_mm("parse", "--", "-t.litmus") == 0
    assert pisa_mm("diff", "pisa", "--", "pisa-rc11", "-t.litmus") == 0
    capsys.readouterr()
    assert pisa_mm("run", "--json", "--", "-t.litmus") == 2  # `--json` still wants its file
    assert "[usage]" in capsys.readouterr().err


# ---------------------------------------------------------------- encodings

_MAIN = "import sys; from pisa_mm.cli import main; sys.exit(main())"


@pytest.mark.parametrize("encoding", ["ascii", "latin-1"])
@pytest.mark.parametrize(
    "argv", [["promote"], ["query", "--outcome", "P1:%r0 == 1"], ["run", "--no-time", "-v"]]
)
def test_a_path_the_output_encoding_cannot_write_is_escaped(
    tmp_path: Path, encoding: str, argv: list[str]
) -> None:
    # was: PYTHONIOENCODING=ascii with a test named `тест.litmus`: promote's `created ...`
    # line and query's source locations raised UnicodeEncodeError, an internal error (exit 3)
    test = write(tmp_path, "тест.litmus", MP)
    env = {"PATH": "/usr/bin:/bin", "PYTHONIOENCODING": encoding, "PISA_MM_NO_CACHE": "1"}
    done = subprocess.run(
        [sys.executable, "-c", _MAIN, *argv, str(test)],
        capture_output=True,
        text=True,
        encoding=encoding,
        errors="strict",
        env=env,
        cwd=ROOT,
        timeout=120,
    )
    assert done.returncode == 0, done.stderr[-2000:]
    assert "internal error" not in done.stderr
    if argv[0] != "run":
        assert "\\u0442\\u0435\\u0441\\u0442.litmus" in done.stdout


# ---------------------------------------------------------------- suites


def _beyond_path_max(top: Path) -> None:
    """A test at the bottom of a chain of directories whose path passes PATH_MAX (4,096)."""
    fd = os.open(top, os.O_RDONLY)
    try:
        for _ in range(25):  # 5,000 characters, few levels (pytest removes it recursively)
            os.mkdir("d" * 199, dir_fd=fd)
            inner = os.open("d" * 199, os.O_RDONLY, dir_fd=fd)
            os.close(fd)
            fd = inner
        out = os.open("t.litmus", os.O_WRONLY | os.O_CREAT, 0o644, dir_fd=fd)
        os.write(out, MP.encode())
        os.close(out)
    finally:
        os.close(fd)


@pytest.mark.parametrize("command", [["run"], ["promote"], ["parse"], ["diff", "pisa", "pisa"]])
def test_a_directory_of_a_suite_that_cannot_be_read_is_an_error(
    tmp_path: Path, capsys: Capture, command: list[str]
) -> None:
    # was: skipped as pathlib skips it, silently: `1 tests, 1 ok` for a suite of two
    # (found by a suite with a test 1,000 directories down)
    write(tmp_path, "a.litmus", MP)
    _beyond_path_max(tmp_path)
    assert pisa_mm(*command, str(tmp_path)) == 2
    err = capsys.readouterr().err
    assert "cannot read the directory" in err and "[io]" in err


# ---------------------------------------------------------------- import


@pytest.mark.parametrize(
    "source", sorted((ROOT / "tests" / "data" / "import").glob("*/*.litmus"))[::7], ids=str
)
def test_a_herd_test_with_windows_line_ends_imports_as_with_unix_ones(
    tmp_path: Path, capsys: Capture, source: Path
) -> None:
    # was: `C SB+rlx\r` was no header: "not a test in an importable dialect (header 'C')"
    crlf = write(tmp_path, "crlf/" + source.name, "")
    crlf.write_bytes(source.read_bytes().replace(b"\r\n", b"\n").replace(b"\n", b"\r\n"))
    plain = write(tmp_path, "lf/" + source.name, source.read_text())
    codes = [
        pisa_mm("import", str(f), "-o", str(tmp_path / d)) for f, d in ((crlf, "a"), (plain, "b"))
    ]
    assert codes[0] == codes[1], capsys.readouterr()
    made = sorted(p.name for p in (tmp_path / "a").glob("*.litmus"))
    assert made == sorted(p.name for p in (tmp_path / "b").glob("*.litmus"))
    for name in made:
        a, b = ((tmp_path / d / name).read_text().splitlines() for d in "ab")
        assert [x for x in a if not x.startswith("source =")] == [
            x for x in b if not x.startswith("source =")
        ]
