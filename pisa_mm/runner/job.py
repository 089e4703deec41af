"""One test's work as a picklable job (source text + task), and its picklable record.

The same `run_job` runs in the command's own process, in a local worker process and on a
Dask worker: load (parse, validate, build), then the command's task (engines), all under the
test's budget. Models are named by spec and loaded once per process (`cached_model`).
"""

from __future__ import annotations

import functools
import sys
import time
from collections.abc import Callable, Sequence

from pisa_mm.engines import DEFAULT_UNROLL, EngineOptions, get_engine
from pisa_mm.enums import Enum
from pisa_mm.errors import PisaMMError
from pisa_mm.hints import TYPE_CHECKING, Generic, Protocol, TypeVar
from pisa_mm.records import field, pickled_by_fields, record, replace
from pisa_mm.runner.budget import Budget
from pisa_mm.runner.guard import OutOfTime, check_interrupted, limited

if TYPE_CHECKING:
    from pisa_mm.cat.syntax import Model
    from pisa_mm.events.model import EventStructure
    from pisa_mm.litmus.program import LitmusTest
    from pisa_mm.outcomes.model import TestResult

__all__ = [
    "NO_PROGRESS",
    "EngineTask",
    "Job",
    "Loaded",
    "Record",
    "Spent",
    "Status",
    "Task",
    "cached_model",
    "load",
    "load_source",
    "render_error",
    "run_engines",
    "run_job",
    "test_unroll",
    "under_budget",
    "warm_process",
]

T = TypeVar("T")

NO_PROGRESS = "none"  # `--progress none`: no Liveness check
T_co = TypeVar("T_co", covariant=True)


class Status(Enum):
    """How a test's work ended. TIMEOUT and MEMORY are the `Unknown` of a spent budget."""

    DONE = "done"
    BAD_INPUT = "bad input"
    TIMEOUT = "timeout"
    MEMORY = "memory"
    CRASH = "internal error"

    @property
    def unknown(self) -> bool:
        return self in (Status.TIMEOUT, Status.MEMORY)


@record(frozen=False, slots=False)
class Loaded:
    """A test file, parsed and built, or the error that stopped it."""

    path: str
    test: LitmusTest | None = None
    structure: EventStructure | None = None
    unroll: int = DEFAULT_UNROLL
    error: PisaMMError | None = None
    source: str | None = None


def test_unroll(test: LitmusTest, override: int | None) -> int:
    """The unroll bound: --unroll, else the test's `unroll = N` metadata, else the default."""
    if override is not None:
        return override
    return test.unroll if test.unroll is not None else DEFAULT_UNROLL


def load_source(path: str, text: str | None, *, unroll: int | None, strict: bool) -> Loaded:
    """Parse, validate and build one test (`text`, or the file at `path` when None); a bad
    test gives its error instead."""
    from pisa_mm.events.build import build
    from pisa_mm.litmus import load_test, parse_test

    loaded = Loaded(path)
    try:
        test = (
            load_test(path, strict=strict)
            if text is None
            else parse_test(text, path, strict=strict)
        )
        loaded.test, loaded.source = test, test.source
        loaded.unroll = test_unroll(test, unroll)
        loaded.structure = build(test, unroll=loaded.unroll)
    except PisaMMError as exc:
        # parse errors carry their source (`exc.sources`); later ones use `loaded.source`
        loaded.error = exc
    return loaded


def load(path: str, *, unroll: int | None, strict: bool) -> Loaded:
    """`load_source` of the file at `path`."""
    return load_source(path, None, unroll=unroll, strict=strict)


def run_engines(
    loaded: Loaded,
    model: Model,
    engines: Sequence[str],
    *,
    timeout: float | None = None,
    verdict_only: bool = False,
) -> list[TestResult]:
    """Results of every engine; an engine's PisaMMError (unsupported input) is recorded on
    `loaded` and gives no results. `timeout` is the solver's own limit (library use: the
    command line bounds a test's whole work with its Budget instead)."""
    if loaded.test is None or loaded.structure is None:
        return []
    results = []
    options = EngineOptions(unroll=loaded.unroll, timeout=timeout, verdict_only=verdict_only)
    try:
        for name in engines:
            start = time.perf_counter()
            result = get_engine(name)(loaded.test, loaded.structure, model, options)
            results.append(replace(result, seconds=time.perf_counter() - start))
    except PisaMMError as exc:
        loaded.error = exc
        return []
    return results


