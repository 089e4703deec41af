"""The Dask backend: the same jobs and records, run on an existing distributed cluster.

Each job is one Dask task calling `run_job`; the futures are gathered in order, so the
output is that of a local run. A Dask worker runs tasks in threads, where neither signals
nor RLIMIT_AS apply: the budget is enforced by the deadline timer (it interrupts Z3 and
raises in the task's thread) and Z3's memory limit; a task still running `GRACE` seconds
past its timeout (stuck in other native code) has its worker restarted by the scheduler.
A test's time counts from when a worker starts it, not from when it was sent: on a busy or
shared cluster a test may wait its turn for longer than its timeout.
"""

from __future__ import annotations

import re
import socket
import threading
import time
from collections.abc import Iterator, Sequence
from typing import Any, TypeVar

from pisa_mm.errors import PisaMMError
from pisa_mm.records import replace
from pisa_mm.runner.budget import (
    DEFAULT_MEMORY_CAP,
    MIN_MEMORY,
    Budget,
    default_jobs,
    default_memory,
)
from pisa_mm.runner.job import Job, Record, Status, run_job

__all__ = [
    "CONNECT_TIMEOUT",
    "HANDSHAKE_TIMEOUT",
    "execute_on_dask",
    "run_on_worker",
    "running_for",
    "worker_budget",
]

T = TypeVar("T")

# Seconds to reach the scheduler, and to find a worker there, before the run fails (the
# cluster must already be up).
CONNECT_TIMEOUT = 5
# Seconds for the whole of making the client (the connection, then the handshake).
HANDSHAKE_TIMEOUT = CONNECT_TIMEOUT + 2


def _probe(address: str) -> None:
    """A TCP scheduler that refuses connections fails now, not after distributed's retries."""
    match = re.fullmatch(r"(?:tcp://)?\[?([^\]/]+?)\]?:(\d+)/?", address)
    if match is None:
        return  # another transport (tls://, ucx://): distributed says what is wrong
    try:
        socket.create_connection(
            (match.group(1), int(match.group(2))), timeout=CONNECT_TIMEOUT
        ).close()
    except OSError as exc:
        raise _unreachable(address, exc.strerror or str(exc)) from None


def _unreachable(address: str, why: str) -> PisaMMError:
    return PisaMMError.at(None, f"cannot reach the Dask scheduler at {address}: {why}", "io")


def _client(address: str) -> Any:
    try:
        from distributed import Client
    except ImportError:
        raise PisaMMError.at(
            None,
            "--dask needs the optional dependency `distributed`: pip install 'pisa-mm[dask]'",
            "usage",
        ) from None
    _probe(address)
    # distributed bounds the TCP connection by its timeout, but not the handshake after it:
    # a server that accepts and never answers as a Dask scheduler (another service on that
    # port) would hold the run for ever. So the client is made in a thread of its own, and
    # the run fails when it is not up in time (that thread is a daemon: it dies with us).
    made: list[Any] = []
    failed: list[BaseException] = []

    def connect() -> None:
        try:
            made.append(Client(address, timeout=CONNECT_TIMEOUT, set_as_default=False))  # type: ignore[no-untyped-call]
        except BaseException as exc:  # reported by the caller's thread
            failed.append(exc)

    thread = threading.Thread(target=connect, name="pisa-mm-dask-connect", daemon=True)
    thread.start()
    thread.join(HANDSHAKE_TIMEOUT)
    if made:
        return made[0]
    if not failed:
        raise _unreachable(address, f"no answer as a Dask scheduler within {HANDSHAKE_TIMEOUT} s")
    exc = failed[0]
    if isinstance(exc, (OSError, TimeoutError, ValueError)):
        raise _unreachable(address, str(exc) or type(exc).__name__) from None
    if isinstance(exc, MemoryError):  # its reply's first bytes read as a huge frame length
        raise _unreachable(address, "it does not answer as a Dask scheduler") from None
    # e.g. a tls:// address without Dask's TLS configuration (TypeError)
    raise _unreachable(address, f"{type(exc).__name__}: {exc}") from None


def _has_workers(client: Any, address: str, *, lost: bool = False) -> None:
    """A cluster without workers would hold every test for ever: fail now, saying so."""
    try:
        client.wait_for_workers(1, timeout=CONNECT_TIMEOUT)
    except (TimeoutError, OSError):
        what = "lost all its workers" if lost else "has no workers"
        raise PisaMMError.at(
            None,
            f"the Dask scheduler at {address} {what} (start some: dask worker {address} "
            "--nthreads 1)",
            "io",
        ) from None


