"""Candidate enumeration: paths, rf, co, values, guards, cycles and computed addresses."""

from __future__ import annotations

import itertools

from explicit_factory import LB_DATA, MP, MP_GUARDED, POINTER, POINTER_INIT, TWO_WRITERS, structure

from pisa_mm.events.model import EventStructure, Kind
from pisa_mm.explicit.candidates import Candidate, candidates
from pisa_mm.explicit.size import live_paths


def _by_text(es: EventStructure, text: str) -> int:
    (eid,) = [e.id for e in es.events if e.text.startswith(text)]
    return eid


def _reads(es: EventStructure, c: Candidate) -> dict[int, int]:
    """read id -> value read."""
    return {r: c.values[r] for _, r in c.rf}


def test_mp_has_one_candidate_per_rf_choice() -> None:
    _, es = structure(MP)
    cands = list(candidates(es))
    ry, rx = _by_text(es, "ld.global.acquire"), _by_text(es, "ld.global.32b")
    seen = {(_reads(es, c)[ry], _reads(es, c)[rx]) for c in cands}
    assert len(cands) == 4
    assert seen == {(0, 0), (0, 1), (1, 0), (1, 1)}


def test_every_read_reads_a_write_of_its_location() -> None:
    _, es = structure(MP)
    for c in candidates(es):
        for w, r in c.rf:
            assert es.events[w].kind is Kind.WRITE and es.events[r].kind is Kind.READ
            assert c.locs[w] == c.locs[r]
            assert c.values[w] == c.values[r]


def test_thin_air_value_cycles_are_not_candidates() -> None:
    _, es = structure(LB_DATA)
    cands = list(candidates(es))
    # rf from both po-later writes would need each value to come from itself
    assert len(cands) == 3
    for c in cands:
        assert not all(es.events[w].thread is not None for w, _ in c.rf)


def test_a_path_is_chosen_only_when_its_guard_holds() -> None:
    _, es = structure(MP_GUARDED)
    cands = list(candidates(es))
    ry = _by_text(es, "ld.global.acquire")
    by_path: dict[int, list[Candidate]] = {}
    for c in cands:
        by_path.setdefault(c.path_indices[1], []).append(c)
    assert len(cands) == 3
    for group in by_path.values():
        loads = {len([e for e in c.events if es.events[e].kind is Kind.READ]) for c in group}
        values = {c.values[ry] for c in group}
        # the path that skips the data load is taken exactly when the flag read 0
        assert (loads, values) in (({1}, {0}), ({2}, {1}))


def test_coherence_orders_every_permutation_with_init_first() -> None:
    _, es = structure(TWO_WRITERS)
    cands = list(candidates(es))
    orders = {tuple(es.events[w].text for w in next(iter(c.co.values()))) for c in cands}
    assert orders == {
        ("init @x = 0", "st.global.relaxed.32b [@x], 1", "st.global.relaxed.32b [@x], 2"),
        ("init @x = 0", "st.global.relaxed.32b [@x], 2", "st.global.relaxed.32b [@x], 1"),
    }
    assert {c.final_value(next(iter(c.co))) for c in cands} == {1, 2}


def test_computed_addresses_resolve_and_wild_ones_end_their_path() -> None:
    _, es = structure(POINTER, init=POINTER_INIT)
    cands = list(candidates(es))
    (deref,) = [
        e.id
        for e in es.events
        if e.text.startswith("ld.global.relaxed.32b") and e.kind is not Kind.EXIT
    ]
    # reading the init value 0 of @p dereferences a null pointer: that candidate's path
    # ends at the invalid-address marker, before the access
    ended = [c for c in cands if c.ended]
    assert ended and all(deref not in c.events for c in ended)
    cands = [c for c in cands if not c.ended]
    assert cands
    for c in cands:
        assert c.locs[deref].var == "x"
        assert c.values[deref] == 7


def _null_dereferences(n: int) -> str:
    """n work-items that each store through a pointer that only ever holds null."""
    return "\n".join(
        f"P{i} @ wg {i} {{\n  ld.global.64b %r0, [@p];\n  st.global.32b [%r0], 1;\n}}"
        for i in range(n)
    )


def test_paths_no_values_can_take_are_not_enumerated() -> None:
    # Each work-item has a path that stores to @x (taken if the pointer is &x) and one that
    # ends at the invalid address; @p is only ever 0, so only the second can be taken. The
    # product of both paths of 30 work-items (2^30 choices) was enumerated before.
    init = ".global .64b @p = 0;\n.global .32b @x = 0;"
    _, es = structure(_null_dereferences(30), init=init)
    assert all(len(t.paths) == 2 for t in es.threads)
    live = live_paths(es)
    assert all(len(paths) == 1 for paths in live)
    (cand,) = candidates(es)
    assert cand.path_indices == tuple(paths[0] for paths in live)
    assert all(es.threads[t].paths[i].invalid for t, i in enumerate(cand.path_indices))


def test_a_path_that_some_write_may_open_stays() -> None:
    # with a store of &x to @p somewhere, either path of the reader may be taken
    _, es = structure(POINTER, init=POINTER_INIT)
    assert [len(paths) for paths in live_paths(es)] == [len(t.paths) for t in es.threads]
    assert {c.path_indices for c in candidates(es)} == set(
        itertools.product(*(range(len(t.paths)) for t in es.threads))
    )
