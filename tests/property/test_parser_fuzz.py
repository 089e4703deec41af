"""Fuzzing the litmus frontend: whatever the input, only PisaMMError may escape parse_test.

The default runs ~300 examples per strategy; `PISA_MM_FUZZ_EXAMPLES=10000` (or the slow test)
runs more. The slow `test_suite_mutation_fuzz` mutates every shipped test under litmus/ with
seeded random edits, hostile ones included (huge literals, Unicode digits, deep nesting, a
byte-order mark), and prints its figures: inputs, escaped exceptions, slowest input
(`PISA_MM_FUZZ_INPUTS=N` sets how many, `PISA_MM_FUZZ_SEED` the seed).
"""

from __future__ import annotations

import os
import random
import time
import traceback

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st
from suite_files import GENERATED_SAMPLE, HAND_WRITTEN

from pisa_mm.errors import PisaMMError
from pisa_mm.litmus import parse_test
from pisa_mm.litmus.program import LitmusTest

EXAMPLES = int(os.environ.get("PISA_MM_FUZZ_EXAMPLES", "300"))

SEEDS = [
    """PISA MP+rel.gpu+acq.gpu
"Message passing."
source = fuzz
{
  .global .32b @x = 0;
  .global .32b @y = 0;
}

P0 @ wg 0 {
  st.global.32b [@x], 1;
  st.global.release.gpu.32b [@y], 1;
}

P1 @ wg 1 {
  ld.global.acquire.gpu.32b %r0, [@y];
  ld.global.32b %r1, [@x];
}

exists (P1:%r0 == 1 /\\ P1:%r1 == 0)
""",
    """PISA Rich
{
  .global .32b @x = 0;
  .global .32b @a[4] = {1, 2, 3, 4};
  .shared .32b @s = 0;
  .global .64b @g = 0;
  .const .32b @c = 5;
  P0:%p0 = @x;
  P1:%q = 0;
  P1:%pq = 1;
}

P0 @ wg 0, sg 0 {
  .reg .32b %r0, %r1;
  .reg .v4.32b %v;
  .pred %p;
  .private .32b @priv;
loop:
  ld.global.v4.32b %v, [@a];
  iadd.32b %r0, %v.x, 1;
  scmp.lt.32b %p, %r0, 3;
  goto.cond !%p, loop;
  iatom.global.acq_rel.gpu.cas.32b %r1, [%p0], 0, 1;
  fatom.shared.add.f %r1, [@s], 1.5;
  fence.global.release.system;
  fence.subgroup;
  barrier.workgroup;
  shfl.idx.32b %r1, %r0, 0, 0xffffffff;
  cp.async.shared.global [@s], [@x], 4;
  cp.async.wait_all;
  st.private.32b [@priv], %r1;
  return.cond %p;
}

P1 @ wg 0, sg 0 {
  ired.sum.32b %r2, %q, 0xffffffff;
  ld.const.32b %r3, [@c];
  sel.32b %r4, 1, 2, %pq;
}

P2 @ host {
  st.global.release.system.32b [@x], 2;
}

locations [P0:%r1; wg0:@s; @a[3];]
forall (P0:%r0 != 0 -> (@x == 2 \\/ ~(1:%r2 = 1) && true))
""",
]

TOKENS = [
    ";", ",", "[", "]", "{", "}", "(", ")", "@", "%", ":", "=", "==", "!=", "/\\", "\\/", "~",
    "->", "!", "+", "-", "P0", "P7", "wg", "sg", "gpu", "host", "exists", "~exists", "forall",
    "locations", "true", ".global", ".shared", ".const", ".private", ".reg", ".pred", ".32b",
    ".v4.32b", "%r0", "%v.x", "@x", "@nope", "0", "-1", "0xffffffff", "1.5", "1e400",
    "99999999999999999999999999999", "ld.global.32b", "st.shared.relaxed.8b", "goto", "loop:",
    "iatom.generic.inc.128b", "fence.shared.seq_cst.system", "(*", "*)", "//", '"', "\n",
]  # fmt: skip


def check(text: str) -> bool:
    """Whether `text` is accepted; a rejection must be a PisaMMError with coded diagnostics."""
    try:
        result = parse_test(text, "fuzz.litmus")
    except PisaMMError as exc:
        assert exc.diagnostics
        assert all(d.code for d in exc.diagnostics), exc.render()  # every diagnostic is coded
        exc.render(getattr(exc, "sources", None))
        return False
    assert isinstance(result, LitmusTest)
    return True