# On a worker: when each of its running tests started (by the Dask task's key), so that the
# client can tell a test past its timeout from one still waiting for a worker.
_started: dict[str, float] = {}
# One test at a time in a worker process, whatever its `--nthreads`: Z3's context and the
# process's caches are shared by its threads, and two tests solving at once in one context
# can give wrong answers, not only slow ones. A test waiting here has not started.
_one_test = threading.Lock()


def run_on_worker(job: Job[T], budget: Budget) -> Record[T]:
    """`run_job` as a Dask task, its start noted in `_started` while it runs."""
    from distributed import get_worker

    worker = get_worker()
    key = str(worker.get_current_task())
    with _one_test:
        _started[key] = time.monotonic()
        try:
            return run_job(job, worker_budget(budget, _memory_limit(worker)))
        finally:
            _started.pop(key, None)


def _memory_limit(worker: Any) -> int | None:
    """The worker's Dask memory limit in bytes (its share of its machine), if it has one."""
    limit = getattr(getattr(worker, "memory_manager", None), "memory_limit", None)
    return int(limit) if limit else None


def worker_budget(budget: Budget, memory_limit: int | None) -> Budget:
    """`budget` on a worker: a default memory budget (`sized_here`) was sized from the
    client's machine, which may have more memory than the worker's, or less; here it is half
    the worker's Dask memory limit (half its share of the machine, as a local run has half
    the machine shared among its workers), at most DEFAULT_MEMORY_CAP; without a Dask limit,
    what a local run on this machine would have."""
    if not budget.sized_here:
        return budget
    if memory_limit is None:
        memory = default_memory(default_jobs())
    else:
        memory = max(MIN_MEMORY, min(DEFAULT_MEMORY_CAP, memory_limit // 2))
    return replace(budget, max_memory=memory)


def running_for(key: str) -> float | None:
    """On a worker: for how many seconds the task `key` has run there (None: it is not
    running there)."""
    start = _started.get(key)
    return None if start is None else time.monotonic() - start


def execute_on_dask(jobs: Sequence[Job[T]], address: str, budget: Budget) -> Iterator[Record[T]]:
    from pisa_mm.runner.pool import GRACE

    client = _client(address)
    futures: list[Any] = []
    try:
        _has_workers(client, address)
        futures = [client.submit(run_on_worker, job, budget, pure=False) for job in jobs]
        limit = None if budget.timeout is None else budget.timeout + GRACE
        for job, future in zip(jobs, futures, strict=True):
            yield _result(client, address, job, future, limit, budget)
    finally:
        for future in futures:
            future.cancel()
        client.close()


def _result(
    client: Any, address: str, job: Job[T], future: Any, limit: float | None, budget: Budget
) -> Record[T]:
    """The future's record; Unknown (timeout) once it has run `limit` seconds on a worker
    (which is then restarted), however long it waited for one before."""
    from distributed import TimeoutError as DaskTimeout

    wait = WATCH if limit is None else limit
    while True:
        try:
            record: Record[T] = future.result(timeout=wait)
            return record
        except (DaskTimeout, TimeoutError):
            if limit is None:
                # no timeout, but a cluster whose workers are all gone would hold the test
                # (and the run) for ever
                if not client.scheduler_info(n_workers=1)["workers"]:
                    _has_workers(client, address, lost=True)
                continue
            where = _running(client, address, str(future.key))
            ran = max(where.values(), default=None)
            if ran is None or ran < limit:
                # not started yet (queued behind other work), or started late: wait on
                wait = limit if ran is None else limit - ran
                continue
            _restart(client, list(where), future)
            return Record(job.path, Status.TIMEOUT, message=budget.timeout_message())
        except Exception as exc:  # the worker died, or a result did not pickle: a bug
            return Record(job.path, Status.CRASH, message=f"{type(exc).__name__}: {exc}")


def _running(client: Any, address: str, key: str) -> dict[str, float]:
    """The workers running `key`, with for how long. A worker stuck with Python's lock held
    cannot answer: then the workers the scheduler gave the task to count as running it for
    ever. A cluster whose workers are all gone (and none comes back) ends the run."""
    try:
        answers = client.run(running_for, key, on_error="ignore", callback_timeout=ASK_TIMEOUT)
    except (TimeoutError, OSError):
        return {w: float("inf") for w, keys in client.processing().items() if key in keys}
    if not answers:
        _has_workers(client, address, lost=True)
    return {w: t for w, t in answers.items() if t is not None}


# Seconds a worker has to say what it runs (`_running`).
ASK_TIMEOUT = 2.0
# Seconds between looks at whether the cluster still has workers, while a test without a
# timeout runs.
WATCH = 5.0


def _restart(client: Any, workers: list[str], future: Any) -> None:
    """Replace the workers stuck on `future`: the scheduler reruns their other tasks
    elsewhere."""
    future.cancel()
    if workers:
        client.restart_workers(workers)
