"""The litmus tokenizer: one compiled regex per parser context, tried at the current position."""

from __future__ import annotations

import functools
import re
from collections.abc import Callable

from pisa_mm.errors import Span

# The terminals of the format (docs/litmus-format.md). Instruction mnemonics are one OPCODE
# token (`ld.global.acquire.gpu.32b`): litmus/decode/ decodes the qualifiers against the PISA
# tables, so that a bad qualifier gets a precise message instead of a syntax error.
TERMINALS: dict[str, str] = {
    "FLOAT": r"-?(?:[0-9]+\.[0-9]*(?:[eE][-+]?[0-9]+)?|\.[0-9]+(?:[eE][-+]?[0-9]+)?"
    r"|[0-9]+[eE][-+]?[0-9]+)",
    "OPCODE": r"[A-Za-z_$][A-Za-z0-9_$]*(?:\.[A-Za-z0-9_$]+)*",
    "REG_RANGE": r"%[A-Za-z_$.][A-Za-z0-9_$.]*<[0-9]+~[0-9]+>",
    "META": r"[A-Za-z_][A-Za-z0-9_\-.]*[ \t]*=[^\n]*",
    "INT": r"-?(?:0[xX][0-9a-fA-F]+|[0-9]+)",
    "REG": r"%[A-Za-z_$.][A-Za-z0-9_$.]*",
    "VAR": r"@[A-Za-z_$.][A-Za-z0-9_$.]*",
    "TYPE": r"(?:\.v[0-9]+)?\.[0-9]+b",
    "TESTNAME": r"[A-Za-z0-9_.+\-]+",
    "GPU_PREFIX": r"gpu[0-9]+",
    "STRING": r'"[^"\n]*"',
    "TID": r"P?[0-9]+",
    "WG_PREFIX": r"wg[0-9]+",
    "LOCATIONS": r"locations",
    "SPACE": r"\.private|\.global|\.shared|\.const",
    "QUANT": r"~exists|exists|forall",
    "FILTER": r"filter",
    "FALSE": r"false",
    "PRED": r"\.pred",
    "HOST": r"host",
    "PISA": r"PISA",
    "TRUE": r"true",
    "DOTREG": r"\.reg",
    "PLACE_KIND": r"gpu|sg|wg",
    "AND": r"/\\|&&",
    "OR": r"\\/|\|\|",
    "CMP": r"==|!=|=",
    "IMPLIES": r"->",
    "NOT": r"~|!",
    "AT": r"@",
    "BANG": r"!",
    "COLON": r":",
    "COMMA": r",",
    "EQUAL": r"=",
    "LBRACE": r"\{",
    "LPAR": r"\((?!\*)",  # `(*` opens a comment, even an unterminated one
    "LSQB": r"\[",
    "MINUS": r"-",
    "PLUS": r"\+",
    "RBRACE": r"\}",
    "RPAR": r"\)",
    "RSQB": r"\]",
    "SEMICOLON": r";",
    "END": r"\Z",
}
# Where two terminals of one context both match, the earlier in TERMINALS wins (unbounded
# patterns first, then the longer keyword): `1.5` is a FLOAT, not INT `1` and then `.5`.
_RANK = {name: i for i, name in enumerate(TERMINALS)}

# Blanks and comments, taken whole before every token (atomic: a comment is never re-read as
# `(` and `*`). An unterminated `(*` stays in front of the position and is reported as such.
_SKIP = r"(?>(?:[ \t\f\r\n]+|//[^\n]*|\(\*[\s\S]*?\*\))*)"
_SKIP_RE = re.compile(_SKIP)


class Context:
    """The terminals one place of the grammar allows, and the regex that reads one of them
    (compiled on first use: a process that parses one small test compiles what it uses)."""

    __slots__ = ("match", "names")

    def __init__(self, *names: str) -> None:
        self.names = frozenset(names)
        self.match: Callable[[str, int], re.Match[str] | None] = self._first_match

    def _first_match(self, text: str, pos: int) -> re.Match[str] | None:
        self.match = _compile(self.names).match
        return self.match(text, pos)

    def __or__(self, other: Context) -> Context:
        return Context(*self.names, *other.names)


@functools.cache
def _compile(names: frozenset[str]) -> re.Pattern[str]:
    """Skip blanks and comments, then read one token among `names` (a group per name)."""
    ordered = sorted(names, key=_RANK.__getitem__)
    alternatives = "|".join(f"(?P<{n}>{TERMINALS[n]})" for n in ordered)
    return re.compile(f"{_SKIP}(?:{alternatives})")


_ANY_TOKEN = Context(*(frozenset(TERMINALS) - {"END"}))  # what a stray token is


class Lexer:
    """The position in the text, and the last token read (its kind, text and place)."""

    __slots__ = ("kind", "line", "line_start", "path", "pos", "start", "text", "value")

    def __init__(self, text: str, path: str) -> None:
        self.text = text
        self.path = path
        self.pos = 0  # just after the last token read
        self.line = 1  # of the last token read (tokens never span lines)
        self.line_start = 0  # offset of that line
        self.start = 0  # offset of the last token read
        self.kind = ""
        self.value = ""

    def next(self, ctx: Context) -> str | None:
        """Read a token of one of `ctx`'s kinds; its kind, or None (nothing consumed)."""
        m = ctx.match(self.text, self.pos)
        if m is None:
            return None
        kind = m.lastgroup
        assert kind is not None
        start, end = m.span(kind)
        pos = self.pos
        if start != pos:
            newlines = self.text.count("\n", pos, start)
            if newlines:
                self.line += newlines
                self.line_start = self.text.rfind("\n", pos, start) + 1
        self.kind = kind
        self.start = start
        self.pos = end
        self.value = m.group(kind)
        return kind

    @property
    def col(self) -> int:
        """The last token's column."""
        return self.start - self.line_start + 1

    @property
    def end_col(self) -> int:
        """The column just after the last token."""
        return self.pos - self.line_start + 1

    def span(self) -> Span:
        """The last token's span."""
        line_start = self.line_start
        return Span(
            self.path, self.line, self.start - line_start + 1, self.line, self.pos - line_start + 1
        )

    def here(self) -> tuple[int, int, int]:
        """(offset, line, col) of the next token: past blanks and complete comments."""
        m = _SKIP_RE.match(self.text, self.pos)
        offset = m.end() if m else self.pos
        line = self.line + self.text.count("\n", self.pos, offset)
        line_start = self.text.rfind("\n", 0, offset) + 1
        return offset, line, offset - line_start + 1

    def stray(self, offset: int) -> str | None:
        """The text of whatever token the format could read at `offset`, else None."""
        m = _ANY_TOKEN.match(self.text, offset)
        return m.group(m.lastgroup) if m is not None and m.lastgroup is not None else None
