"""Forced coherence pairs from one evaluation (explicit/forced.py): whatever the shortcut shows
forced, the pair-by-pair question (`_forced`'s partial order `init, b, a`) answers forced too,
and the search with it yields the same candidates, in the same order, as without it: on the
shipped models and on models whose syntax shows less (or nothing) and must fall back."""

from __future__ import annotations

import itertools

import pytest
from explicit_factory import structure

from pisa_mm.cat.loader import load_model, load_model_source
from pisa_mm.cat.syntax import Model
from pisa_mm.events.model import EventStructure
from pisa_mm.explicit import candidates as cands
from pisa_mm.explicit.engine import _compiled, _forced_pairs, _pruner, _Static
from pisa_mm.explicit.forced import forcing_model
from pisa_mm.explicit.monotone import monotone_axioms

HEAD = 'include "stdlib.cat"\n'
# Coherence as herd's uniproc, an acyclicity: the `acyclic` rule.
UNIPROC = HEAD + "acyclic po-loc | rf | co | fr as uniproc\n"
# po-loc against co through an intersection: no bound (the syntax shows nothing), so every
# pair is asked one by one.
HIDDEN = HEAD + "irreflexive (po-loc ; co) & (W * W) as hidden\n"
# Only `empty` checks order writes: through an inverse and an intersection (no bound), and
# through a composition (the `empty` rule: domain(R) * range(L)).
EMPTY = HEAD + "empty ([W] ; po-loc ; [W]) & co^-1 as backwards\n"
EMPTY += "empty ([W] ; po-loc ; [W]) ; co ; [REL] as release-first\n"
# Half shown: the acyclic part orders po-loc, the intersection hides the rest.
MIXED = HEAD + "acyclic (po-loc & (W * W)) | co as half\nirreflexive (po ; co) & loc as rest\n"
# A model that does not order a work-item's stores at all: nothing is forced.
FREE = HEAD + "acyclic rf | dep as no-thin-air\n"
CUSTOM = {"uniproc": UNIPROC, "hidden": HIDDEN, "empty": EMPTY, "mixed": MIXED, "free": FREE}

FOUR_STORES = """
P0 @ wg 0 {
  st.global.32b [@x], 1;
  st.global.32b [@x], 2;
  st.global.32b [@x], 3;
  st.global.32b [@y], 1;
  st.global.32b [@y], 2;
  st.global.32b [@y], 3;
}
P1 @ wg 1 {
  st.global.32b [@x], 5;
  ld.global.32b %r0, [@x];
  ld.global.32b %r1, [@y];
}
"""
RMW_STORES = """
P0 @ wg 0 {
  st.global.release.gpu.32b [@x], 1;
  iatom.global.relaxed.add.32b %r0, [@x], 1;
  st.global.32b [@x], 3;
  ld.global.acquire.gpu.32b %r1, [@y];
}
P1 @ wg 1 {
  st.global.release.gpu.32b [@y], 1;
  st.global.32b [@y], 2;
  st.global.32b [@y], 3;
  ld.global.acquire.gpu.32b %r2, [@x];
}
"""
TESTS = [FOUR_STORES, RMW_STORES]


def _model(name: str) -> Model:
    if name in CUSTOM:
        return load_model_source(CUSTOM[name], f"{name}.cat", name)
    return load_model(name)


MODELS = ["pisa", "pisa-rc11", "pisa-samescope", *CUSTOM]


def _tools(
    body: str, model_name: str
) -> tuple[EventStructure, cands.Prune, cands.ForcedPairs | None]:
    """The structure of `body`, and the engine's prune and forced-pairs callbacks for it."""
    _, es = structure(body)
    model = _model(model_name)
    static = _Static(es)
    compiled = _compiled(model, static.fixed_locs is not None)
    prune = _pruner(static, compiled.pruner)
    assert prune is not None
    forced = _forced_pairs(static, compiled) if compiled.forcing is not None else None
    return es, prune, forced


def _first_choice(es: EventStructure) -> cands._Choice:
    paths = tuple(t.paths[0] for t in es.threads)
    inits = [e.id for e in es.events if e.thread is None]
    return cands._Choice(es, paths, tuple(0 for _ in es.threads), inits, None)


