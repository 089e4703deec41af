"""Hostile input to the litmus frontend: every limit ends in a located, coded error or an answer.

Large inputs are generated here. Each case names the class of attack it stands for (issue 14):
literals past Python's digit limit, Unicode digits and bad `unroll` metadata, long and deep
conditions, a byte-order mark, and files that are not regular files.
"""

from __future__ import annotations

import os
import threading
from pathlib import Path

import pytest

from pisa_mm.cli import main as cli_main
from pisa_mm.errors import MAX_LITERAL_DIGITS, PisaMMError, read_source
from pisa_mm.litmus import load_test, parse_prop, parse_test
from pisa_mm.litmus.parser import MAX_PROP_DEPTH
from pisa_mm.litmus.program import And, LitmusTest, MemObs
from pisa_mm.outcomes.condition import condition_observables, eval_prop, prop_text
from pisa_mm.outcomes.expectations import parse_expectation

BIG = "9" * (MAX_LITERAL_DIGITS + 700)

TEMPLATE = """PISA T
{meta}{{
  .global .32b @x{size} = {val};
  .shared .32b @s = 0;
  {init}
}}
P0 @ wg {wg} {{
  {body}
}}
{cond}
"""


def litmus(
    *,
    meta: str = "",
    size: str = "",
    val: str = "0",
    init: str = "",
    wg: str = "0",
    body: str = "st.global.32b [@x], 1; st.shared.32b [@s], 1;",
    cond: str = "exists (@x == 1)",
) -> str:
    return TEMPLATE.format(meta=meta, size=size, val=val, init=init, wg=wg, body=body, cond=cond)


def rejected(text: str) -> PisaMMError:
    with pytest.raises(PisaMMError) as info:
        parse_test(text, "hostile.litmus")
    exc = info.value
    rendered = exc.render(getattr(exc, "sources", None))
    for d in exc.diagnostics:
        assert d.code, rendered
    assert len(rendered) < 2000  # a megabyte token is clipped, not echoed
    return exc


def test_the_template_is_accepted() -> None:
    assert isinstance(parse_test(litmus(), "ok.litmus"), LitmusTest)


LITERALS = {
    "value": litmus(val=BIG),
    "array size": litmus(size=f"[{BIG}]"),
    "offset": litmus(body=f"st.global.32b [@x + {BIG}], 1;"),
    "negative offset": litmus(body=f"st.global.32b [@x - {BIG}], 1;"),
    "immediate": litmus(body=f"st.global.32b [@x], {BIG};"),
    "hex immediate": litmus(body=f"st.global.32b [@x], 0x{BIG};"),
    "placement": litmus(wg=BIG),
    "register init": litmus(init=f"P0:%r1 = {BIG};"),
    "init thread": litmus(init=f"P{BIG}:%r1 = 1;"),
    "register range": litmus(body=f".reg .32b %r<0~{BIG}>; st.global.32b [@x], 1;"),
    "condition value": litmus(cond=f"exists (@x == {BIG})"),
    "condition thread": litmus(cond=f"exists (P{BIG}:%r0 == 1)"),
    "condition index": litmus(cond=f"exists (@x[{BIG}] == 1)"),
    "work-group prefix": litmus(cond=f"exists (wg{BIG}:@s == 1)"),
    "cp.async size": litmus(body=f"cp.async.shared.global [@s], [@x], {BIG};"),
    "wait_group": litmus(body=f"cp.async.wait_group {BIG};"),
    "unroll": litmus(meta=f"unroll = {BIG}\n"),
}


@pytest.mark.parametrize("where", sorted(LITERALS))
def test_huge_literal_is_a_located_error(where: str) -> None:
    exc = rejected(LITERALS[where])
    (d,) = exc.diagnostics
    assert d.code == "limit"
    assert d.span is not None and d.span.line > 1
    assert f"at most {MAX_LITERAL_DIGITS}" in d.message


def test_huge_literal_in_an_outcome() -> None:
    test = parse_test(litmus(), "ok.litmus")
    with pytest.raises(PisaMMError) as info:
        parse_prop(f"@x == {BIG}", test)
    assert info.value.diagnostics[0].code == "limit"
    assert info.value.diagnostics[0].span is not None


