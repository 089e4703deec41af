"""`irreflexive` on a big universe (cat/eval.py `Evaluator._irreflexive`): each term `a ; b`
of the check's unions is tested as `a^-1 & b` once a recurs, without composing; the answers
are those of the composed relation's diagonal, on every evaluation of a session."""

from __future__ import annotations

import random
from collections.abc import Iterable, Sequence

import pytest

from pisa_mm.cat import geo as cat_geo
from pisa_mm.cat.eval import Evaluator
from pisa_mm.cat.loader import load_model_source
from pisa_mm.records import record

MODEL = """
irreflexive (po ; rf) | (po ; co ; rf^-1) | co as chains
irreflexive po ; (rf | co)* as closed
irreflexive ([W] ; po ; [W]) ; co? as opt
empty rf & co as other
"""


@record
class _Base:
    events: tuple[int, ...]
    rels: dict[str, frozenset[tuple[int, int]]]
    writes: frozenset[int]

    def set(self, name: str) -> Iterable[int]:
        return self.writes if name == "W" else ()

    def rel(self, name: str) -> Iterable[tuple[int, int]]:
        return self.rels.get(name, frozenset())


def _pairs(rng: random.Random, events: Sequence[int], density: float) -> frozenset[tuple[int, int]]:
    return frozenset((a, b) for a in events for b in events if rng.random() < density)


def _answers(seed: int, big: bool, monkeypatch: pytest.MonkeyPatch) -> list[tuple[str, ...]]:
    if big:
        monkeypatch.setattr(cat_geo, "_BIG", 0)
        monkeypatch.setattr(cat_geo, "_SMALL", 0)
    model = load_model_source(MODEL, "irr.cat", "irr")
    ev = Evaluator(model, dynamic=("rf", "co"))
    rng = random.Random(seed)
    n = rng.randint(3, 14)
    events = tuple(range(2, 2 + 3 * n, 3))  # ids are not indices
    po = frozenset((a, b) for a in events for b in events if a < b and rng.random() < 0.3)
    writes = frozenset(e for e in events if rng.random() < 0.5)
    out = []
    # One session: po stays (its terms' left operands recur), rf and co change; some
    # evaluations repeat the previous rf and co exactly.
    rf = co = frozenset[tuple[int, int]]()
    for _ in range(8):
        if rng.random() < 0.7:
            rf, co = _pairs(rng, events, 0.08), _pairs(rng, events, 0.1)
        base = _Base(events, {"po": po, "rf": rf, "co": co}, writes)
        result = ev.evaluate(base, static_key="session")
        out.append(tuple(r.name for r in result.results if not r.passed))
    return out


@pytest.mark.parametrize("seed", range(30))
def test_big_irreflexive_agrees_with_the_composed_relation(
    seed: int, monkeypatch: pytest.MonkeyPatch
) -> None:
    small = _answers(seed, False, monkeypatch)
    assert _answers(seed, True, monkeypatch) == small


def test_the_answers_are_not_all_alike() -> None:
    # why: the comparison above means something only if the checks both pass and fail
    seen = {name for seed in range(30) for run in _answers_plain(seed) for name in run}
    assert {"chains", "closed", "opt"} <= seen


def _answers_plain(seed: int) -> list[tuple[str, ...]]:
    with pytest.MonkeyPatch.context() as mp:
        return _answers(seed, False, mp)
