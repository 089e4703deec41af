"""The hand-written litmus parser: tokens by context, spans, conditions, syntax errors."""

from __future__ import annotations

import subprocess
import sys

import pytest

from pisa_mm.errors import PisaMMError, Span
from pisa_mm.litmus import syntax as S
from pisa_mm.litmus.parser import parse_raw, parse_raw_prop

HEAD = "PISA T\n{\n  .global .32b @x = 0;\n}\n"
BODY = "P0 @ wg 0 {\n  ld.global.32b %r0, [@x];\n}\n"


def litmus(cond: str = "exists (P0:%r0 == 1)", body: str = BODY, head: str = HEAD) -> str:
    return head + body + cond + "\n"


def error(text: str) -> tuple[int, int, str, str]:
    with pytest.raises(PisaMMError) as info:
        parse_raw(text, "t.litmus")
    d = info.value.diagnostics[0]
    assert d.span is not None and d.code is not None
    return d.span.line, d.span.col, d.message, d.code


def prop_error(text: str) -> tuple[int, str, str]:
    with pytest.raises(PisaMMError) as info:
        parse_raw_prop(text, "<outcome>")
    d = info.value.diagnostics[0]
    assert d.span is not None and d.code is not None
    return d.span.col, d.message, d.code


def test_tokens_are_read_by_context() -> None:
    # `P0` is a thread before `@`, an instruction name (a label) in a body; `wg0` a
    # work-group prefix in a condition; `1.5` a float, `-1` an offset's sign and integer
    raw = parse_raw(
        litmus(
            "exists (wg0:@s == 1 /\\ @f == 1.5)",
            "P0 @ wg 0 {\n  P0:\n  ld.global.32b %r0, [@x - 1];\n  goto P0;\n}\n",
        ),
        "t.litmus",
    )
    body = raw.threads[0].body
    assert isinstance(body[0], S.RawLabel) and body[0].name == "P0"
    ld = body[1]
    assert isinstance(ld, S.RawInstr) and isinstance(ld.operands[1], S.RawAddress)
    assert ld.operands[1].negative and ld.operands[1].offset == S.RawInt(
        "1", Span("t.litmus", 7, 28, 7, 29)
    )
    goto = body[2]
    assert isinstance(goto, S.RawInstr) and isinstance(goto.operands[0], S.RawIdent)
    cond = raw.condition.prop
    assert isinstance(cond, S.RawJunction)
    first, second = cond.args
    assert isinstance(first, S.RawAtom) and isinstance(first.obs, S.RawMemObs)
    assert first.obs.wg is not None and first.obs.wg.text == "wg0"
    assert isinstance(second, S.RawAtom) and isinstance(second.value, S.RawFloat)


def test_metadata_line_is_the_rest_of_the_line() -> None:
    raw = parse_raw('PISA T\n"d"\nexpect = Forbidden // x\n{ }\n' + BODY + "exists (true)", "t")
    assert raw.description == "d"
    assert raw.metadata == (("expect", "Forbidden // x"),)
    assert raw.metadata_spans == (Span("t", 3, 1, 3, 24),)


def test_spans_run_from_first_to_last_token() -> None:
    raw = parse_raw(litmus("exists ((P0:%r0 == 1) /\\ ~(P0:%r0 == 2))"), "t")
    instr = raw.threads[0].body[0]
    assert isinstance(instr, S.RawInstr)
    assert instr.span == Span("t", 6, 3, 6, 26)  # without the `;`
    assert instr.text == "ld.global.32b %r0, [@x]"
    assert raw.threads[0].span == Span("t", 5, 1, 7, 2)
    junction = raw.condition.prop
    assert isinstance(junction, S.RawJunction)
    # an operand's parentheses belong to its parent's span, not to its own
    assert junction.span == Span("t", 8, 9, 8, 40)
    assert junction.args[0].span == Span("t", 8, 10, 8, 21)
    assert junction.args[1].span == Span("t", 8, 26, 8, 40)
    assert raw.condition.span == Span("t", 8, 1, 8, 41)


