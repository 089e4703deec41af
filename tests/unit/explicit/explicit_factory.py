"""Small litmus programs for the explicit-engine tests, parsed and built for real."""

from __future__ import annotations

from pisa_mm.events.build import build
from pisa_mm.events.model import EventStructure
from pisa_mm.litmus import parse_test
from pisa_mm.litmus.program import LitmusTest


def litmus(body: str, *, init: str = ".global .32b @x = 0;\n.global .32b @y = 0;",
           cond: str = "exists (true)", name: str = "T") -> LitmusTest:  # fmt: skip
    """A test named `name` whose threads are `body` (written with `P0 @ wg 0 { ... }`)."""
    text = f"PISA {name}\n{{\n{init}\n}}\n{body}\n{cond}\n"
    return parse_test(text, f"{name}.litmus")


def structure(body: str, **kwargs: str) -> tuple[LitmusTest, EventStructure]:
    test = litmus(body, **kwargs)
    return test, build(test)


MP = """
P0 @ wg 0 {
  st.global.32b [@x], 1;
  st.global.release.gpu.32b [@y], 1;
}
P1 @ wg 1 {
  ld.global.acquire.gpu.32b %r0, [@y];
  ld.global.32b %r1, [@x];
}
"""

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

MP_GUARDED = """
P0 @ wg 0 {
  st.global.32b [@x], 1;
  st.global.release.gpu.32b [@y], 1;
}
P1 @ wg 1 {
  .pred %p0;
  ld.global.acquire.gpu.32b %r0, [@y];
  ucmp.eq.32b %p0, %r0, 1;
  goto.cond !%p0, done;
  ld.global.32b %r1, [@x];
done:
}
"""

TWO_WRITERS = """
P0 @ wg 0 {
  st.global.relaxed.32b [@x], 1;
}
P1 @ wg 1 {
  st.global.relaxed.32b [@x], 2;
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

SB_RLX = """
P0 @ wg 0 {
  st.global.relaxed.32b [@x], 1;
  ld.global.relaxed.32b %r0, [@y];
}
P1 @ wg 1 {
  st.global.relaxed.32b [@y], 1;
  ld.global.relaxed.32b %r0, [@x];
}
"""

LB_RLX = """
P0 @ wg 0 {
  ld.global.relaxed.32b %r0, [@x];
  st.global.relaxed.32b [@y], 1;
}
P1 @ wg 1 {
  ld.global.relaxed.32b %r0, [@y];
  st.global.relaxed.32b [@x], 1;
}
"""

SPIN = """
P0 @ wg 0 {
  st.global.release.gpu.32b [@y], 1;
}
P1 @ wg 1 {
  .pred %p0;
spin:
  ld.global.acquire.gpu.32b %r0, [@y];
  ucmp.eq.32b %p0, %r0, 0;
  goto.cond %p0, spin;
}
"""


def rmw_chain(n: int) -> str:
    """P0 adds 1 to @x n times; P1 adds 10 once."""
    adds = "".join(f"  iatom.global.relaxed.add.32b %r{i}, [@x], 1;\n" for i in range(n))
    return (
        f"P0 @ wg 0 {{\n{adds}}}\nP1 @ wg 1 {{\n  iatom.global.relaxed.add.32b %r0, [@x], 10;\n}}\n"
    )


RMW_CHAIN = rmw_chain(2)
