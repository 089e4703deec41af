"""`pisa-mm diff` explains each change: separating state, witness, axiom and cycle, JSON."""

from __future__ import annotations

import json
from pathlib import Path

import pytest
from cli_helpers import LB, MP, Capture, pisa_mm, write

from pisa_mm.runner.outcome import Exit

ROOT = Path(__file__).resolve().parents[2]


def test_diff_explains_load_buffering_by_no_thin_air(tmp_path: Path, capsys: Capture) -> None:
    write(tmp_path, "MP.litmus", MP)
    lb = write(tmp_path, "LB.litmus", LB)
    report = tmp_path / "diff.json"
    code = pisa_mm("diff", "pisa", "pisa-rc11", str(tmp_path), "--json", str(report))
    assert code == Exit.OK  # the list is the answer unless --fail-on-change
    out = capsys.readouterr().out
    assert "separating state: P0:%r0=1; P1:%r0=1; allowed by pisa, forbidden by pisa-rc11" in out
    assert "witness under pisa:" in out
    # the witness's events carry their PISA lines, then rf and co
    assert f"ld.global.relaxed.32b %r0, [@x]  ({lb}:" in out
    assert "-rf-> e" in out and "-co-> e" in out
    assert "pisa-rc11 forbids it by no-thin-air:" in out
    assert "no-thin-air: the violating cycle:" in out
    assert "Changed tests by responsible axiom (or flag):\n  no-thin-air: 1 (LB)\n" in out
    doc = json.loads(report.read_text())
    assert doc["format"] == 1 and (doc["old"], doc["new"], doc["tests"]) == ("pisa", "pisa-rc11", 2)
    assert doc["by_responsible"] == {"no-thin-air": ["LB"]}
    (change,) = doc["changed"]
    state = change["state"]
    assert state["values"] == {"P0:%r0": 1, "P1:%r0": 1}
    assert (state["allowed_by"], state["forbidden_by"]) == ("pisa", "pisa-rc11")
    assert state["axioms"] == ["no-thin-air"]
    witness = state["witness"]
    reads = [e for e in witness["events"] if e["kind"] == "R"]
    assert {e["value"] for e in reads} == {1}
    assert all(any(r == e["id"] for _, r in witness["rf"]) for e in reads)
    cycle = state["cycles"]["no-thin-air"]
    assert cycle[0]["src"] == cycle[-1]["dst"] and len(cycle) == 4


def test_fail_on_change(tmp_path: Path, capsys: Capture) -> None:
    write(tmp_path, "MP.litmus", MP)
    assert pisa_mm("diff", "pisa", "pisa-rc11", str(tmp_path), "--fail-on-change") == Exit.OK
    write(tmp_path, "LB.litmus", LB)
    code = pisa_mm("diff", "pisa", "pisa-rc11", str(tmp_path), "--fail-on-change")
    assert code == Exit.NEGATIVE


def test_identical_models_are_said_so_at_once(tmp_path: Path, capsys: Capture) -> None:
    write(tmp_path, "LB.litmus", LB)
    assert pisa_mm("diff", "pisa-rc11", "pisa-rc11", str(tmp_path)) == Exit.OK
    captured = capsys.readouterr()
    assert "are the same model" in captured.out and "CHANGED" not in captured.out
    # the same text under another file name is the same model too
    copy = tmp_path / "mine.cat"
    models = ROOT / "pisa_mm/cat/models"
    copy.write_text((models / "pisa.cat").read_text())
    (tmp_path / "pisa-core.cat").write_text((models / "pisa-core.cat").read_text())
    assert pisa_mm("diff", "pisa", str(copy), str(tmp_path / "LB.litmus")) == Exit.OK
    assert "are the same model" in capsys.readouterr().out


def test_json_path_is_checked_before_any_work(tmp_path: Path, capsys: Capture) -> None:
    lb = write(tmp_path, "LB.litmus", LB)
    code = pisa_mm("diff", "pisa", "pisa-rc11", str(lb), "--json", str(tmp_path))
    assert code == Exit.BAD_INPUT
    assert "is a directory" in capsys.readouterr().err
    assert pisa_mm("diff", "pisa", "pisa-rc11", str(lb), "--json", str(lb)) == Exit.BAD_INPUT
    assert "refusing to write over an input" in capsys.readouterr().err


@pytest.mark.parametrize("engine", ["explicit", "smt"])
def test_each_engine_is_explained(tmp_path: Path, capsys: Capture, engine: str) -> None:
    write(tmp_path, "LB.litmus", LB)
    assert pisa_mm("diff", "pisa", "pisa-rc11", str(tmp_path), "--engine", engine) == 0
    assert "pisa-rc11 forbids it by no-thin-air:" in capsys.readouterr().out


def test_a_flag_only_change_names_the_flag_and_its_pair(tmp_path: Path, capsys: Capture) -> None:
    test = ROOT / "litmus/pisa/race/HRace+rel.wg+cas-fail.rel.sys+same-wg.litmus"
    report = tmp_path / "d.json"
    assert pisa_mm("diff", "pisa", "pisa-samescope", str(test), "--json", str(report)) == 0
    out = capsys.readouterr().out
    assert "flag heterogeneous-race raised under pisa-samescope only:" in out
    assert "e1 P0 W rel.wg @x  st.global.release.workgroup.32b [@x], 1" in out
    assert "separating state" not in out  # the same states: only the flag separates
    assert "  flag heterogeneous-race: 1 (HRace+rel.wg+cas-fail.rel.sys+same-wg)\n" in out
    (change,) = json.loads(report.read_text())["changed"]
    assert change["state"] is None and change["responsible"] == "flag heterogeneous-race"
    (flag,) = change["flags"]
    assert (flag["name"], flag["raised_by"]) == ("heterogeneous-race", "pisa-samescope")
    assert [e["id"] for e in flag["events"]] == [1, 3]
