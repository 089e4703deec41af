"""Hostile inputs found by the scripted attacks of issue 14 (kept outside the repo), one case
per input that broke a promise: an internal error, a hang, a memory blowup, a wrong answer.
Large inputs are generated here."""

from __future__ import annotations

import os
import shutil
import stat
import subprocess
import sys
from pathlib import Path

import pytest

from pisa_mm.cat.loader import MAX_INCLUDE_DEPTH, load_model
from pisa_mm.cli import main as cli_main
from pisa_mm.errors import PisaMMError
from pisa_mm.events.build import build
from pisa_mm.litmus import parse_test
from pisa_mm.report.parse_table import MAX_EXPR_TEXT, render_plain, structure_to_dict
from pisa_mm.runner.files import write_atomic
from pisa_mm.values.text import ELIDED

ROOT = Path(__file__).resolve().parents[2]
MP = ROOT / "litmus" / "pisa" / "mp" / "MP+rel.gpu+acq.gpu.litmus"


def _doubling_chain(n: int) -> str:
    """A load, then n instructions each adding a register to itself: the value's DAG has n
    nodes, its text 2**n leaves."""
    chain = "\n".join(f"  iadd.32b %r{i + 1}, %r{i}, %r{i};" for i in range(1, n + 1))
    return (
        "PISA Doubling\n{\n  .global .32b @x = 0;\n}\n"
        "P0 @ wg 0 {\n  st.global.32b [@x], 1;\n}\n"
        f"P1 @ wg 1 {{\n  ld.global.32b %r1, [@x];\n{chain}\n}}\n"
        f"exists (P1:%r{n + 1} == 0)\n"
    )


def test_parse_prints_a_doubling_chain_elided() -> None:
    # was: `pisa-mm parse` built the 2**2000-leaf text (5.5 GB, killed after a minute)
    structure = build(parse_test(_doubling_chain(2000), "doubling.litmus"))
    table = render_plain(structure)
    assert len(table) < 4_000_000 and ELIDED in table
    last = [line for line in table.splitlines() if "%r2001" in line]
    assert last and len(last[0]) < MAX_EXPR_TEXT + 100
    regs = structure_to_dict(structure)["threads"][1]["paths"][0]["final_regs"]
    assert regs["r2"] == "(v3 + v3)"  # short values print whole
    assert len(regs["r2001"]) <= MAX_EXPR_TEXT + len(ELIDED)


