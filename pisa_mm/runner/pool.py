"""Where jobs run: in this process, in a local pool of worker processes, or on a Dask
cluster; records come back in the jobs' order whatever the backend and worker count.

The local pool is pebble's ProcessPool: its workers live across tests (each keeps its
loaded models), and a task past its timeout has its worker killed and replaced, which
concurrent.futures cannot do. The workers are forked, so they start with the command's
imports and models already loaded.
"""

from __future__ import annotations

import collections
import itertools
import signal
from collections.abc import Callable, Generator, Iterator, Sequence

from pisa_mm.hints import TYPE_CHECKING, Any, TypeVar
from pisa_mm.records import record
from pisa_mm.runner.budget import Budget
from pisa_mm.runner.guard import check_interrupted, ignore_interrupts
from pisa_mm.runner.job import Job, Record, Spent, Status, run_job, under_budget, warm_process

if TYPE_CHECKING:
    from concurrent.futures import Future

__all__ = ["GRACE", "Plan", "Workers", "call", "execute", "execute_stream"]

T = TypeVar("T")
A = TypeVar("A")

# A worker whose test overruns its timeout by this much (stuck in native code other than
# Z3, which the in-worker deadline interrupts) is killed and replaced.
GRACE = 2.0


@record
class Plan:
    """How to run a command's jobs: `jobs` local workers, or the Dask scheduler `dask`."""

    jobs: int
    budget: Budget
    dask: str | None = None


def execute(jobs: Sequence[Job[T]], plan: Plan) -> Generator[Record[T], None, None]:
    """Run every job; yield their records in order, each as soon as it and those before it
    are done. Closing the generator early (a caller that found what it wanted) stops the
    pool at once.

    Without a --timeout of the user's (the default one is enforced in the test's process),
    one worker's worth of jobs (a single test, or `--jobs 1`) runs in this process, with no
    pool to start: its deadline, memory limit and interrupts hold there too (guard). With
    one the tests run in workers even then, since only a process can be stopped wherever
    it hangs (the in-process deadline stops Python code and Z3, not other native code)."""
    workers = min(plan.jobs, len(jobs))
    if len(jobs) > 1:
        _settle_garbage_collector()
    if plan.dask is not None:
        from pisa_mm.runner.dask import execute_on_dask

        yield from execute_on_dask(jobs, plan.dask, plan.budget)
    elif workers <= 1 and not plan.budget.hard:
        for job in jobs:
            yield run_job(job, plan.budget)
    else:
        # With a hard timeout, one test per task: pebble's timeout kills the task's worker,
        # and so every test of the task. Otherwise tests go in chunks.
        sizes = [1] * len(jobs) if plan.budget.hard else chunk_sizes(len(jobs), workers)
        starts = itertools.accumulate(sizes, initial=0)
        chunks = (jobs[i : i + size] for i, size in zip(starts, sizes, strict=False))
        yield from _execute_in_pool(chunks, workers, plan.budget, len(jobs))


def execute_stream(
    jobs: Iterator[Job[T]], plan: Plan, ahead: int
) -> Generator[Record[T], None, None]:
    """`execute` for jobs made while earlier ones run (`diff --search`: stop at the first
    answer): at most `ahead` jobs are scheduled beyond the record being waited for, on one
    pool whose workers live through the whole stream (their compiled models with them).
    With one worker and no hard --timeout they run one by one in this process; on Dask,
    `ahead` at a time."""
    if plan.dask is not None:
        while batch := list(itertools.islice(jobs, ahead)):
            yield from execute(batch, plan)
    elif plan.jobs == 1 and not plan.budget.hard:
        for job in jobs:
            yield run_job(job, plan.budget)
    else:
        yield from _execute_in_pool(([job] for job in jobs), plan.jobs, plan.budget, ahead)


