"""`run --herd-log` against an independent checker of herd's log grammar.

The checker below is written from herdtools7's log lexer (tools/lexLog_tools.mll: rules `main`,
`pstate`, `plines`, `pline`, `pwitnesses`, `pcond`, `phash`) and its condition parser
(lib/stateParser.mly `constr`/`prop`/`atom_prop`, tokens of lib/stateLexer.mll), not from
pisa_mm's reporter: each line of the output must be one the lexer accepts, in the order its
rules read them.
"""

from __future__ import annotations

import re
from dataclasses import replace
from pathlib import Path

import pytest

from pisa_mm import cli
from pisa_mm.litmus.program import MemObs, RegObs
from pisa_mm.outcomes.model import FlagWitness, State, TestResult, Verdict
from pisa_mm.report.herdlog import herd_location, herd_value, render_herd_log
from pisa_mm.values.expr import FpFormat

SUITE = Path(__file__).resolve().parents[3] / "litmus" / "pisa"
Capture = pytest.CaptureFixture[str]

# ---------------------------------------------------------------- lexLog_tools.mll, as regexes
_NAME = r"[A-Za-z_.$][A-Za-z0-9_.]*"  # `name`
_TESTNAME = r"[A-Za-z0-9_/.\-+\[\]:]+"
_NUM = r"-?(?:[0-9]+|0x[0-9a-fA-F]+)"
_LOC = rf"(?:[0-9]+:{_NAME}|\[?{_NAME}\]?|{_NAME}\[[0-9]+\])"
_BINDING = rf"[ \t]*{_LOC}[ \t]*=[ \t]*(?:{_NUM}|{_NAME})[ \t]*;"
TEST = re.compile(
    rf"Test[ \t]+({_TESTNAME})(?:[ \t]+(Allowed|Forbidden|Required|Allow|Forbid|Require))?"
)
STATES = re.compile(r"States(?:[ \t]+[0-9]+)?")
STATE = re.compile(rf"(?:{_BINDING})+[ \t]*")
VALIDATION = re.compile(r"(?:Loop[ \t]+)?(?:Undef|Succeeded|Failed|Ok|No|\?\?).*")
WITNESSES = re.compile(r"Witnesses[ \t]*")
POSNEG = re.compile(r"Positive:[ \t]*[0-9]+,?[ \t]*Negative:[ \t]*[0-9]+[ \t]*")
FLAG = re.compile(r"(?:Bad executions|Flag ).*")
CONDITION = re.compile(r"Condition[ \t]+(.+)")
TRAILER = re.compile(
    rf"[hH][aA][sS][hH][ \t]*=[ \t]*\S+[ \t]*|Time[ \t]+{_TESTNAME}[ \t]+[0-9]+\.[0-9]+[ \t]*"
    rf"|[A-Za-z]+[ \t]*=.*|[A-Za-z]+[ \t]+{_TESTNAME}[ \t]+.*"
)

# ---------------------------------------------------------------- stateParser.mly's condition
_TOKEN = re.compile(
    r"\s*(?:(?P<quant>~\s*exists|exists|forall)|(?P<op>/\\|\\/|=>|==|!=|=|~|\(|\)|\[|\]|:)"
    rf"|(?P<word>true|false|not)\b|(?P<num>{_NUM})|(?P<name>_?[A-Za-z_.$]+[A-Za-z0-9_/.\-]*))"
)


def _tokens(text: str) -> list[str]:
    out: list[str] = []
    pos = 0
    while pos < len(text):
        m = _TOKEN.match(text, pos)
        assert m is not None and m.end() > pos, f"herd's state lexer rejects {text[pos:]!r}"
        kind = m.lastgroup
        assert kind is not None
        out.append(m.group(kind) if kind in ("op", "word", "quant") else kind)
        pos = m.end()
        while pos < len(text) and text[pos].isspace():
            pos += 1
    return out


