"""Where jobs run: in this process, in a local pool of worker processes, or on a Dask
cluster; records come back in the jobs' order whatever the backend and worker count.

The local pool is pebble's ProcessPool: its workers live across tests (each keeps its
loaded models), and a task past its timeout has its worker killed and replaced, which
concurrent.futures cannot do. The workers are forked, so they start with the command's
imports and models already loaded.
"""

from __future__ import annotations

from collections.abc import Iterator, Sequence
from dataclasses import dataclass
from typing import Any, TypeVar

from pisa_mm.runner.budget import Budget
from pisa_mm.runner.guard import ignore_interrupts
from pisa_mm.runner.job import Job, Record, Status, run_job

__all__ = ["GRACE", "Plan", "execute"]

T = TypeVar("T")

# A worker whose test overruns its timeout by this much (stuck in native code other than
# Z3, which the in-worker deadline interrupts) is killed and replaced.
GRACE = 2.0


@dataclass(frozen=True, slots=True)
class Plan:
    """How to run a command's jobs: `jobs` local workers, or the Dask scheduler `dask`."""

    jobs: int
    budget: Budget
    dask: str | None = None


def execute(jobs: Sequence[Job[T]], plan: Plan) -> Iterator[Record[T]]:
    """Run every job; yield their records in order, each as soon as it and those before it
    are done.

    Without a --timeout, one worker's worth of jobs (a single test, or `--jobs 1`) runs in
    this process, with no pool to start: its memory limit and interrupts hold there too
    (guard). With a timeout the tests run in workers even then, since only a process can
    be stopped wherever it hangs (the in-process deadline stops Python code and Z3, not
    other native code)."""
    workers = min(plan.jobs, len(jobs))
    if len(jobs) > 1:
        _settle_garbage_collector()
    if plan.dask is not None:
        from pisa_mm.runner.dask import execute_on_dask

        yield from execute_on_dask(jobs, plan.dask, plan.budget)
    elif workers <= 1 and plan.budget.timeout is None:
        for job in jobs:
            yield run_job(job, plan.budget)
    else:
        yield from _execute_in_pool(jobs, workers, plan.budget)


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


def _init_worker() -> None:
    ignore_interrupts()


def run_chunk(jobs: Sequence[Job[T]], budget: Budget) -> list[Record[T]]:
    """A pool task of several jobs: one round trip to a worker for many small tests."""
    return [run_job(job, budget) for job in jobs]


def chunk_size(jobs: int, workers: int) -> int:
    """Jobs per pool task without a timeout: enough to make the round trips to the workers
    negligible on small tests, few enough that every worker gets several tasks (balance) and
    the progress line moves."""
    return max(1, min(MAX_CHUNK, jobs // (workers * 8)))


# A task of more tests than this gains nothing more on its round trip.
MAX_CHUNK = 32


def _execute_in_pool(jobs: Sequence[Job[T]], workers: int, budget: Budget) -> Iterator[Record[T]]:
    # imported here: a single in-process test never pays for them (start-up time)
    import multiprocessing
    from concurrent.futures import TimeoutError as FutureTimeout

    from pebble import ProcessExpired, ProcessPool

    # With a timeout, one test per task: pebble's timeout kills the task's worker, and so
    # every test of the task. Without one, tests go in chunks; a chunk whose worker dies
    # is run again one test per task, so that only the test that killed it is lost.
    kill_after = None if budget.timeout is None else budget.timeout + GRACE
    size = 1 if budget.timeout is not None else chunk_size(len(jobs), workers)
    chunks = [jobs[i : i + size] for i in range(0, len(jobs), size)]
    pool = ProcessPool(
        max_workers=workers, initializer=_init_worker, context=multiprocessing.get_context("fork")
    )

    def records(chunk: Sequence[Job[T]], future: Any) -> list[Record[T]]:
        try:
            return list(future.result())
        except FutureTimeout:
            (job,) = chunk
            return [Record(job.path, Status.TIMEOUT, message=f"timeout: over {budget.timeout:g} s")]
        except ProcessExpired as exc:
            if len(chunk) > 1:
                retried = [pool.schedule(run_chunk, ([job], budget)) for job in chunk]
                return [r for job, f in zip(chunk, retried, strict=True) for r in records([job], f)]
            (job,) = chunk
            message = f"the worker process running it died (exit code {exc.exitcode})"
            return [Record(job.path, Status.CRASH, message=message)]
        except Exception as exc:  # e.g. a result that does not pickle: a bug
            message = f"{type(exc).__name__}: {exc}"
            return [Record(job.path, Status.CRASH, message=message) for job in chunk]

    try:
        futures = [
            pool.schedule(run_chunk, (chunk, budget), timeout=kill_after) for chunk in chunks
        ]
        for chunk, future in zip(chunks, futures, strict=True):
            yield from records(chunk, future)
    finally:
        # normal end, an interrupt or a closed stdout: stop at once, killing busy workers
        pool.stop()  # type: ignore[no-untyped-call]
        pool.join()
