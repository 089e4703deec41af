"""Generic addressing as PISA 3.3.1 has it: 64-bit generic addresses and `addrcast` (PISA 4.1)."""

from __future__ import annotations

import pytest

from pisa_mm.cat.loader import load_model
from pisa_mm.engines import EngineOptions, available_engines, get_engine
from pisa_mm.errors import PisaMMError
from pisa_mm.events.build import build
from pisa_mm.litmus import parse_test
from pisa_mm.litmus.program import Alu, AluOp, Reg, VarRef
from pisa_mm.outcomes.model import Verdict

ROUND_TRIP = """PISA GenericRoundTrip
{
  .shared .32b @s = 0;
  .global .32b @x = 0;
}

P0 @ wg 0 {
  addrcast.generic.shared %g, @s;
  st.generic.32b [%g], 1;
  addrcast.shared.generic %a, %g;
  ld.shared.32b %r0, [%a];
  addrof.32b %b, @s;
  addrcast.generic.shared %h, %b;
  ld.generic.32b %r1, [%h];
  addrcast.generic.global %q, @x;
  st.generic.32b [%q], 2;
  addrcast.global.generic %p, %q;
  ld.global.32b %r2, [%p];
}

forall (P0:%r0 == 1 /\\ P0:%r1 == 1 /\\ P0:%r2 == 2 /\\ wg0:@s == 1 /\\ @x == 2)
"""


def test_addrcast_decodes_to_a_widening_or_narrowing_move() -> None:
    test = parse_test(ROUND_TRIP, "rt.litmus")
    ops = [ins.op for ins in test.threads[0].body]
    assert isinstance(ops[0], Alu) and ops[0].op is AluOp.MOV and ops[0].width == 64
    assert isinstance(ops[0].srcs[0], VarRef)
    assert isinstance(ops[2], Alu) and ops[2].width == 32  # back to a .shared address
    regs = dict(test.threads[0].regs)
    assert (regs["g"], regs["a"], regs["b"], regs["h"], regs["q"], regs["p"]) == (
        64,
        32,
        32,
        64,
        64,
        64,
    )
    assert isinstance(ops[5], Alu) and ops[5].srcs[0] == Reg("b", None, ops[5].srcs[0].span)


@pytest.mark.parametrize("engine", list(available_engines()))
def test_round_trip_keeps_the_address_in_every_engine(engine: str) -> None:
    test = parse_test(ROUND_TRIP, "rt.litmus")
    result = get_engine(engine)(test, build(test), load_model("pisa"), EngineOptions())
    assert result.verdict is Verdict.OK
    assert len(result.states) == 1


@pytest.mark.parametrize(
    ("body", "needle"),
    [
        ("addrcast.generic %g, @s;", "takes .to and .from"),
        ("addrcast.generic.shared.64b %g, @s;", "takes no type"),
        ("addrcast.generic.shard %g, @s;", "did you mean '.shared'"),
        ("addrcast.shared.global %g, @s;", "to or from .generic"),
        ("addrcast.generic.global %g, @s;", "the space of src0 must match .from"),
        ("addrof.64b %g, @s;", "addrcast.generic.shared %a, @s"),
    ],
)
def test_bad_forms_name_the_supported_one(body: str, needle: str) -> None:
    text = ROUND_TRIP.split("P0 @ wg 0 {")[0] + f"P0 @ wg 0 {{\n  {body}\n}}\n\nexists (true)\n"
    with pytest.raises(PisaMMError) as info:
        parse_test(text, "bad.litmus")
    (d, *_) = info.value.diagnostics
    assert needle in d.message
    assert d.code
