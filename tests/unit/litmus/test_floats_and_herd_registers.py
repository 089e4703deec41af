"""herd habits in conditions: `1:r0` registers, float literals for float-typed locations."""

from __future__ import annotations

import pytest

from pisa_mm.errors import PisaMMError
from pisa_mm.litmus import parse_prop, parse_test
from pisa_mm.litmus.program import Atom, MemObs, RegObs
from pisa_mm.outcomes.condition import condition_text, make_state
from pisa_mm.values.expr import FpFormat

FLOATS = """PISA FloatInit
{
  .global .32b @f = 1.5;
  .global .16b @h = 0.25;
  .global .32b @x = 0;
  1:r2 = 2.0;
}

P0 @ wg 0 {
  fatom.global.relaxed.add.f %r0, [@f], 1.0;
  fatom.global.relaxed.add.hf %r1, [@h], 0.5;
}

P1 @ wg 1 {
  fatom.global.relaxed.add.f %r1, [@f], %r2;
  ld.global.32b %r3, [@x];
}

locations [1:r1; @h; 1:r3;]
exists (@f == 4.5 /\\ 0:r0 == 1.5 /\\ P1:%r1 == 2.5 /\\ @h == 0.75 /\\ @x == 0)
"""


def test_herd_registers_in_inits_locations_and_conditions() -> None:
    test = parse_test(FLOATS, "f.litmus")
    assert RegObs(1, "r1") in test.locations and RegObs(1, "r3") in test.locations
    assert [i.reg.name for i in test.reg_inits] == ["r2"]
    atoms = test.condition.prop.args  # type: ignore[union-attr]
    assert atoms[1].obs == RegObs(0, "r0")


def test_float_types_come_from_fatom_formats() -> None:
    test = parse_test(FLOATS, "f.litmus")
    fmts = {v.name: v.fmt for v in test.variables}
    assert fmts == {"f": FpFormat.F, "h": FpFormat.HF, "x": None}
    assert dict(test.threads[1].floats) == {"r1": FpFormat.F, "r2": FpFormat.F}
    inits = {v.name: v.init for v in test.variables}
    assert inits["f"] == (0x3FC00000,) and inits["h"] == (0x3400,)
    assert test.reg_inits[0].value == 0x40000000


def test_float_literals_in_conditions_are_patterns_of_the_format() -> None:
    test = parse_test(FLOATS, "f.litmus")
    atoms = test.condition.prop.args  # type: ignore[union-attr]
    assert isinstance(atoms[0], Atom) and atoms[0].value == 0x40900000  # 4.5 as .f
    assert atoms[3].value == 0x3A00  # 0.75 as .hf
    assert condition_text(test.condition) == (
        "exists (@f=4.5 /\\ P0:%r0=1.5 /\\ P1:%r1=2.5 /\\ @h=0.75 /\\ @x=0)"
    )
    prop = parse_prop("@f == 4.5 /\\ 1:r1 != 2.5", test)
    assert prop.args[0].value == 0x40900000  # type: ignore[union-attr]


def test_states_print_float_typed_values_as_floats() -> None:
    test = parse_test(FLOATS, "f.litmus")
    f = MemObs("f", 0, None, None, FpFormat.F)
    x = MemObs("x")
    r3 = RegObs(1, "r3")
    state = make_state({f: 0x40900000, x: 7, r3: 0x40900000})
    assert str(state) == "P1:%r3=1083179008; @f=4.5; @x=7;"
    assert state == make_state({MemObs("f"): 0x40900000, x: 7, r3: 0x40900000})
    assert test is not None


@pytest.mark.parametrize(
    ("old", "new", "needle"),
    [
        (".global .32b @x = 0;", ".global .32b @x = 0.5;", "@x, which is not float-typed"),
        ("@x == 0)", "@x == 1.0)", "@x, which is not float-typed"),
        ("1:r2 = 2.0;", "1:r3 = 2.0;", "P1:%r3, which is not float-typed"),
        ("@h = 0.25", "@h = 1e10", "overflows"),
    ],
)
def test_float_literal_needs_a_float_type(old: str, new: str, needle: str) -> None:
    with pytest.raises(PisaMMError) as info:
        parse_test(FLOATS.replace(old, new), "f.litmus")
    (d,) = info.value.diagnostics
    assert needle in d.message and d.code == "immediate" and d.span is not None


def test_two_formats_make_no_float_type() -> None:
    text = FLOATS.replace("fatom.global.relaxed.add.hf %r1, [@h], 0.5;", "").replace(
        ".global .16b @h = 0.25;", ".global .16b @h = 0;"
    )
    text = text.replace(
        "ld.global.32b %r3, [@x];",
        "fatom.global.relaxed.add.bf %r3, [@h], 1.0;\n"
        "  fatom.global.relaxed.add.hf %r4, [@h], 1.0;",
    )
    text = text.replace(" /\\ @h == 0.75", "").replace("1:r3;", "")
    test = parse_test(text, "f.litmus")
    assert {v.name: v.fmt for v in test.variables}["h"] is None
