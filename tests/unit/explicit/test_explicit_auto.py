"""The candidate-space measures and the `auto` engine's choice."""

from __future__ import annotations

from dataclasses import replace

import pytest
from explicit_factory import (
    LB_DATA,
    MP,
    MP_GUARDED,
    POINTER,
    POINTER_INIT,
    SB_RLX,
    SPIN,
    TWO_WRITERS,
    rmw_chain,
    structure,
)

from pisa_mm.cat.loader import load_model
from pisa_mm.engines import (
    DISPATCHERS,
    EngineOptions,
    available_engines,
    default_engine,
    get_engine,
)
from pisa_mm.explicit import auto
from pisa_mm.explicit.candidates import candidates
from pisa_mm.explicit.engine import run_test as explicit_run
from pisa_mm.explicit.size import candidate_space, shape
from pisa_mm.outcomes.condition import observables

# (name, body, init, condition) of factory tests: straight-line, guarded, looping, RMWs,
# observing registers and memory
R0 = "exists (P1:%r0 == 1)"
FACTORY = [
    ("MP", MP, None, R0),
    ("LB+data", LB_DATA, None, "exists (P0:%r0 == 1 /\\ P1:%r1 == 1)"),
    ("MP+guarded", MP_GUARDED, None, R0),
    ("2W", TWO_WRITERS, None, "exists (@x == 2)"),
    ("pointer", POINTER, POINTER_INIT, "exists (P1:%r2 == 7)"),
    ("SB", SB_RLX, None, "exists (P0:%r0 == 0 /\\ P1:%r0 == 0)"),
    ("spin", SPIN, None, R0),
    ("RMW-2", rmw_chain(2), None, "exists (@x == 12)"),
    ("RMW-3", rmw_chain(3), None, "exists (P0:%r2 == 2 /\\ @x == 13)"),
]


def test_mp_estimate_is_its_rf_choices() -> None:
    # two reads, each of the init write or the one store of its location; no co choice
    test, es = structure(MP)
    assert candidate_space(es) == 4 == len(list(candidates(es)))
    s = shape(es, observables(test))
    assert s.leaves == s.space == 4
    assert (s.rf_edges, s.co_pairs) == (4, 0)


def test_estimate_bounds_the_enumeration() -> None:
    for body, kwargs in ((TWO_WRITERS, {}), (POINTER, {"init": POINTER_INIT}), (rmw_chain(3), {})):
        _, es = structure(body, **kwargs)
        assert candidate_space(es) >= len(list(candidates(es)))


@pytest.mark.parametrize(
    ("body", "init", "cond"), [f[1:] for f in FACTORY], ids=[f[0] for f in FACTORY]
)
def test_shape_bounds_the_candidates_and_the_states(body: str, init: str | None, cond: str) -> None:
    # `leaves` drops only the sources a path's own branch conditions rule out, so it still
    # bounds the enumeration; `states` bounds the final states any engine lists
    test, es = structure(body, init=init, cond=cond) if init else structure(body, cond=cond)
    s = shape(es, observables(test))
    assert s.space == candidate_space(es)
    assert s.space >= s.leaves >= len(list(candidates(es)))
    result = explicit_run(test, es, load_model("pisa"), EngineOptions(unroll=es.unroll))
    assert len(result.states) >= 1
    assert s.states >= len(result.states)


def test_a_spin_loops_iterations_have_one_choice_each() -> None:
    # each iteration's load of @y must read 0 to go round again (the init write) and the
    # last one 1 (P0's store): one choice per load, where the bound counts two
    test, es = structure(SPIN)
    s = shape(es, observables(test))
    paths = len(es.threads[1].paths)
    assert s.leaves == paths < s.space


def test_an_rmws_read_is_one_kept_choice_once_co_is_fixed() -> None:
    test, es = structure(rmw_chain(3))
    s = shape(es, observables(test))
    assert s.co_pairs == 6  # four adds of @x
    assert s.tree < s.leaves


