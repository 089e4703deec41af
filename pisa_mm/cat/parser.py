"""Parse cat model text with lark; every lark error becomes a PisaMMError with a span, and
herd constructs we do not support are named as such before lark sees them."""

from __future__ import annotations

import functools
import re
from pathlib import Path

from lark import Lark, Token
from lark.exceptions import LarkError, UnexpectedCharacters, UnexpectedEOF, UnexpectedToken

from pisa_mm.cache import lark_parser
from pisa_mm.cat.elaborate import KEYWORDS, File, Scope, elaborate, title_of
from pisa_mm.cat.syntax import CatFile
from pisa_mm.errors import PisaMMError, Span

__all__ = ["KEYWORDS", "parse", "parse_file"]

# How terminals are named in syntax errors.
_TOKEN_WORDS = {"NAME": "a name", "STRING": "a quoted string", "$END": "end of file"}
# Terminals that can start an expression: when all of them are expected, say "an expression".
_EXPR_START = {"NAME", "LPAR", "LSQB", "TILDE", "DOMAIN", "RANGE", "UNDERSCORE", "__ANON_1"}
_BINARY_OPS = {"VBAR", "SEMICOLON", "BACKSLASH", "AMPERSAND"}
_STATEMENT_START = {"LET", "INCLUDE", "ACYCLIC", "IRREFLEXIVE", "EMPTY", "FLAG", "SHOW", "UNSHOW"}
# herd's keywords for constructs we do not support, with what to say about each. herd
# reserves them, so a model cannot use them as names either.
_HERD_UNSUPPORTED = {
    "with": "herd's 'with ... from ...' (choosing a relation among candidates, as cos.cat "
    "does for co: here co is a built-in)",
    "from": "herd's 'with ... from ...'",
    "match": "herd's 'match'",
    "forall": "herd's 'forall ... do ... end'",
    "do": "herd's 'forall ... do ... end'",
    "enum": "herd's 'enum' declarations",
    "try": "herd's 'try ... with ...'",
    "if": "herd's 'if' (variants and conditionals)",
    "then": "herd's 'if ... then ... else'",
    "else": "herd's 'if ... then ... else'",
    "variant": "herd's variants",
    "when": "herd's 'let rec ... when'",
    "assert": "herd's 'assert' checks",
    "debug": "herd's 'debug'",
    "instructions": "bell-file declarations ('instructions')",
    "default": "bell-file declarations ('default')",
    "begin": "herd's 'begin ... end' grouping (use parentheses)",
    "catdep": "herd's 'catdep' option",
}
_UNSUPPORTED_OPERATORS = {
    "++": "herd's set and relation addition '++'",
    "||": "herd's '||' (match clauses, variant disjunction)",
    "&&": "herd's '&&' (variant conjunction)",
}


_FIRST_WORD = re.compile(r"\s*([A-Za-z_][A-Za-z0-9_.\-]*)")
_STATEMENT_KEYWORDS = (
    "let",
    "include",
    "acyclic",
    "irreflexive",
    "empty",
    "flag",
    "undefined_unless",
    "show",
    "unshow",
    "procedure",
    "call",
)


def parse(source: str, filename: str = "<string>") -> CatFile:
    """Parse one cat file on its own: `include`s are kept as statements, names are not
    resolved against other files (the loader does the whole model, in order)."""
    file = parse_file(source, filename)
    scope = Scope()
    elaborate(file, scope, None)
    title, _ = title_of(file)
    return CatFile(filename, title, tuple(scope.out))


def parse_file(source: str, filename: str = "<string>") -> File:
    """The lark tree of one cat file (syntax errors raised, with their spans)."""
    text = _blank_comments(source, filename)
    _refuse_unsupported(text, filename)
    _check_header(text, filename)
    try:
        tree = _lark().parse(text)
    except LarkError as exc:
        raise _syntax_error(exc, text, filename) from None
    return File(filename, text, tree)


def _check_header(text: str, filename: str) -> None:
    """A first word that is no keyword would be read as herd's header (`C RC11`): when it
    is a misspelt statement keyword (`acylic po`), say so rather than read a model without
    that statement."""
    m = _FIRST_WORD.match(text)
    if m is None or m.group(1) in KEYWORDS:
        return
    import difflib  # only for a misspelling's hint, never on a good input's path

    close = difflib.get_close_matches(m.group(1), _STATEMENT_KEYWORDS, n=1, cutoff=0.75)
    if close:
        line, col = _line_col(text, m.start(1))
        span = Span(filename, line, col, line, col + len(m.group(1)))
        message = (
            f"unexpected name '{m.group(1)}' (did you mean '{close[0]}'?); a model may begin "
            "with a title or herd's header `ARCH title`"
        )
        raise PisaMMError.at(span, message, "cat-syntax")


