"""The `auto` engine: per test, whichever of explicit and smt a cost model predicts faster."""

from __future__ import annotations

from pisa_mm.engines import EngineOptions, get_engine
from pisa_mm.errors import PisaMMError
from pisa_mm.explicit.size import Shape, candidate_space, shape
from pisa_mm.hints import TYPE_CHECKING
from pisa_mm.outcomes.condition import observables
from pisa_mm.records import record

if TYPE_CHECKING:
    from pisa_mm.cat.syntax import Model
    from pisa_mm.events.model import EventStructure
    from pisa_mm.litmus.program import LitmusTest
    from pisa_mm.outcomes.model import TestResult

__all__ = ["BIG_EVENTS", "COSTS", "Costs", "pick", "predicted", "run_test"]


@record
class Costs:
    """The cost model: predicted CPU seconds of each engine on a test of a given `Shape`.

    explicit = `explicit_base` + `explicit_judged` x judged candidates x events, where the
    judged candidates are the shape's `tree` when the engine prunes (its candidate-space
    bound above PRUNE_ABOVE) and its `leaves` otherwise: the cost of judging one grows with
    the number of events of the test (the relations the model evaluates).

    smt = `smt_base` + `smt_event` x events + `smt_rf` x rf edges + `smt_co` x co pairs +
    (`smt_state` + `smt_computed_state` x computed writes) x estimated final states: the
    encoding grows with the events and the rf and co variables, the enumeration with the
    states (about one check each), each check with the values computed from reads.
    """

    explicit_base: float
    explicit_judged: float
    smt_base: float
    smt_event: float
    smt_rf: float
    smt_co: float
    smt_state: float
    smt_computed_state: float

    def explicit(self, s: Shape) -> float:
        from pisa_mm.explicit.engine import PRUNE_ABOVE  # the engine only when it may run

        judged = s.tree if s.space > PRUNE_ABOVE else s.leaves
        return self.explicit_base + self.explicit_judged * _real(judged) * s.events

    def surely_explicit(self, space: int, events: int) -> bool:
        """Whether every test of `events` events whose candidate-space bound is `space` is
        predicted faster on explicit, whatever its other measures: then `shape` need not be
        read (it costs several times the bound). Sound because judged <= leaves <= space
        when the engine does not prune (space <= PRUNE_ABOVE), so explicit <= explicit_base
        + explicit_judged x space x events, and smt >= smt_base + smt_event x events."""
        from pisa_mm.explicit.engine import PRUNE_ABOVE

        return (
            space <= PRUNE_ABOVE
            and self.explicit_base + self.explicit_judged * space * events
            <= self.smt_base + self.smt_event * events
        )

    def smt(self, s: Shape) -> float:
        return (
            self.smt_base
            + self.smt_event * s.events
            + self.smt_rf * s.rf_edges
            + self.smt_co * s.co_pairs
            + (self.smt_state + self.smt_computed_state * s.computed) * _real(s.states)
        )


def _real(count: int) -> float:
    """`count` as a float; past a float's range (thousands of stores to one location have
    more co orders), the largest one: either way no engine finishes."""
    return float(count) if count < _LARGEST else float(_LARGEST)


_LARGEST = 10**300


# The one place of the constants (recalibrate them when either engine's speed changes).
# Fitted by `python bench/run_bench.py --only auto --fit` (bench/fit_costs.py: per engine,
# least squares of the log of the predicted over the measured CPU seconds) to 2,823 tests:
# the bundled and generated suites and the scaling families but the held-out co-ring, on
# the 2-core machine kind of issue 9 (2026-12-07). The constants before, fitted when the
# explicit engine judged a candidate 10-15 times slower, sent mid-sized rings to smt (x2-4
# on sb-ring-7/8, iriw-7/8, co-ring-7/8); refitted, the choice costs x1.00 of a perfect one
# on the fitted tests and on co-ring. smt's fixed cost fitted to zero: within its
# per-event term.
COSTS = Costs(
    explicit_base=0.00029,
    explicit_judged=1.1e-6,
    smt_base=0.0,
    smt_event=0.00035,
    smt_rf=0.00072,
    smt_co=0.00057,
    smt_state=6.3e-5,
    smt_computed_state=4.5e-5,
)


def predicted(test: LitmusTest, structure: EventStructure) -> tuple[float, float]:
    """The predicted CPU seconds of (explicit, smt) on `test` (COSTS)."""
    s = shape(structure, observables(test))
    return COSTS.explicit(s), COSTS.smt(s)


# From this many events on, explicit answers whatever the estimate: smt's encoding grows with
# the pairs of events (co, rf and every relation over pairs), the explicit engine's judging
# of a candidate about linearly with them (cat/rows.py). Measured with
# bench/bench_scale_engine.py: 200 stores of one work-item and a load (204 events, 201
# candidates), explicit 2 s, smt over 120 s; 500 loading work-items (1,001 events, one
# candidate), explicit 0.9 s, smt 11 s.
BIG_EVENTS = 150


def pick(test: LitmusTest, structure: EventStructure) -> str:
    """The engine `auto` runs on `test` (smt only when it is installed)."""
    events = len(structure.events)
    if events >= BIG_EVENTS or COSTS.surely_explicit(candidate_space(structure), events):
        return "explicit"
    explicit, smt = predicted(test, structure)
    if explicit <= smt:
        return "explicit"
    try:
        get_engine("smt")
    except PisaMMError:  # no z3 in this build: explicit stays exact
        return "explicit"
    return "smt"


def run_test(
    test: LitmusTest, structure: EventStructure, model: Model, options: EngineOptions
) -> TestResult:
    """The result of the picked engine, which its `engine` field names (so that results
    compare with those of either engine unchanged)."""
    return get_engine(pick(test, structure))(test, structure, model, options)