def _settle_garbage_collector() -> None:
    """Tell the garbage collector that what exists now (modules, the loaded models, the
    jobs) lives for the whole run: `gc.freeze` moves it out of every collection. Otherwise
    each full collection walks it all again, and the thousands of small objects a test
    allocates trigger one every few tests. A full collection waits for 100 younger ones
    instead of 10 (every ~700,000 allocations): the garbage of a test is short-lived and
    goes with the young ones. Together, 18% of the CPU of a --jobs 1 run of litmus/gen.
    Forked workers inherit the frozen objects and the thresholds."""
    import gc

    gc.collect()
    gc.freeze()
    gc.set_threshold(700, 10, 100)


# Under the address-space limit, native code (Z3, a thread's stack) that cannot allocate
# dies by one of these signals instead of raising MemoryError.
_OUT_OF_MEMORY_SIGNALS = frozenset({-signal.SIGSEGV, -signal.SIGBUS, -signal.SIGABRT})


def _died(path: str, exitcode: int | None, budget: Budget) -> Record[T]:
    """The record of a test whose worker died: Unknown (memory) when it died as native code
    does at the memory limit, otherwise an internal error."""
    if budget.max_memory is not None and exitcode in _OUT_OF_MEMORY_SIGNALS:
        limit = budget.max_memory // 2**20
        return Record(
            path, Status.MEMORY, message=f"memory: over {limit} MiB (the worker died at the limit)"
        )
    return Record(path, Status.CRASH, message=f"the worker process running it {_death(exitcode)}")


def _death(exitcode: int | None) -> str:
    """How a worker process ended, in words: its exit code, or the signal that killed it."""
    if exitcode is None or exitcode >= 0:
        return f"died (exit code {exitcode})"
    try:
        name = signal.Signals(-exitcode).name
    except ValueError:
        name = f"signal {-exitcode}"
    if -exitcode == signal.SIGKILL:  # what the kernel's out-of-memory killer sends
        return f"was killed by {name} (by the system, perhaps for want of memory)"
    return f"died by {name}"


def _init_worker() -> None:
    ignore_interrupts()


def run_chunk(jobs: Sequence[Job[T]], budget: Budget) -> list[Record[T]]:
    """A pool task of several jobs: one round trip to a worker for many small tests."""
    return [run_job(job, budget) for job in jobs]


