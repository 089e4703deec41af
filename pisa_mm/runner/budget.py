"""The per-test budget (wall-clock seconds, memory) and the worker count, as the CLI reads them."""

from __future__ import annotations

import argparse
import math
import os
import re

from pisa_mm.records import record

__all__ = [
    "DEFAULT_TIMEOUT",
    "MAX_SECONDS",
    "Budget",
    "default_jobs",
    "default_memory",
    "parse_jobs",
    "parse_memory",
    "parse_seconds",
    "parse_timeout",
    "total_memory",
]

# The per-test timeout when the command line names none: a bounded unroll of nested spin
# loops or a huge candidate space can take hours, and a test suite in CI must not hang on
# one test. Generous for a litmus test (the 74,000-state test takes 9-17 s here), and short
# enough that a runaway test ends inside a minute.
DEFAULT_TIMEOUT = 50.0
# Past thirty days a timeout is a typo, not a budget.
MAX_SECONDS = 30 * 24 * 3600.0
# A per-test memory budget below this cannot hold a parse and a solver.
MIN_MEMORY = 64 << 20
# The default per-worker memory budget is at most this (and at most half the machine shared
# among the workers): a runaway test stops long before the machine swaps. 1.5 GiB, not 2:
# the limit is on address space beyond what the process holds, and with Z3 loaded a worker
# starts with some 200 MB resident, so a 2 GiB budget let a spin lock's smt encoding at
# unroll 16 reach 2.05 GB resident; the 74,000-state test peaks at 230 MB.
DEFAULT_MEMORY_CAP = 3 << 29

_UNITS = {"": 1, "k": 1 << 10, "m": 1 << 20, "g": 1 << 30, "t": 1 << 40}


@record
class Budget:
    """What one test may use: `timeout` seconds of wall-clock time for all its work (parse,
    build, encode, solve, enumerate) and `max_memory` bytes of address space beyond what the
    process held when the test started. None: no limit.

    `implicit`: the timeout is DEFAULT_TIMEOUT, not one the user asked for. It is enforced
    by the deadline in the test's own process (which stops Python code and Z3), so tests
    still run in this process or several to a worker task; a timeout the user gave is
    `hard`: each test runs alone in a worker that is killed should it hang in other native
    code.

    `sized_here`: `max_memory` is the default, sized for the machine that made the budget; a
    Dask worker sizes it for its own machine instead (`dask.worker_budget`)."""

    timeout: float | None = None
    max_memory: int | None = None
    implicit: bool = False
    sized_here: bool = False

    @property
    def hard(self) -> bool:
        return self.timeout is not None and not self.implicit

    def timeout_message(self) -> str:
        """What a test past the timeout is reported with: `timeout: over S s`, and how to
        change the budget when it was the default one."""
        message = f"timeout: over {self.timeout or 0:g} s"
        if self.implicit:
            message += ", the default limit; --timeout S or --timeout none changes it"
        return message


def parse_seconds(text: str) -> float:
    """An argparse type: a positive, finite number of seconds, at most thirty days."""
    try:
        value = float(text)
    except ValueError:
        raise argparse.ArgumentTypeError(f"not a number of seconds: {text!r}") from None
    if not math.isfinite(value) or value <= 0 or value > MAX_SECONDS:
        raise argparse.ArgumentTypeError(
            f"must be a number of seconds above 0 and at most {MAX_SECONDS:.0f}, not {text!r}"
        )
    return value


def parse_timeout(text: str) -> float | None:
    """An argparse type for --timeout: `parse_seconds`, or `none` (no limit) giving None."""
    if text.strip().lower() == "none":
        return None
    try:
        return parse_seconds(text)
    except argparse.ArgumentTypeError as exc:
        raise argparse.ArgumentTypeError(f"{exc} ('none' for no limit)") from None


def parse_memory(text: str) -> int:
    """An argparse type: SIZE with a unit K, M, G or T (powers of 1024, an optional `B` or
    `iB`), e.g. `2G` or `512MiB`, in bytes; `none` (no limit) gives 0."""
    if text.strip().lower() == "none":
        return 0
    match = re.fullmatch(r"\s*(\d+(?:\.\d+)?)\s*([kmgt]?)(?:i?b)?\s*", text, re.I)
    if match is None:
        raise argparse.ArgumentTypeError(
            f"not a memory size: {text!r} (write e.g. 512M, 2G or none)"
        )
    number = float(match.group(1))
    value = number * _UNITS[match.group(2).lower()]
    if not math.isfinite(value) or value < MIN_MEMORY or value > max(total_memory(), MIN_MEMORY):
        raise argparse.ArgumentTypeError(
            f"must be at least 64M and at most the machine's memory "
            f"({total_memory() >> 20}M), not {text!r}"
        )
    return int(value)


def parse_jobs(text: str) -> int:
    """An argparse type: a number of worker processes, at least 1."""
    try:
        value = int(text)
    except ValueError:
        raise argparse.ArgumentTypeError(f"not a whole number: {text!r}") from None
    if value < 1 or value > 4096:
        raise argparse.ArgumentTypeError(f"must be between 1 and 4096, not {text!r}")
    return value


def default_jobs() -> int:
    """The cores this process may run on."""
    try:
        return max(1, len(os.sched_getaffinity(0)))
    except AttributeError:  # not Linux
        return max(1, os.cpu_count() or 1)


def total_memory() -> int:
    """The machine's physical memory in bytes (4 GiB when the system does not say)."""
    try:
        return os.sysconf("SC_PAGE_SIZE") * os.sysconf("SC_PHYS_PAGES")
    except (ValueError, OSError, AttributeError):
        return 4 << 30


def default_memory(workers: int) -> int:
    """Half the machine's memory shared among `workers`, at most 1.5 GiB each."""
    return max(MIN_MEMORY, min(DEFAULT_MEMORY_CAP, total_memory() // (2 * max(1, workers))))
