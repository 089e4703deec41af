"""The `pisa-mm` console script: Ctrl-C and SIGTERM stop it cleanly from its first moment."""

from __future__ import annotations

import os
import signal
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
    for signum in (signal.SIGINT, signal.SIGTERM):
        signal.signal(signum, _stop)
    from pisa_mm.cli import main as cli_main

    return cli_main()