def render_error(loaded: Loaded) -> str:
    assert loaded.error is not None
    sources = {loaded.path: loaded.source} if loaded.source is not None else {}
    sources.update(getattr(loaded.error, "sources", None) or {})
    return loaded.error.render(sources)


@functools.cache
def cached_model(spec: str, search_path: tuple[str, ...] = ()) -> Model:
    """A model by name or path (includes also found in `search_path`, `--model-path`),
    loaded and checked once per process."""
    from pisa_mm.cat.loader import load_model

    return load_model(spec, search_path)


class Task(Protocol[T_co]):
    """A command's work on one loaded test; it must be picklable (a frozen dataclass at
    module level) and return a picklable value. A PisaMMError it records on `loaded.error`
    makes the test bad input. `warm` loads what every test shares (models, engines) once
    per process, outside any test's budget."""

    def warm(self) -> None: ...

    def __call__(self, loaded: Loaded) -> T_co: ...


@record
class EngineTask:
    """The engines' results on the test under each model (run, diff, promote)."""

    models: tuple[str, ...]
    engines: tuple[str, ...]
    model_path: tuple[str, ...] = ()
    progress: str = "pisa"  # the progress model of the Liveness line, "none": no check
    verdict_only: bool = False  # `run --verdict-only` (EngineOptions.verdict_only)

    def warm(self) -> None:
        for spec in self.models:
            cached_model(spec, self.model_path)
        for name in self.engines:
            get_engine(name)

    def __call__(self, loaded: Loaded) -> tuple[tuple[TestResult, ...], ...]:
        out = []
        for spec in self.models:
            model = cached_model(spec, self.model_path)
            results = run_engines(loaded, model, self.engines, verdict_only=self.verdict_only)
            if loaded.error is not None:
                return ()
            out.append(tuple(with_liveness(loaded, model, results, self.progress)))
        return tuple(out)


def with_liveness(
    loaded: Loaded, model: Model, results: Sequence[TestResult], progress: str
) -> list[TestResult]:
    """`results` with the test's Liveness answer under `progress` ("none": unchecked),
    computed once by the explicit enumeration whichever engine answered (docs/progress.md)."""
    from pisa_mm.liveness.check import check_liveness
    from pisa_mm.liveness.progress import Progress

    if loaded.test is None or loaded.structure is None or progress == NO_PROGRESS:
        return list(results)
    live = check_liveness(loaded.test, loaded.structure, model, Progress(progress))
    # most tests have no spin loop: their results are kept as they are (no `replace`)
    return [r if r.liveness == live else replace(r, liveness=live) for r in results]


@pickled_by_fields
@record
class Job(Generic[T]):
    """A test (its path and text, read by the command's process) and the task to run on it."""

    path: str
    source: str | None
    task: Task[T]
    unroll: int | None = None
    strict: bool = False


@pickled_by_fields
@record
class Record(Generic[T]):
    """What a job produced: the task's value when DONE, else the message (a rendered
    diagnostic, the budget that ran out, or the crash's traceback)."""

    path: str
    status: Status
    value: T | None = None
    message: str = ""
    name: str | None = None
    warnings: tuple[str, ...] = ()
    metadata: tuple[tuple[str, str], ...] = field(default=())

    @property
    def label(self) -> str:
        """The test's name, or its path when it never parsed."""
        return self.name or self.path


def _out_of_memory(exc: BaseException) -> bool:
    if isinstance(exc, MemoryError):
        return True
    solver = sys.modules.get("pisa_mm.smt.solver")
    return solver is not None and bool(solver.is_out_of_memory(exc))


class Spent(Exception):
    """A test's budget ran out: `status` is TIMEOUT or MEMORY, `message` says which limit."""

    def __init__(self, status: Status, message: str) -> None:
        super().__init__(message)
        self.status = status
        self.message = message


