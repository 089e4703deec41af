"""Differential test: the operational machine against the explicit engine on random programs.

The relation checked is the one docs/operational.md claims:
  states(machine) = states(machine.cat) ⊆ states(pisa), and the same for flags,
on every program (seq_cst instructions included: the machine's psc graph is exact), where
machine.cat is pisa with acyclic (po | rf | aso) (pisa-rc11 when there is no cp.async).
Programs: 2-3 work-items in one or two work-groups and sub-groups, up to 6 instructions:
loads, stores, RMWs of every order, fences of every order over .global, .shared or both,
barriers and asynchronous copies (issue, commit, waits), on two global and one shared
location. Default 30 examples; set PISA_MM_OPER_EXAMPLES for more.
"""

from __future__ import annotations

import os

from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from pisa_mm.cat.loader import load_model
from pisa_mm.engines import EngineOptions
from pisa_mm.events.build import build
from pisa_mm.explicit.engine import run_test as explicit
from pisa_mm.litmus import parse_test
from pisa_mm.operational.engine import run_test as operational
from pisa_mm.operational.relation import machine_model

EXAMPLES = int(os.environ.get("PISA_MM_OPER_EXAMPLES", "30"))
GLOBALS = ("x", "y")
SHARED = ("s",)
SCOPES = ("workgroup", "gpu")


@st.composite
def instruction(draw: st.DrawFn, reg: int) -> str:
    var = draw(st.sampled_from(GLOBALS + SHARED))
    space = "shared" if var in SHARED else "global"
    val = draw(st.integers(1, 2))
    scope = draw(st.sampled_from(SCOPES))
    kind = draw(st.sampled_from(("ld", "st", "fence", "rmw", "ld", "st", "barrier", "async")))
    if kind == "barrier":
        return "barrier.workgroup;"
    if kind == "async":
        return draw(st.sampled_from((
            f"cp.async.shared.global [@s], [@{draw(st.sampled_from(GLOBALS))}], 4;",
            "cp.async.commit_group;",
            "cp.async.wait_all;",
            "cp.async.wait_group 1;",
        )))  # fmt: skip
    if kind == "ld":
        order = draw(st.sampled_from(("", ".relaxed", f".acquire.{scope}", f".seq_cst.{scope}")))
        return f"ld.{space}{order}.32b %r{reg}, [@{var}];"
    if kind == "st":
        order = draw(st.sampled_from(("", ".relaxed", f".release.{scope}", f".seq_cst.{scope}")))
        return f"st.{space}{order}.32b [@{var}], {val};"
    if kind == "fence":
        order = draw(st.sampled_from(("acquire", "release", "acq_rel", "seq_cst", "seq_cst", "")))
        if not order:
            return "fence.subgroup;"  # acq_rel, both spaces (PISA 9.2: no order, no space)
        fspace = draw(st.sampled_from(("", ".global", ".shared")))
        return f"fence{fspace}.{order}.{scope};"
    order = draw(st.sampled_from(("relaxed", f"acquire.{scope}", f"release.{scope}",
                                  f"acq_rel.{scope}")))  # fmt: skip
    op = draw(st.sampled_from(("add", "xchg", "cas")))
    args = f"0, {val}" if op == "cas" else str(val)
    return f"iatom.{space}.{order}.{op}.32b %r{reg}, [@{var}], {args};"


@st.composite
def program(draw: st.DrawFn) -> str:
    n = draw(st.integers(2, 3))
    budget = draw(st.integers(n, 6))
    threads: list[str] = []
    regs: list[str] = []
    for t in range(n):
        room = budget - (n - t - 1)
        k = draw(st.integers(1, max(1, min(3, room))))
        budget -= k
        wg = draw(st.integers(0, 1))
        sg = draw(st.integers(0, 1))
        body = []
        for i in range(k):
            text = draw(instruction(i))
            body.append(f"  {text}")
            if f"%r{i}" in text:
                regs.append(f"P{t}:%r{i}")
        threads.append(f"P{t} @ wg {wg}, sg {sg} {{\n" + "\n".join(body) + "\n}\n")
    obs = " \\/ ".join(f"{o} == 9" for o in [*regs, *(f"@{v}" for v in GLOBALS)])
    decls = "".join(f"  .global .32b @{v} = 0;\n" for v in GLOBALS)
    decls += "".join(f"  .shared .32b @{v} = 0;\n" for v in SHARED)
    return f"PISA random\n{{\n{decls}}}\n\n" + "\n".join(threads) + f"\nexists ({obs})\n"


_MODELS = {"pisa": load_model("pisa"), "machine": machine_model()}


@settings(
    max_examples=EXAMPLES,
    deadline=None,
    suppress_health_check=[HealthCheck.too_slow, HealthCheck.data_too_large],
)
@given(program())
def test_machine_relation_to_axiomatic_models(text: str) -> None:
    test = parse_test(text, "random.litmus")
    structure = build(test, unroll=2)
    options = EngineOptions(unroll=2)
    machine = operational(test, structure, _MODELS["pisa"], options)
    pisa = explicit(test, structure, _MODELS["pisa"], options)
    ref = explicit(test, structure, _MODELS["machine"], options)
    m, r, p = set(machine.states), set(ref.states), set(pisa.states)
    fm, fr, fp = ({f.name for f in x.flags} for x in (machine, ref, pisa))
    assert r <= p and fr <= fp, text
    assert m <= r, f"machine state the po|rf|aso-acyclic model forbids:\n{text}\n{m - r}"
    assert fm <= fr, f"machine flag the po|rf|aso-acyclic model does not raise:\n{text}\n{fm - fr}"
    assert m == r, f"machine misses po|rf|aso-acyclic states:\n{text}\n{r - m}"
    assert fm == fr, f"machine misses flags:\n{text}\n{fr - fm}"
