"""herd's cat language: what the frontend expands (functions, procedures, shadowing, herd's
standard names and checks) and what it refuses with a located [cat-unsupported] error."""

from __future__ import annotations

import pytest

from pisa_mm.cat.loader import load_model_source
from pisa_mm.cat.syntax import Binary, BinaryOp, CheckKind, Definition, Model, Name, format_expr
from pisa_mm.errors import PisaMMError


def model(text: str) -> Model:
    return load_model_source(text, "m.cat")


def error_of(text: str) -> str:
    with pytest.raises(PisaMMError) as info:
        load_model_source(text, "m.cat")
    return info.value.render({"m.cat": text})


def expr(m: Model, name: str) -> str:
    d = m.definition(name)
    assert d is not None
    return format_expr(d.expr)


# ------------------------------------------------------------------ header and names


def test_bare_header_is_the_title() -> None:
    assert model("C RC11\nlet a = po").title == "RC11"
    assert model("PTX\nlet a = po").title == "PTX"
    assert model('C "scoped C11"\nlet a = po').title == "scoped C11"
    assert model('"ours"\nlet a = po').title == "ours"


@pytest.mark.parametrize(("text", "keyword"), [("acylic po", "acyclic"), ("lett a = po", "let")])
def test_a_misspelt_first_keyword_is_not_taken_for_a_header(text: str, keyword: str) -> None:
    head = error_of(text).splitlines()[0]
    assert head.startswith("m.cat:1:1: error: unexpected name")
    assert f"(did you mean '{keyword}'?)" in head and head.endswith("[cat-syntax]")


def test_line_comments() -> None:
    m = model('"t" // title\n# a comment\nlet a = po // trailing\nacyclic a as x # end')
    assert [c.name for c in m.checks] == ["x"]


def test_herd_standard_names_need_no_include() -> None:
    m = model('"t"\nlet x = fre | rfe | coi | po-loc | ca | amo\nacyclic x as a')
    assert expr(m, "x") == "fre | rfe | coi | po-loc | ca | amo"
    # each is defined, once, before its first use; its own dependencies first
    names = [d.name for d in m.definitions if isinstance(d, Definition)]
    assert names.index("fr") < names.index("fre") < names.index("x")
    assert names.count("fr") == 1
    assert expr(m, "amo") == "rmw"


def test_herd_scope_names_map_to_our_scopes() -> None:
    # the scope tree's levels are relations (same instance); annotations are sets
    m = model(
        '"t"\nlet x = wi | sg | wg | cta | dev | gpu | gl | sys | unv | swg | sdv\n'
        "let y = memory_scope_work_item | memory_scope_sub_group | memory_scope_work_group"
        " | memory_scope_device | memory_scope_all_svm_devices | WI | DV | ALL | LOCAL\n"
        "let z = membar.cta | membar.gl | membar.sys\n"
        "let o = memory_order_acquire | memory_order_seq_cst"
    )
    relations = ("wi", "sg", "wg", "cta", "dev", "gpu", "gl", "sys", "unv", "swg", "sdv")
    assert [expr(m, n) for n in relations] == [
        "int", "same-sg", "same-wg", "same-wg", "same-gpu", "same-gpu", "same-gpu",
        "_ * _", "_ * _", "same-wg", "same-gpu",
    ]  # fmt: skip
    sets = ("memory_scope_sub_group", "memory_scope_work_group", "memory_scope_device")
    assert [expr(m, n) for n in sets] == ["SG", "WG", "GPU"]
    assert expr(m, "memory_scope_all_svm_devices") == expr(m, "ALL") == "SYS"
    assert expr(m, "memory_scope_work_item") == expr(m, "WI") == "emptyset"
    assert (expr(m, "DV"), expr(m, "LOCAL")) == ("GPU", "SHARED")
    assert expr(m, "membar.cta") == "po & _ * (F & WG) ; po"
    assert (expr(m, "memory_order_acquire"), expr(m, "memory_order_seq_cst")) == ("ACQ", "SC")


def test_a_user_definition_shadows_a_standard_name_hygienically() -> None:
    # `fre` keeps meaning the standard fr & ext, though the model defines its own fr.
    m = model('"t"\nlet fr = po\nlet x = fre | fr')
    assert expr(m, "fr") == "po"
    assert expr(m, "x") == "fre | fr"
    fre = m.definition("fre")
    assert fre is not None and format_expr(fre.expr) == "fr#2 & ext"
    assert expr(m, "fr#2") == "rf^-1 ; co"


def test_herd_models_may_shadow_names() -> None:
    m = model("C t\nlet a = po\nlet b = a\nlet a = a | rf\nacyclic a as x\nacyclic b as y")
    assert expr(m, "a#2") == "a | rf"
    assert format_expr(m.check("x").expr) == "a#2"
    assert format_expr(m.check("y").expr) == "b"


def test_our_models_may_not_redefine() -> None:
    assert "[cat-redefined]" in error_of('"t"\nlet a = po\nlet a = rf')


def test_herd_repeated_check_names_are_numbered() -> None:
    m = model("C t\nempty po as x\nempty rf as x")
    assert [c.name for c in m.checks] == ["x", "x#2"]


# ------------------------------------------------------------------ functions


