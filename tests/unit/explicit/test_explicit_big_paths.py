"""The evaluator's big-universe paths (row-by-row operations, block transposition, masks made
on first use) on small instances of bench/bench_scale_engine.py's shapes: forced onto the
small universes, the explicit engine gives smt's states and verdict (issue 14). Timings are
bench/bench_scale_engine.py's, never asserted here."""

from __future__ import annotations

import sys
from collections.abc import Callable
from pathlib import Path

import pytest

from pisa_mm.cat import geo as cat_geo
from pisa_mm.cat import rows
from pisa_mm.cat.loader import load_model
from pisa_mm.engines import EngineOptions, available_engines, get_engine
from pisa_mm.events.build import build
from pisa_mm.litmus import parse_test
from pisa_mm.outcomes.model import TestResult
from pisa_mm.runner import job

ROOT = Path(__file__).resolve().parents[3]
sys.path.insert(0, str(ROOT / "bench"))

from bench_scale_engine import SHAPES  # noqa: E402

# (shape, size): a few dozen events each, so that smt answers quickly.
CASES = [
    ("stores", 6),
    ("stores-only", 8),
    ("stores-distinct", 5),
    ("two-writers", 4),
    ("load-store", 2),
    ("loop", 4),
    ("arith", 30),
    ("threads", 12),
    ("loads", 12),
]


def _run(shape: str, n: int, engine: str) -> TestResult:
    test = parse_test(SHAPES[shape](n), f"{shape}.litmus")
    run: Callable[..., TestResult] = get_engine(engine)
    structure = build(test, unroll=job.test_unroll(test, None))
    return run(test, structure, load_model("pisa"), EngineOptions())


@pytest.mark.skipif("smt" not in available_engines(), reason="z3 not installed")
@pytest.mark.parametrize(("shape", "n"), CASES)
def test_big_paths_agree_with_smt(shape: str, n: int, monkeypatch: pytest.MonkeyPatch) -> None:
    smt = _run(shape, n, "smt")
    # Every universe takes the paths of thousands of events: rows, blocks of 8 events.
    monkeypatch.setattr(cat_geo, "_BIG", 0)
    monkeypatch.setattr(cat_geo, "_SMALL", 0)
    monkeypatch.setattr(cat_geo, "_KEPT_BYTES", 0)
    monkeypatch.setattr(rows, "_BLOCK", 8)
    explicit = _run(shape, n, "explicit")
    assert explicit.states == smt.states
    assert explicit.verdict == smt.verdict
    assert [f.name for f in explicit.flags] == [f.name for f in smt.flags]


def test_shapes_have_the_hand_derived_states() -> None:
    # why: P0's stores are po-ordered, so coherence (po-loc in co) makes its last store
    # co-last: @x ends as 7 with no reader (stores-only), and P1's load may read the init
    # or any store (no synchronisation orders it): 0..4 with distinct values
    only = _run("stores-only", 8, "explicit")
    assert [str(s) for s in only.states] == ["@x=7;"]
    distinct = _run("stores-distinct", 5, "explicit")
    assert [str(s) for s in distinct.states] == [f"P1:%r0={v};" for v in range(5)]
    # why: each of the loop's 4 iterations stores its counter (0..3); the reader reads the
    # init, or one of them (the init and the first store both give 0: 2 positive)
    loop = _run("loop", 4, "explicit")
    assert [str(s) for s in loop.states] == [f"P1:%r0={v};" for v in range(4)]
    assert (loop.positive, loop.negative) == (2, 3)
