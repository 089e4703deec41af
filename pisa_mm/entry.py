"""The `pisa-mm` console script: Ctrl-C and SIGTERM stop it cleanly from its first moment."""

from __future__ import annotations

# `_signal`, not `signal`: its Python module imports `enum` (with `functools`), ~20 ms of
# start-up on a loaded machine during which a signal still had Python's default action
import _signal  # type: ignore[import-not-found]  # (no stubs: the C half of `signal`)
import gc
import os
from types import FrameType

__all__ = ["main"]


def _stop(signum: int, frame: FrameType | None) -> None:
    """Before the command's own handlers (while the CLI is imported, or as it exits): no
    file is being written then, so stop at once. Python's default would print a
    KeyboardInterrupt traceback for SIGINT and die silently on SIGTERM; a background job
    (`pisa-mm ... &` in a script) inherits SIGINT ignored, and would run on."""
    os.write(2, b"pisa-mm: interrupted\n")
    os._exit(128 + signum)


def main() -> int:
    for signum in (_signal.SIGINT, _signal.SIGTERM):
        _signal.signal(signum, _stop)
    from pisa_mm.cli import main as cli_main

    code = cli_main()
    # The interpreter's finalisation then collects garbage twice over everything the run made
    # (the model, the tests, the results): 10 M instructions, 3% of a one-test run, to free
    # memory the process is about to give back. Frozen, that is skipped; the atexit handlers,
    # the flush of stdout and stderr, and everything freed by reference counting happen as
    # before (Python never promised to run the finalisers of objects alive at exit).
    gc.disable()
    gc.freeze()
    return code
