"""Dependencies are syntactic (model-decisions "Axioms"), and deep value chains build."""

from __future__ import annotations

import pytest

from pisa_mm.events.build import build
from pisa_mm.events.kinds import Kind
from pisa_mm.events.model import EventStructure
from pisa_mm.litmus import parse_test
from pisa_mm.values.eval import evaluate
from pisa_mm.values.fold import fold
from pisa_mm.values.text import to_text


def _structure(body: str, preds: int = 2) -> EventStructure:
    decl = "".join(f"  .pred %p{i};\n" for i in range(preds))
    text = (
        "PISA D\n{ .global .32b @x = 0; .global .32b @y = 0; }\n"
        f"P0 @ wg 0 {{\n{decl}  ld.global.relaxed.32b %r0, [@x];\n{body}\n}}\n"
        "exists (P0:%r0 == 0)\n"
    )
    return build(parse_test(text, "d.litmus"))


def _read_and_write(es: EventStructure) -> tuple[int, int]:
    (r,) = [e.id for e in es.events if e.thread == 0 and e.kind is Kind.READ]
    (w,) = [e.id for e in es.events if e.thread == 0 and e.kind is Kind.WRITE]
    return r, w


@pytest.mark.parametrize(
    "compute",
    [
        "ucmp.eq.32b %p0, %r0, 1;\n  sel.32b %r2, 1, 1, %p0;",
        "and.32b %r2, %r0, 0;",
        "smul.32b %r2, %r0, 0;",
        "umul.32b %r2, %r0, 0;",
        "or.32b %r2, %r0, -1;",
        "xor.32b %r2, %r0, %r0;",
        "isub.32b %r2, %r0, %r0;",
        "shl.32b %r2, %r0, 32;",
        "shr.32b %r2, %r0, 40;",
        "mov.32b %r3, %r0;\n  and.32b %r2, %r3, 0;\n  iadd.32b %r2, %r2, 7;",
    ],
)
def test_value_independent_computations_keep_the_data_dependency(compute: str) -> None:
    es = _structure(f"  {compute}\n  st.global.relaxed.32b [@y], %r2;")
    r, w = _read_and_write(es)
    assert (r, w) in es.data


def test_a_branch_decided_statically_still_gives_ctrl() -> None:
    es = _structure(
        "  ucmp.eq.32b %p0, %r0, 1;\n  sel.32b %r2, 1, 1, %p0;\n  ucmp.eq.32b %p1, %r2, 1;\n"
        "  goto.cond !%p1, done;\n  st.global.relaxed.32b [@y], 1;\ndone:"
    )
    r, w = _read_and_write(es)
    assert len(es.threads[0].paths) == 1  # the branch was decided: one path
    assert (r, w) in es.ctrl and (r, w) not in es.data


def test_overwritten_registers_lose_their_sources() -> None:
    es = _structure("  mov.32b %r2, %r0;\n  mov.32b %r2, 5;\n  st.global.relaxed.32b [@y], %r2;")
    r, w = _read_and_write(es)
    assert (r, w) not in es.data


def test_a_chain_of_2000_dependent_adds_builds_and_evaluates() -> None:
    n = 2000
    es = _structure(
        "\n".join(["  iadd.32b %r0, %r0, 1;"] * n) + "\n  st.global.relaxed.32b [@y], %r0;"
    )
    r, w = _read_and_write(es)
    assert (r, w) in es.data
    value = es.events[w].value
    assert value is not None
    assert evaluate(value, {r: 5}.__getitem__) == 5 + n
    assert evaluate(fold(value), {r: 5}.__getitem__) == 5 + n
    assert to_text(value)
