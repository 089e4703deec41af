"""Load-time checking: names, set/relation types, redefinitions, `let rec`, exact messages."""

from __future__ import annotations

import pytest

from pisa_mm.cat.loader import load_model_source
from pisa_mm.cat.syntax import Binary, CheckKind, Empty, Model, RecGroup, Ty, Unary
from pisa_mm.errors import PisaMMError


def load(text: str) -> Model:
    return load_model_source(text, "m.cat")


def error_of(text: str) -> str:
    with pytest.raises(PisaMMError) as info:
        load(text)
    exc = info.value
    # The loader attaches the source texts, which is what the CLI renders with.
    return exc.render(getattr(exc, "sources", None))


def test_types_of_names_and_subexpressions() -> None:
    m = load("let s = R & ~W\nlet r = [s] ; po\nlet d = domain(r)\nlet c = s * d\nempty c")
    assert m.types["s"] is Ty.SET
    assert m.types["r"] is Ty.REL
    assert m.types["d"] is Ty.SET
    assert m.types["c"] is Ty.REL
    assert m.types["po"] is Ty.REL and m.types["R"] is Ty.SET  # built-ins used are typed too
    assert m.builtins_used == frozenset({"R", "W", "po"})
    definition = m.definition("r")
    assert definition is not None and m.type_of(definition.expr) is Ty.REL
    assert m.checks[0].kind is CheckKind.EMPTY and m.checks[0].name == "c"


def test_zero_takes_the_type_of_its_context() -> None:
    m = load("let s = R | 0\nlet r = 0 ; po\nlet z = 0\nlet i = [0]")
    for name, ty in [("s", Ty.SET), ("r", Ty.REL), ("z", Ty.REL), ("i", Ty.REL)]:
        assert m.types[name] is ty
    s = m.definition("s")
    assert s is not None and isinstance(s.expr, Binary) and isinstance(s.expr.right, Empty)
    assert s.expr.right.ty is Ty.SET
    i = m.definition("i")
    assert i is not None and isinstance(i.expr, Unary) and isinstance(i.expr.arg, Empty)
    assert i.expr.arg.ty is Ty.SET


def test_unknown_name_with_suggestion() -> None:
    assert error_of("let a = po\nlet b = rff ; a") == (
        "m.cat:2:9: error: unknown name 'rff' (did you mean 'rf'?) [cat-name]\n"
        "let b = rff ; a\n"
        "        ^~~"
    )


def test_unknown_name_without_suggestion() -> None:
    assert error_of("acyclic zzzzqqq").startswith("m.cat:1:9: error: unknown name 'zzzzqqq' [cat")


def test_sequence_needs_relations() -> None:
    assert error_of("let x = R ; po") == (
        "m.cat:1:9: error: ';' needs relations, but 'R' is a set [cat-type]\n"
        "let x = R ; po\n"
        "        ^"
    )


def test_identity_needs_a_set() -> None:
    assert error_of("let x = [po ; rf]") == (
        "m.cat:1:10: error: '[...]' needs a set, but 'po ; rf' is a relation [cat-type]\n"
        "let x = [po ; rf]\n"
        "         ^~~~~~~"
    )


def test_union_needs_same_types() -> None:
    assert error_of("let x = R | po") == (
        "m.cat:1:9: error: '|' needs two sets or two relations, but 'R' is a set and 'po' is "
        "a relation [cat-type]\n"
        "let x = R | po\n"
        "        ^~~~~~"
    )


def test_cartesian_needs_sets() -> None:
    assert error_of("let x = R * po").startswith(
        "m.cat:1:13: error: '*' (cartesian product) needs sets, but 'po' is a relation [cat-type]"
    )


@pytest.mark.parametrize(
    ("text", "message"),
    [
        ("let x = R^-1", "'^-1' needs a relation, but 'R' is a set"),
        ("let x = R+", "'+' needs a relation, but 'R' is a set"),
        ("let x = R*", "'*' (closure) needs a relation, but 'R' is a set"),
        ("let x = R?", "'?' needs a relation, but 'R' is a set"),
        ("let x = domain(R)", "domain(...) needs a relation, but 'R' is a set"),
        ("let x = range(W)", "range(...) needs a relation, but 'W' is a set"),
        ("let x = po & W", "'&' needs two sets or two relations, but 'po' is a relation and "),
        ("acyclic R", "acyclic needs a relation, but 'R' is a set"),
        ("irreflexive W", "irreflexive needs a relation, but 'W' is a set"),
    ],
)
def test_type_errors(text: str, message: str) -> None:
    assert message in error_of(text)


def test_empty_and_flag_accept_sets_and_relations() -> None:
    m = load("empty R & W\nflag ~empty po & rf as both")
    assert [c.kind for c in m.checks] == [CheckKind.EMPTY, CheckKind.FLAG]
    assert m.checks[0].name == "R & W"


def test_redefinition_is_an_error() -> None:
    assert error_of("let a = po\nlet a = rf") == (
        "m.cat:2:5: error: 'a' is already defined (at m.cat:1:5); only models with herd's "
        "header (a first line such as `C name`) may shadow names [cat-redefined]\nlet a = rf\n    ^"
    )


def test_builtins_cannot_be_redefined() -> None:
    assert "'po' is a built-in relation and cannot be redefined [cat-redefined]" in error_of(
        "let po = rf"
    )


def test_simultaneous_let_does_not_see_its_siblings() -> None:
    assert "unknown name 'a'" in error_of("let a = po and b = a")
    assert "'a' is bound twice in this 'let'" in error_of("let a = po and a = rf")


def test_duplicate_check_names() -> None:
    assert "there is already a check named 'x' (at m.cat:1:1)" in error_of(
        "acyclic po as x\nempty rf as x"
    )


def test_let_rec_group() -> None:
    m = load("let rec a = po | (a ; b) and b = rf | a")
    (group,) = m.definitions
    assert isinstance(group, RecGroup)
    assert [d.name for d in group.definitions] == ["a", "b"]
    assert m.types["a"] is Ty.REL and m.types["b"] is Ty.REL


def test_let_rec_needs_a_base_case_type() -> None:
    assert "cannot tell whether 'a' is a set or a relation" in error_of("let rec a = a")


def test_let_rec_must_be_monotone() -> None:
    assert error_of("let rec a = po \\ a") == (
        "m.cat:1:18: error: recursive name 'a' occurs under a complement or on the right of "
        "'\\', so 'let rec' has no least fixpoint [cat-rec]\n"
        "let rec a = po \\ a\n"
        "                 ^"
    )
    assert "[cat-rec]" in error_of("let rec a = po | ~a")
    load("let rec a = po | ~~a")  # double complement is monotone


def test_model_accessors() -> None:
    m = load("let a = po\nacyclic a as one\nflag ~empty rf as two")
    assert [c.name for c in m.axioms] == ["one"]
    assert [c.name for c in m.flags] == ["two"]
    assert m.check("two").is_flag
    assert m.definition("po") is None
    assert [c.name for c in m.with_checks(["two"]).checks] == ["two"]
    with pytest.raises(PisaMMError, match="has no check named 'three'"):
        m.check("three")
