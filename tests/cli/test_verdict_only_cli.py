"""`pisa-mm run --verdict-only`: the verdict block, its comparison with expectations, JSON,
and the outputs that need states refusing it."""

from __future__ import annotations

import json
from pathlib import Path

import pytest
from cli_helpers import LB, MP, write

from pisa_mm import cli

Capture = pytest.CaptureFixture[str]


def pisa_mm(*argv: str) -> int:
    return cli.main(list(argv))


@pytest.mark.parametrize("engine", ["smt", "explicit", "operational", "auto"])
def test_the_block_has_the_verdict_and_no_states(
    tmp_path: Path, capsys: Capture, engine: str
) -> None:
    test = write(tmp_path, "MP.litmus", MP)
    assert pisa_mm("run", str(test), "--engine", engine, "--verdict-only", "--no-time") == 0
    out = capsys.readouterr().out
    assert out.startswith(
        "Test MP+rel+acq Allowed\n"
        "Verdict only: states, witnesses and flags not computed (--verdict-only)\n"
        "No\n"
        "Condition exists (P1:%r0=1 /\\ P1:%r1=0)\n"
    )
    assert "States" not in out and "Observation" not in out and "Flag" not in out


def test_expectations_compare_on_the_verdict_only(tmp_path: Path, capsys: Capture) -> None:
    test = write(tmp_path, "MP.litmus", MP)
    assert pisa_mm("promote", str(test), "--engine", "explicit") == 0
    expected = Path(f"{test}.expected")
    # states, counts and flags that are wrong but the verdict right: a verdict-only run passes
    text = expected.read_text(encoding="utf-8").replace("Flag data-race\n", "")
    expected.write_text(text, encoding="utf-8")
    capsys.readouterr()
    assert pisa_mm("run", str(test), "--verdict-only", "--check") == 0
    assert pisa_mm("run", str(test), "--check") == 1  # a full run sees the flag missing
    # a wrong verdict fails both
    expected.write_text(text.replace("\nNo\n", "\nOk\n"), encoding="utf-8")
    capsys.readouterr()
    assert pisa_mm("run", str(test), "--verdict-only", "--check") == 1
    assert "verdict: expected Ok, explicit No" in capsys.readouterr().err


def test_engines_compared_on_the_verdict(tmp_path: Path, capsys: Capture) -> None:
    write(tmp_path, "MP.litmus", MP)
    write(tmp_path, "LB.litmus", LB)
    assert pisa_mm("run", str(tmp_path), "--engine", "all", "--verdict-only") == 0
    assert "2 tests" in capsys.readouterr().out


def test_json_marks_verdict_only_results(tmp_path: Path, capsys: Capture) -> None:
    test = write(tmp_path, "MP.litmus", MP)
    out = tmp_path / "out.json"
    assert pisa_mm("run", str(test), "--verdict-only", "--json", str(out)) == 0
    doc = json.loads(out.read_text(encoding="utf-8"))
    (r,) = doc["results"]
    assert doc["version"] == 5
    assert r["verdict_only"] is True and r["verdict"] == "No"
    assert r["states"] == [] and r["flags"] == [] and r["observation"] is None


@pytest.mark.parametrize(
    "extra", [["--baseline", "b.json"], ["--herd-log"], ["--graphs", "g"], ["--html", "h"]]
)
def test_outputs_that_need_states_refuse_it(
    tmp_path: Path, capsys: Capture, extra: list[str]
) -> None:
    test = write(tmp_path, "MP.litmus", MP)
    extra = [str(tmp_path / e) if not e.startswith("--") else e for e in extra]
    assert pisa_mm("run", str(test), "--verdict-only", *extra) == 2
    err = capsys.readouterr().err
    assert "--verdict-only lists no final states" in err and extra[0] in err