def test_literal_at_the_limit_is_read_and_judged() -> None:
    exc = rejected(litmus(val="9" * MAX_LITERAL_DIGITS))
    assert exc.diagnostics[0].code == "immediate"  # read, then found not to fit


EXPECTED = """Test T Allowed
States {states}
@x=1;
Ok
Witnesses
Positive: {pos} Negative: {neg}
Cut: {cut} executions truncated by the unroll bound (not final states)
Condition exists (@x=1)
"""

# where each field's number starts: (line, column)
_AT = {"states": (2, 8), "pos": (6, 11), "neg": (6, 23), "cut": (7, 6)}


@pytest.mark.parametrize("field", sorted(_AT))
def test_a_count_past_the_literal_limit_in_an_expected_file_is_located(field: str) -> None:
    values = {"states": "1", "pos": "1", "neg": "0", "cut": "1"} | {field: BIG}
    with pytest.raises(PisaMMError) as info:
        parse_expectation(EXPECTED.format(**values), "T.litmus.expected")
    (d,) = info.value.diagnostics
    assert d.code == "limit"
    assert f"has {len(BIG)} digits; at most {MAX_LITERAL_DIGITS}" in d.message
    assert d.span is not None and (d.span.line, d.span.col) == _AT[field]


@pytest.mark.parametrize("field", sorted(_AT))
@pytest.mark.parametrize("value", ["²", "٣", "-1", "x"])
def test_a_count_that_is_no_ascii_number_in_an_expected_file_is_malformed(
    field: str, value: str
) -> None:
    values = {"states": "1", "pos": "1", "neg": "0", "cut": "1"} | {field: value}
    with pytest.raises(PisaMMError) as info:
        parse_expectation(EXPECTED.format(**values), "T.litmus.expected")
    (d,) = info.value.diagnostics
    assert d.code == "expected-file"
    assert d.span is not None and d.span.line == _AT[field][0]


@pytest.mark.parametrize("value", ["²", "٣", "-1", "1.5", "two", "0x3", ""])
def test_bad_unroll_metadata(value: str) -> None:
    (d,) = rejected(litmus(meta=f"unroll = {value}\n")).diagnostics
    assert d.code == "metadata"
    assert d.span is not None and d.span.line == 2


def test_repeated_unroll_metadata() -> None:
    (d,) = rejected(litmus(meta="unroll = 1\nunroll = 3\n")).diagnostics
    assert d.code == "metadata" and "twice" in d.message
    assert d.span is not None and d.span.line == 3


def test_unroll_metadata_is_validated_once() -> None:
    assert parse_test(litmus(meta="unroll = 5\n"), "u.litmus").unroll == 5
    assert parse_test(litmus(), "u.litmus").unroll is None


@pytest.mark.parametrize("op", ["/\\", "\\/", "&&", "||"])
def test_flat_thousand_atom_chain(op: str) -> None:
    cond = f" {op} ".join(f"@x != {i}" for i in range(2, 1002))
    test = parse_test(litmus(cond=f"exists ({cond})"), "chain.litmus")
    prop = test.condition.prop
    assert len(prop.args) == 1000  # type: ignore[union-attr]
    assert condition_observables(test.condition) == (MemObs("x", 0, None),)
    assert eval_prop(prop, {MemObs("x", 0, None): 1})
    assert prop_text(prop).count("@x!=") == 1000
    # the same through --outcome
    assert isinstance(parse_prop(cond, test), And) == (op in ("/\\", "&&"))


def test_right_nested_chain_is_flat() -> None:
    cond = "(@x == 1 /\\ " * 1000 + "@x == 1" + ")" * 1000
    test = parse_test(litmus(cond=f"exists {cond}"), "right.litmus")
    assert len(test.condition.prop.args) == 1001  # type: ignore[union-attr]


