"""What every engine produces: final states, the verdict on the condition, and UB flags."""

from __future__ import annotations

import enum
from dataclasses import dataclass, field
from typing import ClassVar

from pisa_mm.litmus.program import Observable


class Verdict(enum.Enum):
    """herd's validation line: Ok (condition validated), No, or Unknown (solver gave up)."""

    OK = "Ok"
    NO = "No"
    UNKNOWN = "Unknown"


@dataclass(frozen=True, slots=True, order=True)
class State:
    """A final state projected on the observables: sorted (observable text, value) pairs."""

    values: tuple[tuple[str, int], ...]
    # how each value prints (a float-typed one as a float); the bit patterns stay the identity
    shown: tuple[str, ...] = field(default=(), compare=False)

    def __str__(self) -> str:
        if len(self.shown) == len(self.values):
            return " ".join(f"{k}={v};" for (k, _), v in zip(self.values, self.shown, strict=True))
        return " ".join(f"{k}={v};" for k, v in self.values)


@dataclass(frozen=True, slots=True)
class FlagWitness:
    """A raised undefined-behaviour flag with one witness pair of events (ids and texts)."""

    name: str
    events: tuple[int, ...]
    description: str


@dataclass(frozen=True, slots=True)
class TestResult:
    """The facts `run` prints for one test under one model and engine.

    `states` are the final states of all allowed executions; `positive`/`negative` count
    allowed executions (or distinct states, for engines that cannot count executions: see
    `counts_executions`) that satisfy / do not satisfy the condition's proposition.
    `cut` says some allowed execution used a path truncated by the unroll bound.
    """

    name: str
    model: str
    engine: str
    quantifier: str  # "exists", "~exists", "forall"
    observables: tuple[Observable, ...]
    states: tuple[State, ...]
    verdict: Verdict
    positive: int
    negative: int
    flags: tuple[FlagWitness, ...]
    cut: bool
    condition_text: str
    seconds: float = 0.0
    counts_executions: bool = True

    __test__: ClassVar[bool] = False  # not a pytest test class, despite its name
