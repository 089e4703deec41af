"""The exit codes of every command, and how a multi-test run combines them."""

from __future__ import annotations

from collections.abc import Iterable

from pisa_mm.enums import IntEnum

__all__ = ["Exit", "worst"]


class Exit(IntEnum):
    """docs/cli.md "Exit codes". The signal codes are 128 + the signal's number."""

    OK = 0
    NEGATIVE = 1  # a negative answer: mismatch, disagreement, refusal, forbidden, unreachable
    BAD_INPUT = 2  # bad input or usage, I/O errors
    INTERNAL = 3  # a bug in pisa-mm
    UNKNOWN = 4  # a budget ran out (and nothing worse happened)
    CUT = 5  # query/trace: only executions cut by the unroll bound reach the outcome
    NO_SPIN_LOOP = 6  # query --liveness: the test has no spin loop
    STDOUT_CLOSED = 141  # 128 + SIGPIPE: the reader of stdout went away
    SIGINT = 130
    SIGTERM = 143


# Which code wins in a run of many tests: the most serious problem.
_PRECEDENCE = (Exit.INTERNAL, Exit.BAD_INPUT, Exit.NEGATIVE, Exit.UNKNOWN, Exit.OK)


def worst(codes: Iterable[Exit]) -> Exit:
    seen = set(codes)
    return next((c for c in _PRECEDENCE if c in seen), Exit.OK)