def chunk_sizes(jobs: int, workers: int) -> list[int]:
    """The number of tests of each pool task without a timeout, in order. A task of many
    tests makes its round trip to a worker negligible on small tests, but the worker that
    takes the last one leaves the others idle until it is done: with tasks of one size,
    half a task per worker on average (some 50 ms of a run of 1,530 small tests). So the
    tasks shrink as the tests run out, as a guided schedule does: each is a quarter of what
    is left per worker, between 1 and MAX_CHUNK, and the last ones are single tests."""
    sizes = []
    left = jobs
    while left:
        size = max(1, min(MAX_CHUNK, left // (workers * 4)))
        sizes.append(size)
        left -= size
    return sizes


# A task of more tests than this gains nothing more on its round trip.
MAX_CHUNK = 32


def _execute_in_pool(
    chunks: Iterator[Sequence[Job[T]]], workers: int, budget: Budget, ahead: int
) -> Iterator[Record[T]]:
    """Each chunk a pool task, at most `ahead` tasks scheduled beyond the one waited for;
    a chunk whose worker dies is run again one job per task, so that only the job that
    killed it is lost."""
    # imported here: a single in-process test never pays for them (start-up time)
    import multiprocessing

    from pebble import ProcessExpired, ProcessPool

    first = next(chunks, None)
    if first is None:
        return
    chunks = itertools.chain([first], chunks)
    warm_process(first[0].task, budget)
    _settle_garbage_collector()  # the warm-up's modules and tables too
    kill_after = budget.timeout + GRACE if budget.hard and budget.timeout else None
    pool = ProcessPool(
        max_workers=workers, initializer=_init_worker, context=multiprocessing.get_context("fork")
    )

    def records(chunk: Sequence[Job[T]], future: Future[list[Record[T]]]) -> list[Record[T]]:
        if len(chunk) > 1:
            try:
                return list(future.result())
            except ProcessExpired:
                retried = [pool.schedule(run_chunk, ([job], budget)) for job in chunk]
                return [r for job, f in zip(chunk, retried, strict=True) for r in records([job], f)]
            except Exception as exc:  # e.g. a result that does not pickle: a bug
                message = f"{type(exc).__name__}: {exc}"
                return [Record(job.path, Status.CRASH, message=message) for job in chunk]
        (job,) = chunk
        return [_collect(job.path, future, budget)]

    try:
        pending: collections.deque[tuple[Sequence[Job[T]], Future[list[Record[T]]]]]
        pending = collections.deque()
        for chunk in chunks:
            pending.append((chunk, pool.schedule(run_chunk, (chunk, budget), timeout=kill_after)))
            if len(pending) > ahead:
                yield from records(*pending.popleft())
        while pending:
            yield from records(*pending.popleft())
    finally:
        # normal end, an interrupt or a closed stdout: stop at once, killing busy workers
        pool.stop()  # type: ignore[no-untyped-call]
        pool.join()


def _collect(
    path: str, future: Future[Record[T]] | Future[list[Record[T]]], budget: Budget
) -> Record[T]:
    """The record a pool's task of one job gave (`call`'s, or `run_chunk`'s only one), or
    the one its killed or dead worker stands for."""
    from concurrent.futures import TimeoutError as FutureTimeout

    from pebble import ProcessExpired

    try:
        result = future.result()
        return result[0] if isinstance(result, list) else result
    except FutureTimeout:
        return Record(path, Status.TIMEOUT, message=budget.timeout_message())
    except ProcessExpired as exc:
        return _died(path, exc.exitcode, budget)
    except Exception as exc:  # e.g. a result that does not pickle: a bug
        return Record(path, Status.CRASH, message=f"{type(exc).__name__}: {exc}")


def call(path: str, fn: Callable[[A], T], arg: A, budget: Budget) -> Record[T]:
    """`fn(arg)` under `budget`, as a record named `path` (what a Workers task runs); `fn`
    reports bad input in its own value, so every exception it lets out is a crash."""
    try:
        return Record(path, Status.DONE, under_budget(budget, lambda: fn(arg)))
    except Spent as spent:
        check_interrupted()
        return Record(path, spent.status, message=spent.message)
    except Exception:
        check_interrupted()
        import traceback  # only for a crash

        return Record(path, Status.CRASH, message=traceback.format_exc())


class Workers:
    """Worker processes that outlive one command, for a server: each `run` is one `call` in
    a worker, bounded by its budget there and, should the worker hang in native code, by
    the pool, which kills and replaces it GRACE seconds later.

    `context` is a multiprocessing start method: a server with threads wants "forkserver"
    (workers forked from a clean single-threaded process), with `preload` (module names)
    imported there once so that each worker starts warm."""

    def __init__(self, workers: int, *, context: str = "fork", preload: Sequence[str] = ()) -> None:
        import multiprocessing

        from pebble import ProcessPool

        ctx = multiprocessing.get_context(context)
        if preload and context == "forkserver":
            ctx.set_forkserver_preload(list(preload))
        self._pool = ProcessPool(max_workers=workers, initializer=_init_worker, context=ctx)

    def run(self, path: str, fn: Callable[[A], T], arg: A, budget: Budget) -> Record[T]:
        """`call(path, fn, arg, budget)` in a worker; blocks until its record is back."""
        kill_after = None if budget.timeout is None else budget.timeout + GRACE
        future: Future[Record[T]] = self._pool.schedule(
            call, (path, fn, arg, budget), timeout=kill_after
        )
        return _collect(path, future, budget)

    def close(self) -> None:
        """Stop the workers, killing busy ones."""
        self._pool.stop()  # type: ignore[no-untyped-call]
        self._pool.join()

    def __enter__(self) -> Workers:
        return self

    def __exit__(self, *exc: Any) -> None:
        self.close()
