"""PISA litmus text for a translated test, checked with pisa_mm's own loader."""

from __future__ import annotations

import functools

from pisa_mm.errors import PisaMMError
from pisa_mm.importers.translate import PisaTest
from pisa_mm.litmus import parse_test
from pisa_mm.litmus.program import LitmusTest

__all__ = ["check", "render"]


def render(test: PisaTest) -> str:
    """The litmus text of docs/litmus-format.md (one statement per line, herd's layout)."""
    out = [f"PISA {test.name}", f'"{test.description}"']
    out.extend(f"{k} = {v}" for k, v in test.metadata)
    out.append("{")
    for loc in test.locations:
        out.append(f"  .{loc.space} .32b @{loc.name} = {loc.init};")
    for proc, reg, value in test.reg_inits:
        out.append(f"  P{proc}:%{reg} = {value};")
    out.append("}")
    for t in test.threads:
        out.append("")
        out.append(f"P{t.proc} @ {t.place.text()} {{")
        out.extend(line if line.endswith(":") else f"  {line}" for line in t.lines)
        out.append("}")
    out.append("")
    if test.observed:
        out.append(f"locations [{' '.join(o + ';' for o in test.observed)}]")
    condition = test.condition
    if test.filter is not None and filter_supported():
        out.append(f"filter ({test.filter})")
    elif test.filter is not None:
        condition = folded_condition(test.quantifier, test.filter, condition)
    out.append(f"{test.quantifier} ({condition})")
    return "\n".join(out) + "\n"


def folded_condition(quantifier: str, filt: str, prop: str) -> str:
    """herd's `filter F` folded into the condition, for a frontend without `filter`: the
    verdict is the same (exists/~exists: F /\\ P; forall: F -> P), the listed states are not."""
    if quantifier == "forall":
        return f"({filt}) -> ({prop})"
    return f"({filt}) /\\ ({prop})"


@functools.cache
def filter_supported() -> bool:
    """Whether pisa_mm's litmus frontend reads a `filter` line (litmus-format.md has it)."""
    probe = "PISA F\n{ .global .32b @x = 0; }\nP0 @ wg 0 { st.global.32b [@x], 1; }\n"
    try:
        parse_test(probe + "filter (@x == 1)\nexists (@x == 1)\n", "<probe>")
    except PisaMMError:
        return False
    return True


def check(text: str, path: str) -> LitmusTest:
    """Parse and validate `text` as pisa_mm reads it, strictly (no assumed scope); PisaMMError
    if it does not."""
    return parse_test(text, path, strict=True)
