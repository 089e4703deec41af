"""Small litmus programs for the Z3-engine tests, parsed and built for real."""

from __future__ import annotations

from pisa_mm.events.build import build
from pisa_mm.events.model import EventStructure
from pisa_mm.litmus import parse_test
from pisa_mm.litmus.program import LitmusTest

XY = ".global .32b @x = 0;\n.global .32b @y = 0;"


def litmus(body: str, *, init: str = XY, cond: str = "exists (true)", name: str = "T",
           extra: str = "") -> LitmusTest:  # fmt: skip
    """A test named `name` whose threads are `body` (written with `P0 @ wg 0 { ... }`)."""
    text = f"PISA {name}\n{extra}{{\n{init}\n}}\n{body}\n{cond}\n"
    return parse_test(text, f"{name}.litmus")


def structure(body: str, *, unroll: int = 2, **kwargs: str) -> tuple[LitmusTest, EventStructure]:
    test = litmus(body, **kwargs)
    return test, build(test, unroll=unroll)


MP_REL_ACQ = """
P0 @ wg 0 {
  st.global.32b [@x], 1;
  st.global.release.gpu.32b [@y], 1;
}
P1 @ wg 1 {
  ld.global.acquire.gpu.32b %r0, [@y];
  ld.global.32b %r1, [@x];
}
"""
MP_COND = "exists (P1:%r0 == 1 /\\ P1:%r1 == 0)"

MP_RLX = """
P0 @ wg 0 {
  st.global.relaxed.32b [@x], 1;
  st.global.relaxed.32b [@y], 1;
}
P1 @ wg 1 {
  ld.global.relaxed.32b %r0, [@y];
  ld.global.relaxed.32b %r1, [@x];
}
"""

MP_WEAK = """
P0 @ wg 0 {
  st.global.32b [@x], 1;
  st.global.32b [@y], 1;
}
P1 @ wg 1 {
  ld.global.32b %r0, [@y];
  ld.global.32b %r1, [@x];
}
"""

SB_SC = """
P0 @ wg 0 {
  st.global.seq_cst.gpu.32b [@x], 1;
  ld.global.seq_cst.gpu.32b %r0, [@y];
}
P1 @ wg 1 {
  st.global.seq_cst.gpu.32b [@y], 1;
  ld.global.seq_cst.gpu.32b %r1, [@x];
}
"""
SB_COND = "exists (P0:%r0 == 0 /\\ P1:%r1 == 0)"

LB_DATA = """
P0 @ wg 0 {
  ld.global.relaxed.32b %r0, [@x];
  st.global.relaxed.32b [@y], %r0;
}
P1 @ wg 1 {
  ld.global.relaxed.32b %r1, [@y];
  st.global.relaxed.32b [@x], %r1;
}
"""

CAS_FAIL = """
P0 @ wg 0 {
  st.global.relaxed.32b [@x], 1;
}
P1 @ wg 1 {
  iatom.global.relaxed.cas.32b %r0, [@x], 0, 2;
}
"""

SPIN = """
P0 @ wg 0, sg 0 {
  st.global.32b [@x], 1;
  st.global.release.workgroup.32b [@y], 1;
}
P1 @ wg 0, sg 1 {
  .pred %p0;
spin:
  ld.global.acquire.workgroup.32b %r0, [@y];
  ucmp.eq.32b %p0, %r0, 0;
  goto.cond %p0, spin;
  ld.global.32b %r1, [@x];
}
"""

POINTER = """
P0 @ wg 0 {
  addrof.64b %r0, @x;
  st.global.relaxed.64b [@p], %r0;
}
P1 @ wg 1 {
  ld.global.relaxed.64b %r1, [@p];
  ld.global.relaxed.32b %r2, [%r1];
}
"""
POINTER_INIT = ".global .32b @x = 7;\n.global .64b @p = 0;"

TWO_PLUS_TWO_W = """
P0 @ wg 0 {
  st.global.relaxed.32b [@x], 1;
  st.global.relaxed.32b [@y], 2;
}
P1 @ wg 1 {
  st.global.relaxed.32b [@y], 1;
  st.global.relaxed.32b [@x], 2;
}
"""
