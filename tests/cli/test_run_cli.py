"""`pisa-mm run`, `promote` and `diff` as a user calls them."""

from __future__ import annotations

import json
from dataclasses import replace
from pathlib import Path

import pytest
from cli_helpers import BAD, LB, MP, Capture, pisa_mm, write

from pisa_mm.cat import load_model
from pisa_mm.commands import run as run_cmd
from pisa_mm.engines import EngineOptions
from pisa_mm.explicit.engine import run_test as explicit_run_test
from pisa_mm.outcomes.model import State, Verdict
from pisa_mm.report.herd import render_result
from pisa_mm.runner import job as job_mod


def test_run_prints_herd_blocks_and_a_summary(tmp_path: Path, capsys: Capture) -> None:
    test = write(tmp_path, "MP.litmus", MP)
    assert pisa_mm("run", str(test), "--engine", "explicit") == 0
    out = capsys.readouterr().out
    assert out.startswith("Test MP+rel+acq Allowed\nStates 3\n")
    assert "\nNo\nWitnesses\nPositive: 0 Negative: 3\nFlag data-race\n" in out
    assert "Observation MP+rel+acq Never 0 3\nTime MP+rel+acq " in out
    assert out.rstrip().endswith(
        "1 tests, 0 ok, 0 failed, 1 without expectation (explicit, model pisa)"
    )


def test_directories_are_searched_in_sorted_order(tmp_path: Path, capsys: Capture) -> None:
    write(tmp_path, "b/MP.litmus", MP)
    write(tmp_path, "a/LB.litmus", LB)
    assert pisa_mm("run", str(tmp_path), "--engine", "explicit") == 0
    out = capsys.readouterr().out
    assert out.index("Test LB ") < out.index("Test MP+rel+acq ")


def test_a_bad_file_is_reported_and_the_others_still_run(tmp_path: Path, capsys: Capture) -> None:
    write(tmp_path, "a.litmus", BAD)
    write(tmp_path, "b.litmus", MP)
    assert pisa_mm("run", str(tmp_path), "--engine", "explicit") == 2
    captured = capsys.readouterr()
    assert "a.litmus:7:3: error:" in captured.err
    assert "Test MP+rel+acq" in captured.out
    assert "2 tests, 0 ok, 0 failed, 1 without expectation, 1 bad input" in captured.out


def test_missing_input_is_bad_input(tmp_path: Path, capsys: Capture) -> None:
    assert pisa_mm("run", str(tmp_path / "nope.litmus")) == 2
    assert "no such file or directory" in capsys.readouterr().err


def test_promote_then_run_checks_the_expectation(tmp_path: Path, capsys: Capture) -> None:
    test = write(tmp_path, "MP.litmus", MP)
    assert pisa_mm("promote", str(test), "--engine", "explicit") == 0
    assert f"created {test}.expected" in capsys.readouterr().out
    expected = Path(f"{test}.expected").read_text(encoding="utf-8")
    assert expected.startswith("Test MP+rel+acq Allowed") and "Time" not in expected
    assert pisa_mm("promote", str(test), "--engine", "explicit") == 0
    assert "0 created, 0 updated, 1 unchanged" in capsys.readouterr().out
    assert pisa_mm("run", str(test), "--engine", "explicit", "--check") == 0


def test_a_changed_result_fails_against_its_expectation(tmp_path: Path, capsys: Capture) -> None:
    test = write(tmp_path, "MP.litmus", MP)
    assert pisa_mm("promote", str(test), "--engine", "explicit") == 0
    # the recorded answer of another model: pisa must now disagree with it
    lb = write(tmp_path, "LB.litmus", LB)
    assert pisa_mm("promote", str(lb), "--engine", "explicit", "--model", "pisa-rc11") == 0
    Path(f"{lb}.pisa-rc11.expected").rename(f"{lb}.expected")
    capsys.readouterr()
    assert pisa_mm("run", str(tmp_path), "--engine", "explicit") == 1
    err = capsys.readouterr().err
    assert f"FAIL {lb}" in err
    assert "verdict: expected No, explicit Ok" in err
    assert "states only in explicit: P0:%r0=1; P1:%r0=1;" in err


def test_check_requires_an_expectation(tmp_path: Path, capsys: Capture) -> None:
    test = write(tmp_path, "MP.litmus", MP)
    assert pisa_mm("run", str(test), "--engine", "explicit", "--check") == 1
    assert "no expectation file" in capsys.readouterr().err


def test_json_output(tmp_path: Path, capsys: Capture) -> None:
    test = write(tmp_path, "MP.litmus", MP)
    out = tmp_path / "out.json"
    assert pisa_mm("run", str(test), "--engine", "explicit", "--json", str(out)) == 0
    (r,) = json.loads(out.read_text(encoding="utf-8"))["results"]
    assert (r["name"], r["verdict"], r["positive"], r["negative"]) == ("MP+rel+acq", "No", 0, 3)
    capsys.readouterr()
    assert pisa_mm("run", str(test), "--engine", "explicit", "--json", "-") == 0
    assert json.loads(capsys.readouterr().out)["results"][0]["engine"] == "explicit"


