"""The command's two streams: results on stdout, diagnostics on stderr, and on a terminal a
one-line progress tally on stderr that is cleared before anything else is written, so that
it never swallows, reorders or interleaves with the result blocks."""

from __future__ import annotations

import os
import sys

from pisa_mm.errors import printable
from pisa_mm.hints import TextIO

__all__ = ["Console", "StdoutClosed", "silence_stdout"]

# The status line is shown for runs of more than this many tests.
PROGRESS_MIN = 4


class StdoutClosed(Exception):
    """The reader of stdout went away (`pisa-mm run DIR | head -1`): stop quietly."""


class Console:
    def __init__(self, total: int | None = 0, label: str = "") -> None:
        """`total` None: a run of unknown length (the progress line counts, without a total)."""
        self.out_stream: TextIO = sys.stdout
        self.err_stream: TextIO = sys.stderr
        self.live = (total is None or total >= PROGRESS_MIN) and _isatty(self.err_stream)
        self.total = total
        self.label = label
        self.shown = False

    def out(self, text: str) -> None:
        """Write result text to stdout (a newline is not added), control characters shown
        as U+FFFD (a test's path is a stranger's name)."""
        self._clear()
        try:
            self.out_stream.write(printable(text))
            self.out_stream.flush()
        except BrokenPipeError:
            silence_stdout()
            raise StdoutClosed from None

    def err(self, text: str) -> None:
        """Write one diagnostic (a newline is added) to stderr.

        Its control characters are shown as U+FFFD: the lines that compare with a baseline
        or an `.expected` file quote their strings, and a test's path is a stranger's name."""
        self._clear()
        self.err_stream.write(printable(text) + "\n")
        self.err_stream.flush()

    def progress(self, done: int, tally: str, current: str) -> None:
        """Show `done`/total, the tally so far and the test being waited for."""
        if not self.live:
            return
        import shutil  # only on a terminal: it imports the compression modules

        width = shutil.get_terminal_size((80, 24)).columns - 1
        count = f"{done}" if self.total is None else f"{done}/{self.total}"
        line = f"{self.label} {count} {tally} {current}"
        self._clear()
        self.err_stream.write(printable(line[:width]))
        self.err_stream.flush()
        self.shown = True

    def close(self) -> None:
        self._clear()

    def _clear(self) -> None:
        if self.shown:
            self.err_stream.write("\r\x1b[K")
            self.err_stream.flush()
            self.shown = False


def _isatty(stream: TextIO) -> bool:
    try:
        return stream.isatty()
    except (AttributeError, ValueError):
        return False


def silence_stdout() -> None:
    """Point stdout at /dev/null so that the interpreter's last flush does not complain."""
    try:
        devnull = os.open(os.devnull, os.O_WRONLY)
        os.dup2(devnull, sys.stdout.fileno())
        os.close(devnull)
    except (OSError, ValueError):
        pass
