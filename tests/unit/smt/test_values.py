"""The Z3 encoding of value expressions agrees bit for bit with concrete evaluation."""

from __future__ import annotations

import importlib.util
import sys
from pathlib import Path
from types import ModuleType
from typing import Any

import pytest
import z3
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from pisa_mm.smt.values import ValueEncoder, encode
from pisa_mm.values import fp
from pisa_mm.values.eval import MalformedExprError, evaluate
from pisa_mm.values.expr import BOOL, Apply, Const, Contribution, Expr, FpFormat, Op, ReadValue


def _load_strategies() -> ModuleType:
    # tests/ is not a package and pytest imports in importlib mode: load by path.
    if "value_strategies" in sys.modules:
        return sys.modules["value_strategies"]
    path = Path(__file__).parents[1] / "values" / "value_strategies.py"
    spec = importlib.util.spec_from_file_location("value_strategies", path)
    assert spec is not None and spec.loader is not None
    module = importlib.util.module_from_spec(spec)
    sys.modules["value_strategies"] = module
    spec.loader.exec_module(module)
    return module


vs = _load_strategies()


def _z3_value(expr: Expr, binding: Any) -> int:
    """The value Z3 proves the encoding takes under `binding` (unique, or the test fails)."""

    def read(event: int) -> z3.BitVecRef:
        return z3.BitVecVal(binding.read(event), vs.event_width(event))

    def contribution(thread: int, index: int) -> z3.BitVecRef:
        return z3.BitVecVal(binding.contribution(thread, index), index)

    term = encode(expr, read, contribution)
    solver = z3.Solver()
    if expr.width == BOOL:
        solver.add(term)
        sat = solver.check()
        assert sat != z3.unknown
        return 1 if sat == z3.sat else 0
    out = z3.BitVec("out", expr.width)
    solver.add(out == term)
    assert solver.check() == z3.sat
    value = solver.model()[out].as_long()
    solver.add(out != value)
    assert solver.check() == z3.unsat, "the encoding leaves the value open"
    return int(value)


def _concrete(expr: Expr, binding: Any) -> int:
    return evaluate(expr, binding.read, binding.contribution)