@st.composite
def mutated(draw: st.DrawFn) -> str:
    text = draw(st.sampled_from(SEEDS))
    for _ in range(draw(st.integers(1, 4))):
        n = len(text)
        i = draw(st.integers(0, n))
        j = draw(st.integers(i, min(n, i + 12)))
        kind = draw(st.sampled_from(["delete", "insert", "token", "duplicate", "swap"]))
        if kind == "delete":
            text = text[:i] + text[j:]
        elif kind == "insert":
            text = text[:i] + draw(st.text(max_size=3)) + text[i:]
        elif kind == "token":
            text = text[:i] + " " + draw(st.sampled_from(TOKENS)) + " " + text[i:]
        elif kind == "duplicate":
            text = text[:j] + text[i:j] + text[j:]
        else:
            words = text.split(" ")
            if len(words) > 2:
                a = draw(st.integers(0, len(words) - 1))
                b = draw(st.integers(0, len(words) - 1))
                words[a], words[b] = words[b], words[a]
                text = " ".join(words)
    return text


SPACES = ["", ".global", ".shared", ".generic", ".private", ".const"]
ORDERS = ["", ".weak", ".relaxed", ".acquire", ".release", ".acq_rel", ".seq_cst"]
SCOPES = ["", ".subgroup", ".workgroup", ".gpu", ".system"]
CCS = ["", ".uc", ".L2wb", ".L1c.L2c.L3c", ".L1wb.L2uc.L3uc", ".ri"]
TYPES = [".8b", ".16b", ".32b", ".64b", ".128b", ".f", ".hf", ".bf", ".df", ".16bx2"]
VECS = ["", "", "", ".v2", ".v3", ".v4", ".v8"]
IOPS = [".add", ".sub", ".smin", ".umax", ".and", ".xchg", ".cas", ".inc", ".incwrap", ".min"]
OPERANDS = ["%r0", "%r1", "%v", "%v.y", "%p", "!%p", "@x", "@a", "@s", "@c", "1", "-1",
            "0x3f800000", "2.5", "[@x]", "[@a + 4]", "[@a + 2]", "[%r0]", "[%a0 + %r1]",
            "[@s]", "[@c]", "[@x - 4]", "loop", "end"]  # fmt: skip
MNEMONICS = ["ld", "st", "iatom", "fatom", "fence", "mov", "iadd", "shl", "not", "sel", "scmp.lt",
             "ucmp.ge", "addrof", "goto", "goto.cond", "return", "return.cond", "shfl.up",
             "ired.sum", "redfirstidx", "cp.async.shared.global", "cp.async.wait_group",
             "cp.async.wait_all", "cp.async.commit_group", "barrier.workgroup"]  # fmt: skip


@st.composite
def instruction(draw: st.DrawFn) -> str:
    m = draw(st.sampled_from(MNEMONICS))
    if m in ("ld", "st", "iatom", "fatom", "fence"):
        parts = [m, draw(st.sampled_from(SPACES)), draw(st.sampled_from(ORDERS)),
                 draw(st.sampled_from(SCOPES)), draw(st.sampled_from(CCS))]  # fmt: skip
        if m in ("iatom", "fatom"):
            parts.append(draw(st.sampled_from(IOPS)))
        if m in ("ld", "st"):
            parts.append(draw(st.sampled_from(VECS)))
        if m != "fence":
            parts.append(draw(st.sampled_from(TYPES)))
        m = "".join(parts)
    elif not m.startswith(("goto", "return", "cp.async", "barrier")):
        m += draw(st.sampled_from(TYPES))
    ops = draw(st.lists(st.sampled_from(OPERANDS), max_size=4))
    return f"{m} {', '.join(ops)};"


@st.composite
def generated(draw: st.DrawFn) -> str:
    lines = ["PISA Gen", "{", "  .global .32b @x = 0;", "  .global .32b @a[4] = {1, 2};",
             "  .shared .32b @s = 0;", "  .const .32b @c = 1;"]  # fmt: skip
    if draw(st.booleans()):
        lines.append("  P0:%a0 = @a;")
    if draw(st.booleans()):
        lines.append("  P0:%r1 = 4;")
    lines.append("}")
    nthreads = draw(st.integers(1, 3))
    for t in range(nthreads):
        place = draw(st.sampled_from(["wg 0", "wg 1, sg 0", "host", "gpu 1", "wg 0, sg 1", "sg 0"]))
        lines.append(f"P{t} @ {place} {{")
        if draw(st.booleans()):
            lines.append("  .reg .v4.32b %v;")
        if draw(st.booleans()):
            lines.append("  .pred %p;")
        for _ in range(draw(st.integers(0, 6))):
            if draw(st.integers(0, 5)) == 0:
                lines.append(draw(st.sampled_from(["loop:", "end:"])))
            lines.append("  " + draw(instruction()))
        lines.append("}")
    obs = draw(st.sampled_from(["P0:%r0 == 1", "@x = 2", "wg0:@s != 0", "@a[1] == 3", "true",
                                "P1:%r0 == -1", "@c == 1"]))  # fmt: skip
    lines.append(f"{draw(st.sampled_from(['exists', '~exists', 'forall']))} ({obs})")
    return "\n".join(lines) + "\n"


