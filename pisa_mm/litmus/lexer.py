"""The litmus tokenizer: the terminals of a parser context, tried at the current position."""

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


def at_end(text: str, pos: int) -> bool:
    """Whether only blanks and complete comments follow `pos` (the END token is next)."""
    skip = _SKIP_RE.match(text, pos)
    return skip is not None and skip.end() == len(text)


# A context reads its first tokens by trying its terminals one by one (a pattern that is only
# literals by `str.startswith`, any other by a regex of its own): compiling one regex of all
# its terminals costs more than a small test's whole parse. After this many tokens it compiles
# that regex, which reads faster (a suite's parse); both read the same token (the first
# terminal in rank order that matches after the skipped blanks, as the alternation does).
_COMPILE_AFTER = 24
_META = frozenset(".^$*+?{}[]()|")


def _literals(pattern: str) -> tuple[str, ...] | None:
    """The alternatives of `pattern` if it is only literal text (`\\.reg|\\.pred`), else None."""
    alternatives = []
    current: list[str] = []
    chars = iter(pattern)
    for c in chars:
        if c == "\\":
            escaped = next(chars, "")
            if not escaped or escaped.isalnum():
                return None  # a class (`\\d`) or an anchor (`\\Z`)
            current.append(escaped)
        elif c == "|":
            alternatives.append("".join(current))
            current = []
        elif c in _META:
            return None
        else:
            current.append(c)
    alternatives.append("".join(current))
    return tuple(alternatives) if all(alternatives) else None


Token = tuple[str, int, int]  # kind, start, end
_Reader = Callable[[str, int], int]  # text, offset -> end of the terminal there, or -1


def _literal_reader(words: tuple[str, ...]) -> _Reader:
    def read(text: str, pos: int) -> int:
        for word in words:
            if text.startswith(word, pos):
                return pos + len(word)
        return -1

    return read


def _regex_reader(pattern: str) -> _Reader:
    match = re.compile(pattern).match

    def read(text: str, pos: int) -> int:
        m = match(text, pos)
        return -1 if m is None else m.end()

    return read


@functools.cache
def _reader(name: str) -> _Reader:
    """How terminal `name` is read on its own (made on first use)."""
    words = _literals(TERMINALS[name])
    return _regex_reader(TERMINALS[name]) if words is None else _literal_reader(words)


class Context:
    """The terminals one place of the grammar allows, and how one of them is read there:
    `match` gives the token, `regex` (once compiled) the match object of the same token,
    whose `lastgroup` is its kind (what `Lexer.next` reads, without `match`'s tuple)."""

    __slots__ = ("match", "names", "order", "regex", "uses")

    def __init__(self, *names: str) -> None:
        self.names = frozenset(names)
        self.order = sorted(self.names, key=_RANK.__getitem__)
        self.uses = 0
        self.match: Callable[[str, int], Token | None] = self._scan
        self.regex: Callable[[str, int], re.Match[str] | None] | None = None

    def _scan(self, text: str, pos: int) -> Token | None:
        """Skip blanks and comments, then try each terminal in rank order."""
        self.uses += 1
        if self.uses >= _COMPILE_AFTER:
            self.match = _compile(self.names)
            self.regex = _pattern(self.names)
        skip = _SKIP_RE.match(text, pos)
        start = pos if skip is None else skip.end()
        for name in self.order:
            end = _reader(name)(text, start)
            if end >= 0:
                return name, start, end
        return None

    def __or__(self, other: Context) -> Context:
        return Context(*self.names, *other.names)


@functools.cache
def _pattern(names: frozenset[str]) -> Callable[[str, int], re.Match[str] | None]:
    """The `match` of one regex that skips blanks and comments, then reads one token among
    `names` (a group per name)."""
    ordered = sorted(names, key=_RANK.__getitem__)
    alternatives = "|".join(f"(?P<{n}>{TERMINALS[n]})" for n in ordered)
    return re.compile(f"{_SKIP}(?:{alternatives})").match


@functools.cache
def _compile(names: frozenset[str]) -> Callable[[str, int], Token | None]:
    """Skip blanks and comments, then read one token among `names`, with one regex."""
    match = _pattern(names)

    def read(text: str, pos: int) -> Token | None:
        m = match(text, pos)
        if m is None:
            return None
        kind = m.lastgroup
        assert kind is not None
        start, end = m.span(kind)
        return kind, start, end

    return read


_ANY_TOKEN = Context(*(frozenset(TERMINALS) - {"END"}))  # what a stray token is


# What `Lexer.expect` raises when no token of the context is there: (the lexer, the
# terminals expected, a message for the mistake) -> the error (litmus/parse_errors.py).
ErrorFactory = Callable[["Lexer", frozenset[str], "str | None"], Exception]


class Lexer:
    """The position in the text, and the last token read (its kind, text and place)."""

    __slots__ = (
        "error", "kind", "line", "line_start", "path", "pos", "start", "text", "value",
    )  # fmt: skip

    def __init__(self, text: str, path: str, error: ErrorFactory | None = None) -> None:
        self.text = text
        self.path = path
        self.error = error
        self.pos = 0  # just after the last token read
        self.line = 1  # of the last token read (tokens never span lines)
        self.line_start = 0  # offset of that line
        self.start = 0  # offset of the last token read
        self.kind = ""
        self.value = ""

    def expect(self, ctx: Context, label: str | None = None) -> str:
        """Read a token of one of `ctx`'s kinds and return its kind; when there is none,
        raise the error of the factory given (`label`: a message for the mistake)."""
        text, pos = self.text, self.pos
        regex = ctx.regex
        if regex is None:
            token = ctx.match(text, pos)
            if token is None:
                raise self._error(ctx, label)
            kind, start, end = token
        else:
            m = regex(text, pos)
            if m is None:
                raise self._error(ctx, label)
            kind = m.lastgroup  # type: ignore[assignment]  # every alternative is a group
            start, end = m.span(kind)
        if start != pos:
            newlines = text.count("\n", pos, start)
            if newlines:
                self.line += newlines
                self.line_start = text.rfind("\n", pos, start) + 1
        self.kind = kind
        self.start = start
        self.pos = end
        self.value = text[start:end]
        return kind

    def take(self, kind: str, start: int, end: int) -> str:
        """Make `text[start:end]` the last token read, of `kind`, and return its kind: what
        `expect` does for a token a parser's fast read found (only blanks before it)."""
        text, pos = self.text, self.pos
        if start != pos:
            newlines = text.count("\n", pos, start)
            if newlines:
                self.line += newlines
                self.line_start = text.rfind("\n", pos, start) + 1
        self.kind, self.start, self.pos, self.value = kind, start, end, text[start:end]
        return kind

    def _error(self, ctx: Context, label: str | None) -> Exception:
        assert self.error is not None, "a lexer that expects is given an error factory"
        return self.error(self, ctx.names, label)

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
        token = _ANY_TOKEN.match(self.text, offset)
        return None if token is None else self.text[token[1] : token[2]]
