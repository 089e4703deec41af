"""Hypothesis: only PisaMMError escapes the cat front end; the bit-matrix evaluator agrees
with a naive set-based reference; printing and re-parsing is the identity."""

from __future__ import annotations

import contextlib
import itertools
from typing import Any

from cat_executions import Execution
from hypothesis import given, settings
from hypothesis import strategies as st

from pisa_mm.cat.eval import Evaluator, evaluate
from pisa_mm.cat.loader import load_model_source
from pisa_mm.cat.parser import parse
from pisa_mm.cat.syntax import (
    Binary,
    BinaryOp,
    Empty,
    Expr,
    Name,
    Unary,
    UnaryOp,
    Universe,
    format_expr,
)
from pisa_mm.errors import PisaMMError

# ------------------------------------------------------------------ robustness

TOKENS = ["let", "rec", "and", "acyclic", "empty", "flag", "~", "as", "include", "show", "po",
          "rf", "R", "W", "x", "=", "|", ";", "&", "\\", "*", "+", "?", "^-1", "(", ")", "[",
          "]", "_", "0", "domain", "range", '"t"', "(*", "*)", ",", "@", "\n"]  # fmt: skip


@settings(max_examples=300, deadline=None)
@given(st.lists(st.sampled_from(TOKENS), max_size=14))
def test_only_pisa_mm_errors_escape(tokens: list[str]) -> None:
    text = " ".join(tokens)
    with contextlib.suppress(PisaMMError):
        load_model_source(text, "fuzz.cat")


HERD_TOKENS = ["C t\n", "let", "f", "(", "x", ")", "=", "x", ";", "po", "in", "fun", "->",
               "procedure", "p", "call", "end", ",", "undefined_unless", "empty", "flag", "~",
               "toid", "fencerel", "inclusion", "fr", "wg", "as", "\n", "with", "{", "'a",
               "//", "#", '"cos.cat"', "include", "rec", "and", "|"]  # fmt: skip


@settings(max_examples=300, deadline=None)
@given(st.lists(st.sampled_from(HERD_TOKENS), max_size=16))
def test_only_pisa_mm_errors_escape_herd_constructs(tokens: list[str]) -> None:
    text = "let f(x) = x ; po\nprocedure p(a) = acyclic a end\n" + " ".join(tokens)
    with contextlib.suppress(PisaMMError):
        load_model_source(text, "fuzz.cat")


@settings(max_examples=200, deadline=None)
@given(st.text(max_size=40))
def test_arbitrary_text(text: str) -> None:
    with contextlib.suppress(PisaMMError):
        parse(text, "fuzz.cat")


# ------------------------------------------------------------------ random typed expressions


def _infix(t: tuple[str, str, str]) -> str:
    return f"({t[0]} {t[1]} {t[2]})"


sets: st.SearchStrategy[str] = st.deferred(lambda: st.one_of(
    st.sampled_from(["R", "W", "M", "_"]),
    st.tuples(sets, st.sampled_from(["|", "&", "\\"]), sets).map(_infix),
    sets.map(lambda s: f"(~{s})"),
    rels.map(lambda r: f"domain({r})"),
    rels.map(lambda r: f"range({r})"),
))  # fmt: skip
rels: st.SearchStrategy[str] = st.deferred(lambda: st.one_of(
    st.sampled_from(["po", "rf", "id", "0"]),
    st.tuples(rels, st.sampled_from(["|", "&", "\\", ";"]), rels).map(_infix),
    rels.map(lambda r: f"(~{r})"),
    st.tuples(rels, st.sampled_from(["^-1", "+", "*", "?"])).map(lambda t: f"({t[0]}){t[1]}"),
    sets.map(lambda s: f"[{s}]"),
    st.tuples(sets, sets).map(lambda t: f"({t[0]} * {t[1]})"),
))  # fmt: skip


def reference(e: Expr, ex: Execution) -> frozenset[Any]:
    """A deliberately naive evaluator over Python sets."""
    u = frozenset(ex.events)
    ident = frozenset((a, a) for a in u)

    def closure(r: frozenset[Any]) -> frozenset[Any]:
        out = set(r)
        while True:
            new = {(a, d) for a, b in out for c, d in out if b == c} - out
            if not new:
                return frozenset(out)
            out |= new

    match e:
        case Name(name="id"):
            return ident
        case Name(name=n):
            return ex.sets[n] if n in ex.sets else ex.rel(n)
        case Universe():
            return u
        case Empty():
            return frozenset()
        case Unary(op=UnaryOp.COMPLEMENT, arg=arg):
            full = frozenset(itertools.product(u, u)) if _is_rel(arg) else u
            return full - reference(arg, ex)
        case Unary(op=op, arg=arg):
            r = reference(arg, ex)
            match op:
                case UnaryOp.IDENTITY:
                    return frozenset((a, a) for a in r)
                case UnaryOp.INVERSE:
                    return frozenset((b, a) for a, b in r)
                case UnaryOp.PLUS:
                    return closure(r)
                case UnaryOp.STAR:
                    return closure(r) | ident
                case UnaryOp.OPT:
                    return r | ident
                case UnaryOp.DOMAIN:
                    return frozenset(a for a, _ in r)
                case UnaryOp.RANGE:
                    return frozenset(b for _, b in r)
        case Binary(op=op, left=left, right=right):
            lv, rv = reference(left, ex), reference(right, ex)
            match op:
                case BinaryOp.SEQ:
                    return frozenset((a, d) for a, b in lv for c, d in rv if b == c)
                case BinaryOp.CARTESIAN:
                    return frozenset(itertools.product(lv, rv))
                case BinaryOp.UNION:
                    return lv | rv
                case BinaryOp.INTER:
                    return lv & rv
                case BinaryOp.DIFF:
                    return lv - rv
    raise AssertionError(e)