class _Cond:
    """Accepts `constr` of stateParser.mly (quantifier + prop); precedence does not matter for
    acceptance, so `prop` is parsed as operands joined by binary connectives."""

    def __init__(self, text: str) -> None:
        self.toks = _tokens(text)
        self.i = 0

    def eat(self, *what: str) -> str:
        assert self.i < len(self.toks), "condition ends early"
        tok = self.toks[self.i]
        assert tok in what, f"expected {what}, found {tok!r}"
        self.i += 1
        return tok

    def peek(self) -> str | None:
        return self.toks[self.i] if self.i < len(self.toks) else None

    def constr(self) -> None:
        quant = self.eat("exists", "forall", *[t for t in self.toks[:1] if t.startswith("~")])
        assert re.fullmatch(r"~\s*exists|exists|forall", quant)
        self.prop()
        assert self.peek() is None, f"trailing {self.toks[self.i :]}"

    def prop(self) -> None:
        self.operand()
        while self.peek() in ("/\\", "\\/", "=>"):
            self.eat("/\\", "\\/", "=>")
            self.operand()

    def operand(self) -> None:
        tok = self.peek()
        if tok in ("~", "not"):
            self.eat(tok)
            self.operand()
        elif tok == "(":
            self.eat("(")
            self.prop()
            self.eat(")")
        elif tok in ("true", "false"):
            self.eat(tok)
        else:
            self.location()
            self.eat("=", "==", "!=")
            self.eat("num", "name")

    def location(self) -> None:
        if self.peek() == "[":
            self.eat("[")
            self.eat("name")
            self.eat("]")
            return
        if self.peek() == "num":
            self.eat("num")
            self.eat(":")
            self.eat("name")
            return
        self.eat("name")
        if self.peek() == "[":
            self.eat("[")
            self.eat("num")
            self.eat("]")


def check_herd_log(text: str) -> list[str]:
    """The test names of a log, asserting every line follows herd's log grammar."""
    lines = text.split("\n")
    assert lines[-1] == "", "the log ends with a newline"
    lines.pop()
    names: list[str] = []
    i = 0

    def line() -> str:
        assert i < len(lines), "log ends inside a block"
        return lines[i]

    while i < len(lines):
        if not lines[i]:
            i += 1
            continue
        m = TEST.fullmatch(line())
        assert m, f"line {i + 1}: expected a Test line: {line()!r}"
        names.append(m.group(1))
        i += 1
        m2 = STATES.fullmatch(line())
        assert m2, f"line {i + 1}: expected States: {line()!r}"
        count = int(line().split()[1])
        i += 1
        for _ in range(count):
            assert STATE.fullmatch(line()), f"line {i + 1}: not a herd state: {line()!r}"
            i += 1
        assert VALIDATION.fullmatch(line()), f"line {i + 1}: expected a validation: {line()!r}"
        i += 1
        assert WITNESSES.fullmatch(line()), f"line {i + 1}: expected Witnesses: {line()!r}"
        i += 1
        assert POSNEG.fullmatch(line()), f"line {i + 1}: expected Positive/Negative: {line()!r}"
        i += 1
        while FLAG.fullmatch(line()):
            i += 1
        m3 = CONDITION.fullmatch(line())
        assert m3, f"line {i + 1}: expected Condition: {line()!r}"
        _Cond(m3.group(1)).constr()
        i += 1
        while i < len(lines) and lines[i]:
            assert TRAILER.fullmatch(lines[i]), f"line {i + 1}: unknown line {lines[i]!r}"
            i += 1
    return names


# ---------------------------------------------------------------- the tests


def _result(**kw: object) -> TestResult:
    base = TestResult(
        name="T",
        model="pisa",
        engine="smt",
        quantifier="exists",
        observables=(),
        states=(State((("P1:%r0", 1), ("P1:%v.x", 0), ("@a[2]", 3), ("wg1:@s", 4), ("@x", 0))),),
        verdict=Verdict.OK,
        positive=1,
        negative=0,
        flags=(FlagWitness("data-race", (1, 2), "w"),),
        cut=False,
        condition_text="exists (P1:%r0=1 /\\ ~(@x=1) -> wg1:@s!=4)",
        seconds=0.25,
        counts_executions=False,
    )
    return replace(base, **kw)  # type: ignore[arg-type]


def test_block_layout() -> None:
    assert render_herd_log(_result()) == (
        "Test T Allowed\n"
        "States 1\n"
        "1:r0=1; 1:v.x=0; a[2]=3; wg1.s=4; x=0;\n"
        "Ok\n"
        "Witnesses\n"
        "Positive: 1 Negative: 0\n"
        "Flag data-race\n"
        "Condition exists (1:r0=1 /\\ ~(x=1) => wg1.s!=4)\n"
        "Observation T Always 1 0\n"
        "Time T 0.25\n"
        "\n"
    )


