"""What every engine produces: final states, the verdict on the condition, and UB flags."""

from __future__ import annotations

from pisa_mm.enums import Enum
from pisa_mm.litmus.program import Observable
from pisa_mm.records import field, pickled_by_fields, record


class Verdict(Enum):
    """herd's validation line: Ok (condition validated), No, or Unknown (solver gave up)."""

    OK = "Ok"
    NO = "No"
    UNKNOWN = "Unknown"


@pickled_by_fields
@record(order=True)
class State:
    """A final state projected on the observables: sorted (observable text, value) pairs."""

    values: tuple[tuple[str, int], ...]
    # how each value prints (a float-typed one as a float); the bit patterns stay the identity
    shown: tuple[str, ...] = field(default=(), compare=False)

    def __str__(self) -> str:
        # list comprehensions: `join` makes a list of a generator first (the parent of a
        # --jobs N run prints every state of every test)
        values = self.values
        if len(self.shown) == len(values):
            return " ".join([f"{k}={v};" for (k, _), v in zip(values, self.shown, strict=True)])
        return " ".join([f"{k}={v};" for k, v in values])


class LivenessStatus(Enum):
    """The answer for a test's spin loops under one progress model (docs/progress.md)."""

    TERMINATES = "terminates"
    MAY_HANG = "may hang"
    UNDECIDED = "undecided within the bound (raise --unroll)"


@pickled_by_fields
@record
class Liveness:
    """The `Liveness` line of a test with spin loops: its status and, unless it
    terminates, which work-item spins where and why (in terms of PISA 1.1.1)."""

    status: LivenessStatus
    detail: str = ""

    @property
    def line(self) -> str:
        text = f"Liveness {self.status.value}"
        return f"{text}: {self.detail}" if self.detail else text


@pickled_by_fields
@record
class FlagWitness:
    """A raised undefined-behaviour flag with one witness pair of events (ids and texts).

    `cut` is True when only executions cut by the unroll bound raise it: its events happen
    in a longer execution, which the bound did not let finish (docs/model.md, "Loops and the
    unroll bound").
    """

    name: str
    events: tuple[int, ...]
    description: str
    cut: bool = False

    @property
    def label(self) -> str:
        """The flag as result blocks and expectation files name it: `data-race`, or
        `data-race (cut)` when only cut executions raise it."""
        return f"{self.name} (cut)" if self.cut else self.name


@pickled_by_fields
@record
class TestResult:
    """The facts `run` prints for one test under one model and engine.

    `states` are the final states of the allowed *complete* executions; `positive` /
    `negative` count allowed complete executions (or distinct states, for engines that
    cannot count executions: see `counts_executions`) that satisfy / do not satisfy the
    condition's proposition. An execution that a `filter` rejects is not counted at all.

    `cut` counts the allowed executions cut by the unroll bound, which are not final
    states and decide nothing (docs/model.md, "Loops and the unroll bound"): executions
    when `counts_executions`, otherwise the distinct observable states at the cut. Zero
    means the answer is not bounded by the unroll bound.

    `verdict_only` (`run --verdict-only`): the engine decided the verdict alone, stopping at
    the first execution that decides it. `states` and `flags` are then empty and `positive`
    / `negative` are 0 (none were listed or counted); `cut` is nonzero (no count, just "some")
    when the verdict is not witnessed by an execution and an allowed execution was cut by
    the unroll bound, so that a larger bound might change it.
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
    cut: int
    condition_text: str
    seconds: float = 0.0
    counts_executions: bool = True
    liveness: Liveness | None = None  # None: no spin loop (or not checked)
    verdict_only: bool = False

    # not a pytest test class, despite its name; not annotated, so not a field either (a
    # ClassVar annotation needs typing's own ClassVar at run time, pisa_mm/hints.py)
    __test__ = False
