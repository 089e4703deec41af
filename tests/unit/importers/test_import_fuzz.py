"""Fuzzing the importer: whatever the input, only PisaMMError (bad input) or Unsupported (a
skip) escapes, and whatever it returns validates under pisa-mm's loader."""

from __future__ import annotations

import os
from pathlib import Path

from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from pisa_mm.errors import PisaMMError
from pisa_mm.importers import Unsupported, import_text
from pisa_mm.litmus import parse_test

DATA = Path(__file__).resolve().parents[2] / "data" / "import"
SEEDS = sorted(p.read_text() for p in DATA.rglob("*.litmus"))
PIECES = [
    "(",
    ")",
    "{",
    "}",
    ";",
    ",",
    "*",
    "&",
    "=",
    "==",
    "!",
    "-",
    "0",
    "1",
    "-1",
    "0x10",
    "r0",
    "x",
    "P1",
    "@wg 0",
    "if",
    "else",
    "while",
    "int",
    "atomic_int",
    "local",
    "global",
    "memory_order_seq_cst",
    "memory_scope_sub_group",
    "atomic_load(x)",
    "1:r0=1",
    "/\\",
    "~",
    "=>",
    "exists",
    "forall",
    "filter",
    "locations [x;]",
    "scopes:",
    "regions:",
    "\n",
    "(*",
    "*)",
    "/*",
    "*/",
    "//",
    "barrier(CLK_LOCAL_MEM_FENCE)",
    "C",
    "OpenCL",
]


@st.composite
def mutated(draw: st.DrawFn) -> str:
    text = draw(st.sampled_from(SEEDS))
    for _ in range(draw(st.integers(1, 4))):
        i = draw(st.integers(0, len(text)))
        j = draw(st.integers(i, min(len(text), i + 12)))
        text = text[:i] + draw(st.sampled_from(["", *PIECES])) + text[j:]
    return text


@settings(
    max_examples=int(os.environ.get("PISA_MM_FUZZ_EXAMPLES", "300")),
    deadline=None,
    suppress_health_check=[HealthCheck.too_slow],
)
@given(mutated())
def test_only_located_errors_or_skips_escape(text: str) -> None:
    try:
        imported = import_text(text, "fuzz.litmus")
    except (PisaMMError, Unsupported):
        return
    parse_test(imported.text, "out.litmus")
