"""The litmus tokenizer: one compiled regex per parser context, tried at the current position."""

from __future__ import annotations

import functools
import re

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
    "LPAR": r"\(",
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


@functools.cache
def context(names: frozenset[str]) -> re.Pattern[str]:
    """The regex that skips blanks and reads one token among `names` (a group per name)."""
    ordered = sorted(names, key=_RANK.__getitem__)
    alternatives = "|".join(f"(?P<{n}>{TERMINALS[n]})" for n in ordered)
    return re.compile(f"{_SKIP}(?:{alternatives})")


_ANY_TOKEN = context(frozenset(TERMINALS) - {"END"})


class Lexer:
    """The position in the text, and the last token read (its kind, text and place)."""

    __slots__ = (
        "col",
        "end_col",
        "kind",
        "line",
        "line_start",
        "path",
        "pos",
        "start",
        "text",
        "value",
    )

    def __init__(self, text: str, path: str) -> None:
        self.text = text
        self.path = path
        self.pos = 0  # just after the last token read
        self.line = 1  # of the last token read (tokens never span lines)
        self.line_start = 0  # offset of that line
        self.start = 0  # offset of the last token read
        self.col = 1
        self.end_col = 1
        self.kind = ""
        self.value = ""

    def next(self, names: frozenset[str]) -> str | None:
        """Read a token of one of the kinds `names`; its kind, or None (nothing consumed)."""
        m = context(names).match(self.text, self.pos)
        if m is None:
            return None
        kind = m.lastgroup
        assert kind is not None
        start = m.start(kind)
        if start != self.pos:
            newlines = self.text.count("\n", self.pos, start)
            if newlines:
                self.line += newlines
                self.line_start = self.text.rfind("\n", self.pos, start) + 1
        end = m.end()
        self.kind = kind
        self.start = start
        self.pos = end
        self.value = self.text[start:end]
        self.col = start - self.line_start + 1
        self.end_col = end - self.line_start + 1
        return kind

    def span(self) -> Span:
        """The last token's span."""
        return Span(self.path, self.line, self.col, self.line, self.end_col)

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
