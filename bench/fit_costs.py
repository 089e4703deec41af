"""Fitting auto's cost model (pisa_mm/explicit/auto.py `Costs`) to measured CPU seconds.

Each engine's prediction is linear in its constants (explicit: base + judged x events;
smt: base + events + rf edges + co pairs + states + computed-write states), so a test's
measures give one feature vector per engine. The constants are fitted per engine to
minimise the squared log of predicted over measured time (relative error, so a 1 ms test
counts as much as a 1 s one), by a multiplicative coordinate search: the objective is
smooth but not quadratic in the constants, and eight of them over a thousand tests need no
numerical library. `run_bench.py --only auto --fit` measures, fits and then prints how the
fitted model would have chosen, on the fitted tests and on the held-out family.
"""

from __future__ import annotations

import dataclasses
import math
from collections.abc import Callable, Sequence
from typing import Any

# (shape, explicit CPU s, smt CPU s); a time is inf where that engine was over its budget
Sample = tuple[Any, float, float]

EXPLICIT = ("explicit_base", "explicit_judged")
SMT = ("smt_base", "smt_event", "smt_rf", "smt_co", "smt_state", "smt_computed_state")
FLOOR = 2e-4  # CPU seconds below which a measured time is noise (timer, cache misses)


def _loss(costs: Any, engine: str, samples: Sequence[Sample]) -> float:
    column = 1 if engine == "explicit" else 2
    predict: Callable[[Any], float] = getattr(costs, engine)
    total = 0.0
    for sample in samples:
        measured = sample[column]
        if math.isfinite(measured):
            total += math.log(max(predict(sample[0]), 1e-12) / max(measured, FLOOR)) ** 2
    return total


def fit(start: Any, samples: Sequence[Sample]) -> Any:
    """`start` (a Costs) with each engine's constants fitted to `samples`."""
    # a constant at zero (as written by `rounded`) could not move by a factor
    costs = dataclasses.replace(start, **{n: getattr(start, n) or 1e-6 for n in EXPLICIT + SMT})
    for engine, names in (("explicit", EXPLICIT), ("smt", SMT)):
        best = _loss(costs, engine, samples)
        step = 2.0
        while step > 1.001:
            improved = False
            for name in names:
                for factor in (step, 1 / step):
                    value = getattr(costs, name) * factor
                    trial = dataclasses.replace(costs, **{name: value})
                    loss = _loss(trial, engine, samples)
                    if loss < best:
                        costs, best, improved = trial, loss, True
            if not improved:
                step = math.sqrt(step)
    return costs


def choices(costs: Any, samples: Sequence[Sample]) -> tuple[float, float]:
    """(CPU of the engines `costs` picks, CPU of the per-test faster engine), summed over
    `samples` that either engine finished: the choice alone (pisa_mm/explicit/auto.py
    `pick`, whose rule for tests of BIG_EVENTS events or more is kept), not auto's run."""
    from pisa_mm.explicit.auto import BIG_EVENTS

    picked = best = 0.0
    for shape, explicit, smt in samples:
        if not math.isfinite(min(explicit, smt)):
            continue
        by_size = shape.events >= BIG_EVENTS
        chosen = explicit if by_size or costs.explicit(shape) <= costs.smt(shape) else smt
        picked += chosen
        best += min(explicit, smt)
    return picked, best


def rounded(costs: Any) -> Any:
    """`costs` with each constant to two significant digits, as auto.py writes them; one
    the search drove below a nanosecond (it never reaches zero) is written as zero."""
    values = {f.name: getattr(costs, f.name) for f in dataclasses.fields(costs)}
    return dataclasses.replace(
        costs, **{k: 0.0 if v < 1e-9 else float(f"{v:.2g}") for k, v in values.items()}
    )
