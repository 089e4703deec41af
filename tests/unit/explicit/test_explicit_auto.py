"""The candidate-space estimate and the `auto` engine's choice."""

from __future__ import annotations

from dataclasses import replace

import pytest
from explicit_factory import MP, POINTER, POINTER_INIT, TWO_WRITERS, rmw_chain, structure

from pisa_mm.cat.loader import load_model
from pisa_mm.engines import DISPATCHERS, EngineOptions, available_engines, default_engine
from pisa_mm.explicit import auto
from pisa_mm.explicit.candidates import candidates
from pisa_mm.explicit.engine import run_test as explicit_run
from pisa_mm.explicit.size import candidate_space


def test_mp_estimate_is_its_rf_choices() -> None:
    # two reads, each of the init write or the one store of its location; no co choice
    _, es = structure(MP)
    assert candidate_space(es) == 4 == len(list(candidates(es)))


def test_estimate_bounds_the_enumeration() -> None:
    for body, kwargs in ((TWO_WRITERS, {}), (POINTER, {"init": POINTER_INIT}), (rmw_chain(3), {})):
        _, es = structure(body, **kwargs)
        assert candidate_space(es) >= len(list(candidates(es)))


def test_two_writers_count_their_coherence_orders() -> None:
    _, es = structure(TWO_WRITERS)
    stores = sum(1 for e in es.events if e.kind.value == "W" and e.tag.value != "init")
    assert stores == 2
    assert candidate_space(es) % 2 == 0  # 2! orders of the two stores of x


def test_auto_answers_small_tests_with_explicit_and_says_so() -> None:
    test, es = structure(MP)
    model = load_model("pisa")
    options = EngineOptions(unroll=es.unroll)
    assert auto.pick(es) == "explicit"
    result = auto.run_test(test, es, model, options)
    assert result.engine == "explicit"
    expected = explicit_run(test, es, model, options)
    assert replace(result, seconds=0.0) == replace(expected, seconds=0.0)


def test_auto_picks_smt_above_the_threshold(monkeypatch: pytest.MonkeyPatch) -> None:
    _, es = structure(MP)
    monkeypatch.setattr(auto, "THRESHOLD", 3)
    assert auto.pick(es) == ("smt" if "smt" in available_engines() else "explicit")


def test_auto_answers_big_structures_with_explicit(monkeypatch: pytest.MonkeyPatch) -> None:
    _, es = structure(MP)
    monkeypatch.setattr(auto, "THRESHOLD", 3)
    monkeypatch.setattr(auto, "BIG_EVENTS", len(es.events))
    assert auto.pick(es) == "explicit"


def test_auto_is_the_default_and_not_listed_among_engines() -> None:
    assert default_engine() == "auto"
    assert "auto" in DISPATCHERS
    assert "auto" not in available_engines()