@pytest.mark.parametrize("count", [5000, 5001])
def test_many_negations(count: int) -> None:
    test = parse_test(litmus(cond=f"exists ({'~' * count}(@x == 1))"), "not.litmus")
    assert eval_prop(test.condition.prop, {MemObs("x", 0, None): 1}) == (count % 2 == 0)
    assert eval_prop(parse_prop("~" * count + "@x == 1", test), {MemObs("x", 0, None): 0}) == (
        count % 2 == 1
    )


def test_many_parentheses() -> None:
    parse_test(litmus(cond="exists " + "(" * 5000 + "@x == 1" + ")" * 5000), "p.litmus")


@pytest.mark.parametrize(
    "cond",
    [
        "(@x == 1 /\\ (@x == 1 \\/ " * 600 + "true" + "))" * 600,
        "@x == 1 -> " * 1000 + "true",
    ],
    ids=["alternating", "implies"],
)
def test_deep_nesting_is_a_located_error(cond: str) -> None:
    (d,) = rejected(litmus(cond=f"exists ({cond})")).diagnostics
    assert d.code == "limit" and str(MAX_PROP_DEPTH) in d.message
    assert d.span is not None and d.span.line == 10
    test = parse_test(litmus(), "ok.litmus")
    with pytest.raises(PisaMMError) as info:
        parse_prop(cond, test)
    assert info.value.diagnostics[0].code == "limit"


def test_byte_order_mark(tmp_path: Path) -> None:
    text = "\ufeff" + litmus()
    assert parse_test(text, "bom.litmus").name == "T"
    path = tmp_path / "bom.litmus"
    path.write_bytes(text.encode("utf-8"))
    assert load_test(str(path)).name == "T"


def _refused(path: str, code: str = "io") -> str:
    with pytest.raises(PisaMMError) as info:
        read_source(path)
    (d,) = info.value.diagnostics
    assert d.code == code
    return d.message


def test_fifo_is_refused_without_blocking(tmp_path: Path) -> None:
    fifo = tmp_path / "t.litmus"
    os.mkfifo(fifo)
    outcome: list[str] = []
    worker = threading.Thread(target=lambda: outcome.append(_refused(str(fifo))), daemon=True)
    worker.start()
    worker.join(10)
    if worker.is_alive():  # unblock the reader before failing
        with open(fifo, "w"):
            pass
        pytest.fail("reading a FIFO blocked")
    assert "FIFO" in outcome[0]


def test_devices_and_directories_are_refused(tmp_path: Path) -> None:
    assert "character device" in _refused("/dev/zero")
    assert "directory" in _refused(str(tmp_path))
    assert "cannot read" in _refused(str(tmp_path / "missing.litmus"))


def test_size_limit(tmp_path: Path) -> None:
    path = tmp_path / "big.litmus"
    path.write_text(litmus() + "// " + "x" * 2000 + "\n")
    with pytest.raises(PisaMMError) as info:
        read_source(str(path), limit=1000)
    assert info.value.diagnostics[0].code == "limit"


def test_not_utf8(tmp_path: Path) -> None:
    path = tmp_path / "latin.litmus"
    path.write_bytes(litmus().encode("utf-8") + b"// \xff\n")
    assert "UTF-8" in _refused(str(path))


@pytest.mark.parametrize("command", ["parse", "run", "query"])
def test_commands_refuse_a_fifo(
    command: str, tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    fifo = tmp_path / "t.litmus"
    os.mkfifo(fifo)
    argv = [command, str(fifo)] + (["--outcome", "true"] if command == "query" else [])
    assert cli_main(argv) == 2
    err = capsys.readouterr().err
    assert "error:" in err and "[io]" in err and "Traceback" not in err


def test_clipping_keeps_paths_and_short_lines_whole(tmp_path: Path) -> None:
    deep = tmp_path / ("d" * 90) / "missing.litmus"
    assert str(deep) in _refused(str(deep))
    text = litmus(cond="exists (" + " /\\ ".join(["@x == 1"] * 20) + " /\\ @y == 1)")
    rendered = rejected(text).render({"hostile.litmus": text})
    assert text.splitlines()[9] in rendered  # a 200-character line is quoted whole
