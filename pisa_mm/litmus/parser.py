"""Litmus text to the raw syntax tree (lark LALR); lark's exceptions never leave this module."""

from __future__ import annotations

import difflib
import functools
import re
from importlib import resources
from typing import Any

import lark
from lark.exceptions import UnexpectedCharacters, UnexpectedEOF, UnexpectedInput, UnexpectedToken

from pisa_mm.cache import lark_cache
from pisa_mm.errors import PisaMMError, Span
from pisa_mm.litmus import syntax as S

# What to call a terminal in a message; string literals are quoted from the grammar instead.
_TERMINAL_NAMES = {
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
    "QUANT": "exists, ~exists or forall",
    "OR": "'\\/'",
    "AND": "'/\\'",
    "NOT": "'~'",
    "CMP": "'=='",
    "MINUS": "'-'",
    "$END": "end of file",
}
_OPERAND_STARTS = {"REG", "VAR", "INT", "FLOAT", "LSQB", "BANG"}

# Common mistakes, recognised by the parser state they fail in (lark's match_examples).
_EXAMPLES: dict[str, list[str]] = {
    "missing ';' at the end of the instruction": [
        "PISA T { } P0 @ wg 0 { st.global.32b [@x], 1 st.global.32b [@x], 1; }",
        "PISA T { } P0 @ wg 0 { ld.global.32b %r0, [@x] }",
        "PISA T { } P0 @ wg 0 { fence.acq_rel.gpu barrier.workgroup; }",
        "PISA T { } P0 @ wg 0 { st.global.32b [@x], 1 }",
    ],
    "missing ';' at the end of the declaration": [
        "PISA T { .global .32b @x = 0 }",
        "PISA T { .global .32b @x = 0 .global .32b @y = 0; }",
        "PISA T { .global .32b @x }",
        "PISA T { P0:%r0 = 1 }",
    ],
    "a thread needs a placement: write 'Pn @ wg K { ... }' (or '@ host')": [
        "PISA T { } P0 { }",
    ],
    "expected a final condition: exists (...), ~exists (...) or forall (...)": [
        "PISA T { } P0 @ wg 0 { } (true)",
        "PISA T { } P0 @ wg 0 { } P0:%r0 == 1",
    ],
}


@functools.cache
def _example_states() -> dict[int, str]:
    """Parser state at which each example of _EXAMPLES fails -> its message."""
    parser = _parser()
    out: dict[int, str] = {}
    for label, examples in _EXAMPLES.items():
        for example in examples:
            try:
                parser.parse(example, start="start")
            except UnexpectedToken as exc:
                out.setdefault(exc.state.position, label)
    return out


def _example_label(exc: UnexpectedInput) -> str | None:
    # lark's match_examples compares whole state stacks; the state alone is what we mean
    if isinstance(exc, UnexpectedToken) and exc.state is not None:
        return _example_states().get(exc.state.position)
    return None


def _previous_end(text: str, pos: int, path: str) -> Span:
    """The position just after the last non-blank character before `pos`."""
    i = pos
    while i > 0 and text[i - 1].isspace():
        i -= 1
    line = text.count("\n", 0, i) + 1
    col = i - (text.rfind("\n", 0, i) + 1) + 1
    return Span(path, line, col)


def _span_of_token(tok: lark.Token, path: str) -> Span:
    line = tok.line if tok.line is not None else 1
    col = tok.column if tok.column is not None else 1
    return Span(path, line, col, tok.end_line, tok.end_column)


@functools.cache
def _parser() -> lark.Lark:
    grammar = resources.files("pisa_mm.litmus").joinpath("grammar.lark").read_text("utf-8")
    return lark.Lark(
        grammar,
        parser="lalr",
        lexer="contextual",
        propagate_positions=True,
        start=["start", "prop"],
        cache=lark_cache("litmus"),  # the LALR tables, rebuilt when the grammar changes
    )


def _describe(name: str, parser: lark.Lark) -> str:
    if name in _TERMINAL_NAMES:
        return _TERMINAL_NAMES[name]
    try:
        term = parser.get_terminal(name)
    except KeyError:
        return name
    pattern = term.pattern
    if isinstance(pattern, lark.lexer.PatternStr):
        return f"'{pattern.value}'"
    return name.lower()


