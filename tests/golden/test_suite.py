"""Golden tests for the litmus suite: recorded expectations per engine, and hand verdicts.

1. Every `litmus/**/X.litmus` with an `X.litmus.expected` next to it must give the recorded
   result under every available engine (`pisa-mm promote` rewrites the files on purpose);
   the operational machine, which may miss states, must find no state or flag beyond it.
   The generated suite litmus/gen is checked on a fixed sample by default, whole with
   `-m slow` (tests/suite_files.py).
2. Every hand-written suite test carries hand-derived metadata, `expect = Ok|No` and
   `flags = none|a, b` (with per-model overrides `expect.MODEL` / `flags.MODEL`): the
   reference (explicit) engine must agree under `pisa` and each model named. This is the
   check that does not trust any engine.
"""

from __future__ import annotations

from pathlib import Path

import pytest
from suite_files import GENERATED, GENERATED_SAMPLE, HAND_WRITTEN, ROOT

from pisa_mm.cat.loader import load_model
from pisa_mm.commands.run import load, run_engines
from pisa_mm.engines import EXACT_ENGINES, available_engines
from pisa_mm.outcomes.expectations import compare, expected_path, from_result, read_expectation
from pisa_mm.runner.job import with_liveness

SUITE = HAND_WRITTEN  # generated tests have no hand verdict: promote recorded theirs


def _with_expected(paths: list[Path]) -> list[Path]:
    return [p for p in paths if Path(expected_path(str(p))).exists()]


WITH_EXPECTED = _with_expected(HAND_WRITTEN + GENERATED_SAMPLE)
REFERENCE_ENGINE = "explicit"


def _id(path: Path) -> str:
    return str(path.relative_to(ROOT / "litmus"))


def _hand_cases() -> list[object]:
    """(test, model) for `pisa` and every model the metadata names; a file that does not
    load is kept (under `pisa`) so that its error shows up as a failure."""
    cases = []
    for path in SUITE:
        loaded = load(str(path), unroll=None, strict=False)
        meta = dict(loaded.test.metadata) if loaded.test is not None else {}
        models = {"pisa"} | {
            key.split(".", 1)[1] for key in meta if key.startswith(("expect.", "flags."))
        }
        cases.extend(pytest.param(path, m, id=f"{_id(path)}[{m}]") for m in sorted(models))
    return cases


def _flags(text: str | None) -> set[str]:
    if text is None or text.strip() == "none":
        return set()
    return {f.strip() for f in text.split(",") if f.strip()}


@pytest.mark.parametrize("engine", available_engines())
@pytest.mark.parametrize("path", WITH_EXPECTED, ids=_id)
def test_matches_expectation(path: Path, engine: str) -> None:
    check_expectation(path, engine)


@pytest.mark.slow
@pytest.mark.parametrize("engine", available_engines())
@pytest.mark.parametrize("path", _with_expected(GENERATED), ids=_id)
def test_generated_matches_expectation(path: Path, engine: str) -> None:
    check_expectation(path, engine)


def test_every_generated_test_has_its_expectation() -> None:
    assert GENERATED, "no generated tests under litmus/gen (litmus/gen/regenerate.sh)"
    missing = [_id(p) for p in GENERATED if not Path(expected_path(str(p))).exists()]
    assert missing == []


def check_expectation(path: Path, engine: str) -> None:
    loaded = load(str(path), unroll=None, strict=False)
    model = load_model("pisa")
    # as `run` reports it: with the Liveness line (recorded under --progress pisa)
    (result,) = with_liveness(loaded, model, run_engines(loaded, model, [engine]), "pisa")
    expected = read_expectation(expected_path(str(path)))
    # an engine outside EXACT_ENGINES (the operational machine) must stay below the answer
    below = engine not in EXACT_ENGINES
    assert compare(expected, from_result(result), ("expected", engine), below=below) == []


@pytest.mark.parametrize(("path", "model"), _hand_cases())
def test_agrees_with_hand_verdict(path: Path, model: str) -> None:
    loaded = load(str(path), unroll=None, strict=False)
    assert loaded.test is not None, loaded.error
    meta = dict(loaded.test.metadata)
    assert "expect" in meta, "every suite test states its hand verdict (`expect = Ok|No`)"
    results = run_engines(loaded, load_model(model), [REFERENCE_ENGINE])
    assert loaded.error is None, loaded.error
    (result,) = results
    want_verdict = meta.get(f"expect.{model}", meta["expect"]).strip()
    want_flags = _flags(meta.get(f"flags.{model}", meta.get("flags")))
    got = (result.verdict.value, {f.name for f in result.flags})
    assert got == (want_verdict, want_flags), [f.description for f in result.flags]


def test_the_suite_is_not_empty() -> None:
    assert SUITE, "no litmus tests found under litmus/"
