"""Syntax errors of the litmus parser: what was expected, and newcomers' common mistakes."""

from __future__ import annotations

import re

from pisa_mm.errors import PisaMMError, Span
from pisa_mm.litmus.lexer import Lexer

# What to call a terminal in a message.
_NAMES = {
    "OPCODE": "an instruction",
    "REG": "a register",
    "REG_RANGE": "a register",
    "VAR": "a variable (@name)",
    "INT": "an integer",
    "FLOAT": "a number",
    "TID": "a thread (Pn)",
    "TESTNAME": "a test name",
    "STRING": "a description string",
    "META": "a 'key = value' line",
    "SPACE": "an address space (.global, .shared, .const)",
    "TYPE": "a type such as .32b",
    "PLACE_KIND": "a placement (sg K, wg K, gpu K or host)",
    "WG_PREFIX": "a work-group prefix (wgK:)",
    "GPU_PREFIX": "a device prefix (gpuK:)",
    "QUANT": "exists, ~exists or forall",
    "OR": "'\\/'",
    "AND": "'/\\'",
    "NOT": "'~'",
    "CMP": "'=='",
    "MINUS": "'-'",
    "END": "end of file",
    "DOTREG": "'.reg'",
    "PRED": "'.pred'",
    "IMPLIES": "'->'",
    "PISA": "'PISA'",
    "LOCATIONS": "'locations'",
    "FILTER": "'filter'",
    "TRUE": "'true'",
    "FALSE": "'false'",
    "HOST": "'host'",
    "AT": "'@'",
    "BANG": "'!'",
    "COLON": "':'",
    "COMMA": "','",
    "EQUAL": "'='",
    "LBRACE": "'{'",
    "LPAR": "'('",
    "LSQB": "'['",
    "PLUS": "'+'",
    "RBRACE": "'}'",
    "RPAR": "')'",
    "RSQB": "']'",
    "SEMICOLON": "';'",
}
_OPERAND_STARTS = {"REG", "VAR", "INT", "FLOAT", "LSQB", "BANG"}
_OBSERVABLE_STARTS = {"TID", "VAR", "WG_PREFIX", "GPU_PREFIX"}

# Messages for the places where newcomers' mistakes end up (the parser passes one as `label`).
MISSING_SEMI_INSTR = "missing ';' at the end of the instruction"
MISSING_SEMI_DECL = "missing ';' at the end of the declaration"
NO_PLACEMENT = "a thread needs a placement: write 'Pn @ wg K { ... }' (or '@ host')"
NO_CONDITION = "expected a final condition: exists (...), ~exists (...) or forall (...)"


def expected_text(expected: frozenset[str]) -> str:
    """`expected`'s terminals as "a, b or c" (operand kinds as "an operand")."""
    names = set(expected)
    parts: list[str] = []
    if len(names & _OPERAND_STARTS) >= 3:
        parts.append("an operand")
        names -= _OPERAND_STARTS | {"OPCODE"}
    observable = names >= _OBSERVABLE_STARTS
    if observable:
        names -= _OBSERVABLE_STARTS
    parts.extend(sorted({_NAMES.get(n, n.lower()) for n in names}))
    if observable:
        parts.append("an observable (Pn:%r, @x, wgK:@x)")
    if not parts:
        return ""
    if len(parts) > 6:
        parts = [*parts[:6], "..."]
    if len(parts) == 1:
        return parts[0]
    return ", ".join(parts[:-1]) + " or " + parts[-1]


def syntax_error(lx: Lexer, expected: frozenset[str], label: str | None = None) -> PisaMMError:
    """The error for the text after the last token read, where one of `expected` was due."""
    text, path = lx.text, lx.path
    offset, line, col = lx.here()
    at_end = offset >= len(text)
    # at the end, herd users' mistakes are looked for on the last token's line
    newcomer = _newcomer_error(lx.line if at_end and lx.kind else line, text, path)
    if newcomer is not None:
        return newcomer
    if text.startswith("(*", offset):
        return PisaMMError.at(
            Span(path, line, col), "unterminated comment: '(*' without '*)'", "syntax"
        )
    after_last = Span(path, lx.line, lx.end_col)
    what = expected_text(expected)
    if at_end:
        if "SEMICOLON" in expected:
            return PisaMMError.at(after_last, "missing ';' before end of file", "syntax")
        msg = "unexpected end of file" + (f", expected {what}" if what else "")
        return PisaMMError.at(_end_span(text, path), msg, "syntax")
    stray = lx.stray(offset)
    if stray is None:
        msg = f"unexpected character {text[offset]!r}" + (f", expected {what}" if what else "")
        return PisaMMError.at(Span(path, line, col), msg, "syntax")
    shown = f"'{stray[:27]}...'" if len(stray) > 30 else f"'{stray}'"
    if "SEMICOLON" in expected and lx.kind and lx.line < line:
        return PisaMMError.at(after_last, f"missing ';' before {shown}", "syntax")
    span = Span(path, line, col, line, col + len(stray))
    if label is not None:
        return PisaMMError.at(span, label, "syntax")
    msg = f"unexpected {shown}" + (f", expected {what}" if what else "")
    return PisaMMError.at(span, msg, "syntax")