def test_two_writers_count_their_coherence_orders() -> None:
    _, es = structure(TWO_WRITERS)
    stores = sum(1 for e in es.events if e.kind.value == "W" and e.tag.value != "init")
    assert stores == 2
    assert candidate_space(es) % 2 == 0  # 2! orders of the two stores of x


def test_the_cost_model_grows_with_the_candidates() -> None:
    small, large = (structure(rmw_chain(n)) for n in (1, 4))
    (e1, s1), (e2, s2) = auto.predicted(*small), auto.predicted(*large)
    assert 0 < e1 < e2 and 0 < s1 < s2
    assert auto.pick(*small) == "explicit"


def test_the_shortcut_picks_what_the_cost_model_picks() -> None:
    # `surely_explicit` skips reading the shape only where the full model chooses explicit:
    # checked on every bundled test it applies to
    from pathlib import Path

    from pisa_mm.errors import PisaMMError
    from pisa_mm.events.build import build
    from pisa_mm.litmus import parse_test

    root = Path(__file__).resolve().parents[3] / "litmus"
    applied = 0
    for path in sorted(root.rglob("*.litmus")):
        try:
            test = parse_test(path.read_text(), str(path))
            es = build(test)
        except PisaMMError:
            continue  # the suite's bad-input tests
        if auto.COSTS.surely_explicit(candidate_space(es), len(es.events)):
            applied += 1
            explicit, smt = auto.predicted(test, es)
            assert explicit <= smt, path.name
    assert applied > 100


def test_the_shortcut_holds_at_its_bound() -> None:
    from pisa_mm.explicit.engine import PRUNE_ABOVE

    costs = auto.COSTS
    for events in (3, 8, 20, 60):
        # the largest bound at which explicit's most is still below smt's least
        spare = costs.smt_base + costs.smt_event * events - costs.explicit_base
        limit = min(PRUNE_ABOVE, int(spare / (costs.explicit_judged * events)))
        assert limit > 0
        assert costs.surely_explicit(limit, events)
        assert not costs.surely_explicit(limit + 1, events)


def test_auto_answers_small_tests_with_explicit_and_says_so() -> None:
    test, es = structure(MP)
    model = load_model("pisa")
    options = EngineOptions(unroll=es.unroll)
    assert auto.pick(test, es) == "explicit"
    result = auto.run_test(test, es, model, options)
    assert result.engine == "explicit"
    expected = explicit_run(test, es, model, options)
    assert replace(result, seconds=0.0) == replace(expected, seconds=0.0)


@pytest.mark.skipif("smt" not in available_engines(), reason="z3 is not installed")
def test_auto_gives_smts_result_when_it_predicts_smt_faster(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    test, es = structure(MP)
    model = load_model("pisa")
    options = EngineOptions(unroll=es.unroll)
    monkeypatch.setattr(auto, "COSTS", replace(auto.COSTS, explicit_base=10.0))
    assert auto.pick(test, es) == "smt"
    result = auto.run_test(test, es, model, options)
    expected = get_engine("smt")(test, es, model, options)
    assert result.engine == "smt"
    assert replace(result, seconds=0.0) == replace(expected, seconds=0.0)


def test_auto_answers_big_structures_with_explicit(monkeypatch: pytest.MonkeyPatch) -> None:
    test, es = structure(MP)
    # a cost model that would choose smt, overruled by the size
    monkeypatch.setattr(auto, "COSTS", replace(auto.COSTS, explicit_base=10.0))
    assert auto.pick(test, es) == "smt"
    monkeypatch.setattr(auto, "BIG_EVENTS", len(es.events))
    assert auto.pick(test, es) == "explicit"


def test_auto_is_the_default_and_not_listed_among_engines() -> None:
    assert default_engine() == "auto"
    assert "auto" in DISPATCHERS
    assert "auto" not in available_engines()