def test_seeds_parse() -> None:
    for seed in SEEDS:
        assert isinstance(parse_test(seed, "seed.litmus"), LitmusTest)


_FAST = settings(max_examples=EXAMPLES, deadline=None, suppress_health_check=[HealthCheck.too_slow])


@_FAST
@given(mutated())
def test_mutations_raise_only_pisa_errors(text: str) -> None:
    check(text)


@_FAST
@given(generated())
def test_generated_raise_only_pisa_errors(text: str) -> None:
    check(text)


@_FAST
@given(st.text(max_size=200))
def test_random_text_raises_only_pisa_errors(text: str) -> None:
    check(text)


_SLOW = settings(max_examples=10_000, deadline=None, suppress_health_check=list(HealthCheck))


@pytest.mark.slow
@_SLOW
@given(st.one_of(mutated(), generated()))
def test_fuzz_10000(text: str) -> None:
    check(text)


# ---------------------------------------------------------------- the shipped suite, mutated

SUITE = HAND_WRITTEN + GENERATED_SAMPLE
HOSTILE = [
    "9" * 5000, "0x" + "f" * 5000, "\u00b2", "\u0663", "-1", "\ufeff", "~" * 5000,
    "(" * 300, ")" * 300, "(@x == 1 /\\ (@x == 1 \\/ " * 200, " /\\ @x == 1" * 1000,
    "unroll = \u00b2\n", "unroll = -1\n", "P" + "9" * 5000 + ":%r0 == 1", "wg" + "9" * 5000 + ":@x",
    "%r<0~" + "9" * 5000 + ">", "\x00", "\r", "\t", "\u202e", "\udcff",
]  # fmt: skip


def _mutate(rng: random.Random, text: str) -> str:
    for _ in range(rng.randint(1, 4)):
        n = len(text)
        i = rng.randint(0, n)
        j = rng.randint(i, min(n, i + 16))
        kind = rng.choice(["delete", "insert", "token", "hostile", "duplicate", "swap", "line"])
        if kind == "delete":
            text = text[:i] + text[j:]
        elif kind == "insert":
            text = text[:i] + "".join(chr(rng.randint(0, 0x2FF)) for _ in range(3)) + text[i:]
        elif kind == "token":
            text = text[:i] + " " + rng.choice(TOKENS) + " " + text[i:]
        elif kind == "hostile":
            text = text[:i] + rng.choice(HOSTILE) + text[j:]
        elif kind == "duplicate":
            text = text[:j] + text[i:j] * rng.randint(1, 50) + text[j:]
        elif kind == "swap":
            words = text.split(" ")
            a, b = rng.randrange(len(words)), rng.randrange(len(words))
            words[a], words[b] = words[b], words[a]
            text = " ".join(words)
        else:  # repeat a whole line many times: long bodies, repeated metadata
            lines = text.split("\n")
            k = rng.randrange(len(lines))
            lines[k:k] = [lines[k]] * rng.randint(2, 400)
            text = "\n".join(lines)
    return text


@pytest.mark.slow
def test_suite_mutation_fuzz() -> None:
    inputs = int(os.environ.get("PISA_MM_FUZZ_INPUTS", "3000"))
    rng = random.Random(int(os.environ.get("PISA_MM_FUZZ_SEED", "14")))
    seeds = [p.read_text(encoding="utf-8") for p in SUITE]
    assert seeds, "no shipped litmus tests found"
    escaped: list[str] = []
    accepted = 0
    slowest = (0.0, "")
    for k in range(inputs):
        text = _mutate(rng, rng.choice(seeds))
        start = time.perf_counter()
        try:
            accepted += check(text)
        except Exception as exc:  # counting what escapes is the point
            escaped.append(f"input {k}: {type(exc).__name__}: {exc}\n{traceback.format_exc()}")
        elapsed = time.perf_counter() - start
        if elapsed > slowest[0]:
            slowest = (elapsed, text)
    print(
        f"\nsuite mutation fuzz: {inputs} inputs from {len(seeds)} tests, {accepted} accepted, "
        f"{len(escaped)} escaped exceptions, slowest input {slowest[0]:.2f} s "
        f"({len(slowest[1])} characters)"
    )
    assert not escaped, "\n".join(escaped[:5])