def test_chains_flatten_and_double_negations_cancel() -> None:
    prop = parse_raw_prop("@x == 1 /\\ (@x == 2 /\\ @x == 3) /\\ ~~(@x == 4)", "o")
    assert isinstance(prop, S.RawJunction) and prop.op == "and" and len(prop.args) == 4
    implies = parse_raw_prop("@x == 1 -> @x == 2 -> @x == 3", "o")
    assert isinstance(implies, S.RawBinary) and isinstance(implies.rhs, S.RawBinary)
    mixed = parse_raw_prop("~@x == 1 \\/ @x == 2 /\\ @x == 3", "o")
    assert isinstance(mixed, S.RawJunction) and mixed.op == "or"
    assert isinstance(mixed.args[0], S.RawNot) and isinstance(mixed.args[1], S.RawJunction)


@pytest.mark.parametrize(
    "cond",
    [
        "(" * 1000 + "@x == 1" + ")" * 1000,
        "~" * 5000 + "@x == 1",
        " /\\ ".join(["@x == 1"] * 1000),
        "~(" * 1000 + "@x == 1" + ")" * 1000,
    ],
)
def test_deep_conditions_need_no_recursion(cond: str) -> None:
    limit = sys.getrecursionlimit()
    sys.setrecursionlimit(200)  # far less than the nesting: the parser must not recurse on it
    try:
        assert parse_raw_prop(cond, "o") is not None
    finally:
        sys.setrecursionlimit(limit)


def test_nesting_past_the_limit_is_a_located_error() -> None:
    col, msg, code = prop_error(" -> ".join(["@x == 1"] * 200))
    assert code == "limit" and "nested more than 100" in msg and col == 1 + 11 * 100


@pytest.mark.parametrize(
    ("body", "where", "message"),
    [
        ("  st.global.32b [@x], 1\n  st.global.32b [@x], 2;\n", (6, 24), "missing ';' before"),
        ("  st.global.32b [@x], 1 st.global.32b [@x], 2;\n", (6, 25), "at the end of the instr"),
        ("  ld.global.32b %r0, ;\n", (6, 22), "expected an operand"),
        ("  ld.global.32b %r0 # [@x];\n", (6, 21), "unexpected character '#'"),
    ],
)
def test_instruction_errors(body: str, where: tuple[int, int], message: str) -> None:
    line, col, msg, code = error(litmus(body=f"P0 @ wg 0 {{\n{body}}}\n"))
    assert (line, col, code) == (*where, "syntax") and message in msg, msg


def test_newcomer_mistakes_keep_their_messages() -> None:
    assert "a thread needs a placement" in error(litmus(body="P0 {\n}\n"))[2]
    assert "expected a final condition" in error(litmus("(P0:%r0 == 1)"))[2]
    assert (
        "missing ';' at the end of the declaration"
        in error(litmus(head="PISA T\n{ .global .32b @x = 0 .global .32b @y = 0; }\n"))[2]
    )
    assert "did you mean 'exists'" in error(litmus("exist (P0:%r0 == 1)"))[2]
    line, col, msg, _ = error(litmus(body="P0 @ wg 0 {\n  ld.global.32b %r0, [@x];\n"))
    assert "missing '}' at the end of thread P0" in msg and (line, col) == (6, 27)
    assert "unterminated comment" in error(litmus("exists (* (P0:%r0 == 1)"))[2]


def test_expected_lists() -> None:
    _, msg, _ = prop_error("@x == 1 /\\")
    assert msg == (
        "unexpected end of file, expected '(', 'false', 'true', '~' or an observable "
        "(Pn:%r, @x, wgK:@x)"
    )
    _, msg, _ = prop_error("(@x == 1")
    assert msg == "unexpected end of file, expected ')', '->', '/\\' or '\\/'"
    _, msg, _ = prop_error("@x == 1)")
    assert msg == "unexpected ')', expected '->', '/\\', '\\/' or end of file"


def test_importing_the_frontend_does_not_import_lark() -> None:
    code = "import sys, pisa_mm.litmus; print('lark' in sys.modules)"
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True)
    assert out.stdout.strip() == "False"
