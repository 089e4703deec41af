"""Source spans, diagnostics and the one exception type that may reach the user."""

from __future__ import annotations

import codecs
import os
import re
import stat
from collections.abc import Iterable

from pisa_mm.enums import Enum
from pisa_mm.records import pickled_by_fields, record

# Python refuses to convert longer decimal strings (sys.get_int_max_str_digits); no literal of
# the formats needs more than a few dozen digits, so the limit is ours and the same everywhere.
MAX_LITERAL_DIGITS = 4300
# Input files (expectations, baselines, herd sources) larger than this are refused unread.
MAX_SOURCE_BYTES = 16 * 1024 * 1024
# A litmus test larger than this is refused unread: the frontend reads ~100 kB a second of
# dense text (a test of 4,000 stores is 100 kB), and a test past this would take minutes.
MAX_TEST_BYTES = 1 << 20
# Diagnostics shorten a token of a message longer than _LONG (a generated literal, not a
# path) to about _CLIP characters, and show a source line longer than _LINE as a window.
_CLIP = 60
_LONG = 160
_LINE = 300
_LONG_WORD = re.compile(r"\S{" + str(_LONG + 1) + ",}")
# Control characters of a hostile file (or its name) would reach the terminal raw from a
# quoted source line or message: an escape sequence can clear the screen, retitle the
# window or write the clipboard. Each is shown as U+FFFD, one column, so the caret stays
# under its token. Tab and newline are the diagnostic's own.
_CONTROL = re.compile("[\x00-\x08\x0b-\x1f\x7f-\x9f]")

_ASCII_INT = re.compile(r"[-+]?(0[xX][0-9a-fA-F]+|[0-9]+)")


@pickled_by_fields  # hundreds in a cached model (cat/loader.py) and in results
@record
class Span:
    """A region of a source file; lines and columns are 1-based, end is exclusive."""

    file: str
    line: int
    col: int
    end_line: int | None = None
    end_col: int | None = None

    def __str__(self) -> str:
        return f"{self.file}:{self.line}:{self.col}"


class Severity(Enum):
    ERROR = "error"
    WARNING = "warning"
    NOTE = "note"


