"""Well-formedness: only dependencies through which a value is computed close a cycle."""

from __future__ import annotations

from pathlib import Path

from pisa_mm.cat.loader import load_model_source
from pisa_mm.engines import EngineOptions
from pisa_mm.events.build import build
from pisa_mm.explicit.engine import run_test as explicit
from pisa_mm.litmus import load_test
from pisa_mm.smt.engine import run_test as smt

LB_SEL = Path(__file__).parents[3] / "litmus" / "pisa" / "lb" / "LB+sel-same-values.litmus"


def test_a_value_independent_dependency_cycle_is_left_to_the_model() -> None:
    # `sel d, 1, 1, p` carries a (syntactic) data dependency but its value is 1 whatever
    # was read: without a no-thin-air axiom, the load-buffering outcome is a candidate
    model = load_model_source(
        '"sc-per-location"\ninclude "stdlib.cat"\nacyclic po-loc | rf | co | fr as coherence\n',
        "sc-per-location.cat",
    )
    test = load_test(str(LB_SEL))
    es = build(test)
    a = smt(test, es, model, EngineOptions())
    b = explicit(test, es, model, EngineOptions())
    assert a.states == b.states and a.verdict == b.verdict
    assert a.verdict.value == "Ok"