def _is_rel(e: Expr) -> bool:
    match e:
        case Name(name=n):
            return n in ("po", "rf", "id")
        case Universe():
            return False
        case Empty():
            return True
        case Unary(op=op, arg=arg):
            if op is UnaryOp.COMPLEMENT:
                return _is_rel(arg)
            return op not in (UnaryOp.DOMAIN, UnaryOp.RANGE)
        case Binary(op=op, left=left):
            return op in (BinaryOp.SEQ, BinaryOp.CARTESIAN) or _is_rel(left)
    raise AssertionError(e)


@st.composite
def executions(draw: st.DrawFn) -> Execution:
    events = draw(st.lists(st.integers(0, 40), min_size=1, max_size=7, unique=True))
    pair = st.tuples(st.sampled_from(events), st.sampled_from(events))
    reads = frozenset(draw(st.sets(st.sampled_from(events))))
    sets = {"R": reads, "W": frozenset(events) - reads, "M": frozenset(events)}
    rels = {"po": frozenset(draw(st.sets(pair, max_size=10))),
            "rf": frozenset(draw(st.sets(pair, max_size=6)))}  # fmt: skip
    return Execution(tuple(events), sets, rels)


@settings(max_examples=150, deadline=None)
@given(st.one_of(sets, rels), executions())
def test_evaluator_agrees_with_reference(text: str, ex: Execution) -> None:
    m = load_model_source(f"let v = {text}")
    d = m.definition("v")
    assert d is not None
    assert evaluate(m, ex).value("v") == reference(d.expr, ex)


@settings(max_examples=100, deadline=None)
@given(st.one_of(sets, rels))
def test_format_then_parse_is_the_identity(text: str) -> None:
    m = load_model_source(f"let v = {text}")
    d = m.definition("v")
    assert d is not None
    again = load_model_source(f"let v = {format_expr(d.expr)}").definition("v")
    assert again is not None
    assert format_expr(again.expr) == format_expr(d.expr)
    assert _strip(again.expr) == _strip(d.expr)


def _strip(e: Expr) -> object:
    match e:
        case Name(name=n):
            return n
        case Universe():
            return "_"
        case Empty():
            return "0"
        case Unary(op=op, arg=arg):
            return (op, _strip(arg))
        case Binary(op=op, left=left, right=right):
            # `|` is associative: compare unions as flat lists.
            if op is BinaryOp.UNION:
                return (op, *_flat_union(e))
            return (op, _strip(left), _strip(right))
    raise AssertionError(e)


def _flat_union(e: Expr) -> list[object]:
    if isinstance(e, Binary) and e.op is BinaryOp.UNION:
        return _flat_union(e.left) + _flat_union(e.right)
    return [_strip(e)]


@settings(max_examples=150, deadline=None)
@given(st.one_of(sets, rels), executions(), st.data())
def test_generated_code_agrees_with_reference_across_a_session(
    text: str, ex: Execution, data: st.DataObject
) -> None:
    """The generated functions (cat/inline.py) read static values from the session and
    recompute dynamic ones: two executions that differ in rf under one static key each
    agree with the reference."""
    pair = st.tuples(st.sampled_from(ex.events), st.sampled_from(ex.events))
    other_rf = data.draw(st.frozensets(pair, max_size=6))
    m = load_model_source(f"let v = {text}\nempty v as e")
    d = m.definition("v")
    assert d is not None
    ev = Evaluator(m, dynamic={"rf"})
    second = Execution(ex.events, ex.sets, {**ex.rels, "rf": other_rf})
    for run in (ex, second, ex):
        result = ev.evaluate(run, static_key="one session")
        assert result.value("v") == reference(d.expr, run)
        assert result.consistent == (not reference(d.expr, run))


def test_large_universes_agree_with_reference() -> None:
    """Past the small-universe limit (no memo, bits built in a buffer)."""
    events = tuple(range(0, 80, 2))
    po = frozenset((a, b) for a, b in itertools.pairwise(events))
    rf = frozenset({(events[-1], events[0]), (events[5], events[3])})
    ex = Execution(events, {"R": frozenset(events[::3]), "W": frozenset(), "M": frozenset(events)},
                   {"po": po, "rf": rf})  # fmt: skip
    for text in ("(po | rf)+", "po^-1 ; rf", "[R] ; (po ; rf)* ; [R]", "~(po ; po)"):
        m = load_model_source(f"let v = {text}")
        d = m.definition("v")
        assert d is not None
        assert evaluate(m, ex).value("v") == reference(d.expr, ex)
