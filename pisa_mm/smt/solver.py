"""The one place that creates z3 solvers and interprets their answers."""

from __future__ import annotations

import enum
import time
from collections.abc import Sequence
from dataclasses import dataclass
from typing import Any

import z3

# Fixed so that runs are reproducible; z3's default seed is fixed too, but state it.
RANDOM_SEED = 0


class Answer(enum.Enum):
    SAT = "sat"
    UNSAT = "unsat"
    UNKNOWN = "unknown"


@dataclass(frozen=True, slots=True)
class Budget:
    """Limits for one engine run: wall-clock seconds for the whole run and z3's
    deterministic resource limit per check (what tests use, since it does not depend on
    machine speed)."""

    timeout: float | None = None
    rlimit: int | None = None


class Session:
    """A z3 solver with the run's budget applied; every `check` goes through here.

    `bit_vectors_only` (no IEEE operations anywhere) selects z3's QF_BV solver, which
    bit-blasts to its incremental SAT solver: on these problems (Boolean structure over
    narrow bit-vectors) it is several times faster than the general SMT core. It treats
    floating-point operations as uninterpreted, so problems with any use the general one.
    """

    def __init__(self, budget: Budget, *, bit_vectors_only: bool = False) -> None:
        self.budget = budget
        self.deadline = None if budget.timeout is None else time.monotonic() + budget.timeout
        self.solver: Any = z3.SolverFor("QF_BV") if bit_vectors_only else z3.Solver()
        self.solver.set("random_seed", RANDOM_SEED)
        if budget.rlimit is not None:
            self.solver.set("rlimit", budget.rlimit)
        self.checks = 0

    def add(self, *constraints: Any) -> None:
        for c in constraints:
            if c is True:
                continue
            self.solver.add(c)

    def check(self, assumptions: Sequence[Any] = ()) -> Answer:
        if self.deadline is not None:
            left = self.deadline - time.monotonic()
            if left <= 0:
                return Answer.UNKNOWN
            self.solver.set("timeout", max(1, int(left * 1000)))
        self.checks += 1
        result = self.solver.check(*assumptions)
        if result == z3.sat:
            return Answer.SAT
        if result == z3.unsat:
            return Answer.UNSAT
        return Answer.UNKNOWN

    def model(self) -> Any:
        return self.solver.model()

    def unsat_core(self) -> Any:
        return self.solver.unsat_core()

    def push(self) -> None:
        self.solver.push()

    def pop(self) -> None:
        self.solver.pop()