def test_a_doubling_chain_runs(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    # the value is v * 2**300 mod 2**32: 0 whatever the load reads
    test = tmp_path / "doubling.litmus"
    test.write_text(_doubling_chain(300))
    assert cli_main(["run", "--engine", "explicit", "--no-time", str(test)]) == 0
    out = capsys.readouterr().out
    assert "States 1\nP1:%r301=0;\nOk" in out


@pytest.fixture
def chain(tmp_path: Path) -> Path:
    """Models c0.cat -> c1.cat -> ... -> c99.cat, each including the next."""
    for i in range(100):
        nxt = f'include "c{i + 1}.cat"\n' if i < 99 else "acyclic po as a\n"
        (tmp_path / f"c{i}.cat").write_text(f'"c{i}"\n{nxt}')
    return tmp_path


def test_includes_nested_too_deep_are_a_located_error(chain: Path) -> None:
    # was: RecursionError in lark's parser at ~50 nested includes (exit 3)
    with pytest.raises(PisaMMError) as info:
        load_model(str(chain / "c0.cat"))
    diag = info.value.diagnostics[0]
    assert diag.code == "cat-include" and f"more than {MAX_INCLUDE_DEPTH} deep" in diag.message


def test_includes_nested_to_the_limit_load(chain: Path) -> None:
    model = load_model(str(chain / f"c{100 - MAX_INCLUDE_DEPTH}.cat"))
    assert model.checks


def test_an_include_path_with_a_nul_is_a_located_error(tmp_path: Path) -> None:
    # was: ValueError (embedded null byte) from os.path.realpath, exit 3
    model = tmp_path / "nul.cat"
    model.write_text('"m"\ninclude "a\x00b.cat"\nacyclic po as a\n')
    with pytest.raises(PisaMMError) as info:
        load_model(str(model))
    assert info.value.diagnostics[0].code == "cat-include"


@pytest.fixture
def null_device(tmp_path: Path) -> Path:
    """A character device node like /dev/null, made in tmp_path (root only): a regression
    replaces this node, never the machine's /dev/null."""
    if os.geteuid() != 0:
        pytest.skip("making a device node needs root")
    node = tmp_path / "null"
    os.mknod(node, stat.S_IFCHR | 0o666, os.makedev(1, 3))
    return node


@pytest.mark.parametrize("option", ["--json", "--junit"])
def test_a_report_to_a_device_writes_into_it_and_keeps_it(
    tmp_path: Path, null_device: Path, option: str
) -> None:
    # was: the temporary file was renamed over the device (as root: /dev/full replaced)
    test = tmp_path / MP.name
    shutil.copy(MP, test)
    assert cli_main(["run", "--engine", "explicit", str(test), option, str(null_device)]) == 0
    assert stat.S_ISCHR(os.stat(null_device).st_mode)


def test_write_atomic_refuses_a_fifo(tmp_path: Path) -> None:
    fifo = tmp_path / "out.json"
    os.mkfifo(fifo)
    with pytest.raises(PisaMMError) as info:
        write_atomic(fifo, "{}")
    assert "it is a FIFO" in info.value.diagnostics[0].message
    assert stat.S_ISFIFO(os.stat(fifo).st_mode)


@pytest.mark.parametrize(
    "argv",
    [
        ["gen", "MP", "-o", "{file}"],
        ["run", str(MP), "--graphs", "{file}/g"],
        ["run", str(MP), "--html", "{file}"],
        ["diff", "pisa", "pisa-rc11", str(MP), "--html", "{file}"],
        ["import", str(ROOT / "tests/data/import/c11/SB+rlx.litmus"), "-o", "{file}/x"],
    ],
)
def test_an_output_directory_that_is_a_file_is_refused_before_any_work(
    tmp_path: Path, capsys: pytest.CaptureFixture[str], argv: list[str]
) -> None:
    # was: gen exited 3 (FileExistsError); run --graphs exited 0 with no graphs drawn
    file = tmp_path / "file"
    file.write_text("keep")
    assert cli_main([a.replace("{file}", str(file)) for a in argv]) == 2
    out, err = capsys.readouterr()
    assert "not a directory [io]" in err or "not a directory) [io]" in err
    assert "Test MP" not in out and file.read_text() == "keep"


def test_diff_writes_its_html_into_an_existing_directory(tmp_path: Path) -> None:
    # was: refused, "it is a directory"
    (tmp_path / "report").mkdir()
    assert cli_main(["diff", "pisa", "pisa-rc11", str(MP), "--html", str(tmp_path / "report")]) == 0
    assert (tmp_path / "report" / "index.html").is_file()


def test_import_never_writes_over_its_own_input(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    # was: `import -o DIR DIR/SB+rlx.litmus` replaced the herd test by its translation
    source = tmp_path / "SB+rlx.litmus"
    shutil.copy(ROOT / "tests/data/import/c11/SB+rlx.litmus", source)
    before = source.read_text()
    assert cli_main(["import", "-o", str(tmp_path), str(source)]) == 2
    assert "refusing to write over an input of this run" in capsys.readouterr().out
    assert source.read_text() == before


def test_every_error_raised_in_the_code_names_a_code() -> None:
    # was: 25 errors of the builder and the machine had no [code]
    import ast

    missing = []
    for path in sorted((ROOT / "pisa_mm").rglob("*.py")):
        tree = ast.parse(path.read_text(encoding="utf-8"))
        for node in ast.walk(tree):
            if (
                isinstance(node, ast.Call)
                and isinstance(node.func, ast.Attribute)
                and node.func.attr == "at"
                and isinstance(node.func.value, ast.Name)
                and node.func.value.id == "PisaMMError"
                and len(node.args) < 3
                and not any(k.arg == "code" for k in node.keywords)
            ):
                missing.append(f"{path.relative_to(ROOT)}:{node.lineno}")
    assert not missing


GUARDED_NULL = """PISA WildGuarded
{
  .global .32b @x = 0;
  .global .32b @y = 0;
}
P0 @ wg 0 {
  st.global.32b [@x], 1;
}
P1 @ wg 1 {
  .pred %p0;
  ld.global.relaxed.32b %r1, [@y];
  ucmp.eq.32b %p0, %r1, 1;
  goto.cond !%p0, done;
  mov.64b %r0, ADDRESS;
  st.global.32b [%r0], 1;
done:
}
exists (P1:%r1 == 0)
"""


@pytest.mark.parametrize("engine", ["explicit", "smt", "operational"])
def test_a_constant_null_pointer_never_reached_is_no_error(
    tmp_path: Path, capsys: pytest.CaptureFixture[str], engine: str
) -> None:
    # was: "address 0x0 is outside every variable" (no code): a valid test rejected
    test = tmp_path / "guarded.litmus"
    test.write_text(GUARDED_NULL.replace("ADDRESS", "0"))
    assert cli_main(["run", "--engine", engine, "--no-time", str(test)]) == 0
    out = capsys.readouterr().out
    assert "States 1\nP1:%r1=0;\nOk" in out and "invalid-address" not in out


@pytest.mark.parametrize("address", ["0", "12345", "0x1002"])
@pytest.mark.parametrize("engine", ["explicit", "smt", "operational"])
def test_a_constant_wild_pointer_raises_invalid_address(
    tmp_path: Path, capsys: pytest.CaptureFixture[str], engine: str, address: str
) -> None:
    # reached whenever P1 reads 1 from @y: the flag, and that execution has no final state
    test = tmp_path / "wild.litmus"
    text = GUARDED_NULL.replace("ADDRESS", address)
    test.write_text(text.replace("st.global.32b [@x], 1;", "st.global.relaxed.32b [@y], 1;"))
    assert cli_main(["run", "--engine", engine, "--no-time", str(test)]) == 0
    out = capsys.readouterr().out
    assert "States 1\nP1:%r1=0;\nOk" in out and "Flag invalid-address" in out


def test_crossval_agrees_on_a_constant_wild_pointer(tmp_path: Path) -> None:
    test = tmp_path / "wild.litmus"
    test.write_text(GUARDED_NULL.replace("ADDRESS", "12345").replace("goto.cond !%p0", "//"))
    assert cli_main(["crossval", str(test)]) == 0


@pytest.fixture
def own_model(tmp_path: Path) -> Path:
    """A copy of the shipped pisa model (and its core) next to a copy of the MP test."""
    models = ROOT / "pisa_mm" / "cat" / "models"
    for name in ("pisa.cat", "pisa-core.cat"):
        shutil.copy(models / name, tmp_path / name)
    shutil.copy(MP, tmp_path / "MP.litmus")
    return tmp_path / "pisa.cat"


@pytest.mark.parametrize(
    "argv",
    [
        ["run", "T", "--model", "M", "--json", "M"],
        ["run", "T", "--model", "M", "--junit", "CORE"],
        ["query", "T", "--outcome", "true", "--model", "M", "--dot", "CORE"],
        ["diff", "M", "pisa-rc11", "T", "--json", "M"],
    ],
)
def test_a_report_never_overwrites_the_model_files(
    own_model: Path, capsys: pytest.CaptureFixture[str], argv: list[str]
) -> None:
    # was: --json over the model given to --model (or a file it includes) replaced it
    core = own_model.with_name("pisa-core.cat")
    names = {"T": str(own_model.with_name("MP.litmus")), "M": str(own_model), "CORE": str(core)}
    before = own_model.read_bytes(), core.read_bytes()
    assert cli_main([names.get(a, a) for a in argv]) == 2
    assert "refusing to write over an input of this run" in capsys.readouterr().err
    assert (own_model.read_bytes(), core.read_bytes()) == before


def test_a_report_never_overwrites_the_baseline_it_compares_with(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    test, baseline = tmp_path / MP.name, tmp_path / "base.json"
    shutil.copy(MP, test)
    argv = ["run", "--engine", "explicit", str(test), "--baseline", str(baseline)]
    assert cli_main([*argv, "--update-baseline"]) == 0
    before = baseline.read_bytes()
    assert cli_main([*argv, "--json", str(baseline)]) == 2
    assert "refusing to write over an input" in capsys.readouterr().err
    assert baseline.read_bytes() == before


CLI = "import sys; from pisa_mm.cli import main; sys.exit(main(sys.argv[1:]))"


@pytest.mark.parametrize("argv", [["run", str(MP)], ["parse", str(MP)]])
def test_a_closed_stdout_is_an_io_error(argv: list[str]) -> None:
    # was: exit 3 (sys.stdout is None when fd 1 is closed: `pisa-mm run T >&-`)
    proc = subprocess.run(
        [sys.executable, "-c", CLI, *argv],
        stdout=subprocess.DEVNULL,
        stderr=subprocess.PIPE,
        text=True,
        timeout=60,
        preexec_fn=lambda: os.close(1),
    )
    assert proc.returncode == 2 and "stdout is closed [io]" in proc.stderr


@pytest.mark.skipif(not os.path.exists("/dev/full"), reason="no /dev/full")
@pytest.mark.parametrize("argv", [["--help"], ["run", "--help"], ["--version"]])
def test_help_on_a_full_disk_is_an_io_error(argv: list[str]) -> None:
    # was: exit 0 (argparse swallows the write error), the help lost
    with open("/dev/full", "w") as full:
        proc = subprocess.run(
            [sys.executable, "-c", CLI, *argv], stdout=full, stderr=subprocess.PIPE, text=True
        )
    assert proc.returncode == 2 and "No space left on device [io]" in proc.stderr


def test_a_pool_worker_dies_quietly_on_sigterm() -> None:
    # was: a worker inherited the parent's SIGTERM handler through fork, so the pool's stop
    # (SIGTERM to its workers) made idle workers print an `Interrupted` traceback
    code = (
        "import os, signal, sys\n"
        "from pisa_mm.runner.guard import ignore_interrupts, interruptible\n"
        "r, w = os.pipe()\n"
        "with interruptible():\n"
        "    pid = os.fork()\n"
        "    if pid == 0:\n"
        "        ignore_interrupts()\n"
        "        os.write(w, b'ready')\n"
        "        signal.pause()\n"
        "        os._exit(7)\n"
        "    os.read(r, 5)\n"
        "    os.kill(pid, signal.SIGTERM)\n"
        "    _, status = os.waitpid(pid, 0)\n"
        "    sys.exit(0 if os.WIFSIGNALED(status) else 1)\n"
    )
    proc = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, timeout=60)
    assert proc.returncode == 0 and "Traceback" not in proc.stderr


def test_ctrl_c_while_starting_up_is_an_interrupt(
    monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]
) -> None:
    # was: a KeyboardInterrupt traceback (Ctrl-C while the command's modules were imported)
    from pisa_mm import cli

    def interrupted(only: str | None = None, *, summary: bool = False) -> object:
        raise KeyboardInterrupt

    monkeypatch.setattr(cli, "build_parser", interrupted)
    assert cli.main(["run", str(MP)]) == 130
    assert "pisa-mm: interrupted" in capsys.readouterr().err
