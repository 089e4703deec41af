"""The projected all-solutions search (smt/allsat.py) against brute force on small formulas."""

from __future__ import annotations

import itertools
from typing import Any

import pytest
import z3

from pisa_mm.smt import allsat
from pisa_mm.smt.solver import Budget, Session


def _solve(constraint: Any, names: list[str], width: int, **budget: Any) -> allsat.Projection[str]:
    s = Session(Budget(**budget), bit_vectors_only=True)
    xs = {n: z3.BitVec(n, width) for n in names}
    hidden = z3.BitVec("hidden", width)  # not projected: solutions differing only here merge
    s.add(constraint(xs, hidden))
    active = z3.Bool("active")
    defined: dict[tuple[str, int], Any] = {}

    def is_value(k: str, v: int) -> Any:
        if (k, v) not in defined:
            b = defined[(k, v)] = z3.Bool(f"is!{k}!{v}")
            s.add(b == (xs[k] == v))
        return defined[(k, v)]

    def values_of(m: Any) -> dict[str, int]:
        return {n: m.eval(x, model_completion=True).as_long() for n, x in xs.items()}

    return allsat.project(s, active, names, is_value, values_of)


def _brute(pred: Any, names: list[str], width: int) -> set[tuple[int, ...]]:
    out = set()
    for vals in itertools.product(range(1 << width), repeat=len(names)):
        if any(pred(dict(zip(names, vals, strict=True)), h) for h in range(1 << width)):
            out.add(vals)
    return out


CASES = {
    # a sparse relation: y is a function of x (probing wastes most checks: models take over)
    "function": (
        lambda xs, h: z3.And(xs["y"] == xs["x"] * 3 + 1, xs["z"] == h),
        lambda v, h: v["y"] == (v["x"] * 3 + 1) % 16 and v["z"] == h,
    ),
    # a dense one: almost every combination
    "dense": (
        lambda xs, h: z3.Or(xs["x"] != xs["y"], xs["z"] == h + 1, h == 2),
        lambda v, h: v["x"] != v["y"] or v["z"] == (h + 1) % 16 or h == 2,
    ),
    "empty": (
        lambda xs, h: z3.And(xs["x"] == 1, xs["x"] == 2),
        lambda v, h: False,
    ),
}


@pytest.mark.parametrize("name", sorted(CASES))
@pytest.mark.parametrize("trial", [0, allsat.PROBE_TRIAL, 10**6])
@pytest.mark.parametrize("blocking", [0, 5, allsat.BLOCKING])
def test_the_projection_is_exactly_the_set_of_solutions(
    name: str, trial: int, blocking: int, monkeypatch: pytest.MonkeyPatch
) -> None:
    # trial 0: levels decide at once how to search; 10**6: every level probes its domain;
    # blocking: how many solutions blocking clauses find before the search takes the rest
    monkeypatch.setattr(allsat, "PROBE_TRIAL", trial)
    monkeypatch.setattr(allsat, "BLOCKING", blocking)
    build, pred = CASES[name]
    names = ["x", "y", "z"]
    got = _solve(build, names, 4)
    assert got.complete
    tuples = [tuple(s[n] for n in names) for s in got.solutions]
    assert len(tuples) == len(set(tuples))  # each solution once
    assert set(tuples) == _brute(pred, names, 4)


def test_no_keys_gives_one_empty_solution_when_satisfiable() -> None:
    got = _solve(lambda xs, h: h == 3, [], 2)
    assert got.solutions == ({},) and got.complete


def test_a_solver_that_gives_up_marks_the_projection_incomplete() -> None:
    got = _solve(lambda xs, h: z3.BoolVal(True), ["x", "y"], 4, rlimit=1)
    assert not got.complete


def test_trusted_levels_and_learned_nogoods_keep_the_projection_exact(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    # five keys over 2 bits, a dense relation with some pairs excluded: levels are trusted
    # at once (trial 0) and failed probes leave nogoods that later probes skip on
    monkeypatch.setattr(allsat, "PROBE_TRIAL", 0)
    monkeypatch.setattr(allsat, "BLOCKING", 0)
    seen: dict[str, Any] = {}
    walk = allsat._walk

    def spy(search: Any, *args: Any) -> None:
        walk(search, *args)
        seen["trusted"], seen["nogoods"] = list(search.trusted), dict(search.nogoods)

    monkeypatch.setattr(allsat, "_walk", spy)
    names = ["a", "b", "c", "d", "e"]

    def build(xs: dict[str, Any], h: Any) -> Any:
        return z3.And(xs["a"] != xs["e"], xs["b"] + xs["d"] != 3, z3.Or(xs["c"] != 1, h == 0))

    def pred(v: dict[str, int], h: int) -> bool:
        return v["a"] != v["e"] and (v["b"] + v["d"]) % 4 != 3 and (v["c"] != 1 or h == 0)

    got = _solve(build, names, 2)
    assert got.complete
    tuples = [tuple(s[n] for n in names) for s in got.solutions]
    assert len(tuples) == len(set(tuples))
    assert set(tuples) == _brute(pred, names, 2)
    assert any(seen["trusted"]) and seen["nogoods"]
