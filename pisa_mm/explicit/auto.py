"""The `auto` engine: the explicit engine on small candidate spaces, smt on large ones."""

from __future__ import annotations

from typing import TYPE_CHECKING

from pisa_mm.engines import EngineOptions, get_engine
from pisa_mm.errors import PisaMMError
from pisa_mm.explicit.size import candidate_space

if TYPE_CHECKING:
    from pisa_mm.cat.syntax import Model
    from pisa_mm.events.model import EventStructure
    from pisa_mm.litmus.program import LitmusTest
    from pisa_mm.outcomes.model import TestResult

__all__ = ["BIG_EVENTS", "THRESHOLD", "pick", "run_test"]

# Above this estimate (rf choices summed over paths x co, explicit/size.py) smt answers.
# Measured with bench/run_bench.py's auto section on this machine kind: explicit wins up
# to about a hundred (the small shapes of a suite), the two are even around 128-256
# (SB-ring-7, MP-chain-6, IRIW-7) and smt wins from a few hundred on (4 storers of one
# location, 600: smt 10x faster); small spin loops are the exception (explicit up to 2x
# faster at 300-2,500).
THRESHOLD = 200


# From this many events on, explicit answers whatever the estimate: smt's encoding grows with
# the pairs of events (co, rf and every relation over pairs), the explicit engine's judging
# of a candidate about linearly with them (cat/rows.py). Measured with
# bench/bench_scale_engine.py: 200 stores of one work-item and a load (204 events, 201
# candidates), explicit 2 s, smt over 120 s; 500 loading work-items (1,001 events, one
# candidate), explicit 0.9 s, smt 11 s.
BIG_EVENTS = 150


def pick(structure: EventStructure) -> str:
    """The engine `auto` runs on `structure` (smt only when it is installed)."""
    if len(structure.events) >= BIG_EVENTS or candidate_space(structure) <= THRESHOLD:
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
    return get_engine(pick(structure))(test, structure, model, options)
