"""The Dask backend: the same jobs and records, run on an existing distributed cluster.

Each job is one Dask task calling `run_job`; the futures are gathered in order, so the
output is that of a local run. A Dask worker runs tasks in threads, where neither signals
nor RLIMIT_AS apply: the budget is enforced by the deadline timer (it interrupts Z3 and
raises in the task's thread) and Z3's memory limit; a task still running `GRACE` seconds
past its timeout (stuck in other native code) has its worker restarted by the scheduler.
"""

from __future__ import annotations

import re
import socket
from collections.abc import Iterator, Sequence
from typing import Any, TypeVar

from pisa_mm.errors import PisaMMError
from pisa_mm.runner.budget import Budget
from pisa_mm.runner.job import Job, Record, Status, run_job

__all__ = ["CONNECT_TIMEOUT", "execute_on_dask"]

T = TypeVar("T")

# Seconds to reach the scheduler before the run fails (the cluster must already be up).
CONNECT_TIMEOUT = 5


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
        raise PisaMMError.at(
            None, f"cannot reach the Dask scheduler at {address}: {exc.strerror or exc}", "io"
        ) from None


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
    try:
        return Client(address, timeout=CONNECT_TIMEOUT, set_as_default=False)  # type: ignore[no-untyped-call]
    except (OSError, TimeoutError, ValueError) as exc:
        raise PisaMMError.at(
            None, f"cannot reach the Dask scheduler at {address}: {exc}", "io"
        ) from None


def execute_on_dask(jobs: Sequence[Job[T]], address: str, budget: Budget) -> Iterator[Record[T]]:
    from distributed import TimeoutError as DaskTimeout

    from pisa_mm.runner.pool import GRACE

    client = _client(address)
    futures: list[Any] = []
    try:
        futures = [client.submit(run_job, job, budget, pure=False) for job in jobs]
        wait = None if budget.timeout is None else budget.timeout + GRACE
        for job, future in zip(jobs, futures, strict=True):
            try:
                record: Record[T] = future.result(timeout=wait)
            except (DaskTimeout, TimeoutError):
                _restart_worker_of(client, future)
                record = Record(job.path, Status.TIMEOUT, message=budget.timeout_message())
            except Exception as exc:  # the worker died, or a result did not pickle: a bug
                record = Record(job.path, Status.CRASH, message=f"{type(exc).__name__}: {exc}")
            yield record
    finally:
        for future in futures:
            future.cancel()
        client.close()


def _restart_worker_of(client: Any, future: Any) -> None:
    """Replace the worker stuck on `future`: the scheduler reruns its other tasks elsewhere."""
    processing = client.processing()
    stuck = [w for w, keys in processing.items() if future.key in keys]
    future.cancel()
    if stuck:
        client.restart_workers(stuck)
