"""The parser's fast reads (an instruction's operands, a thread's placement, a condition that
is a conjunction of atoms, one regex each) give the tree (spans included) or the error that
reading them token by token gives."""

from __future__ import annotations

import random
from pathlib import Path

import pytest

from pisa_mm.errors import PisaMMError
from pisa_mm.litmus import parser as P
from pisa_mm.litmus import syntax as S

ROOT = Path(__file__).resolve().parents[3]

# operands the fast read takes, and near misses it must leave to the token-by-token read
PIECES = (
    "%r0", "%r1.x", "@x", "@a.b", "1", "-1", "0x1F", "0x", "1.5", ".5", "1e3", "-.5", "L", "L.x",
    "!%p", "! %p", "!", "[@x]", "[ @x ]", "[%r0]", "[@x+4]", "[@x + %r1]", "[@x-4]", "[@x - -4]",
    "[@x+-4]", "[4]", "[@x+]", "[1.5]", "[@x", "%", "@", "(* c *)", "//c\n", "", " ", "\t", ",",
    ";", ":", "$a", "%r<0~2>", "-", "+", "[%r0-%r1]", "[@x-%r1]", "1x", "%r0;", "[@x]\n",
)  # fmt: skip
OPCODES = ("st.global.32b", "ld.global.32b", "goto", "ret", "iatom.global.add.32b", "L")


def _parse(text: str, path: str) -> S.RawTest | str:
    try:
        return P.parse_raw(text, path)
    except PisaMMError as exc:
        return exc.render({path: text})


def _both(text: str, path: str, monkeypatch: pytest.MonkeyPatch) -> tuple[object, object]:
    fast = _parse(text, path)
    with monkeypatch.context() as m:
        m.setattr(P._Parser, "fast_instruction", lambda *_: None)
        m.setattr(P._Parser, "fast_condition", lambda *_: None)
        m.setattr(P._Parser, "fast_placement", lambda *_: None)
        slow = _parse(text, path)
    return fast, slow


def test_suite_files_parse_the_same(monkeypatch: pytest.MonkeyPatch) -> None:
    files = sorted((ROOT / "litmus").rglob("*.litmus"))
    assert len(files) > 50
    for path in files:
        fast, slow = _both(path.read_text("utf-8"), str(path), monkeypatch)
        assert fast == slow, path


def test_instruction_variants_parse_the_same(monkeypatch: pytest.MonkeyPatch) -> None:
    rnd = random.Random(5)
    for _ in range(3000):
        ops = [rnd.choice(PIECES) for _ in range(rnd.randint(0, 4))]
        sep = rnd.choice((", ", ",", " , ", ",\t"))
        end = rnd.choice((";", " ;", "", ";;", " ; "))
        instr = rnd.choice(OPCODES) + rnd.choice((" ", "", "\t")) + sep.join(ops) + end
        text = (
            f"PISA t\n{{ .global .32b @x = 0; }}\nP0 @ wg 0 {{\n  {instr}\n}}\nexists (@x == 0)\n"
        )
        fast, slow = _both(text, "t.litmus", monkeypatch)
        assert fast == slow, instr


ATOMS = (
    "P0:%r0 == 1", "P1:%r1=0", "P0 : %r0 != 0x1", "1:%r0 == 2", "@x == 1", "@y=2", "@x[1] == 0",
    "P0:r0 == 1", "P0:%r0 == 1.5", "P0:%r0 == 1e3", "P0:%r0 == -1", "wg0:@s == 1", "true",
    "~P0:%r0 == 1", "(P0:%r0 == 1)", "P0:%r0 ==", "@x", "P0:%r0 == 1 (* c *)",
)  # fmt: skip
CONNECTIVES = (" /\\ ", "/\\", " && ", " \\/ ", " -> ", " ", "\t/\\\t")
TAILS = ("", "\n", "\n\n", " (* x *)\n", "\n// c\n", " x", "(*", "\r\n")


def test_condition_variants_parse_the_same(monkeypatch: pytest.MonkeyPatch) -> None:
    rnd = random.Random(6)
    threads = (
        "P0 @ wg 0 {\n  ld.global.32b %r0, [@x];\n}\nP1 @ wg 1 {\n  ld.global.32b %r1, [@x];\n}\n"
    )
    for _ in range(3000):
        prop = rnd.choice(CONNECTIVES).join(rnd.choice(ATOMS) for _ in range(rnd.randint(1, 4)))
        quant = rnd.choice(("exists", "~exists", "forall")) + rnd.choice((" ", "", "\n"))
        cond = quant + rnd.choice(("(", "", "((")) + prop + rnd.choice((")", "", "))", " )"))
        text = f"PISA t\n{{ .global .32b @x = 0; }}\n{threads}{cond}{rnd.choice(TAILS)}"
        fast, slow = _both(text, "t.litmus", monkeypatch)
        assert fast == slow, cond


PLACES = ("wg 0", "wg0", "wg 0x1", "wg -1", "sg 1", "gpu 1", "host", "hostx", "wgx", "wg", "wg 1.5",
          "wg 1 (* c *)", "wg\n1", "", "gpu 0 , wg 2", "x 1")  # fmt: skip


def test_placement_variants_parse_the_same(monkeypatch: pytest.MonkeyPatch) -> None:
    rnd = random.Random(7)
    for _ in range(2000):
        places = rnd.choice((", ", ",", " , ")).join(
            rnd.choice(PLACES) for _ in range(rnd.randint(1, 3))
        )
        head = f"P0 {rnd.choice(('@', '@ ', ''))}{places}{rnd.choice((' {', '{', ' ', ' ,{'))}"
        text = f"PISA t\n{{ .global .32b @x = 0; }}\n{head}\n  ld.global.32b %r0, [@x];\n}}\n"
        fast, slow = _both(text + "exists (P0:%r0 == 0)\n", "t.litmus", monkeypatch)
        assert fast == slow, head


def test_the_fast_read_is_taken() -> None:
    text = "PISA t\n{ .global .32b @x = 0; }\nP0 @ wg 0 {\n  ld.global.32b %r0, [@x + 4];\n}\n"
    parser = P._Parser(text + "exists (P0:%r0 == 0)\n", "t.litmus")
    calls = []
    read = parser.fast_instruction

    def spy(*args: object) -> object:
        calls.append(read(*args))  # type: ignore[arg-type]
        return calls[-1]

    parser.fast_instruction = spy  # type: ignore[method-assign,assignment]
    raw = parser.test()
    assert calls and calls[0] is not None
    (instr,) = raw.threads[0].body
    assert isinstance(instr, S.RawInstr)
    assert instr.text == "ld.global.32b %r0, [@x + 4]"
    address = instr.operands[1]
    assert isinstance(address, S.RawAddress)
    assert (address.span.col, address.span.end_col) == (22, 30)