def _end_span(text: str, path: str) -> Span:
    lines = text.splitlines() or [""]
    while len(lines) > 1 and not lines[-1].strip():
        lines.pop()
    return Span(path, len(lines), len(lines[-1]) + 1)


def _previous_end(text: str, pos: int, path: str) -> Span:
    """The position just after the last non-blank character before `pos`."""
    i = pos
    while i > 0 and text[i - 1].isspace():
        i -= 1
    line = text.count("\n", 0, i) + 1
    col = i - (text.rfind("\n", 0, i) + 1) + 1
    return Span(path, line, col)


# ---------------------------------------------------------------- newcomers' mistakes
# Recognised from the text around the error, since the parser's position alone blames the
# wrong line (a missing `}` makes the next `P1 @` or `exists` look like an instruction).

_SKIPPED = re.compile(r'//[^\n]*|\(\*.*?\*\)|"[^"\n]*"', re.S)
_SECTION_START = re.compile(r"\s*(P\d+\s*@|~?exists\b|forall\b|locations\b|filter\b)")
_THREAD_HEADER = re.compile(r"\s*(P\d+)\s*@")
_REG_INIT = re.compile(r"\s*P?\d+\s*:\s*%")
_FIRST_WORD = re.compile(r"\s*(~?[A-Za-z_]+)")
_KEYWORDS = ("exists", "~exists", "forall", "locations")


def _open_braces(text: str, end: int) -> list[int]:
    """Line numbers of the `{` still open at offset `end` (comments and strings skipped).
    One pass, the line counted on the way (counting from the start at each `{` made an
    error after 64,000 threads take 9 s)."""
    stack: list[int] = []
    pos, line = 0, 1
    for m in _SKIPPED.finditer(text, 0, end):
        line = _count_braces(text, pos, m.start(), stack, line)
        line += text.count("\n", m.start(), m.end())
        pos = m.end()
    _count_braces(text, pos, end, stack, line)
    return stack


_BRACE_OR_NEWLINE = re.compile(r"[{}\n]")


def _count_braces(text: str, start: int, end: int, stack: list[int], line: int) -> int:
    """Push the line of each `{` and pop at each `}` of text[start:end], which begins on
    `line`; the line it ends on."""
    for m in _BRACE_OR_NEWLINE.finditer(text, start, end):
        ch = m.group()
        if ch == "\n":
            line += 1
        elif ch == "{":
            stack.append(line)
        elif stack:
            stack.pop()
    return line


def _newcomer_error(line: int, text: str, path: str) -> PisaMMError | None:
    lines = text.split("\n")
    if not 1 <= line <= len(lines):
        return None
    here = lines[line - 1]
    start = sum(len(s) + 1 for s in lines[: line - 1])
    open_lines = _open_braces(text, start)
    if open_lines and _SECTION_START.match(here):
        opened = open_lines[-1]
        header = _THREAD_HEADER.match(lines[opened - 1])
        what = f"thread {header.group(1)}" if header else "the init block"
        return PisaMMError.at(
            _previous_end(text, start, path),
            f"missing '}}' at the end of {what} (opened on line {opened}) before "
            f"'{here.strip()[:30]}'",
            "syntax",
        )
    if open_lines:
        return None
    word = _FIRST_WORD.match(here)
    col = len(here) - len(here.lstrip()) + 1
    if _REG_INIT.match(here):
        return PisaMMError.at(
            Span(path, line, col, line, len(here.rstrip()) + 1),
            "register initialisations go in the init block { ... } at the top, before the threads",
            "syntax",
        )
    if word is not None and word.group(1) not in _KEYWORDS:
        import difflib  # only for a misspelling's hint, never on a good input's path

        close = difflib.get_close_matches(word.group(1), _KEYWORDS, n=1, cutoff=0.7)
        if close:
            return PisaMMError.at(
                Span(path, line, col, line, col + len(word.group(1))),
                f"unknown keyword '{word.group(1)}'; did you mean '{close[0]}'? The final "
                "condition is exists (...), ~exists (...) or forall (...)",
                "syntax",
            )
    return None
