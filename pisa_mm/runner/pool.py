"""Where jobs run: in this process, in a local pool of worker processes, or on a Dask
cluster; records come back in the jobs' order whatever the backend and worker count.

The local pool is pebble's ProcessPool: its workers live across tests (each keeps its
loaded models), and a task past its timeout has its worker killed and replaced, which
concurrent.futures cannot do. The workers are forked, so they start with the command's
imports and models already loaded.
"""

from __future__ import annotations

import signal
from collections.abc import Iterator, Sequence
from dataclasses import dataclass
from typing import TypeVar

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

    A single test without a --timeout runs in this process (no pool to start-up): its
    memory limit and interrupts hold there too (guard). With a timeout it runs in a worker,
    since only a process can be stopped wherever it hangs."""
    if plan.dask is not None:
        from pisa_mm.runner.dask import execute_on_dask

        yield from execute_on_dask(jobs, plan.dask, plan.budget)
    elif len(jobs) == 0 or (len(jobs) == 1 and plan.budget.timeout is None):
        for job in jobs:
            yield run_job(job, plan.budget)
    else:
        yield from _execute_in_pool(jobs, min(plan.jobs, len(jobs)), plan.budget)


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
    return Record(
        path, Status.CRASH, message=f"the worker process running it died (exit code {exitcode})"
    )


def _init_worker() -> None:
    ignore_interrupts()


def _execute_in_pool(jobs: Sequence[Job[T]], workers: int, budget: Budget) -> Iterator[Record[T]]:
    # imported here: a single in-process test never pays for them (start-up time)
    import multiprocessing
    from concurrent.futures import TimeoutError as FutureTimeout

    from pebble import ProcessExpired, ProcessPool

    kill_after = None if budget.timeout is None else budget.timeout + GRACE
    pool = ProcessPool(
        max_workers=workers, initializer=_init_worker, context=multiprocessing.get_context("fork")
    )
    try:
        futures = [pool.schedule(run_job, (job, budget), timeout=kill_after) for job in jobs]
        for job, future in zip(jobs, futures, strict=True):
            try:
                record: Record[T] = future.result()
            except FutureTimeout:
                record = Record(
                    job.path, Status.TIMEOUT, message=f"timeout: over {budget.timeout:g} s"
                )
            except ProcessExpired as exc:
                record = _died(job.path, exc.exitcode, budget)
            except Exception as exc:  # e.g. a result that does not pickle: a bug
                record = Record(job.path, Status.CRASH, message=f"{type(exc).__name__}: {exc}")
            yield record
    finally:
        # normal end, an interrupt or a closed stdout: stop at once, killing busy workers
        pool.stop()  # type: ignore[no-untyped-call]
        pool.join()