def _expected_text(expected: set[str], parser: lark.Lark) -> str:
    names = set(expected)
    parts: list[str] = []
    if len(names & _OPERAND_STARTS) >= 3:
        parts.append("an operand")
        names -= _OPERAND_STARTS | {"OPCODE"}
    parts.extend(sorted({_describe(n, parser) for n in names}))
    if not parts:
        return ""
    if len(parts) > 6:
        parts = [*parts[:6], "..."]
    if len(parts) == 1:
        return parts[0]
    return ", ".join(parts[:-1]) + " or " + parts[-1]


def _token_text(tok: lark.Token) -> str:
    if tok.type == "$END":
        return "end of file"
    text = str(tok)
    if len(text) > 30:
        text = text[:27] + "..."
    return f"'{text}'"


# ---------------------------------------------------------------- newcomers' mistakes
# Recognised from the text around the error, since the parser's state alone blames the wrong
# line (a missing `}` makes the next `P1 @` or `exists` look like an instruction).

_SKIPPED = re.compile(r'//[^\n]*|\(\*.*?\*\)|"[^"\n]*"', re.S)
_SECTION_START = re.compile(r"\s*(P\d+\s*@|~?exists\b|forall\b|locations\b|filter\b)")
_THREAD_HEADER = re.compile(r"\s*(P\d+)\s*@")
_REG_INIT = re.compile(r"\s*P?\d+\s*:\s*%")
_FIRST_WORD = re.compile(r"\s*(~?[A-Za-z_]+)")
_KEYWORDS = ("exists", "~exists", "forall", "locations")


def _open_braces(text: str, end: int) -> list[int]:
    """Line numbers of the `{` still open at offset `end` (comments and strings skipped)."""
    stack: list[int] = []
    pos = 0
    for m in _SKIPPED.finditer(text, 0, end):
        _count_braces(text, pos, m.start(), stack)
        pos = m.end()
    _count_braces(text, pos, end, stack)
    return stack


def _count_braces(text: str, start: int, end: int, stack: list[int]) -> None:
    for i in range(start, end):
        ch = text[i]
        if ch == "{":
            stack.append(text.count("\n", 0, i) + 1)
        elif ch == "}" and stack:
            stack.pop()


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
        close = difflib.get_close_matches(word.group(1), _KEYWORDS, n=1, cutoff=0.7)
        if close:
            return PisaMMError.at(
                Span(path, line, col, line, col + len(word.group(1))),
                f"unknown keyword '{word.group(1)}'; did you mean '{close[0]}'? The final "
                "condition is exists (...), ~exists (...) or forall (...)",
                "syntax",
            )
    return None


def _syntax_error(exc: UnexpectedInput, text: str, path: str, parser: lark.Lark) -> PisaMMError:
    line = exc.line if isinstance(exc.line, int) and exc.line > 0 else 1
    col = exc.column if isinstance(exc.column, int) and exc.column > 0 else 1
    if isinstance(exc, UnexpectedToken | UnexpectedCharacters):
        newcomer = _newcomer_error(line, text, path)
        if newcomer is not None:
            return newcomer
    span = Span(path, line, col)
    label = _example_label(exc)
    if isinstance(exc, UnexpectedCharacters):
        pos = exc.pos_in_stream if isinstance(exc.pos_in_stream, int) else -1
        ch = text[pos] if 0 <= pos < len(text) else "?"
        if pos >= 0 and text.startswith("(*", pos):
            return PisaMMError.at(span, "unterminated comment: '(*' without '*)'", "syntax")
        msg = f"unexpected character {ch!r}"
        allowed = _expected_text(set(exc.allowed or ()), parser)
        if allowed:
            msg += f", expected {allowed}"
        if label is not None:
            msg = label
        return PisaMMError.at(span, msg, "syntax")
    if isinstance(exc, UnexpectedToken):
        tok = exc.token
        span = _span_of_token(tok, path) if tok.type != "$END" else _end_span(text, path)
        start = tok.start_pos if isinstance(tok.start_pos, int) else None
        if start is not None and text.startswith("(*", start):
            return PisaMMError.at(span, "unterminated comment: '(*' without '*)'", "syntax")
        if "SEMICOLON" in exc.expected and start is not None:
            prev = _previous_end(text, start, path)
            if prev.line < span.line or tok.type == "$END":
                return PisaMMError.at(prev, f"missing ';' before {_token_text(tok)}", "syntax")
        if label is not None and tok.type != "$END":
            return PisaMMError.at(span, label, "syntax")
        expected = _expected_text(set(exc.expected), parser)
        msg = f"unexpected {_token_text(tok)}"
        if expected:
            msg += f", expected {expected}"
        return PisaMMError.at(span, msg, "syntax")
    if isinstance(exc, UnexpectedEOF):
        expected = _expected_text(set(exc.expected), parser)
        msg = "unexpected end of file" + (f", expected {expected}" if expected else "")
        return PisaMMError.at(_end_span(text, path), msg, "syntax")
    return PisaMMError.at(span, "syntax error", "syntax")


