"""The benchmark's generated families parse, and both engines agree on their small sizes."""

from __future__ import annotations

import importlib.util
import sys
from pathlib import Path
from types import ModuleType

import pytest

from pisa_mm.cat.loader import load_model
from pisa_mm.commands.run import test_unroll as unroll_of
from pisa_mm.engines import EngineOptions, get_engine
from pisa_mm.events.build import build
from pisa_mm.litmus import parse_test
from pisa_mm.outcomes.model import Verdict

ROOT = Path(__file__).resolve().parents[3]


def _families() -> ModuleType:
    spec = importlib.util.spec_from_file_location("bench_families", ROOT / "bench" / "families.py")
    assert spec is not None and spec.loader is not None
    module = importlib.util.module_from_spec(spec)
    sys.modules.setdefault("bench_families", module)
    spec.loader.exec_module(module)
    return module


FAMILIES = _families().FAMILIES
CASES = [(name, size) for name, (_, sizes) in FAMILIES.items() for size in list(sizes)[:2]]


@pytest.mark.parametrize(("family", "size"), CASES, ids=[f"{f}-{s}" for f, s in CASES])
def test_engines_agree_on_small_family_members(family: str, size: int) -> None:
    generate, _ = FAMILIES[family]
    test = parse_test(generate(size), f"{family}-{size}.litmus")
    es = build(test, unroll=unroll_of(test, None))
    model = load_model("pisa")
    smt = get_engine("smt")(test, es, model, EngineOptions())
    explicit = get_engine("explicit")(test, es, model, EngineOptions())
    assert smt.verdict is not Verdict.UNKNOWN
    assert (smt.states, smt.verdict, smt.cut > 0) == (
        explicit.states,
        explicit.verdict,
        explicit.cut > 0,
    )
    assert sorted(f.name for f in smt.flags) == sorted(f.name for f in explicit.flags)
