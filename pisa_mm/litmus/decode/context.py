"""What decoding shares: the failure helper, the test context and register records."""

from __future__ import annotations

from pisa_mm.errors import Diagnostic, PisaMMError, Severity, Span
from pisa_mm.hints import NoReturn
from pisa_mm.litmus import syntax as S
from pisa_mm.litmus.program import VarDecl
from pisa_mm.records import field, record

SWIZZLE = {"x": 0, "y": 1, "z": 2, "w": 3}


def fail(span: Span | None, message: str, code: str) -> NoReturn:
    raise PisaMMError.at(span, message, code)


@record
class Use:
    """A register mention: `width` None means "an address register, 32 or 64 bits"."""

    name: str
    elem: int | None
    pred: bool
    width: int | None
    vec: int  # > 1: the whole vector register
    write: bool
    span: Span


@record(frozen=False, slots=False)
class RegInfo:
    pred: bool
    width: int
    vec: int
    declared: bool
    span: Span


@record(frozen=False, slots=False)
class Ctx:
    """What every thread's decoding needs to know about the test."""

    path: str
    source: str
    strict: bool
    variables: dict[str, VarDecl]
    warnings: list[str]
    # float literals of variable initialisers: (variable, element, literal), converted once
    # the variables' float types are known (after every thread is decoded)
    float_inits: list[tuple[str, int, S.RawFloat]] = field(default_factory=list)
    declared_registers: int = 0  # register names the threads' `.reg` and `.pred` declare

    def warn(self, span: Span, message: str, code: str) -> None:
        if self.strict:
            fail(span, message + " (an error with --strict)", code)
        diag = Diagnostic(Severity.WARNING, message, span, code)
        self.warnings.append(diag.render(self.source))