def _end_span(text: str, path: str) -> Span:
    lines = text.splitlines() or [""]
    while len(lines) > 1 and not lines[-1].strip():
        lines.pop()
    return Span(path, len(lines), len(lines[-1]) + 1)


# Deeper conditions are refused: every walk over a condition (validation, evaluation, printing,
# encoding) recurses on nesting. Chains of `/\` or `\/` are flat and `~~` cancels, so only
# parentheses alternating between connectives, or `->` chains, nest.
MAX_PROP_DEPTH = 100


def parse_raw(text: str, path: str) -> S.RawTest:
    """Parse litmus text into the raw syntax tree; syntax errors raise PisaMMError."""
    parser = _parser()
    try:
        tree = parser.parse(text, start="start")
    except UnexpectedInput as exc:
        raise _syntax_error(exc, text, path, parser) from None
    except lark.exceptions.LarkError as exc:
        raise PisaMMError.at(Span(path, 1, 1), f"cannot parse: {exc}", "syntax") from None
    return _Builder(text, path).test(tree)


def parse_raw_prop(text: str, path: str) -> S.RawProp:
    """Parse a stand-alone PROP (e.g. a command-line outcome) with the condition grammar."""
    parser = _parser()
    try:
        tree = parser.parse(text, start="prop")
    except UnexpectedInput as exc:
        raise _syntax_error(exc, text, path, parser) from None
    except lark.exceptions.LarkError as exc:
        raise PisaMMError.at(Span(path, 1, 1), f"cannot parse: {exc}", "syntax") from None
    return _Builder(text, path).prop(tree)