def test_cut_is_herds_loop_and_unknown_is_herds_question_marks() -> None:
    cut = render_herd_log(_result(cut=True, verdict=Verdict.NO, quantifier="forall"))
    assert "\nLoop No\n" in cut and cut.startswith("Test T Required\n")
    unknown = render_herd_log(_result(verdict=Verdict.UNKNOWN))
    assert "\n??\n" in unknown and "Observation T Unknown 1 0" in unknown
    assert check_herd_log(cut + unknown) == ["T", "T"]


def test_locations_are_renamed() -> None:
    assert herd_location("P12:%r3") == "12:r3"
    assert herd_location("@flag") == "flag"
    assert herd_location("wg0:@s[1]") == "wg0.s[1]"


def test_checker_rejects_what_herd_rejects() -> None:
    good = render_herd_log(_result())
    for bad in (
        good.replace("Witnesses\n", "Witnesses (states)\n"),
        good.replace("1:r0=1;", "P1:%r0=1;"),
        good.replace("=> wg1", "-> wg1"),
        good.replace("Time T", "Cut: some executions\nTime T"),
    ):
        with pytest.raises(AssertionError):
            check_herd_log(bad)


def test_run_herd_log_on_a_suite_family(capsys: Capture) -> None:
    assert cli.main(["run", str(SUITE / "mp"), "--engine", "explicit", "--herd-log"]) == 0
    captured = capsys.readouterr()
    names = check_herd_log(captured.out)
    assert len(names) == len(list((SUITE / "mp").glob("*.litmus")))
    assert "tests," in captured.err and "tests," not in captured.out


@pytest.mark.slow
def test_run_herd_log_on_the_whole_bundled_suite(capsys: Capture) -> None:
    cli.main(["run", str(SUITE), "--herd-log"])
    names = check_herd_log(capsys.readouterr().out)
    assert len(names) == len(list(SUITE.rglob("*.litmus")))


def test_herd_log_needs_one_engine(capsys: Capture) -> None:
    assert cli.main(["run", str(SUITE / "mp"), "--engine", "all", "--herd-log"]) == 2
    assert "--herd-log prints one block per test" in capsys.readouterr().err


NEGATIVE = """PISA Neg
{
  .global .32b @x = -1;
  .global .64b @y = -2;
  .global .32b @z = 2147483647;
  .global .32b @w = 0;
  .global .32b @a[2] = {0, -3};
}
P0 @ wg 0 {
  ld.global.32b %r0, [@x];
  ld.global.64b %r1, [@y];
  st.global.32b [@w], 2147483648;
}
locations [@z; @w; @a[1];]
exists (P0:%r0 == -1 /\\ P0:%r1 == -2 /\\ ~(@w == 0))
"""


def test_values_are_signed_at_their_width_as_herd_prints_them(
    tmp_path: Path, capsys: Capture
) -> None:
    # herd types a plain location or register as a (signed) int and prints it signed:
    # all ones is -1 in a 32-bit and in a 64-bit one; 2^31 in 32 bits is -2^31
    test = tmp_path / "Neg.litmus"
    test.write_text(NEGATIVE)
    assert cli.main(["run", str(test), "--herd-log"]) == 0
    out = capsys.readouterr().out
    check_herd_log(out)
    assert "\n0:r0=-1; 0:r1=-2; a[1]=-3; w=-2147483648; z=2147483647;\n" in out
    assert "\nCondition exists (0:r0=-1 /\\ 0:r1=-2 /\\ ~(w=0))\n" in out
    # the default blocks keep pisa-mm's unsigned bit patterns (what .expected files hold)
    assert cli.main(["run", str(test)]) == 0
    assert "P0:%r0=4294967295; P0:%r1=18446744073709551614;" in capsys.readouterr().out


def test_a_value_of_unknown_width_or_float_type_is_printed_as_it_is() -> None:
    assert herd_value(4294967295, None) == 4294967295
    assert herd_value(4294967295, RegObs(0, "r0", width=32)) == -1
    assert herd_value(2147483647, MemObs("x", width=32)) == 2147483647
    assert herd_value(0xBF800000, MemObs("f", fmt=next(iter(FpFormat)), width=32)) == 0xBF800000
