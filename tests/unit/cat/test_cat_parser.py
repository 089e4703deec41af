"""The cat parser: every construct, precedence, spans, and syntax errors with carets."""

from __future__ import annotations

import pytest

from pisa_mm.cat.parser import parse
from pisa_mm.cat.syntax import (
    Binary,
    BinaryOp,
    CheckKind,
    CheckStmt,
    Empty,
    Expr,
    IncludeStmt,
    LetStmt,
    Name,
    ShowStmt,
    Unary,
    UnaryOp,
    Universe,
    format_expr,
)
from pisa_mm.errors import PisaMMError, Span


def expr_of(text: str) -> Expr:
    stmt = parse(f"let x = {text}").statements[0]
    assert isinstance(stmt, LetStmt)
    return stmt.bindings[0].expr


def shape(e: Expr) -> object:
    """The tree without spans, as nested tuples, for readable assertions."""
    match e:
        case Name(name=n):
            return n
        case Universe():
            return "_"
        case Empty():
            return "0"
        case Unary(op=op, arg=arg):
            return (op.name, shape(arg))
        case Binary(op=op, left=left, right=right):
            return (op.name, shape(left), shape(right))
    raise AssertionError(e)


def error_of(text: str) -> str:
    with pytest.raises(PisaMMError) as info:
        parse(text, "m.cat")
    return info.value.render({"m.cat": text})


# ------------------------------------------------------------------ statements


def test_title_and_every_statement_kind() -> None:
    f = parse(
        '"A title"\n'
        "let a = po and b = rf\n"
        "let rec c = po | (c ; c)\n"
        'include "stdlib.cat"\n'
        "acyclic po | rf as thin\n"
        "irreflexive po\n"
        "empty rmw & (fr ; co) as atomicity\n"
        "flag ~empty po as racy\n"
        "show po, rf as r2\n"
        "unshow po\n",
        "m.cat",
    )
    assert f.title == "A title"
    kinds = [type(s).__name__ for s in f.statements]
    assert kinds == [
        "LetStmt", "LetStmt", "IncludeStmt", "CheckStmt", "CheckStmt", "CheckStmt",
        "CheckStmt", "ShowStmt", "ShowStmt",
    ]  # fmt: skip
    let, rec, inc, acyclic, irr, empty, flag, show, _ = f.statements
    assert isinstance(let, LetStmt) and not let.recursive
    assert [b.name for b in let.bindings] == ["a", "b"]
    assert isinstance(rec, LetStmt) and rec.recursive
    assert isinstance(inc, IncludeStmt) and inc.path == "stdlib.cat"
    assert isinstance(acyclic, CheckStmt) and acyclic.kind is CheckKind.ACYCLIC
    assert acyclic.name == "thin"
    assert isinstance(irr, CheckStmt) and irr.kind is CheckKind.IRREFLEXIVE and irr.name is None
    assert isinstance(empty, CheckStmt) and empty.kind is CheckKind.EMPTY
    assert isinstance(flag, CheckStmt) and flag.kind is CheckKind.FLAG and flag.name == "racy"
    assert isinstance(show, ShowStmt) and len(show.items) == 2


def test_no_title() -> None:
    assert parse("let a = po").title is None
    assert parse("").statements == ()


def test_anonymous_check_text_is_normalised_source() -> None:
    stmt = parse("irreflexive  [M & GLOBAL] ;\n   hb_G ; (* why *) eco?").statements[0]
    assert isinstance(stmt, CheckStmt)
    assert stmt.text == "[M & GLOBAL] ; hb_G ; eco?"


def test_string_escapes() -> None:
    assert parse(r'"say \"hi\""').title == 'say "hi"'


# ------------------------------------------------------------------ expressions


@pytest.mark.parametrize(
    ("text", "tree"),
    [
        ("po", "po"),
        ("_", "_"),
        ("0", "0"),
        ("po-loc", "po-loc"),
        ("hb_G", "hb_G"),
        ("[R]", ("IDENTITY", "R")),
        ("~R", ("COMPLEMENT", "R")),
        ("rf^-1", ("INVERSE", "rf")),
        ("po+", ("PLUS", "po")),
        ("po*", ("STAR", "po")),
        ("po?", ("OPT", "po")),
        ("domain(rf)", ("DOMAIN", "rf")),
        ("range(rf)", ("RANGE", "rf")),
        ("R * W", ("CARTESIAN", "R", "W")),
        ("R*W", ("CARTESIAN", "R", "W")),
        ("po | rf", ("UNION", "po", "rf")),
        ("po & rf", ("INTER", "po", "rf")),
        ("po \\ rf", ("DIFF", "po", "rf")),
        ("po ; rf", ("SEQ", "po", "rf")),
        ("(po)", "po"),
    ],
)
def test_each_operator(text: str, tree: object) -> None:
    assert shape(expr_of(text)) == tree


