"""Source spans, diagnostics and the one exception type that may reach the user."""

from __future__ import annotations

import enum
from collections.abc import Iterable
from dataclasses import dataclass


@dataclass(frozen=True, slots=True)
class Span:
    """A region of a source file; lines and columns are 1-based, end is exclusive."""

    file: str
    line: int
    col: int
    end_line: int | None = None
    end_col: int | None = None

    def __str__(self) -> str:
        return f"{self.file}:{self.line}:{self.col}"


class Severity(enum.Enum):
    ERROR = "error"
    WARNING = "warning"
    NOTE = "note"


@dataclass(frozen=True, slots=True)
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
        head = f"{where}{self.severity.value}: {self.message}{code}"
        if self.span is None or source is None:
            return head
        lines = source.splitlines()
        if not 1 <= self.span.line <= len(lines):
            return head
        text = lines[self.span.line - 1].expandtabs(1)
        width = 1
        if self.span.end_line == self.span.line and self.span.end_col is not None:
            width = max(1, self.span.end_col - self.span.col)
        caret = " " * (self.span.col - 1) + "^" + "~" * (width - 1)
        return f"{head}\n{text}\n{caret}"


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


def read_source(path: str) -> str:
    """Read an input file, turning OS errors into a PisaMMError."""
    try:
        with open(path, encoding="utf-8") as fh:
            return fh.read()
    except (OSError, UnicodeDecodeError) as exc:
        raise PisaMMError.at(None, f"cannot read {path}: {exc}", "io") from exc