def under_budget(budget: Budget, work: Callable[[], T]) -> T:
    """`work()` under `budget`; Spent when its time or memory runs out (the one budget
    mechanism of every command: run_job, query, trace)."""
    try:
        with limited(budget.timeout, budget.max_memory):
            return work()
    except OutOfTime:
        raise Spent(Status.TIMEOUT, budget.timeout_message()) from None
    except Exception as exc:
        check_interrupted()
        if _out_of_memory(exc):
            limit = (budget.max_memory or 0) >> 20
            raise Spent(Status.MEMORY, f"memory: over {limit} MiB") from None
        raise


# A test that every stage of the frontend reads (parse, validate, build).
_WARM_TEST = """PISA warm
{ .global .32b @x = 0; }
P0 @ wg 0 { st.global.32b [@x], 1; }
P1 @ wg 1 { ld.global.32b %r0, [@x]; }
exists (P1:%r0 == 1)
"""


@functools.cache
def _warm_frontend() -> None:
    """Import the frontend and build its parser once per process, outside any test's
    budget: a fresh worker's first test must not spend its --timeout on start-up (a shipped
    model from the cache no longer imports lark)."""
    from pisa_mm.events.build import build
    from pisa_mm.litmus import parse_test

    build(parse_test(_WARM_TEST, "<warm-up>"), unroll=DEFAULT_UNROLL)


# The longest the warm-up run of `warm_process` may take (a user's model could be slow).
WARM_LIMIT = 2.0


def warm_process(task: Task[object], budget: Budget) -> None:
    """Do once, in the command's process before the pool forks its workers, what each
    worker's first test would otherwise do for itself: load the task's models and engines,
    set up the frontend, and run the task on a tiny test, which imports the engines' and
    the Liveness check's modules and fills their per-model tables (about 90 ms of CPU per
    worker on the generated suite). A warm-up that fails or runs past WARM_LIMIT is
    dropped: the workers then meet the same on their first test, where it is reported. It
    runs under the tests' memory budget, and their timeout when shorter."""
    timeout = WARM_LIMIT if budget.timeout is None else min(WARM_LIMIT, budget.timeout)
    try:
        task.warm()
        _warm_frontend()
        loaded = load_source("<warm-up>", _WARM_TEST, unroll=None, strict=False)
        with limited(timeout, budget.max_memory):
            task(loaded)
    except Exception:
        check_interrupted()


def run_job(job: Job[T], budget: Budget) -> Record[T]:
    """Load and run one test under `budget`; every ending is a Record (interrupts excepted)."""
    box: list[Loaded] = []

    def work() -> T | None:
        loaded = load_source(job.path, job.source, unroll=job.unroll, strict=job.strict)
        box.append(loaded)
        return job.task(loaded) if loaded.error is None else None

    try:
        try:
            job.task.warm()
            if budget.hard:
                _warm_frontend()
        except PisaMMError as exc:  # e.g. a model file missing on a Dask worker
            return Record(job.path, Status.BAD_INPUT, message=exc.render())
        value = under_budget(budget, work)
        check_interrupted()  # an interrupt that the task's code caught and disguised
        return _record(job, box[0], value)
    except Spent as spent:
        check_interrupted()
        # no name: where the budget ran out (before or after parsing) must not show
        return Record(job.path, spent.status, message=spent.message)
    except Exception:
        check_interrupted()
        import traceback  # only for a crash: it costs start-up time

        return Record(job.path, Status.CRASH, message=traceback.format_exc())


def _record(job: Job[T], loaded: Loaded, value: T | None) -> Record[T]:
    test = loaded.test
    name = test.name if test is not None else None
    warnings = tuple(str(w) for w in test.warnings) if test is not None else ()
    metadata = tuple(test.metadata) if test is not None else ()
    if loaded.error is not None:
        return Record(job.path, Status.BAD_INPUT, None, render_error(loaded), name, warnings)
    return Record(job.path, Status.DONE, value, "", name, warnings, metadata)