@pytest.mark.parametrize(
    ("text", "tree"),
    [
        # herd's precedence, loosest first: | ; \ & * then prefix/postfix
        ("a | b ; c", ("UNION", "a", ("SEQ", "b", "c"))),
        ("a ; b | c", ("UNION", ("SEQ", "a", "b"), "c")),
        ("a ; b & c", ("SEQ", "a", ("INTER", "b", "c"))),
        ("a & b ; c", ("SEQ", ("INTER", "a", "b"), "c")),
        ("a ; b \\ c", ("SEQ", "a", ("DIFF", "b", "c"))),
        ("a \\ b & c", ("DIFF", "a", ("INTER", "b", "c"))),
        ("a & b \\ c", ("DIFF", ("INTER", "a", "b"), "c")),
        ("a \\ b \\ c", ("DIFF", ("DIFF", "a", "b"), "c")),
        ("a ; b ; c", ("SEQ", "a", ("SEQ", "b", "c"))),
        ("R * W & loc", ("INTER", ("CARTESIAN", "R", "W"), "loc")),
        ("~a & b", ("INTER", ("COMPLEMENT", "a"), "b")),
        ("~a+", ("COMPLEMENT", ("PLUS", "a"))),
        ("a^-1+", ("PLUS", ("INVERSE", "a"))),
        ("(a ; b)+", ("PLUS", ("SEQ", "a", "b"))),
        ("a* ; b", ("SEQ", ("STAR", "a"), "b")),
        ("a* | b*", ("UNION", ("STAR", "a"), ("STAR", "b"))),
        ("R * ~W", ("CARTESIAN", "R", ("COMPLEMENT", "W"))),
        ("[R] ; po ; [W]", ("SEQ", ("IDENTITY", "R"), ("SEQ", "po", ("IDENTITY", "W")))),
        ("[R & A]", ("IDENTITY", ("INTER", "R", "A"))),
    ],
)
def test_precedence(text: str, tree: object) -> None:
    assert shape(expr_of(text)) == tree


def test_postfix_star_before_next_statement() -> None:
    f = parse("let a = po*\nlet b = R * W\nacyclic a*")
    assert len(f.statements) == 3


def test_format_expr_reparses_to_the_same_tree() -> None:
    texts = ["a | b ; c & d \\ e", "~(a | b)", "(a ; b)^-1", "[R] ; (po | rf)+ ; [W]",
             "(R * W) & loc", "a \\ (b \\ c)", "domain(po) * range(rf)", "(~R) * W"]  # fmt: skip
    for text in texts:
        e = expr_of(text)
        assert shape(expr_of(format_expr(e))) == shape(e), text


def test_spans_cover_brackets_and_operands() -> None:
    e = expr_of("[R] ; po")
    assert isinstance(e, Binary) and e.op is BinaryOp.SEQ
    assert e.span == Span("<string>", 1, 9, 1, 17)
    assert e.left.span == Span("<string>", 1, 9, 1, 12)
    assert isinstance(e.left, Unary) and e.left.op is UnaryOp.IDENTITY


def test_nested_comments_are_ignored() -> None:
    f = parse("(* outer (* inner *) still comment *) let a = po (* trailing *)")
    assert len(f.statements) == 1


# ------------------------------------------------------------------ errors


def test_error_unexpected_end() -> None:
    assert error_of("let x = ") == (
        "m.cat:1:8: error: unexpected end of file, expected an expression [cat-syntax]\n"
        "let x = \n"
        "       ^"
    )


def test_error_missing_equals() -> None:
    # `let x po` could still become herd's function definition `let x po = ...`.
    assert error_of("let x po") == (
        "m.cat:1:9: error: unexpected end of file, expected '=' [cat-syntax]\nlet x po\n        ^"
    )


def test_error_juxtaposed_names() -> None:
    assert error_of("let x = (po rf)") == (
        "m.cat:1:10: error: 'po' is not a function (two names side by side: is an operator "
        "missing?) [cat-call]\n"
        "let x = (po rf)\n"
        "         ^~"
    )


def test_error_bad_character() -> None:
    assert error_of("let x = po @ rf").startswith(
        "m.cat:1:12: error: unexpected character '@' [cat-syntax]"
    )


def test_error_unterminated_comment() -> None:
    assert error_of("let x = po\n(* oops") == (
        "m.cat:2:1: error: unterminated comment '(*' [cat-syntax]\n(* oops\n^~"
    )


def test_error_keyword_as_name() -> None:
    assert error_of("let empty = po") == (
        "m.cat:1:5: error: 'empty' is a keyword and cannot be used as a name [cat-syntax]\n"
        "let empty = po\n"
        "    ^~~~~"
    )


def test_error_complement_as_left_operand_of_product() -> None:
    # As in herd, `~S * T` does not parse: write `(~S) * T`.
    assert "unexpected name 'W', expected an operator" in error_of("let x = ~R * W")
    assert shape(expr_of("(~R) * W")) == ("CARTESIAN", ("COMPLEMENT", "R"), "W")


def test_error_flag_needs_negated_empty() -> None:
    assert "'flag empty' (only 'flag ~empty' is) is not supported [cat-unsupported]" in error_of(
        "flag empty po"
    )


def test_error_include_needs_string() -> None:
    assert "expected a quoted string" in error_of("include stdlib")
