"""The third round's attack scripts as slow fuzzers (issue 14): wild addresses on every engine,
and damaged cache entries. `PISA_MM_FUZZ_INPUTS` (cache damages per entry), `PISA_MM_FUZZ_SEED`."""

from __future__ import annotations

import itertools
import os
import random
import shutil
import subprocess
import sys
from pathlib import Path

import pytest

from pisa_mm.cat.loader import load_model
from pisa_mm.engines import EngineOptions, get_engine
from pisa_mm.events.build import build
from pisa_mm.litmus import parse_test

pytestmark = pytest.mark.slow

ROOT = Path(__file__).resolve().parents[2]
SEED = int(os.environ.get("PISA_MM_FUZZ_SEED", "14"))
INPUTS = int(os.environ.get("PISA_MM_FUZZ_INPUTS", "20"))

# The pointer P1 dereferences: published by P0 (init null), a constant in a register, or
# a published address moved by an offset.
POINTERS = {
    "published": ("ld.global.acquire.gpu.64b %r0, [@p];", "addrof.64b %r1, TARGET;"),
    "null-register": ("mov.64b %r0, 0;", "addrof.64b %r1, TARGET;"),
    "past-end": (
        "ld.global.acquire.gpu.64b %r9, [@p];\n  iadd.64b %r0, %r9, 16;",
        "addrof.64b %r1, TARGET;",
    ),
    "wrapped": (
        "ld.global.acquire.gpu.64b %r9, [@p];\n  iadd.64b %r0, %r9, 0xFFFFFFFFFFFFFFF0;",
        "addrof.64b %r1, TARGET;",
    ),
    "generic-shared": ("ld.global.acquire.gpu.64b %r0, [@p];", "addrcast.generic.shared %r1, @s;"),
}
ACCESSES = [
    "ld.global.32b %r2, [%r0]",
    "st.global.32b [%r0], 3",
    "ld.generic.32b %r2, [%r0]",
    "st.generic.relaxed.32b [%r0], 3",
    "iatom.global.relaxed.add.32b %r2, [%r0], 1",
    "iatom.generic.relaxed.cas.32b %r2, [%r0], 0, 1",
    "fatom.global.relaxed.add.f %r2, [%r0], 1.0",
]
TARGETS = ["@x", "@y", "@c", "@q"]
PLACES = ["wg 1", "wg 0, sg 1", "host"]


def _text(pointer: str, access: str, target: str, place: str) -> str:
    load, take = POINTERS[pointer]
    return f"""PISA Wild
{{
  .global .64b @p = 0;
  .global .32b @x = 0;
  .global .32b @y = 0;
  .const .32b @c = 3;
  .global .64b @q = 0;
  .shared .32b @s = 0;
}}
P0 @ wg 0, sg 0 {{
  st.global.32b [@x], 1;
  {take.replace("TARGET", target)}
  st.global.release.system.64b [@p], %r1;
}}
P1 @ {place} {{
  {load}
  {access};
  barrier.workgroup;
}}
exists (@x == 1)
"""


def _answer(engine: str, text: str) -> tuple[object, ...] | str:
    from pisa_mm.errors import PisaMMError

    try:
        test = parse_test(text, "wild.litmus")
        result = get_engine(engine)(test, build(test), load_model("pisa"), EngineOptions())
    except PisaMMError as exc:
        return f"error [{exc.diagnostics[0].code}]"
    return (result.verdict, frozenset(result.states), frozenset(f.label for f in result.flags))


def test_every_engine_agrees_on_wild_addresses() -> None:
    cases = list(itertools.product(POINTERS, ACCESSES, TARGETS, PLACES))
    random.Random(SEED).shuffle(cases)
    disagree = []
    for pointer, access, target, place in cases[: max(INPUTS * 10, 40)]:
        text = _text(pointer, access, target, place)
        if place == "host":
            text = text.replace("  barrier.workgroup;\n", "")
        answers = {e: _answer(e, text) for e in ("explicit", "smt", "operational")}
        if len({repr(a) for a in answers.values()}) > 1:
            disagree.append(((pointer, access, target, place), answers))
    assert not disagree, disagree[:3]


def _cli(cache: Path, *argv: str) -> subprocess.CompletedProcess[str]:
    env = {**os.environ, "XDG_CACHE_HOME": str(cache)}
    env.pop("PISA_MM_NO_CACHE", None)
    code = "import sys; from pisa_mm.entry import main; sys.exit(main())"
    return subprocess.run(
        [sys.executable, "-c", code, *argv], capture_output=True, text=True, env=env, timeout=120
    )


def test_damaged_cache_entries_never_change_an_answer(tmp_path: Path) -> None:
    model = tmp_path / "model"
    model.mkdir()
    for name in ("pisa.cat", "pisa-core.cat"):
        shutil.copy(ROOT / "pisa_mm" / "cat" / "models" / name, model / name)
    tests = sorted(str(p) for p in (ROOT / "litmus" / "pisa").glob("*/*.litmus"))[:6]
    own = ["run", "--no-time", "--engine", "explicit", "--model", str(model / "pisa.cat"), *tests]
    shipped = ["run", "--no-time", "--engine", "explicit", *tests]
    warm = tmp_path / "warm"
    references = [(argv, _cli(warm, *argv)) for argv in (own, shipped)]
    rng = random.Random(SEED)
    escaped = []
    for entry in sorted((warm / "pisa-mm").iterdir()):
        data = entry.read_bytes()
        for _ in range(INPUTS):
            cache = tmp_path / "damaged"
            shutil.rmtree(cache, ignore_errors=True)
            shutil.copytree(warm, cache)
            damaged = bytearray(data)
            at = rng.randrange(len(damaged))
            if rng.random() < 0.5:
                damaged[at] ^= 1 << rng.randrange(8)
            else:
                damaged[at : at + 8] = rng.randbytes(8)
            (cache / "pisa-mm" / entry.name).write_bytes(bytes(damaged))
            for argv, reference in references:
                done = _cli(cache, *argv)
                want = (reference.returncode, reference.stdout, "")
                if (done.returncode, done.stdout, done.stderr) != want:
                    escaped.append((entry.name, at, done.returncode, done.stderr[-300:]))
    assert not escaped, escaped[:3]