class _Builder:
    """Turns lark's tree into syntax.py nodes (a hand-written walk, so that mypy sees types)."""

    def __init__(self, text: str, path: str) -> None:
        self.text = text
        self.path = path

    def span(self, node: Any) -> Span:
        if isinstance(node, lark.Token):
            return _span_of_token(node, self.path)
        meta = node.meta
        if getattr(meta, "empty", True):
            return Span(self.path, 1, 1)
        return Span(self.path, meta.line, meta.column, meta.end_line, meta.end_column)

    def source_of(self, node: lark.Tree[Any]) -> str:
        meta = node.meta
        if getattr(meta, "empty", True):
            return ""
        return " ".join(self.text[meta.start_pos : meta.end_pos].split())

    def name(self, tok: Any) -> S.Name:
        return S.Name(str(tok), self.span(tok))

    def int_(self, tok: Any) -> S.RawInt:
        return S.RawInt(str(tok), self.span(tok))

    def number(self, tree: lark.Tree[Any]) -> S.RawInt | S.RawFloat:
        """An `int_init`/`float_init` (or `int_value`/`float_value`) node's literal."""
        tok = tree.children[0]
        if tree.data.startswith("float"):
            return S.RawFloat(str(tok), self.span(tok))
        return self.int_(tok)

    def reg_name(self, tok: Any) -> S.Name:
        """`%r0`, or herd's bare `r0` (an OPCODE token) named `%r0` with the same span."""
        text = str(tok)
        return S.Name(text if text.startswith("%") else "%" + text, self.span(tok))

    def test(self, tree: lark.Tree[Any]) -> S.RawTest:
        name: S.Name | None = None
        description: str | None = None
        metadata: list[tuple[str, str]] = []
        meta_spans: list[Span] = []
        variables: list[S.RawVarDecl] = []
        inits: list[S.RawRegInit] = []
        threads: list[S.RawThread] = []
        locations: tuple[S.RawObservable, ...] = ()
        condition: S.RawCondition | None = None
        filt: S.RawProp | None = None
        for child in tree.children:
            data = child.data
            if data == "header":
                name = self.name(child.children[0])
            elif data == "description":
                description = str(child.children[0])[1:-1]
            elif data == "meta":
                key, _, value = str(child.children[0]).partition("=")
                metadata.append((key.strip(), value.strip()))
                meta_spans.append(self.span(child.children[0]))
            elif data == "init_block":
                for stmt in child.children:
                    if stmt.data == "var_decl":
                        variables.append(self.var_decl(stmt))
                    else:
                        inits.append(self.reg_init(stmt))
            elif data == "thread":
                threads.append(self.thread(child))
            elif data == "locations":
                locations = tuple(self.observable(c) for c in child.children)
            elif data == "filter":
                filt = self.prop(child.children[0])
            elif data == "condition":
                quant, prop = child.children
                condition = S.RawCondition(self.name(quant), self.prop(prop), self.span(child))
        assert name is not None and condition is not None  # the grammar requires both
        return S.RawTest(
            name,
            description,
            tuple(metadata),
            tuple(variables),
            tuple(inits),
            tuple(threads),
            locations,
            condition,
            self.path,
            self.text,
            tuple(meta_spans),
            filt,
        )

    def var_decl(self, tree: lark.Tree[Any]) -> S.RawVarDecl:
        space, type_, var, *rest = tree.children
        count: S.RawInt | None = None
        init: tuple[S.RawInt | S.RawFloat, ...] | None = None
        is_list = False
        for r in rest:
            if r.data == "array_size":
                count = self.int_(r.children[0])
            elif r.data == "array_init":
                is_list = True
                init = tuple(self.number(c) for c in r.children if c is not None)
            else:  # int_init, float_init
                init = (self.number(r),)
        return S.RawVarDecl(
            self.name(space),
            self.name(type_),
            self.name(var),
            count,
            init,
            is_list,
            self.span(tree),
        )

    def reg_init(self, tree: lark.Tree[Any]) -> S.RawRegInit:
        tid, reg, value = tree.children
        raw: S.RawInt | S.RawFloat | S.RawVar
        if value.data == "var_value":
            tok = value.children[0]
            raw = S.RawVar(str(tok)[1:], self.span(tok))
        else:
            raw = self.number(value)
        return S.RawRegInit(self.name(tid), self.reg_name(reg), raw, self.span(tree))

    def thread(self, tree: lark.Tree[Any]) -> S.RawThread:
        tid, placement, *body = tree.children
        places: list[S.RawPlace] = []
        for item in placement.children:
            if item.data == "place_host":
                places.append(S.RawPlace("host", None, self.span(item)))
            else:
                kind, value = item.children
                places.append(S.RawPlace(str(kind), self.int_(value), self.span(item)))
        stmts: list[S.RawStatement] = []
        for st in body:
            data = st.data
            if data == "label":
                tok = st.children[0]
                stmts.append(S.RawLabel(str(tok), self.span(tok)))
            elif data == "reg_decl":
                type_, regs = st.children
                names = tuple(self.name(r) for r in regs.children)
                stmts.append(S.RawRegDecl(self.name(type_), names, self.span(st)))
            elif data == "pred_decl":
                names = tuple(self.name(r) for r in st.children[0].children)
                stmts.append(S.RawRegDecl(None, names, self.span(st)))
            elif data == "private_decl":
                stmts.append(self.var_decl(st))
            else:
                stmts.append(self.instruction(st))
        return S.RawThread(self.name(tid), tuple(places), tuple(stmts), self.span(tree))

    def instruction(self, tree: lark.Tree[Any]) -> S.RawInstr:
        opcode, *ops = tree.children
        operands = tuple(self.operand(o) for o in ops if o is not None)
        return S.RawInstr(self.name(opcode), operands, self.span(tree), self.source_of(tree))

    def operand(self, tree: lark.Tree[Any]) -> S.RawOperand:
        data = tree.data
        if data == "address":
            base = self.simple(tree.children[0])
            assert not isinstance(base, S.RawFloat | S.RawIdent | S.RawAddress)
            assert not (isinstance(base, S.RawReg) and base.negated)
            offset: S.RawReg | S.RawInt | None = None
            negative = False
            if len(tree.children) > 1:
                off = tree.children[1]
                if len(off.children) == 2:  # MINUS INT
                    negative = True
                    offset = self.int_(off.children[1])
                else:
                    value = self.simple(off.children[0])
                    assert isinstance(value, S.RawReg | S.RawInt)
                    offset = value
            return S.RawAddress(base, offset, negative, self.span(tree))
        return self.simple(tree)

    def simple(self, tree: lark.Tree[Any]) -> S.RawOperand:
        tok = tree.children[0]
        span = self.span(tok)
        text = str(tok)
        match tree.data:
            case "reg":
                return S.RawReg(text[1:], span)
            case "neg_pred":
                return S.RawReg(text[1:], self.span(tree), negated=True)
            case "var":
                return S.RawVar(text[1:], span)
            case "int":
                return S.RawInt(text, span)
            case "float":
                return S.RawFloat(text, span)
            case _:
                return S.RawIdent(text, span)

    def observable(self, tree: lark.Tree[Any]) -> S.RawObservable:
        if tree.data == "reg_obs":
            tid, reg = tree.children
            return S.RawRegObs(self.name(tid), self.reg_name(reg), self.span(tree))
        wg: S.Name | None = None
        gpu: S.Name | None = None
        index: S.RawInt | None = None
        var: S.Name | None = None
        for c in tree.children:
            if isinstance(c, lark.Token):
                if c.type == "WG_PREFIX":
                    wg = self.name(c)
                elif c.type == "GPU_PREFIX":
                    gpu = self.name(c)
                else:
                    var = self.name(c)
            else:
                index = self.int_(c.children[0])
        assert var is not None
        return S.RawMemObs(var, index, wg, self.span(tree), gpu)

    def prop(self, tree: lark.Tree[Any], depth: int = 0) -> S.RawProp:
        span = self.span(tree)
        if depth > MAX_PROP_DEPTH:
            raise PisaMMError.at(
                span,
                f"condition nested more than {MAX_PROP_DEPTH} levels deep; flatten it",
                "limit",
            )
        match tree.data:
            case "true":
                return S.RawBool(True, span)
            case "false":
                return S.RawBool(False, span)
            case "not_":
                # a run of `~` is walked in a loop: `~~p` is `p`
                negations, node = 0, tree
                while node.data == "not_":
                    negations, node = negations + 1, node.children[1]
                inner = self.prop(node, depth + 1)
                return S.RawNot(inner, span) if negations % 2 else inner
            case "and_" | "or_":
                # a chain (lark nests it on the left, parentheses may nest it on the right)
                # is collected with a stack, so that it stays flat however long it is
                args: list[lark.Tree[Any]] = []
                stack = [tree]
                while stack:
                    node = stack.pop()
                    if node.data == tree.data:
                        lhs, _, rhs = node.children
                        stack += (rhs, lhs)
                    else:
                        args.append(node)
                op = "and" if tree.data == "and_" else "or"
                parts = tuple(self.prop(a, depth + 1) for a in args)
                return S.RawJunction(op, parts, span)
            case "implies":
                lhs, rhs = tree.children
                return S.RawBinary(
                    "implies", self.prop(lhs, depth + 1), self.prop(rhs, depth + 1), span
                )
            case "atom":
                obs, cmp, value = tree.children
                literal: S.RawInt | S.RawFloat = (
                    S.RawFloat(str(value), self.span(value))
                    if isinstance(value, lark.Token) and value.type == "FLOAT"
                    else self.int_(value)
                )
                return S.RawAtom(self.observable(obs), str(cmp), literal, span)
            case _:
                # A parenthesised prop is inlined by the grammar; anything else is a bug.
                raise AssertionError(f"unexpected condition node {tree.data}")