def _asked(es: EventStructure) -> list[tuple[cands.Candidate, tuple[int, int]]]:
    """Per pair `_forced` asks about (first paths): its question and the pair."""
    out = []
    choice = _first_choice(es)
    assert choice.static_locs is not None
    init_of, by_loc = cands._writes_by_location(choice.events, choice.static_locs)
    ids = frozenset(e.id for e in choice.events)
    for loc, writes in by_loc.items():
        init = init_of[loc]
        by_thread: dict[int | None, list[int]] = {}
        for w in writes:
            by_thread.setdefault(es.events[w].thread, []).append(w)
        for group in by_thread.values():
            for a, b in itertools.pairwise(group):
                partial = choice._candidate(
                    ids,
                    frozenset(),
                    {loc: (init, b)},
                    choice.static_locs,
                    {},
                    {},
                    {loc: frozenset({a})},
                )
                out.append((partial, (a, b)))
    return out


@pytest.mark.parametrize("model_name", MODELS)
@pytest.mark.parametrize("body", TESTS)
def test_shown_pairs_are_forced_by_the_pairwise_question(model_name: str, body: str) -> None:
    es, prune, forced = _tools(body, model_name)
    asked = _asked(es)
    truly = {ab for partial, ab in asked if not prune(partial)}
    shown: frozenset[tuple[int, int]] = frozenset()
    if forced is not None:
        bare = _first_choice(es)
        assert bare.static_locs is not None
        ids = frozenset(e.id for e in bare.events)
        blank = bare._candidate(ids, frozenset(), {}, bare.static_locs, {}, {}, {})
        shown = forced(blank, frozenset(ab for _, ab in asked))
    # why: soundness is all exactness needs; a pair the syntax hides is asked one by one
    assert shown <= truly
    if model_name in ("pisa", "pisa-rc11", "pisa-samescope", "uniproc"):
        # why: their coherence axiom has `L ; co ; R` parts, with po-loc inside L or R
        assert shown == truly and truly
    if model_name == "hidden":
        assert forced is None and truly  # an intersection: the syntax shows nothing
    if model_name == "free":
        assert not truly and not shown
    if model_name == "empty" and body is RMW_STORES:
        # `release-first` shows (release store, iatom) forced; `backwards` is asked
        assert shown and truly - shown
    if model_name == "mixed":
        assert shown == truly  # `half` alone orders po-loc writes


@pytest.mark.parametrize("model_name", MODELS)
@pytest.mark.parametrize("body", TESTS)
def test_candidates_are_those_of_the_pairwise_search(model_name: str, body: str) -> None:
    es, prune, forced = _tools(body, model_name)

    def listed(f: cands.ForcedPairs | None) -> list[tuple[object, ...]]:
        return [
            (c.path_indices, c.rf, tuple(sorted(c.co.items())), tuple(sorted(c.values.items())))
            for c in cands.candidates(es, prune, None, f)
        ]

    with_shortcut = listed(forced)
    assert with_shortcut == listed(None)
    assert with_shortcut  # the comparison is not vacuous


def test_pisa_asks_no_pair_one_by_one_on_many_stores(monkeypatch: pytest.MonkeyPatch) -> None:
    # why: pisa's coherence `[M & GLOBAL] ; hb_G ; eco?` shows every po-consecutive pair of
    # P0's 30 stores forced (po is in hb_G), so `_forced` makes no pairwise question
    body = "P0 @ wg 0 {\n" + "".join(f"  st.global.32b [@x], {i};\n" for i in range(30))
    body += "}\nP1 @ wg 1 {\n  ld.global.32b %r0, [@x];\n}\n"
    es, prune, forced = _tools(body, "pisa")
    asked: list[int] = []

    def counting(partial: cands.Candidate) -> bool:
        if not partial.co or not any(partial.pending.values()):
            return prune(partial)
        if all(len(order) == 2 for order in partial.co.values()):
            asked.append(1)  # the shape of `_forced`'s question: init, b; a pending
        return prune(partial)

    orig = cands._Choice._forced

    def spy(self: cands._Choice, *args: object) -> dict[int, int]:
        self.prune = counting
        return orig(self, *args)  # type: ignore[arg-type]

    monkeypatch.setattr(cands._Choice, "_forced", spy)
    found = list(cands.candidates(es, prune, None, forced))
    assert len(found) == 31  # the load reads the init or one of the 30 stores
    assert not asked


def test_no_forcing_model_when_nothing_reads_co() -> None:
    model = _model("free")
    assert forcing_model(model, monotone_axioms(model, frozenset({"rf", "co"}))) is None