def test_engine_disagreement_is_reported_precisely(
    tmp_path: Path, capsys: Capture, monkeypatch: pytest.MonkeyPatch
) -> None:
    def liar(*args: object) -> object:
        r = explicit_run_test(*args)  # type: ignore[arg-type]
        return replace(r, engine="liar", verdict=Verdict.OK, flags=())

    real_get = run_cmd.get_engine
    monkeypatch.setattr(run_cmd, "EXACT_ENGINES", frozenset({"explicit", "liar"}))
    monkeypatch.setattr(run_cmd, "available_engines", lambda: ("explicit", "liar"))
    fake = lambda name: liar if name == "liar" else real_get(name)  # noqa: E731
    monkeypatch.setattr(run_cmd, "get_engine", fake)
    monkeypatch.setattr(job_mod, "get_engine", fake)
    test = write(tmp_path, "MP.litmus", MP)
    assert pisa_mm("run", str(test), "--engine", "all") == 1
    err = capsys.readouterr().err
    assert f"FAIL {test}" in err
    assert "explicit vs liar: verdict: explicit No, liar Ok" in err
    assert "explicit vs liar: flags only in explicit: data-race" in err


def test_diff_lists_what_a_model_change_changes(tmp_path: Path, capsys: Capture) -> None:
    write(tmp_path, "MP.litmus", MP)
    lb = write(tmp_path, "LB.litmus", LB)
    assert pisa_mm("diff", "pisa", "pisa-rc11", str(tmp_path), "--engine", "explicit") == 0
    out = capsys.readouterr().out
    assert f"CHANGED LB ({lb})" in out
    assert "verdict: old (pisa) Ok, new (pisa-rc11) No" in out
    assert "MP+rel+acq" not in out
    assert "2 tests, 1 changed, 1 unchanged" in out


def test_an_under_approximating_engine_must_only_stay_below(
    tmp_path: Path, capsys: Capture, monkeypatch: pytest.MonkeyPatch
) -> None:
    """An engine outside EXACT_ENGINES (the operational machine) may miss states, not add."""
    extra = State((("P1:%r0", 1), ("P1:%r1", 0)))

    def below(*args: object) -> object:
        r = explicit_run_test(*args)  # type: ignore[arg-type]
        return replace(r, engine="below", states=r.states[:1], counts_executions=False)

    def beyond(*args: object) -> object:
        r = explicit_run_test(*args)  # type: ignore[arg-type]
        return replace(r, engine="beyond", states=(*r.states, extra), counts_executions=False)

    real_get = run_cmd.get_engine
    fakes = {"below": below, "beyond": beyond}
    fake = lambda name: fakes.get(name) or real_get(name)  # noqa: E731
    monkeypatch.setattr(run_cmd, "get_engine", fake)
    monkeypatch.setattr(job_mod, "get_engine", fake)
    for name in fakes:  # both claim to stay below the default model
        monkeypatch.setitem(run_cmd.BOUNDED_BY, name, frozenset({"pisa"}))
    test = write(tmp_path, "MP.litmus", MP)
    monkeypatch.setattr(run_cmd, "available_engines", lambda: ("explicit", "below"))
    assert pisa_mm("run", str(test), "--engine", "all") == 0
    monkeypatch.setattr(run_cmd, "available_engines", lambda: ("explicit", "beyond"))
    capsys.readouterr()
    assert pisa_mm("run", str(test), "--engine", "all") == 1
    err = capsys.readouterr().err
    assert "explicit vs beyond: states only in beyond: P1:%r0=1; P1:%r1=0;" in err


def test_a_malformed_expectation_is_bad_input(tmp_path: Path, capsys: Capture) -> None:
    test = write(tmp_path, "MP.litmus", MP)
    write(tmp_path, "MP.litmus.expected", "Test MP+rel+acq Allowed\nStates two\n")
    assert pisa_mm("run", str(test), "--engine", "explicit") == 2
    err = capsys.readouterr().err
    assert f"{test}.expected:2:1: error: malformed expectation: expected `States N`" in err


def test_verbose_prints_flag_witnesses(tmp_path: Path, capsys: Capture) -> None:
    test = write(tmp_path, "MP.litmus", MP)
    assert pisa_mm("run", str(test), "--engine", "explicit", "-v") == 0
    out = capsys.readouterr().out
    assert "  data-race: P0: st.global.32b [@x], 1 / P1: ld.global.32b %r1, [@x]" in out


@pytest.mark.parametrize("value", ["0", "-1", "nan", "inf", "1e300", "soon"])
def test_a_bad_timeout_is_a_usage_error(tmp_path: Path, capsys: Capture, value: str) -> None:
    test = write(tmp_path, "MP.litmus", MP)
    assert pisa_mm("run", str(test), "--timeout", value) == 2
    assert "argument --timeout:" in capsys.readouterr().err


def test_an_unknown_verdict_claims_no_observation(tmp_path: Path) -> None:
    loaded = run_cmd.load(str(write(tmp_path, "MP.litmus", MP)), unroll=None, strict=False)
    assert loaded.test is not None and loaded.structure is not None
    result = explicit_run_test(loaded.test, loaded.structure, load_model("pisa"), EngineOptions())
    text = render_result(replace(result, verdict=Verdict.UNKNOWN), time=False)
    assert "\nUnknown\n" in text
    assert f"Observation {result.name} Unknown " in text
