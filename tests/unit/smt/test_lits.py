"""The Python-side circuit: constant folding, hash-consing, and its z3 translation."""

from __future__ import annotations

import itertools

import z3

from pisa_mm.smt.lits import Circuit, lnot


def test_constants_fold_without_z3() -> None:
    c = Circuit()
    a = c.var("a")
    assert c.land(True, a) == a
    assert c.land(False, a) is False
    assert c.lor(True, a) is True
    assert c.lor(False, a) == a
    assert c.land() is True
    assert c.lor() is False
    assert c.land(a, lnot(a)) is False
    assert c.lor(a, lnot(a)) is True
    assert lnot(True) is False and lnot(lnot(a)) == a


def test_nodes_are_hash_consed() -> None:
    c = Circuit()
    a, b = c.var("a"), c.var("b")
    assert c.land(a, b) == c.land(b, a) == c.land(a, b, a)
    assert c.atom(z3.Bool("a")) == a


def test_translation_agrees_with_python_semantics() -> None:
    c = Circuit()
    a, b, d = c.var("a"), c.var("b"), c.var("d")
    f = c.lor(c.land(a, lnot(b)), c.iff(b, d), c.implies(d, a))
    za, zb, zd = z3.Bools("a b d")
    for va, vb, vd in itertools.product([False, True], repeat=3):
        s = z3.Solver()
        s.add(za == va, zb == vb, zd == vd)
        assert s.check() == z3.sat
        expected = (va and not vb) or (vb == vd) or (not vd or va)
        assert c.value(s.model(), f) is expected
