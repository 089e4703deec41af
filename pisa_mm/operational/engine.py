"""The `operational` engine: run the view machine and report through the shared TestResult."""

from __future__ import annotations

import time
from typing import TYPE_CHECKING

from pisa_mm.operational.explore import Exploration, explore
from pisa_mm.operational.step import Machine
from pisa_mm.outcomes.condition import (
    condition_text,
    eval_prop,
    make_state,
    observables,
    passes_filter,
    verdict,
)
from pisa_mm.outcomes.model import FlagWitness, TestResult

if TYPE_CHECKING:
    from pisa_mm.cat.syntax import Model
    from pisa_mm.engines import EngineOptions
    from pisa_mm.events.model import EventStructure
    from pisa_mm.litmus.program import LitmusTest

__all__ = ["ENGINE", "machine_outcomes", "run_test"]

ENGINE = "operational"


def machine_outcomes(test: LitmusTest, unroll: int) -> Exploration:
    """Every end state the machine reaches on `test`, with the flags raised on the way."""
    return explore(
        Machine(test, unroll),
        observables(test),
        accept=lambda values: passes_filter(test, values),
    )


def run_test(
    test: LitmusTest, structure: EventStructure, model: Model, options: EngineOptions
) -> TestResult:
    """Explore the machine; `structure` and `model` are unused: the machine interprets the
    program itself and implements the `pisa` decisions (docs/operational.md relates it to
    each shipped model). Under `verdict_only` it still explores every path (it has no
    cheaper way to decide) and reports the verdict alone."""
    del structure
    start = time.perf_counter()
    result = machine_outcomes(test, options.unroll)
    obs = observables(test)
    finals = [f for f in result.finals if f.complete and passes_filter(test, dict(f.values))]
    states = sorted({make_state(dict(f.values)) for f in finals})
    holds = {
        make_state(dict(f.values)): eval_prop(test.condition.prop, dict(f.values)) for f in finals
    }
    positive = sum(1 for s in states if holds[s])
    negative = len(states) - positive
    flags = tuple(
        sorted(
            [FlagWitness(f.name, (), f.description) for f in result.flags]
            + [FlagWitness(f.name, (), f.description, cut=True) for f in result.cut_flags],
            key=lambda f: f.name,
        )
    )
    full = TestResult(
        name=test.name,
        model=model.name,
        engine=ENGINE,
        quantifier=test.condition.quantifier.value,
        observables=obs,
        states=tuple(states),
        verdict=verdict(test.condition.quantifier, positive, negative),
        positive=positive,
        negative=negative,
        flags=flags,
        cut=len({f.values for f in result.finals if f.cut}),
        condition_text=condition_text(test.condition),
        seconds=time.perf_counter() - start,
        counts_executions=False,
    )
    if options.verdict_only:  # the machine explores everything anyway: forget the rest
        from pisa_mm.engines import verdict_only_result

        return verdict_only_result(full)
    return full