@record
class Diagnostic:
    """One message about the input, rendered mypy-style with the source line and a caret."""

    severity: Severity
    message: str
    span: Span | None = None
    code: str | None = None

    def render(self, source: str | None = None) -> str:
        """`FILE:LINE:COL: error: message [code]`, then the source line and a caret."""
        where = f"{self.span}: " if self.span is not None else ""
        code = f" [{self.code}]" if self.code else ""
        message = _LONG_WORD.sub(lambda m: clip(m.group(0)), self.message)
        head = _CONTROL.sub("\ufffd", f"{where}{self.severity.value}: {message}{code}")
        if self.span is None or source is None:
            return head
        lines = source.splitlines()
        if not 1 <= self.span.line <= len(lines):
            return head
        text = lines[self.span.line - 1].expandtabs(1)
        col = self.span.col
        width = 1
        if self.span.end_line == self.span.line and self.span.end_col is not None:
            width = max(1, self.span.end_col - self.span.col)
        if len(text) > _LINE:
            # a window around the caret, so that a generated megabyte line stays readable
            start = max(0, col - 1 - _LINE // 4)
            end = min(len(text), start + _LINE)
            prefix = "..." if start > 0 else ""
            text = prefix + text[start:end] + ("..." if end < len(text) else "")
            col = col - start + len(prefix)
            width = min(width, end - (self.span.col - 1))
        caret = " " * (col - 1) + "^" + "~" * (width - 1)
        return f"{head}\n{_CONTROL.sub(chr(0xFFFD), text)}\n{caret}"


def printable(text: str) -> str:
    """`text` with each control character but tab and newline shown as U+FFFD.

    For what the command writes to the terminal from files it did not make: a baseline's or
    an `.expected` file's strings, a test's file name."""
    return _CONTROL.sub("\ufffd", text)


def clip(text: str, limit: int = _CLIP) -> str:
    """`text`, or its start and end around a count of what was left out when it is long."""
    if len(text) <= limit:
        return text
    keep = limit // 2
    return f"{text[:keep]}...({len(text) - keep - 10} more)...{text[-10:]}"


def int_literal(text: str, span: Span | None, what: str = "integer") -> int:
    """An ASCII decimal or 0x-hex integer literal; too many digits is a located error.

    Python's own `int()` accepts Unicode digits (`int("٣") == 3`) and refuses more than
    4,300 decimal digits with a ValueError; every literal of our formats goes through here.
    """
    text = text.strip()
    if _ASCII_INT.fullmatch(text) is None:
        raise PisaMMError.at(
            span, f"{what} {clip(text)!r} is not a decimal or 0x-hex integer", "literal"
        )
    digits = len(text.lstrip("+-"))
    if digits > MAX_LITERAL_DIGITS:
        raise PisaMMError.at(
            span,
            f"{what} literal has {digits} digits; at most {MAX_LITERAL_DIGITS} are read",
            "limit",
        )
    return int(text, 0) if text.lstrip("+-")[:2].lower() == "0x" else int(text, 10)


class PisaMMError(Exception):
    """The root error: carries one or more diagnostics; nothing else may escape to the user."""

    def __init__(self, diagnostics: Diagnostic | Iterable[Diagnostic]) -> None:
        if isinstance(diagnostics, Diagnostic):
            diagnostics = (diagnostics,)
        self.diagnostics: tuple[Diagnostic, ...] = tuple(diagnostics)
        super().__init__("\n".join(d.render() for d in self.diagnostics))

    @classmethod
    def at(cls, span: Span | None, message: str, code: str | None = None) -> PisaMMError:
        """An error with a single diagnostic at `span`."""
        return cls(Diagnostic(Severity.ERROR, message, span, code))

    def render(self, sources: dict[str, str] | None = None) -> str:
        """Render every diagnostic, with source lines where the source text is known."""
        out = []
        for d in self.diagnostics:
            src = None
            if sources is not None and d.span is not None:
                src = sources.get(d.span.file)
            out.append(d.render(src))
        return "\n".join(out)


_KINDS = (
    (stat.S_ISDIR, "a directory"),
    (stat.S_ISFIFO, "a FIFO (named pipe)"),
    (stat.S_ISCHR, "a character device"),
    (stat.S_ISBLK, "a block device"),
    (stat.S_ISSOCK, "a socket"),
)


def _read_at_most(fd: int, size: int) -> bytes:
    """`size` bytes of `fd`, fewer at its end: plain `os.read`s (a file object around the
    descriptor cost a small test's read half its time)."""
    data = os.read(fd, size)
    while 0 < len(data) < size:
        more = os.read(fd, size - len(data))
        if not more:
            break
        data += more
    return data


def read_source(path: str, limit: int = MAX_SOURCE_BYTES) -> str:
    """Read an input file (UTF-8, a byte-order mark allowed), turning OS errors into a PisaMMError.

    Only regular files of at most `limit` bytes are read: a FIFO or a device would block or
    never end. The file is opened non-blocking and checked with fstat, so that a FIFO is
    refused without waiting for a writer, and nothing can be swapped in between.
    """
    try:
        fd = os.open(path, os.O_RDONLY | os.O_NONBLOCK)
    except OSError as exc:
        raise PisaMMError.at(None, f"cannot read {path}: {exc.strerror or exc}", "io") from exc
    try:
        info = os.fstat(fd)
        if not stat.S_ISREG(info.st_mode):
            kind = next((name for test, name in _KINDS if test(info.st_mode)), "not a file")
            raise PisaMMError.at(None, f"cannot read {path}: it is {kind}, not a file", "io")
        if info.st_size > limit:
            raise PisaMMError.at(
                None,
                f"cannot read {path}: {info.st_size} bytes; input files are limited to "
                f"{limit} bytes",
                "limit",
            )
        os.set_blocking(fd, True)
        # the size fstat gave, and one byte more to see growth: `read(limit + 1)` would
        # allocate the whole limit first, 3 times the cost of reading a small test
        data = _read_at_most(fd, min(info.st_size, limit) + 1)
        if info.st_size < len(data) <= limit:  # it grew: on to the limit
            data += _read_at_most(fd, limit + 1 - len(data))
    except OSError as exc:
        raise PisaMMError.at(None, f"cannot read {path}: {exc.strerror or exc}", "io") from exc
    finally:
        os.close(fd)
    if len(data) > limit:  # grew since fstat
        raise PisaMMError.at(
            None, f"cannot read {path}: input files are limited to {limit} bytes", "limit"
        )
    # the mark stripped here, not by "utf-8-sig": that codec's error offsets skip it
    bom = 3 if data.startswith(codecs.BOM_UTF8) else 0
    try:
        return data[bom:].decode("utf-8")
    except UnicodeDecodeError as exc:
        offset = bom + exc.start
        raise PisaMMError.at(
            _byte_span(path, data, bom, offset),
            f"cannot read {path}: not UTF-8 text (byte {offset}: 0x{data[offset]:02x})",
            "io",
        ) from exc


def _byte_span(path: str, data: bytes, bom: int, offset: int) -> Span:
    """The line and column (in characters, a byte-order mark not counted) of byte `offset`:
    the text before it is valid UTF-8, so the count is exact. No caret: a file that is not
    text is never quoted."""
    start = max(data.rfind(b"\n", 0, offset) + 1, bom)
    line = data.count(b"\n", 0, offset) + 1
    head = data[start:offset].decode("utf-8")
    return Span(path, line, len(head) + 1)
