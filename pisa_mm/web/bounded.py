"""Running one job in a worker process with a wall-clock timeout and a memory limit."""

from __future__ import annotations

import multiprocessing
import resource
from collections.abc import Callable
from dataclasses import dataclass
from multiprocessing.connection import Connection
from typing import Any

__all__ = ["Limits", "Outcome", "preload", "run_bounded"]


def preload(modules: list[str]) -> None:
    """Import `modules` once in the fork server, so that each job starts warm."""
    multiprocessing.get_context("forkserver").set_forkserver_preload(modules)


@dataclass(frozen=True, slots=True)
class Limits:
    """Per-job bounds: seconds of wall-clock time, bytes of address space."""

    seconds: float
    memory: int


@dataclass(frozen=True, slots=True)
class Outcome:
    """The job's value, or why there is none (`timeout`, `memory`, `crash`)."""

    value: Any = None
    failure: str | None = None


def _child(job: Callable[[Any], Any], arg: Any, memory: int, conn: Connection) -> None:
    try:
        resource.setrlimit(resource.RLIMIT_AS, (memory, memory))
        conn.send(("ok", job(arg)))
    except MemoryError:
        conn.send(("memory", None))
    except Exception:  # a bug of the job: the caller says so without the traceback
        conn.send(("crash", None))
    finally:
        conn.close()


def run_bounded(job: Callable[[Any], Any], arg: Any, limits: Limits) -> Outcome:
    """`job(arg)` in a forked process; killed past `limits.seconds`.

    The one place the explorer bounds a request: the project's worker pool (pisa_mm/runner)
    can replace it without changing its callers. `job`'s value must be picklable.
    """
    # forkserver: workers fork from a clean single-threaded process (the web server has
    # threads), with the engines already imported (see `preload`)
    ctx = multiprocessing.get_context("forkserver")
    parent, child = ctx.Pipe(duplex=False)
    proc = ctx.Process(target=_child, args=(job, arg, limits.memory, child), daemon=True)
    proc.start()
    child.close()
    try:
        if not parent.poll(limits.seconds):
            return Outcome(failure="timeout")
        try:
            kind, value = parent.recv()
        except EOFError:  # the child died without answering (e.g. killed for its memory)
            return Outcome(failure="crash")
        return Outcome(value=value) if kind == "ok" else Outcome(failure=kind)
    finally:
        parent.close()
        if proc.is_alive():
            proc.kill()
        proc.join()
