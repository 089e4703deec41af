"""Huge and deep models: long chains work in every pass (parser, checker, evaluator, smt
translation, monotonicity analysis); nesting past MAX_DEPTH is a located, coded error."""

from __future__ import annotations

import re
from pathlib import Path

import pytest

from pisa_mm.cat.limits import MAX_DEPTH
from pisa_mm.cat.loader import load_model_source
from pisa_mm.cat.syntax import Model
from pisa_mm.commands.run import load, run_engines
from pisa_mm.engines import available_engines
from pisa_mm.errors import PisaMMError
from pisa_mm.outcomes.model import Verdict

ROOT = Path(__file__).resolve().parents[3]
MP = next(iter(sorted(ROOT.glob("litmus/pisa/mp/*.litmus"))))
ENGINES = [e for e in ("explicit", "smt") if e in available_engines()]

LONG = {
    "union-2000": '"u"\nlet x = ' + " | ".join(["po"] * 2000) + "\nacyclic x as a\n",
    "seq-2000": '"s"\nlet x = ' + " ; ".join(["[M]"] * 2000) + "\nirreflexive x ; po as a\n",
    "inter-2000": '"i"\nlet x = ' + " & ".join(["po"] * 2000) + "\nacyclic x as a\n",
    "diff-2000": '"d"\nlet x = po' + " \\ rf" * 2000 + "\nacyclic x as a\n",
    "let-1500": '"l"\nlet x0 = po\n'
    + "".join(f"let x{i} = x{i - 1} | rf\n" for i in range(1, 1500))
    + "acyclic x1499 as a\n",
    "let-rec-deep": '"r"\nlet x0 = po\n'
    + "".join(f"let x{i} = x{i - 1} | rf\n" for i in range(1, 400))
    + "let rec y = x399 | (y ; y)\nacyclic y as a\n",
}


@pytest.mark.parametrize("engine", ENGINES)
@pytest.mark.parametrize("name", sorted(LONG))
def test_long_models_run(name: str, engine: str) -> None:
    model: Model = load_model_source(LONG[name], f"{name}.cat")
    loaded = load(str(MP), unroll=None, strict=False)
    (result,) = run_engines(loaded, model, [engine])
    assert result.verdict in (Verdict.OK, Verdict.NO)


def test_long_chains_give_the_same_answer_as_short_ones() -> None:
    loaded = load(str(MP), unroll=None, strict=False)
    short = load_model_source('"s"\nlet x = po | rf\nacyclic x as a\n', "s.cat")
    long = load_model_source(
        '"l"\nlet x = ' + " | ".join(["po", "rf"] * 500) + "\nacyclic x as a\n", "l.cat"
    )
    (a,) = run_engines(loaded, short, ["explicit"])
    (b,) = run_engines(loaded, long, ["explicit"])
    assert (a.verdict, a.states) == (b.verdict, b.states)


DEEP = {
    "parens-1000": '"p"\nlet x = ' + "(" * 1000 + "po" + ")" * 1000 + "\n",
    "tilde-5000": '"t"\nlet x = ' + "~" * 5000 + "po\n",
    "mixed": '"m"\nlet x = ' + "(po ; " * 300 + "po" + ") | rf" * 300 + "\n",
    "brackets": '"b"\nlet x = ' + "domain([" * 200 + "R" + "])" * 200 + "\n",
}


@pytest.mark.parametrize("name", sorted(DEEP))
def test_deep_nesting_is_a_located_error(name: str) -> None:
    with pytest.raises(PisaMMError) as info:
        load_model_source(DEEP[name], f"{name}.cat")
    text = info.value.render({f"{name}.cat": DEEP[name]})
    assert re.match(rf"{name}\.cat:2:\d+: error: expression nested more than {MAX_DEPTH}", text)
    assert text.splitlines()[0].endswith("[cat-depth]")


def test_nesting_up_to_the_limit_works() -> None:
    depth = MAX_DEPTH // 2 - 5  # each `(~` is two levels
    text = '"p"\nlet x = ' + "(~" * depth + "po" + ")" * depth + "\nacyclic x as a\n"
    model = load_model_source(text, "p.cat")
    loaded = load(str(MP), unroll=None, strict=False)
    for engine in ENGINES:
        (result,) = run_engines(loaded, model, [engine])
        assert result.verdict in (Verdict.OK, Verdict.NO)


def test_function_expansion_is_bounded() -> None:
    # each call doubles the expression: 2**40 nodes if nothing stopped it
    lines = ['"f"', "let f0(x) = x | x"]
    lines += [f"let f{i}(x) = f{i - 1}(f{i - 1}(x))" for i in range(1, 40)]
    lines.append("let y = f39(po)")
    with pytest.raises(PisaMMError) as info:
        load_model_source("\n".join(lines), "f.cat")
    assert "[cat-depth]" in str(info.value)


BAD = [
    "let x = ",
    "let x = po ;; rf",
    "let x = R ; po",
    "let x = nosuch",
    "let po = rf",
    "acyclic R",
    "let rec x = ~x",
    'include "nowhere.cat"',
    "with co from x",
    "let x = {}",
    "let f(x) = x\nlet y = f(po, po)",
    "call nosuch(po)",
    "(* open",
    "let x = \x00",
    '"t"\nlet x = po\nlet x = po',
]


@pytest.mark.parametrize("text", BAD)
def test_every_diagnostic_has_a_code(text: str) -> None:
    with pytest.raises(PisaMMError) as info:
        load_model_source(text, "bad.cat")
    for d in info.value.diagnostics:
        assert d.code is not None and d.code.startswith("cat-"), d
        assert d.span is not None
