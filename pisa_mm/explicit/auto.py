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

    def surely_explicit(self, space: int) -> bool:
        """Whether every test whose candidate-space bound is `space` is predicted faster on
        explicit, whatever its other measures: then `shape` need not be read (it costs
        several times the bound). Sound because judged <= leaves <= space when the engine
        does not prune (space <= PRUNE_ABOVE), so explicit <= explicit_base +
        explicit_judged x space x events, and smt >= smt_base + smt_event x events."""
        from pisa_mm.explicit.engine import PRUNE_ABOVE

        return (
            space <= PRUNE_ABOVE
            and self.explicit_base <= self.smt_base
            and self.explicit_judged * space <= self.smt_event
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
# Fitted to the CPU seconds of each engine, per test, on bench/run_bench.py's scaling
# families and the bundled suite (least squares of the log of the predicted over the
# measured time), on the shared 2-core machine kind of issue 9; how well they choose is
# what `bench/run_bench.py --only auto` prints (auto / the better engine, per family).
COSTS = Costs(
    explicit_base=0.0007,
    explicit_judged=1.5e-5,
    smt_base=0.001,
    smt_event=0.00087,
    smt_rf=0.00122,
    smt_co=0.00095,
    smt_state=0.00025,
    smt_computed_state=0.000072,
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
    if len(structure.events) >= BIG_EVENTS or COSTS.surely_explicit(candidate_space(structure)):
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