@settings(max_examples=300, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(data=st.data())
def test_random_expressions_agree(data: st.DataObject) -> None:
    width = data.draw(vs.any_width())
    expr = data.draw(vs.exprs(width))
    binding = data.draw(vs.bindings())
    assert _z3_value(expr, binding) == _concrete(expr, binding)


@pytest.mark.parametrize("fmt", list(FpFormat))
@pytest.mark.parametrize("op", [Op.FADD, Op.FSUB, Op.FMIN, Op.FMAX, Op.FEQ])
@settings(max_examples=60, deadline=None)
@given(data=st.data())
def test_fp_ops_on_random_patterns(fmt: FpFormat, op: Op, data: st.DataObject) -> None:
    pool = st.one_of(st.sampled_from(vs.fp_specials(fmt)), st.integers(0, (1 << fmt.width) - 1))
    a, b = data.draw(pool), data.draw(pool)
    width = BOOL if op is Op.FEQ else fmt.width
    expr = Apply(op, (Const(a, fmt.width), Const(b, fmt.width)), width, fmt)
    binding = vs.Binding({}, {})
    assert _z3_value(expr, binding) == _concrete(expr, binding)


@pytest.mark.parametrize("fmt", list(FpFormat))
def test_fp_specials_exhaustive_pairs(fmt: FpFormat) -> None:
    specials = vs.fp_specials(fmt)
    a_var, b_var = z3.BitVec("a", fmt.width), z3.BitVec("b", fmt.width)
    terms = {
        op: encode(
            Apply(op, (ReadValue(0, fmt.width), ReadValue(1, fmt.width)), fmt.width, fmt),
            {0: a_var, 1: b_var}.__getitem__,
        )
        for op in (Op.FADD, Op.FSUB, Op.FMIN, Op.FMAX)
    }
    for a in specials:
        for b in specials:
            subst = [(a_var, z3.BitVecVal(a, fmt.width)), (b_var, z3.BitVecVal(b, fmt.width))]
            for op, term in terms.items():
                got = z3.simplify(z3.substitute(term, *subst))
                want = evaluate(
                    Apply(op, (Const(a, fmt.width), Const(b, fmt.width)), fmt.width, fmt),
                    lambda e: 0,
                )
                assert z3.is_bv_value(got), (op, hex(a), hex(b), got)
                assert got.as_long() == want, (op, fmt, hex(a), hex(b))


@pytest.mark.parametrize("fmt", [FpFormat.HF, FpFormat.BF])
@pytest.mark.parametrize("op", [Op.FADD, Op.FSUB, Op.FMIN, Op.FMAX])
def test_nan_results_are_canonical_for_all_inputs(fmt: FpFormat, op: Op) -> None:
    a, b = z3.BitVec("a", fmt.width), z3.BitVec("b", fmt.width)
    term = encode(
        Apply(op, (ReadValue(0, fmt.width), ReadValue(1, fmt.width)), fmt.width, fmt),
        {0: a, 1: b}.__getitem__,
    )
    as_fp = z3.fpBVToFP(term, z3.FPSort(fmt.ebits, fmt.sbits))
    solver = z3.Solver()
    solver.add(z3.fpIsNaN(as_fp), term != fp.canonical_nan(fmt))
    assert solver.check() == z3.unsat


@pytest.mark.parametrize("fmt", [FpFormat.HF, FpFormat.BF])
@pytest.mark.parametrize("op", [Op.FMIN, Op.FMAX])
def test_min_max_return_an_operand_unless_both_nan(fmt: FpFormat, op: Op) -> None:
    a, b = z3.BitVec("a", fmt.width), z3.BitVec("b", fmt.width)
    term = encode(
        Apply(op, (ReadValue(0, fmt.width), ReadValue(1, fmt.width)), fmt.width, fmt),
        {0: a, 1: b}.__getitem__,
    )
    sort = z3.FPSort(fmt.ebits, fmt.sbits)
    both_nan = z3.And(z3.fpIsNaN(z3.fpBVToFP(a, sort)), z3.fpIsNaN(z3.fpBVToFP(b, sort)))
    solver = z3.Solver()
    solver.add(z3.Not(both_nan), term != a, term != b)
    assert solver.check() == z3.unsat


def test_min_max_of_zeros_are_specified() -> None:
    fmt = FpFormat.F
    pos, neg = Const(0, 32), Const(0x80000000, 32)
    for a, b in ((pos, neg), (neg, pos)):
        lo = encode(Apply(Op.FMIN, (a, b), 32, fmt), lambda e: z3.BitVecVal(0, 32))
        hi = encode(Apply(Op.FMAX, (a, b), 32, fmt), lambda e: z3.BitVecVal(0, 32))
        assert z3.simplify(lo).as_long() == 0x80000000
        assert z3.simplify(hi).as_long() == 0


def test_sorts_follow_widths() -> None:
    r = ReadValue(3, 32)
    read = {3: z3.BitVec("v3", 32)}.__getitem__
    assert z3.is_bv(encode(r, read)) and encode(r, read).size() == 32
    assert z3.is_bool(encode(Apply(Op.ULT, (r, Const(1, 32)), BOOL), read))
    assert encode(Apply(Op.ZEXT, (r,), 64), read).size() == 64
    assert encode(Apply(Op.TRUNC, (r,), 16), read).size() == 16
    assert z3.is_true(encode(Apply(Op.BAND, (), BOOL), read))
    assert z3.is_false(encode(Apply(Op.BOR, (), BOOL), read))


def test_cache_shares_terms_per_object() -> None:
    calls: list[int] = []

    def read(event: int) -> z3.BitVecRef:
        calls.append(event)
        return z3.BitVec(f"v{event}", 32)

    shared = Apply(Op.ADD, (ReadValue(1, 32), Const(1, 32)), 32)
    expr = Apply(Op.MUL, (shared, shared, shared), 32)
    encoder = ValueEncoder(read)
    first = encoder.encode(expr)
    assert encoder.encode(expr) is first
    assert encoder.encode(shared) is encoder.encode(shared)
    assert calls == [1]


def test_bad_callback_and_malformed_nodes_are_reported() -> None:
    with pytest.raises(ValueError, match="read event 2"):
        encode(ReadValue(2, 32), lambda e: z3.BitVecVal(0, 16))
    with pytest.raises(LookupError, match="contribution 0 of thread P1"):
        encode(Contribution(1, 0, 32), lambda e: z3.BitVecVal(0, 32))
    with pytest.raises(MalformedExprError):
        encode(Apply(Op.ADD, (Const(1, 16), Const(1, 32)), 32), lambda e: z3.BitVecVal(0, 32))


def test_incwrap_decwrap_symbolically_match_pisa_8_2() -> None:
    old, src = z3.BitVec("old", 32), z3.BitVec("src", 32)
    read = {0: old, 1: src}.__getitem__
    args = (ReadValue(0, 32), ReadValue(1, 32))
    inc = encode(Apply(Op.INCWRAP, args, 32), read)
    dec = encode(Apply(Op.DECWRAP, args, 32), read)
    solver = z3.Solver()
    solver.add(
        z3.Or(
            inc != z3.If(z3.UGE(old, src), z3.BitVecVal(0, 32), old + 1),
            dec != z3.If(z3.Or(old == 0, z3.UGT(old, src)), src, old - 1),
        )
    )
    assert solver.check() == z3.unsat


def test_deep_chains_encode_without_recursion() -> None:
    node: Expr = ReadValue(0, 32)
    for _ in range(20000):
        node = Apply(Op.ADD, (node, Const(1, 32)), 32)
    term = encode(node, lambda e: z3.BitVecVal(5, 32))
    assert z3.simplify(term).as_long() == 20005


def test_a_chain_of_2000_dependent_adds_encodes_without_recursion() -> None:
    value: Expr = ReadValue(0, 32)
    for _ in range(2000):
        value = Apply(Op.ADD, (value, Const(1, 32)), 32)
    term = encode(value, lambda e: z3.BitVecVal(5, 32))
    assert z3.simplify(term).as_long() == 2005