def test_functions_are_substituted() -> None:
    m = model(
        '"t"\nlet f(r) = r ; po\nlet g(a, b) = a \\ b\nlet h x = [x]\n'
        "let k = fun r -> r^-1\nlet y = f(rf) | g(po, rf) | h W | k(co)"
    )
    assert expr(m, "y") == "rf ; po | po \\ rf | [W] | co^-1"
    assert {d.name for d in m.definitions if isinstance(d, Definition)} == {
        "y"
    }  # functions are not definitions


def test_function_bodies_see_the_names_of_their_definition() -> None:
    # herd's scope is lexical: f's `a` is the first a even after a is shadowed.
    m = model("C t\nlet a = po\nlet f(x) = x | a\nlet a = rf\nlet y = f(co)")
    assert expr(m, "y") == "co | a"


def test_parameters_shadow_names_inside_the_body_only() -> None:
    m = model('"t"\nlet f(po) = po ; rf\nlet y = f(co) | po')
    assert expr(m, "y") == "co ; rf | po"


def test_herd_library_functions() -> None:
    m = model('"t"\nlet y = fencerel(F) | toid(R) | imply(R, W) * M | udr(rf) * M')
    assert expr(m, "y") == "po & _ * F ; po | [R] | (~R | W) * M | (domain(rf) | range(rf)) * M"


def test_let_in() -> None:
    m = model('"t"\nlet y = let a = po and b = rf in a ; b | a')
    assert expr(m, "y") == "po ; rf | po"


@pytest.mark.parametrize(
    ("text", "message"),
    [
        ('"t"\nlet f(x) = x\nlet y = f(po, rf)', "takes 1 argument(s), but 2 are given"),
        ('"t"\nlet f(x) = x\nlet y = f', "'f' is a function: call it"),
        ('"t"\nlet f(x) = x\nlet g(y) = y\nlet z = g(f)', "'f' is a function: call it"),
        ('"t"\nlet y = po(rf)', "'po' is not a function [cat-call]"),
        ('"t"\nlet y = nosuch(rf)', "'nosuch' is not a known function"),
        (
            '"t"\nlet f(g) = g(po)\nlet y = f(rf)',
            "calling the parameter 'g' (higher-order functions)",
        ),
    ],
)
def test_call_errors(text: str, message: str) -> None:
    assert message in error_of(text)


# ------------------------------------------------------------------ procedures and checks


def test_procedures_are_inlined_and_their_checks_named() -> None:
    m = model(
        '"t"\nprocedure cons(r, s) =\n  let both = r | s\n  acyclic both as one\n'
        "  irreflexive r\nend\ncall cons(po, rf)\ncall cons(co, rf) as second\n"
    )
    names = [c.name for c in m.checks]
    assert names == ["one", "po", "second.one", "second.co"]
    assert format_expr(m.check("one").expr) == "po | rf"
    assert format_expr(m.check("second.co").expr) == "co"


def test_call_with_one_check_takes_the_call_name() -> None:
    m = model('"t"\ncall inclusion(po, rf) as po-in-rf')
    (check,) = m.checks
    assert check.name == "po-in-rf" and check.kind is CheckKind.EMPTY
    assert format_expr(check.expr) == "po \\ rf"


def test_undefined_unless_and_flag_are_our_flags() -> None:
    m = model('"t"\nundefined_unless empty po & rf as Dr\nflag ~empty rf as F2')
    assert [(c.name, c.kind) for c in m.checks] == [("Dr", CheckKind.FLAG), ("F2", CheckKind.FLAG)]
    assert m.flags == m.checks


def test_show_and_unshow_have_no_effect() -> None:
    m = model('"t"\nlet a = po\nshow a, fr as x\nunshow a\nacyclic a as c')
    assert [c.name for c in m.checks] == ["c"]


def test_long_chains_are_balanced() -> None:
    m = model('"t"\nlet y = ' + " | ".join(["po"] * 40))
    d = m.definition("y")
    assert d is not None and isinstance(d.expr, Binary) and d.expr.op is BinaryOp.UNION
    depth = 0
    e: object = d.expr
    while isinstance(e, Binary):
        e, depth = e.left, depth + 1
    assert isinstance(e, Name) and depth <= 6


# ------------------------------------------------------------------ unsupported


@pytest.mark.parametrize(
    ("text", "construct", "col"),
    [
        ("with co from generate_cos(co0)", "'with ... from ...'", 1),
        ("let x = match po with || _ -> po end", "'match'", 9),
        ("forall e in R do empty po end", "'forall ... do ... end'", 1),
        ("enum Scopes = 'wg || 'dev", "'enum'", 1),
        ("let x = try po with rf", "'try ... with ...'", 9),
        ('if "variant" let x = po end', "'if'", 1),
        ("let x = {}", "explicit sets", 9),
        ("let x = po ++ rf", "'++'", 12),
        ("let x = 'tag", "tags", 9),
        ("~acyclic po", "negated check '~acyclic'", 1),
        ("undefined_unless acyclic po", "'undefined_unless acyclic'", 1),
        ("flag acyclic po as x", "'flag acyclic'", 1),
        ("let rec f(x) = x", "recursive function", 9),
        ("assert empty po", "'assert'", 1),
    ],
)
def test_unsupported_constructs_are_located_errors(text: str, construct: str, col: int) -> None:
    message = error_of(f"{text}\n")
    head = message.splitlines()[0]
    assert head.startswith(f"m.cat:1:{col}: error: ")
    assert construct in head and head.endswith("is not supported [cat-unsupported]")
