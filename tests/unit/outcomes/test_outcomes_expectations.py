"""Result blocks: herd text, `.expected` parsing and comparison, JSON."""

from __future__ import annotations

import json
from dataclasses import replace

import pytest

from pisa_mm.errors import PisaMMError
from pisa_mm.litmus.program import RegObs
from pisa_mm.outcomes.expectations import (
    compare,
    expected_path,
    from_result,
    parse_expectation,
    render_expectation,
)
from pisa_mm.outcomes.model import FlagWitness, State, TestResult, Verdict
from pisa_mm.report.herd import render_result
from pisa_mm.report.json import results_to_json

MP = TestResult(
    name="MP+rel+acq",
    model="pisa",
    engine="explicit",
    quantifier="exists",
    observables=(RegObs(1, "r0"), RegObs(1, "r1")),
    states=(
        State((("P1:%r0", 0), ("P1:%r1", 1))),
        State((("P1:%r0", 0), ("P1:%r1", 0))),
        State((("P1:%r0", 1), ("P1:%r1", 1))),
    ),
    verdict=Verdict.NO,
    positive=0,
    negative=3,
    flags=(FlagWitness("data-race", (2, 6), "P0: st [@x], 1 / P1: ld %r1, [@x]"),),
    cut=0,
    condition_text="exists (P1:%r0=1 /\\ P1:%r1=0)",
    seconds=0.0123,
)

HERD = """\
Test MP+rel+acq Allowed
States 3
P1:%r0=0; P1:%r1=0;
P1:%r0=0; P1:%r1=1;
P1:%r0=1; P1:%r1=1;
No
Witnesses
Positive: 0 Negative: 3
Flag data-race
Condition exists (P1:%r0=1 /\\ P1:%r1=0)
Observation MP+rel+acq Never 0 3
Time MP+rel+acq 0.01
"""


def test_herd_block_is_exactly_herds_format() -> None:
    assert render_result(MP) == HERD


def test_expectation_is_the_block_without_time() -> None:
    assert render_expectation(MP) == HERD.replace("Time MP+rel+acq 0.01\n", "")


def test_quantifier_words() -> None:
    assert render_result(replace(MP, quantifier="~exists")).startswith("Test MP+rel+acq Forbidden")
    assert render_result(replace(MP, quantifier="forall")).startswith("Test MP+rel+acq Required")


def test_round_trip() -> None:
    cut_flag = FlagWitness("data-race", (2, 6), "P0: st [@x], 1 / P1: ld %r1, [@x]", cut=True)
    for r in (
        MP,
        replace(MP, cut=3, flags=()),
        replace(MP, cut=2, counts_executions=False),
        replace(MP, cut=1, flags=(cut_flag,)),
        replace(MP, counts_executions=False),
    ):
        assert parse_expectation(render_expectation(r)) == from_result(r)


def test_cut_executions_get_their_own_lines() -> None:
    cut_flag = FlagWitness("data-race", (2, 6), "P0: st [@x], 1 / P1: ld %r1, [@x]", cut=True)
    text = render_expectation(replace(MP, cut=3, flags=(cut_flag,)))
    assert "Flag data-race (cut)\n" in text
    assert (
        "Cut: 3 executions truncated by the unroll bound (not final states: states and verdict "
        "come from complete executions only; a verdict witnessed by a complete execution holds "
        "at every larger bound)\n"
    ) in text
    states_only = render_expectation(replace(MP, cut=2, counts_executions=False))
    assert "Cut: 2 distinct states of executions truncated by the unroll bound (" in states_only
    assert from_result(replace(MP, cut=1, flags=(cut_flag,))).flags == {"data-race (cut)"}


def test_cut_counts_compare_like_the_other_counts() -> None:
    three, one = from_result(replace(MP, cut=3)), from_result(replace(MP, cut=1))
    assert compare(three, one) == ["unroll cut: expected 3, result 1"]
    states_only = from_result(replace(MP, cut=1, counts_executions=False))
    assert compare(three, states_only) == []
    assert compare(from_result(MP), states_only) == ["unroll cut: expected 0, result 1"]


def test_a_malformed_cut_line_is_located() -> None:
    text = render_expectation(replace(MP, cut=3)).replace("Cut: 3 executions", "Cut: many")
    with pytest.raises(PisaMMError) as info:
        parse_expectation(text, "x.litmus.expected")
    assert "Cut: N executions" in info.value.diagnostics[0].message


def test_identical_results_compare_equal() -> None:
    assert compare(from_result(MP), from_result(replace(MP, seconds=5.0, engine="smt"))) == []


def test_differences_are_named() -> None:
    other = replace(
        MP,
        states=(*MP.states, State((("P1:%r0", 1), ("P1:%r1", 0)))),
        verdict=Verdict.OK,
        positive=1,
        flags=(),
    )
    diffs = compare(from_result(MP), from_result(other), ("explicit", "smt"))
    assert "verdict: explicit No, smt Ok" in diffs
    assert "states only in smt: P1:%r0=1; P1:%r1=0;" in diffs
    assert "flags only in explicit: data-race" in diffs
    assert any(d.startswith("counts:") for d in diffs)


def test_state_counting_engines_compare_only_what_they_know() -> None:
    states_only = replace(MP, positive=0, negative=2, counts_executions=False)
    assert compare(from_result(MP), from_result(states_only)) == []
    flipped = replace(states_only, positive=1, negative=0)
    assert compare(from_result(MP), from_result(flipped))


def test_malformed_expectation_points_at_the_line() -> None:
    text = render_expectation(MP).replace("Witnesses\n", "Witnesess\n")
    with pytest.raises(PisaMMError) as info:
        parse_expectation(text, "x.litmus.expected")
    (d,) = info.value.diagnostics
    assert d.span is not None and d.span.line == 7
    assert "Witnesses" in d.message


def test_expected_paths() -> None:
    assert expected_path("a/X.litmus") == "a/X.litmus.expected"
    assert expected_path("a/X.litmus", "pisa-rc11") == "a/X.litmus.pisa-rc11.expected"


def test_json_report() -> None:
    doc = json.loads(results_to_json([("t/MP.litmus", MP, ["a difference"])]))
    (r,) = doc["results"]
    assert r["file"] == "t/MP.litmus" and r["verdict"] == "No"
    assert r["states"][0] == {"P1:%r0": 0, "P1:%r1": 0}
    assert r["flags"] == [
        {
            "name": "data-race",
            "events": [2, 6],
            "description": "P0: st [@x], 1 / P1: ld %r1, [@x]",
            "cut": False,
        }
    ]
    assert r["cut"] == 0 and doc["version"] == 5
    assert r["observation"] == "Never" and r["mismatches"] == ["a difference"]
