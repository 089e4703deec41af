"""Differential testing: random programs must get the same answer from the Z3 engine and the
explicit engine under `pisa` (final states, verdict, flags, cut).

Hypothesis generates 2-4 work-items of up to 6 instructions (loads and stores of random
orders, scopes and spaces, fences, iatoms, barriers; sometimes copies of one body) at random
placements, observing every register or only memory, renders them as
litmus text and parses them with the real frontend. On a disagreement it shrinks the program
and the failure message is the minimal litmus file. `PISA_MM_DIFF_EXAMPLES` sets the number
of examples (default 50).
"""

from __future__ import annotations

import os

from hypothesis import HealthCheck, assume, given, note, settings
from hypothesis import strategies as st

from pisa_mm.cat.loader import load_model
from pisa_mm.engines import EngineOptions, get_engine
from pisa_mm.events.build import build
from pisa_mm.litmus import parse_test
from pisa_mm.outcomes.model import TestResult

EXAMPLES = int(os.environ.get("PISA_MM_DIFF_EXAMPLES", "50"))
TOTAL = 9  # instructions over all work-items

SCOPES = ("workgroup", "gpu", "system")  # `.subgroup` exists only as `fence.subgroup`
VARS = ("x", "y", "s")  # s is .shared


@st.composite
def _access_order(draw: st.DrawFn, kind: str) -> str:
    """The order/scope qualifiers of a load or store ('' is weak)."""
    choices = ["", ".relaxed", ".seq_cst"] + ([".acquire"] if kind == "ld" else [".release"])
    order = draw(st.sampled_from(choices))
    if order in ("", ".relaxed"):
        return order
    return f"{order}.{draw(st.sampled_from(SCOPES))}"


@st.composite
def _instruction(draw: st.DrawFn, reg: int) -> str:
    kind = draw(st.sampled_from(["ld", "st", "st", "fence", "iatom", "barrier"]))
    var = draw(st.sampled_from(VARS))
    space = "shared" if var == "s" else "global"
    match kind:
        case "ld":
            return f"ld.{space}{draw(_access_order('ld'))}.32b %r{reg}, [@{var}];"
        case "st":
            value = draw(st.integers(1, 2))
            return f"st.{space}{draw(_access_order('st'))}.32b [@{var}], {value};"
        case "fence":
            order = draw(st.sampled_from(["acquire", "release", "acq_rel", "seq_cst", "sg"]))
            if order == "sg":
                return "fence.subgroup;"
            scope = draw(st.sampled_from(SCOPES))
            space = "global." if scope == "system" else draw(st.sampled_from(["", "global."]))
            return f"fence.{space}{order}.{scope};"
        case "iatom":
            op = draw(st.sampled_from(["add", "xchg", "cas"]))
            order = draw(st.sampled_from(["relaxed", "acq_rel.gpu", "acquire.workgroup"]))
            srcs = "0, 2" if op == "cas" else "1"
            return f"iatom.{space}.{order}.{op}.32b %r{reg}, [@{var}], {srcs};"
        case _:
            return "barrier.workgroup;"


@st.composite
def programs(draw: st.DrawFn) -> str:
    n = draw(st.integers(2, 4))
    threads = []
    budget = TOTAL  # the explicit engine is exponential in the number of accesses
    # Observing only memory lets identical work-items be interchangeable (the Z3 engine's
    # symmetry reduction), so copies of a body are drawn on purpose.
    observe_registers = draw(st.booleans())
    shown = ["@x", "@y"]
    body: list[str] = []
    for t in range(n):
        wg = draw(st.integers(0, 1))
        sg = draw(st.integers(0, 1))
        if t and len(body) <= budget and draw(st.booleans()):
            pass  # the previous work-item's body again
        else:
            size = draw(st.integers(1, max(1, min(6, budget - (n - t - 1)))))
            body = [draw(_instruction(reg)) for reg in range(size)]
        budget -= len(body)
        if observe_registers:
            shown += [f"P{t}:%r{reg}" for reg, b in enumerate(body) if "%r" in b]
        lines = "\n".join(f"  {b}" for b in body)
        threads.append(f"P{t} @ wg {wg}, sg {sg} {{\n{lines}\n}}")
    init = "  .global .32b @x = 0;\n  .global .32b @y = 0;\n  .shared .32b @s = 0;"
    locations = "locations [" + "; ".join(shown) + ";]"
    text = "\n".join(threads)
    # RMWs on two locations multiply the explicit engine's candidates (rf x co per location,
    # not factored): past four it takes minutes, which is the reference engine's known cost.
    assume(text.count("iatom") <= 4)
    return f"PISA Random\n{{\n{init}\n}}\n{text}\n{locations}\nexists (@x == 1)\n"


def _comparable(r: TestResult) -> tuple[object, ...]:
    return (r.states, r.verdict, tuple(sorted({f.label for f in r.flags})), r.cut > 0)


@settings(
    max_examples=EXAMPLES,
    deadline=None,
    suppress_health_check=[HealthCheck.too_slow, HealthCheck.filter_too_much],
)
@given(programs())
def test_smt_and_explicit_agree(text: str) -> None:
    from hypothesis import assume

    from pisa_mm.errors import PisaMMError

    try:
        test = parse_test(text, "Random.litmus")
    except PisaMMError:
        assume(False)  # e.g. a register read in the condition that no thread writes
        return
    es = build(test)
    model = load_model("pisa")
    smt = get_engine("smt")(test, es, model, EngineOptions())
    explicit = get_engine("explicit")(test, es, model, EngineOptions())
    note(f"minimal litmus file:\n{text}")
    assert _comparable(smt) == _comparable(explicit), f"engines disagree on:\n{text}"
