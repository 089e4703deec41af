"""Thread-symmetry reduction: which work-items are interchangeable, and that it keeps the
answers (states, verdict, flags) of the unreduced search."""

from __future__ import annotations

import itertools

import z3
from smt_factory import litmus

from pisa_mm.cat.loader import load_model
from pisa_mm.events.build import build
from pisa_mm.events.kinds import Kind
from pisa_mm.litmus.program import LitmusTest
from pisa_mm.outcomes.condition import observables
from pisa_mm.smt.encode import Encoding, uses_floats
from pisa_mm.smt.engine import run_smt
from pisa_mm.smt.symmetry import interchangeable_groups, symmetry_constraints

INC = "iatom.global.relaxed.add.32b %r0, [@x], 1;"


def _incrementers(places: list[str], cond: str = "forall (@x == 3)") -> LitmusTest:
    body = "\n".join(f"P{i} @ {p} {{\n  {INC}\n}}" for i, p in enumerate(places))
    return litmus(body, init=".global .32b @x = 0;", cond=cond)


def test_identical_incrementers_in_their_own_work_groups_form_one_group() -> None:
    test = _incrementers(["wg 0", "wg 1", "wg 2"])
    es = build(test)
    assert interchangeable_groups(test, es, observables(test)) == [[0, 1, 2]]


def test_a_work_item_whose_registers_are_observed_stands_alone() -> None:
    test = _incrementers(["wg 0", "wg 1", "wg 2"], cond="exists (P1:%r0 == 0)")
    es = build(test)
    assert interchangeable_groups(test, es, observables(test)) == [[0, 2]]


def test_different_scope_relations_break_the_symmetry() -> None:
    # P0 and P1 share a work-group, P2 does not: only P0 and P1 look alike to everyone
    test = _incrementers(["wg 0, sg 0", "wg 0, sg 1", "wg 1"])
    es = build(test)
    assert interchangeable_groups(test, es, observables(test)) == [[0, 1]]


def test_reduction_keeps_the_answer() -> None:
    test = _incrementers(["wg 0", "wg 1", "wg 2", "wg 3"], cond="forall (@x == 4)")
    es = build(test)
    model = load_model("pisa")
    reduced = run_smt(test, es, model)
    assert [str(s) for s in reduced.states] == ["@x=4;"]
    assert reduced.verdict.value == "Ok" and reduced.flags == ()


def test_incrementers_are_ordered_by_the_clocks_of_their_writes() -> None:
    # distinct writes of one location have distinct clocks, so the order is strict: one
    # execution per orbit
    test = _incrementers(["wg 0", "wg 1", "wg 2"])
    es = build(test)
    enc = Encoding(es, observables(test))
    writes = [e.id for e in es.events if e.kind is Kind.WRITE and e.thread is not None]
    expected = [z3.ULT(enc.clock[a], enc.clock[b]) for a, b in itertools.pairwise(writes)]
    got = symmetry_constraints(test, enc, observables(test))
    assert [str(c) for c in got] == [str(c) for c in expected]


def test_work_items_without_writes_fall_back_to_sorting_the_values_they_read() -> None:
    body = "\n".join(f"P{i} @ wg {i} {{\n  ld.global.relaxed.32b %r0, [@x];\n}}" for i in range(2))
    test = litmus(body, cond="forall (@x == 0)")
    es = build(test)
    enc = Encoding(es, observables(test))
    reads = [e.id for e in es.events if e.kind is Kind.READ]
    got = symmetry_constraints(test, enc, observables(test))
    assert [str(c) for c in got] == [
        str(z3.ULE(enc.read_value(reads[0]), enc.read_value(reads[1])))
    ]


def test_floating_point_values_select_the_general_solver() -> None:
    # z3's SAT-based QF_BV solver would take IEEE operations as uninterpreted
    fadd = "fatom.global.relaxed.add.f %r0, [@x], 1.0;"
    assert uses_floats(build(litmus(f"P0 @ wg 0 {{\n  {fadd}\n}}")))
    assert not uses_floats(build(_incrementers(["wg 0", "wg 1"])))
