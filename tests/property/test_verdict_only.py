"""`--verdict-only` (EngineOptions.verdict_only): every engine's verdict equals the verdict of
its full run, and its cut mark says exactly "some allowed execution was cut and no execution
witnesses the verdict", on the bundled tests (a sample by default, all with -m slow)."""

from __future__ import annotations

from pathlib import Path

import pytest
from suite_files import GENERATED, GENERATED_SAMPLE, HAND_WRITTEN, ROOT

from pisa_mm.engines import EngineOptions, get_engine
from pisa_mm.outcomes.condition import witnessed
from pisa_mm.outcomes.model import TestResult, Verdict
from pisa_mm.runner.job import cached_model, load_source
from pisa_mm.runner.job import test_unroll as unroll_of

ENGINES = ("smt", "explicit", "operational", "auto")
SAMPLE = HAND_WRITTEN[::6] + GENERATED_SAMPLE[::3]


def _results(path: Path, engine: str) -> tuple[TestResult, TestResult] | None:
    item = load_source(str(path), path.read_text(), unroll=None, strict=False)
    if item.test is None or item.structure is None:
        return None  # a test of bad input
    model = cached_model("pisa")
    run = get_engine(engine)
    unroll = unroll_of(item.test, None)
    full = run(item.test, item.structure, model, EngineOptions(unroll=unroll))
    quick = run(item.test, item.structure, model, EngineOptions(unroll=unroll, verdict_only=True))
    return full, quick


def _check(path: Path, engine: str) -> None:
    got = _results(path, engine)
    if got is None:
        return
    full, quick = got
    assert quick.verdict_only and not full.verdict_only
    assert quick.verdict is full.verdict, path
    assert quick.states == () and quick.flags == () and quick.positive == quick.negative == 0
    bounded = full.cut > 0 and not witnessed(full.quantifier, full.verdict is Verdict.OK)
    assert quick.cut == int(bounded), path


@pytest.mark.parametrize("engine", ENGINES)
@pytest.mark.parametrize("path", SAMPLE, ids=lambda p: str(p.relative_to(ROOT)))
def test_the_verdict_alone_is_the_full_runs_verdict(path: Path, engine: str) -> None:
    _check(path, engine)


@pytest.mark.slow
@pytest.mark.parametrize("engine", ("smt", "explicit"))
@pytest.mark.parametrize("path", HAND_WRITTEN + GENERATED, ids=lambda p: str(p.relative_to(ROOT)))
def test_the_verdict_alone_is_the_full_runs_verdict_on_every_bundled_test(
    path: Path, engine: str
) -> None:
    _check(path, engine)