def _refuse_unsupported(text: str, filename: str) -> None:
    """Name the herd construct we do not support, rather than a syntax error after it."""
    for m in re.finditer(
        r'"(?:[^"\\\n]|\\.)*"|[A-Za-z_][A-Za-z0-9_.\-]*\'?|\+\+|\|\||&&|[{}]|\'', text
    ):
        word = m.group()
        what = _HERD_UNSUPPORTED.get(word) or _UNSUPPORTED_OPERATORS.get(word)
        if word in "{}":
            what = "herd's explicit sets '{...}'"
        elif word == "'":
            what = "herd's tags ('name)"
        if what is not None:
            line, col = _line_col(text, m.start())
            span = Span(filename, line, col, line, col + len(word))
            raise PisaMMError.at(span, f"{what} is not supported", "cat-unsupported")


@functools.cache
def _lark() -> Lark:
    grammar = (Path(__file__).parent / "grammar.lark").read_text(encoding="utf-8")
    # keep_all_tokens: punctuation stays in the tree so that every node's span covers its
    # brackets, and a check's source text can be cut out exactly.
    return lark_parser(  # cached: the LALR tables, rebuilt when the grammar changes (start-up)
        "cat",
        grammar,
        parser="lalr",
        keep_all_tokens=True,
        propagate_positions=True,
    )


def _blank_comments(source: str, filename: str) -> str:
    """Replace `(* ... *)` comments (which nest) and herd's line comments (`// ...`,
    `# ...`) by spaces, keeping newlines and positions."""
    out = list(source)
    depth = 0
    opened: list[int] = []
    i, n = 0, len(source)
    while i < n:
        c = source[i]
        if depth == 0 and c == '"':  # a string: skip it whole, `(*` inside is not a comment
            j = i + 1
            while j < n and source[j] not in '"\n':
                j += 2 if source[j] == "\\" else 1
            i = j + 1
            continue
        if depth == 0 and (c == "#" or source.startswith("//", i)):
            while i < n and source[i] != "\n":
                out[i] = " "
                i += 1
            continue
        if source.startswith("(*", i):
            depth += 1
            opened.append(i)
            out[i] = out[i + 1] = " "
            i += 2
            continue
        if depth > 0 and source.startswith("*)", i):
            depth -= 1
            opened.pop()
            out[i] = out[i + 1] = " "
            i += 2
            continue
        if depth > 0 and c != "\n":
            out[i] = " "
        i += 1
    if depth > 0:
        line, col = _line_col(source, opened[-1])
        span = Span(filename, line, col, line, col + 2)
        raise PisaMMError.at(span, "unterminated comment '(*'", "cat-syntax")
    return "".join(out)


def _line_col(text: str, offset: int) -> tuple[int, int]:
    line = text.count("\n", 0, offset) + 1
    return line, offset - (text.rfind("\n", 0, offset) + 1) + 1


def _describe_terminal(name: str) -> str:
    if name in _TOKEN_WORDS:
        return _TOKEN_WORDS[name]
    pattern = _lark().get_terminal(name).pattern
    return f"'{pattern.value}'" if pattern.type == "str" else name.lower()


def _describe_token(token: Token) -> str:
    if token.type == "$END":
        return "end of file"
    if token.type == "NAME":
        return f"name '{token}'"
    if token.type == "STRING":
        return f"string {token}"
    return f"'{token}'"


def _expected(names: set[str]) -> str:
    names = {n for n in names if n != "$END"} or names
    if names >= _EXPR_START or {"NAME", "LPAR", "LSQB"} <= names:
        return "an expression"
    parts = []
    if names & _BINARY_OPS:
        parts.append("an operator")
    parts += [_describe_terminal(t) for t in ("RPAR", "RSQB") if t in names]
    if names >= _STATEMENT_START:
        parts.append("a new statement" if parts else "a statement")
    if parts:
        return " or ".join(parts)
    words = sorted({_describe_terminal(n) for n in names})
    return " or ".join(words) if len(words) <= 2 else ", ".join(words)


def _syntax_error(exc: LarkError, text: str, filename: str) -> PisaMMError:
    if isinstance(exc, UnexpectedCharacters):
        span = Span(filename, exc.line, exc.column, exc.line, exc.column + 1)
        pos = exc.pos_in_stream or 0
        char = text[pos] if pos < len(text) else "?"
        return PisaMMError.at(span, f"unexpected character '{char}'", "cat-syntax")
    if isinstance(exc, UnexpectedToken | UnexpectedEOF):
        token = exc.token
        if token.type == "$END" or not isinstance(token.line, int):
            stripped = text.rstrip()
            line, col = _line_col(text, len(stripped))
            span = Span(filename, line, col, line, col + 1)
            found = "end of file"
        else:
            span = Span(filename, token.line, token.column or 1, token.end_line, token.end_column)
            found = _describe_token(token)
        names = set(exc.expected)
        if isinstance(exc, UnexpectedToken) and exc.interactive_parser is not None:
            # LALR merges states, so `expected` over-approximates; ask the parser itself.
            accepted: set[str] = exc.interactive_parser.accepts()  # type: ignore[no-untyped-call]
            names = accepted or names
        expected = _expected(names) if names else ""
        tail = f", expected {expected}" if expected else ""
        return PisaMMError.at(span, f"unexpected {found}{tail}", "cat-syntax")
    return PisaMMError.at(Span(filename, 1, 1), f"cannot parse: {exc}", "cat-syntax")
