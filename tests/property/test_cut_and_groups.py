"""Differential testing of the classes where executions contribute no final state: spin
loops cut by the unroll bound, dereferences of pointers that may be null (invalid-address),
and `cp.async` groups with empty commit groups. The exact engines must agree exactly (states,
verdict, flags with their cut marker, whether anything was cut); the operational machine
must find nothing beyond them.

`PISA_MM_CUT_EXAMPLES` sets the number of examples (default 60).
"""

from __future__ import annotations

import os

from hypothesis import HealthCheck, assume, given, note, settings
from hypothesis import strategies as st

from pisa_mm.cat.loader import load_model
from pisa_mm.engines import EngineOptions, get_engine
from pisa_mm.errors import PisaMMError
from pisa_mm.events.build import build
from pisa_mm.litmus import parse_test
from pisa_mm.outcomes.model import TestResult

EXAMPLES = int(os.environ.get("PISA_MM_CUT_EXAMPLES", "60"))

LOAD_ORDERS = ("", ".relaxed", ".acquire.workgroup", ".acquire.gpu")
STORE_ORDERS = ("", ".relaxed", ".release.workgroup", ".release.gpu")


@st.composite
def _writer(draw: st.DrawFn) -> list[str]:
    """P0: stores (or an RMW) to the data @x, the flag @y and maybe the pointer @p."""
    body = [f"st.global{draw(st.sampled_from(STORE_ORDERS))}.32b [@x], 1;"]
    if draw(st.booleans()):
        body += ["addrof.64b %r9, @x;", "st.global.release.gpu.64b [@p], %r9;"]
    if draw(st.booleans()):
        body.append("iatom.global.acq_rel.workgroup.xchg.32b %r8, [@y], 1;")
    else:
        body.append(f"st.global{draw(st.sampled_from(STORE_ORDERS))}.32b [@y], 1;")
    return body


@st.composite
def _reader(draw: st.DrawFn) -> list[str]:
    """P1: a spin loop on @y (a load or a cas), then reads of @x, maybe through @p."""
    body = [".pred %p0;", "spin:"]
    if draw(st.booleans()):
        body.append(f"ld.global{draw(st.sampled_from(LOAD_ORDERS))}.32b %r0, [@y];")
        body.append("ucmp.eq.32b %p0, %r0, 0;")
    else:
        body.append("iatom.global.acq_rel.workgroup.cas.32b %r0, [@y], 1, 2;")
        body.append("ucmp.ne.32b %p0, %r0, 1;")
    body.append("goto.cond %p0, spin;")
    if draw(st.booleans()):
        body += ["ld.global.acquire.gpu.64b %r2, [@p];", "ld.global.32b %r1, [%r2];"]
    else:
        body.append(f"ld.global{draw(st.sampled_from(LOAD_ORDERS))}.32b %r1, [@x];")
    return body


@st.composite
def _copier(draw: st.DrawFn) -> list[str]:
    """P2: a copy into shared memory, commit groups (some empty), a wait, a read back."""
    body = ["cp.async.shared.global [@s], [@g], 4;"]
    body += ["cp.async.commit_group;"] * draw(st.integers(0, 2))
    if draw(st.booleans()):
        body.append("cp.async.shared.global [@s + 4], [@g + 4], 4;")
    body += ["cp.async.commit_group;"] * draw(st.integers(0, 2))
    body.append(f"cp.async.wait_group {draw(st.integers(0, 2))};")
    body.append("ld.shared.32b %r3, [@s];")
    return body


@st.composite
def programs(draw: st.DrawFn) -> str:
    threads = [("P0 @ wg 0, sg 0", draw(_writer())), ("P1 @ wg 0, sg 1", draw(_reader()))]
    shown = ["P1:%r1", "@x"]
    if draw(st.booleans()):
        threads.append(("P2 @ wg 1, sg 0", draw(_copier())))
        shown.append("P2:%r3")
    init = (
        "  .global .32b @x = 0;\n  .global .32b @y = 0;\n  .global .64b @p = 0;\n"
        "  .global .32b @g[2] = {5, 6};\n  .shared .32b @s[2] = {0, 0};"
    )
    text = "\n".join(
        f"{head} {{\n" + "".join(f"  {b}\n" for b in body) + "}" for head, body in threads
    )
    locations = "locations [" + "; ".join(shown) + ";]"
    return f"PISA Random\n{{\n{init}\n}}\n{text}\n{locations}\nexists (P1:%r1 == 0)\n"


def _exact(r: TestResult) -> tuple[object, ...]:
    return (r.states, r.verdict, tuple(sorted({f.label for f in r.flags})), r.cut > 0)


@settings(
    max_examples=EXAMPLES,
    deadline=None,
    derandomize=True,
    suppress_health_check=[HealthCheck.too_slow, HealthCheck.filter_too_much],
)
@given(programs())
def test_engines_agree_on_cut_and_ended_executions(text: str) -> None:
    try:
        test = parse_test(text, "Random.litmus")
    except PisaMMError:
        assume(False)
        return
    note(f"litmus file:\n{text}")
    options = EngineOptions(unroll=1)
    es = build(test, unroll=1)
    model = load_model("pisa")
    smt = get_engine("smt")(test, es, model, options)
    explicit = get_engine("explicit")(test, es, model, options)
    assert _exact(smt) == _exact(explicit), f"smt and explicit disagree on:\n{text}"
    machine = get_engine("operational")(test, es, model, options)
    assert set(machine.states) <= set(explicit.states), f"machine states beyond:\n{text}"
    labels = {f.label for f in explicit.flags} | {f.name for f in explicit.flags}
    assert {f.name for f in machine.flags} <= labels, f"machine flags beyond:\n{text}"
    assert machine.cut == 0 or explicit.cut > 0, f"machine cut, explicit not:\n{text}"
