"""Litmus text to the raw syntax tree: a recursive-descent parser over litmus/lexer.py.

The grammar is in docs/litmus-format.md. Each place in it reads its token with a regex of the
terminals it allows (as a contextual lexer does), so that `P0` is a thread there and an
instruction elsewhere. Conditions are parsed with explicit stacks: a hostile chain or nest of
any length costs no Python recursion.
"""

from __future__ import annotations

import re

from pisa_mm.errors import PisaMMError, Span
from pisa_mm.hints import Any
from pisa_mm.litmus import syntax as S
from pisa_mm.litmus.lexer import TERMINALS, Lexer, at_end
from pisa_mm.litmus.lexer import Context as C
from pisa_mm.litmus.parse_errors import (
    MISSING_SEMI_DECL,
    MISSING_SEMI_INSTR,
    NO_CONDITION,
    NO_PLACEMENT,
    syntax_error,
)

# Deeper conditions are refused: every walk over a condition (validation, evaluation, printing,
# encoding) recurses on nesting. Chains of `/\` or `\/` are flat and `~~` cancels, so only
# parentheses alternating between connectives, or `->` chains, nest.
MAX_PROP_DEPTH = 100


# The places of the grammar, by the terminals they allow.
_AT = C("AT")
_COLON = C("COLON")
_COMMA_OR_SEMI = C("COMMA", "SEMICOLON")
_INT = C("INT")
_NUMBER = C("FLOAT", "INT")
_REG = C("REG")
_REG_OR_NAME = C("REG", "OPCODE")
_RSQB = C("RSQB")
_SEMI = C("SEMICOLON")
_TYPE = C("TYPE")
_VAR = C("VAR")
_HEADER = C("PISA")
_TEST_NAME = C("TESTNAME")
_AFTER_HEADER = C("STRING", "META", "LBRACE")
_AFTER_DESCRIPTION = C("META", "LBRACE")
_INIT_STMT = C("SPACE", "TID", "RBRACE")
_THREAD = C("TID")
_AFTER_THREAD = C("TID", "LOCATIONS", "FILTER", "QUANT")
_AFTER_LOCATIONS = C("FILTER", "QUANT")
_QUANT = C("QUANT")
_DECL_AFTER_VAR = C("LSQB", "EQUAL", "SEMICOLON")
_DECL_AFTER_SIZE = C("EQUAL", "SEMICOLON")
_INIT_VALUE = C("FLOAT", "INT", "LBRACE")
_LIST_FIRST = C("FLOAT", "INT", "RBRACE")
_LIST_NEXT = C("COMMA", "RBRACE")
_EQUAL = C("EQUAL")
_REG_INIT_VALUE = C("FLOAT", "INT", "VAR")
_PLACE = C("PLACE_KIND", "HOST")
_PLACE_NEXT = C("COMMA", "LBRACE")
_STATEMENT = C("DOTREG", "PRED", "SPACE", "OPCODE", "RBRACE")
_REG_NAME = C("REG_RANGE", "REG")
_OPERAND = C("REG", "BANG", "VAR", "FLOAT", "INT", "OPCODE", "LSQB")
_AFTER_OPCODE = _OPERAND | C("COLON", "SEMICOLON")
_ADDRESS_BASE = C("REG", "VAR", "INT")
_AFTER_BASE = C("PLUS", "MINUS", "RSQB")
_OFFSET = C("REG", "INT")
_LSQB = C("LSQB")
_OBSERVABLE = C("TID", "GPU_PREFIX", "WG_PREFIX", "VAR")
_LOCATION = _OBSERVABLE | _RSQB
_AFTER_LOCATION = C("SEMICOLON", "RSQB")
_AFTER_LOCATION_VAR = C("SEMICOLON", "RSQB", "LSQB")
_WG_PREFIX = C("WG_PREFIX")
_CMP = C("CMP")
_CMP_OR_INDEX = C("CMP", "LSQB")
_PROP_START = _OBSERVABLE | C("LPAR", "TRUE", "FALSE", "NOT")
_IN_PARENS = C("AND", "OR", "IMPLIES", "RPAR")
_AFTER_CONDITION = C("AND", "OR", "IMPLIES", "END")
_AFTER_FILTER = C("AND", "OR", "IMPLIES", "LOCATIONS", "QUANT")
_AFTER_LAST_FILTER = C("AND", "OR", "IMPLIES", "QUANT")
# One operand and the `,` or `;` after it, read with one regex when the instruction is on one
# line without comments (almost every instruction): the tokens are those the contexts of
# `instruction` read one by one, in the same order (a FLOAT, `(*`, a line break or anything
# else unusual fails the match, and the instruction is read token by token instead).
_NAME = r"[A-Za-z_$.][A-Za-z0-9_$.]*"
_INT_TEXT = r"-?(?:0[xX][0-9a-fA-F]+|[0-9]+)"
_FAST_OPERAND = re.compile(
    rf"[ \t]*(?:%(?P<reg>{_NAME})|@(?P<var>{_NAME})|(?P<int>{_INT_TEXT})"
    r"|(?P<ident>[A-Za-z_$][A-Za-z0-9_$]*(?:\.[A-Za-z0-9_$]+)*)"
    rf"|!(?P<bang>[ \t]*%(?P<breg>{_NAME}))"
    rf"|(?P<address>(?P<open>\[)[ \t]*"
    rf"(?:%(?P<areg>{_NAME})|@(?P<avar>{_NAME})|(?P<aint>{_INT_TEXT}))"
    rf"(?:[ \t]*(?:\+[ \t]*(?:%(?P<oreg>{_NAME})|(?P<oint>{_INT_TEXT}))"
    rf"|-[ \t]*(?P<nint>{_INT_TEXT})))?[ \t]*\]))"
    r"(?P<end>)[ \t]*(?P<sep>[,;])"
)
_NO_OPERANDS = re.compile(r"[ \t]*;")
# A scalar declaration on one line after its space (` .32b @x = 0;`, ` .32b @x;`): the
# tokens `var_decl` reads one by one (an INT followed by `;` is never a FLOAT's start).
_FAST_DECL = re.compile(
    rf"[ \t]*(?P<type>(?:\.v[0-9]+)?\.[0-9]+b)[ \t]*(?P<var>@{_NAME})"
    rf"[ \t]*(?:=[ \t]*(?P<int>{_INT_TEXT})[ \t]*)?;"
)
# A metadata line (`key = value`) and an instruction's opcode after blanks: the META and
# OPCODE tokens `expect` reads there when no comment comes first (one fails the match, and
# is read by `expect`). Each is its context's first terminal in rank order, and every other
# terminal of the context starts with another character.
_BLANKS = r"[ \t\f\r\n]*"
_FAST_META = re.compile(rf"{_BLANKS}(?P<meta>{TERMINALS['META']})")
_FAST_OPCODE = re.compile(rf"{_BLANKS}(?P<opcode>{TERMINALS['OPCODE']})")
# A thread's placement on one line (`@ wg 0 {`, `@ gpu 1, wg 0 {`, `@ host {`).
_FAST_AT = re.compile(r"[ \t]*@")
_FAST_PLACE = re.compile(
    rf"[ \t]*(?:(?P<host>host)|(?P<kind>gpu|sg|wg)[ \t]*(?P<int>{_INT_TEXT}))[ \t]*(?P<sep>[,{{])"
)
# A condition that is one parenthesised conjunction of `P1:%r0 == 1` and `@x == 2` atoms on
# one line, the last thing in the text (most tests' condition), read with one regex per
# atom; any other condition is read by `prop`'s precedence parse, as the fast read gives up.
_FAST_OPEN = re.compile(r"[ \t]*\(")
_FAST_ATOM = re.compile(
    rf"[ \t]*(?:(?P<tid>P?[0-9]+)[ \t]*:[ \t]*(?P<reg>%{_NAME})|(?P<var>@{_NAME}))"
    rf"[ \t]*(?P<cmp>==|!=|=)[ \t]*(?P<int>{_INT_TEXT})[ \t]*(?P<sep>/\\|&&|\))"
)
_BINARY = {"AND": "and", "OR": "or", "IMPLIES": "implies"}
_PRECEDENCE = {"not": 4, "and": 3, "or": 2, "implies": 1}

# A condition node before it becomes a syntax.py node: (kind, line, col, end line, end col,
# a, b, outer line, outer col, outer end line, outer end col). kind "leaf": `a` is the
# finished RawAtom/RawBool; "not": `a` the operand; "and", "or", "implies": `a` and `b` the
# operands (a chain nests on the left, `->` on the right). The outer span includes the
# parentheses around the node: a node's own span runs over its operands' outer spans.
_Node = tuple[str, int, int, int, int, Any, Any, int, int, int, int]


def parse_raw(text: str, path: str) -> S.RawTest:
    """Parse litmus text into the raw syntax tree; syntax errors raise PisaMMError."""
    return _Parser(text, path).test()


def parse_raw_prop(text: str, path: str) -> S.RawProp:
    """Parse a stand-alone PROP (e.g. a command-line outcome) with the condition grammar."""
    p = _Parser(text, path)
    return p.prop(_AFTER_CONDITION)[0]


class _Parser:
    def __init__(self, text: str, path: str) -> None:
        self.lx = Lexer(text, path, syntax_error)
        # read a token of a context (`Lexer.expect`: a syntax error when there is none)
        self.expect = self.lx.expect
        self.path = path
        self.text = text

    # ------------------------------------------------------------ tokens
    def name(self) -> S.Name:
        """The last token as a Name."""
        lx = self.lx
        line, line_start = lx.line, lx.line_start
        span = Span(self.path, line, lx.start - line_start + 1, line, lx.pos - line_start + 1)
        return S.Name(lx.value, span)

    def int_(self) -> S.RawInt:
        return S.RawInt(self.lx.value, self.lx.span())

    def bracketed_int(self) -> S.RawInt:
        """`INT ]`, the `[` just read: an array's size or an observable's index."""
        self.expect(_INT)
        value = self.int_()
        self.expect(_RSQB)
        return value

    def number(self) -> S.RawInt | S.RawFloat:
        if self.lx.kind == "FLOAT":
            return S.RawFloat(self.lx.value, self.lx.span())
        return self.int_()

    def reg_name(self) -> S.Name:
        """`%r0`, or herd's bare `r0` (an OPCODE token) named `%r0` with the same span."""
        text = self.lx.value
        return S.Name(text if text.startswith("%") else "%" + text, self.lx.span())

    def mark(self) -> tuple[int, int]:
        """Where the last token starts (a node's start)."""
        lx = self.lx
        return lx.line, lx.start - lx.line_start + 1

    def until(self, start: tuple[int, int]) -> Span:
        """From `start` to the end of the last token."""
        lx = self.lx
        return Span(self.path, start[0], start[1], lx.line, lx.pos - lx.line_start + 1)

    # ------------------------------------------------------------ the test
    def test(self) -> S.RawTest:
        self.expect(_HEADER)
        self.expect(_TEST_NAME)
        name = self.name()
        description: str | None = None
        metadata: list[tuple[str, str]] = []
        meta_places: list[tuple[int, int, int]] = []
        kind = self.expect(_AFTER_HEADER)
        if kind == "STRING":
            description = self.lx.value[1:-1]
            kind = "META" if self.fast_meta() else self.expect(_AFTER_DESCRIPTION)
        while kind == "META":
            key, _, value = self.lx.value.partition("=")
            metadata.append((key.strip(), value.strip()))
            lx = self.lx
            meta_places.append((lx.line, lx.start - lx.line_start + 1, lx.pos - lx.line_start + 1))
            kind = "META" if self.fast_meta() else self.expect(_AFTER_DESCRIPTION)
        variables: list[S.RawVarDecl] = []
        inits: list[S.RawRegInit] = []
        while self.expect(_INIT_STMT) != "RBRACE":
            if self.lx.kind == "SPACE":
                variables.append(self.var_decl())
            else:
                inits.append(self.reg_init())
        self.expect(_THREAD)
        threads = [self.thread()]
        locations: tuple[S.RawObservable, ...] = ()
        filt: S.RawProp | None = None
        kind = self.expect(_AFTER_THREAD, NO_CONDITION)
        while kind == "TID":
            threads.append(self.thread())
            kind = self.expect(_AFTER_THREAD, NO_CONDITION)
        if kind == "LOCATIONS":
            locations = self.locations()
            kind = self.expect(_AFTER_LOCATIONS)
            if kind == "FILTER":
                filt, kind, _ = self.prop(_AFTER_LAST_FILTER)
        elif kind == "FILTER":
            filt, kind, _ = self.prop(_AFTER_FILTER)
            if kind == "LOCATIONS":
                locations = self.locations()
                kind = self.expect(_QUANT)
        quant = self.name()
        prop, _, end = self.prop(_AFTER_CONDITION)
        condition = S.RawCondition(
            quant, prop, Span(self.path, quant.span.line, quant.span.col, end[0], end[1])
        )
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
            tuple(meta_places),
            filt,
        )

    def fast_meta(self) -> bool:
        """Read the next token if it is a META one `_FAST_META` reads (one regex instead of
        `expect`'s context: a generated test has a dozen metadata lines)."""
        m = _FAST_META.match(self.text, self.lx.pos)
        if m is None:
            return False
        self.lx.take("META", *m.span("meta"))
        return True

    def fast_opcode(self) -> str | None:
        """Read the next token if it is an OPCODE after blanks (`_FAST_OPCODE`: the token
        `expect(_STATEMENT)` reads there, its first terminal in rank order), else None."""
        m = _FAST_OPCODE.match(self.text, self.lx.pos)
        return None if m is None else self.lx.take("OPCODE", *m.span("opcode"))

    def var_decl(self) -> S.RawVarDecl:
        """`SPACE TYPE VAR ([n])? (= value)? ;`, the SPACE just read."""
        start = self.mark()
        space = self.name()
        fast = self.fast_decl(start, space)
        if fast is not None:
            return fast
        self.expect(_TYPE)
        type_ = self.name()
        self.expect(_VAR)
        var = self.name()
        count: S.RawInt | None = None
        init: tuple[S.RawInt | S.RawFloat, ...] | None = None
        is_list = False
        span = self.until(start)
        kind = self.expect(_DECL_AFTER_VAR, MISSING_SEMI_DECL)
        if kind == "LSQB":
            count = self.bracketed_int()
            span = self.until(start)
            kind = self.expect(_DECL_AFTER_SIZE)
        if kind == "EQUAL":
            if self.expect(_INIT_VALUE) == "LBRACE":
                is_list = True
                values: list[S.RawInt | S.RawFloat] = []
                if self.expect(_LIST_FIRST) != "RBRACE":
                    values.append(self.number())
                    while self.expect(_LIST_NEXT) == "COMMA":
                        self.expect(_NUMBER)
                        values.append(self.number())
                init = tuple(values)
            else:
                init = (self.number(),)
            span = self.until(start)
            self.expect(_SEMI, None if is_list else MISSING_SEMI_DECL)
        return S.RawVarDecl(space, type_, var, count, init, is_list, span)

    def fast_decl(self, start: tuple[int, int], space: S.Name) -> S.RawVarDecl | None:
        """The rest of a scalar declaration on one line read with `_FAST_DECL`, the tree the
        token-by-token read makes; None when it reads none (nothing consumed then)."""
        lx = self.lx
        m = _FAST_DECL.match(self.text, lx.pos)
        if m is None:
            return None
        path, line, col = self.path, lx.line, 1 - lx.line_start

        def span(group: str) -> Span:
            return Span(path, line, m.start(group) + col, line, m.end(group) + col)

        type_ = S.Name(m.group("type"), span("type"))
        var = S.Name(m.group("var"), span("var"))
        init: tuple[S.RawInt | S.RawFloat, ...] | None = None
        last = "var"
        if m.start("int") >= 0:
            init = (S.RawInt(m.group("int"), span("int")),)
            last = "int"
        whole = Span(path, start[0], start[1], line, m.end(last) + col)
        end = m.end()
        lx.kind, lx.start, lx.pos, lx.value = "SEMICOLON", end - 1, end, ";"
        return S.RawVarDecl(space, type_, var, None, init, False, whole)

    def reg_init(self) -> S.RawRegInit:
        """`TID : REG = value ;`, the TID just read."""
        start = self.mark()
        thread = self.name()
        self.expect(_COLON)
        self.expect(_REG_OR_NAME)
        reg = self.reg_name()
        self.expect(_EQUAL)
        value: S.RawInt | S.RawFloat | S.RawVar
        if self.expect(_REG_INIT_VALUE) == "VAR":
            value = S.RawVar(self.lx.value[1:], self.lx.span())
        else:
            value = self.number()
        span = self.until(start)
        self.expect(_SEMI, MISSING_SEMI_DECL)
        return S.RawRegInit(thread, reg, value, span)

    # ------------------------------------------------------------ threads
    def thread(self) -> S.RawThread:
        """`TID @ placement { statement* }`, the TID just read."""
        start = self.mark()
        tid = self.name()
        places = self.fast_placement()
        if places is None:
            places = []
            self.expect(_AT, NO_PLACEMENT)
            while True:
                if self.expect(_PLACE) == "HOST":
                    places.append(S.RawPlace("host", None, self.lx.span()))
                else:
                    at = self.mark()
                    kind = self.lx.value
                    self.expect(_INT)
                    places.append(S.RawPlace(kind, self.int_(), self.until(at)))
                if self.expect(_PLACE_NEXT) == "LBRACE":
                    break
        body: list[S.RawStatement] = []
        while (kind := self.fast_opcode() or self.expect(_STATEMENT)) != "RBRACE":
            if kind == "OPCODE":
                body.append(self.instruction())
            elif kind == "SPACE":
                body.append(self.var_decl())
            else:
                body.append(self.reg_decl(kind))
        return S.RawThread(tid, tuple(places), tuple(body), self.until(start))

    def fast_placement(self) -> list[S.RawPlace] | None:
        """`@ placement {` on one line read with `_FAST_PLACE`, the places the token-by-token
        read makes; None when it reads no such placement (nothing consumed then)."""
        lx = self.lx
        text, path, line, ls = self.text, self.path, lx.line, lx.line_start
        m = _FAST_AT.match(text, lx.pos)
        if m is None:
            return None
        places: list[S.RawPlace] = []
        match = _FAST_PLACE.match
        while True:
            m = match(text, m.end())
            if m is None:
                return None

            col = 1 - ls  # an offset on the line plus this is its column
            if (start := m.start("host")) >= 0:
                span = Span(path, line, start + col, line, m.end("host") + col)
                places.append(S.RawPlace("host", None, span))
            else:
                int_start, int_end = m.span("int")
                value = S.RawInt(
                    m.group("int"), Span(path, line, int_start + col, line, int_end + col)
                )
                span = Span(path, line, m.start("kind") + col, line, int_end + col)
                places.append(S.RawPlace(m.group("kind"), value, span))
            if m.group("sep") == "{":
                break
        end = m.end()
        lx.kind, lx.start, lx.pos, lx.value = "LBRACE", end - 1, end, "{"
        return places

    def reg_decl(self, kind: str) -> S.RawRegDecl:
        """`.reg TYPE regs ;` or `.pred regs ;`, the keyword just read."""
        start = self.mark()
        type_: S.Name | None = None
        if kind == "DOTREG":
            self.expect(_TYPE)
            type_ = self.name()
        names: list[S.Name] = []
        while True:
            self.expect(_REG_NAME)
            names.append(self.name())
            if self.expect(_COMMA_OR_SEMI) == "SEMICOLON":
                # up to the last name, not the `;`
                last = names[-1].span
                span = Span(self.path, start[0], start[1], last.end_line, last.end_col)
                return S.RawRegDecl(type_, tuple(names), span)

    def instruction(self) -> S.RawInstr | S.RawLabel:
        """`OPCODE operands ;` or a label `NAME :`, the OPCODE just read."""
        lx = self.lx
        start = self.mark()
        first = lx.start
        opcode = self.name()
        fast = self.fast_instruction(opcode, start, first)
        if fast is not None:
            return fast
        kind = self.expect(_AFTER_OPCODE)
        if kind == "COLON":
            return S.RawLabel(opcode.text, opcode.span)
        operands: list[S.RawOperand] = []
        if kind != "SEMICOLON":
            while True:
                label = MISSING_SEMI_INSTR if kind in ("INT", "LSQB") else None
                operands.append(self.operand(kind))
                # the span ends after the last operand: its end is kept, the Span made once
                end_line, end_col, last = lx.line, lx.end_col, lx.pos
                if self.expect(_COMMA_OR_SEMI, label) == "SEMICOLON":
                    break
                kind = self.expect(_OPERAND)
            span = Span(self.path, start[0], start[1], end_line, end_col)
        else:
            span, last = opcode.span, first + len(opcode.text)
        text = " ".join(self.text[first:last].split())
        return S.RawInstr(opcode, tuple(operands), span, text)

    def fast_instruction(
        self, opcode: S.Name, start: tuple[int, int], first: int
    ) -> S.RawInstr | None:
        """The instruction read with `_FAST_OPERAND`, the same tree as the token-by-token
        read; None when some token is not one it reads (nothing consumed then)."""
        lx = self.lx
        text, path, line, ls = self.text, self.path, lx.line, lx.line_start
        pos = lx.pos
        none = _NO_OPERANDS.match(text, pos)
        if none is not None:
            lx.kind, lx.start, lx.pos, lx.value = "SEMICOLON", none.end() - 1, none.end(), ";"
            return S.RawInstr(opcode, (), opcode.span, " ".join(text[first:pos].split()))
        operands: list[S.RawOperand] = []
        match = _FAST_OPERAND.match
        while True:
            m = match(text, pos)
            if m is None:
                return None
            operands.append(_fast_operand(m, path, line, ls))
            pos = m.end()
            if m.group("sep") == ";":
                break
        last = m.start("end")
        lx.kind, lx.start, lx.pos, lx.value = "SEMICOLON", pos - 1, pos, ";"
        span = Span(path, start[0], start[1], line, last - ls + 1)
        return S.RawInstr(opcode, tuple(operands), span, " ".join(text[first:last].split()))

    def operand(self, kind: str) -> S.RawOperand:
        """One operand, its first token (of kind `kind`) just read."""
        lx = self.lx
        value, span = lx.value, lx.span()
        if kind == "REG":
            return S.RawReg(value[1:], span)
        if kind == "VAR":
            return S.RawVar(value[1:], span)
        if kind == "INT":
            return S.RawInt(value, span)
        if kind == "FLOAT":
            return S.RawFloat(value, span)
        if kind == "OPCODE":
            return S.RawIdent(value, span)
        start = self.mark()
        if kind == "BANG":
            self.expect(_REG)
            return S.RawReg(lx.value[1:], self.until(start), negated=True)
        base: S.RawReg | S.RawVar | S.RawInt
        kind = self.expect(_ADDRESS_BASE)
        if kind == "REG":
            base = S.RawReg(lx.value[1:], lx.span())
        elif kind == "VAR":
            base = S.RawVar(lx.value[1:], lx.span())
        else:
            base = self.int_()
        offset: S.RawReg | S.RawInt | None = None
        negative = False
        kind = self.expect(_AFTER_BASE)
        if kind != "RSQB":
            negative = kind == "MINUS"
            if self.expect(_INT if negative else _OFFSET) == "REG":
                offset = S.RawReg(lx.value[1:], lx.span())
            else:
                offset = self.int_()
            self.expect(_RSQB)
        return S.RawAddress(base, offset, negative, self.until(start))

    # ------------------------------------------------------------ observables
    def locations(self) -> tuple[S.RawObservable, ...]:
        """`[ obs ; obs ; ... ]`, the keyword just read."""
        self.expect(_LSQB)
        out: list[S.RawObservable] = []
        kind = self.expect(_LOCATION)
        while kind != "RSQB":
            obs, kind = self.observable(kind, _AFTER_LOCATION, _AFTER_LOCATION_VAR)
            out.append(obs)
            if kind == "SEMICOLON":
                kind = self.expect(_LOCATION)
        return tuple(out)

    def observable(self, kind: str, follow: C, follow_var: C) -> tuple[S.RawObservable, str]:
        """An observable, its first token just read; and the kind of the token after it
        (`follow`, or `follow_var` after a variable, which also allows an index)."""
        start = self.mark()
        first = self.name()
        if kind == "TID":
            self.expect(_COLON)
            self.expect(_REG_OR_NAME)
            obs: S.RawObservable = S.RawRegObs(first, self.reg_name(), self.until(start))
            return obs, self.expect(follow)
        wg = gpu = None
        if kind == "GPU_PREFIX":
            gpu = first
            self.expect(_COLON)
            self.expect(_WG_PREFIX)
            kind = "WG_PREFIX"
            first = self.name()
        if kind == "WG_PREFIX":
            wg = first
            self.expect(_COLON)
            self.expect(_VAR)
            first = self.name()
        span = self.until(start)
        index: S.RawInt | None = None
        kind = self.expect(follow_var)
        if kind == "LSQB":
            index = self.bracketed_int()
            span = self.until(start)
            kind = self.expect(follow)
        return S.RawMemObs(first, index, wg, span, gpu), kind

    # ------------------------------------------------------------ conditions
    def fast_condition(self) -> tuple[S.RawProp, str, tuple[int, int]] | None:
        """`prop(_AFTER_CONDITION)` of a condition `_FAST_ATOM` reads, the same tree; None
        when it reads no such condition (nothing consumed then)."""
        lx = self.lx
        text, path, line, ls = self.text, self.path, lx.line, lx.line_start
        m = _FAST_OPEN.match(text, lx.pos)
        if m is None:
            return None
        atoms: list[S.RawProp] = []
        match = _FAST_ATOM.match
        pos = m.end()
        while True:
            m = match(text, pos)
            if m is None:
                return None

            col = 1 - ls  # an offset on the line plus this is its column
            if (first := m.start("tid")) >= 0:
                tid = Span(path, line, first + col, line, m.end("tid") + col)
                reg_start, reg_end = m.span("reg")
                reg = Span(path, line, reg_start + col, line, reg_end + col)
                whole = Span(path, line, first + col, line, reg_end + col)
                obs: S.RawObservable = S.RawRegObs(
                    S.Name(m.group("tid"), tid), S.Name(m.group("reg"), reg), whole
                )
            else:
                first, var_end = m.span("var")
                var = Span(path, line, first + col, line, var_end + col)
                obs = S.RawMemObs(S.Name(m.group("var"), var), None, None, var, None)
            int_start, int_end = m.span("int")
            value = S.RawInt(m.group("int"), Span(path, line, int_start + col, line, int_end + col))
            span = Span(path, line, first + col, line, int_end + col)
            atoms.append(S.RawAtom(obs, m.group("cmp"), value, span))
            pos = m.end()
            if m.group("sep") == ")":
                break
        if not at_end(text, pos):
            return None
        end = (line, pos - ls + 1)
        if len(atoms) == 1:
            prop = atoms[0]
        else:
            head, tail = atoms[0].span, atoms[-1].span
            whole = Span(path, line, head.col, line, tail.end_col)
            prop = S.RawJunction("and", tuple(atoms), whole)
        newlines = text.count("\n", pos)
        if newlines:
            lx.line += newlines
            lx.line_start = text.rfind("\n") + 1
        lx.kind, lx.start, lx.pos, lx.value = "END", len(text), len(text), ""
        return prop, "END", end

    def prop(self, after: C) -> tuple[S.RawProp, str, tuple[int, int]]:
        """A proposition, the kind of the token that ends it (of `after`: the connectives
        and what may follow), and where it ends (after its closing parentheses).

        Operator precedence with explicit stacks, loosest first: `->` (right-associative),
        `\\/`, `/\\`, then the prefix `~`; parentheses group.
        """
        lx = self.lx
        if after is _AFTER_CONDITION:
            fast = self.fast_condition()
            if fast is not None:
                return fast
        ops: list[tuple[str, int, int]] = []  # "(", "not", "and", "or", "implies"
        vals: list[_Node] = []
        opened = 0
        while True:
            kind = self.expect(_PROP_START)
            while kind in ("NOT", "LPAR"):
                ops.append(("not" if kind == "NOT" else "(", lx.line, lx.col))
                opened += kind == "LPAR"
                kind = self.expect(_PROP_START)
            start = self.mark()
            if kind in ("TRUE", "FALSE"):
                span = lx.span()
                leaf: S.RawProp = S.RawBool(kind == "TRUE", span)
            else:
                obs, _ = self.observable(kind, _CMP, _CMP_OR_INDEX)
                op = lx.value
                self.expect(_NUMBER)
                span = self.until(start)
                leaf = S.RawAtom(obs, op, self.number(), span)
            end = (lx.line, lx.end_col)
            vals.append(("leaf", *start, *end, leaf, None, *start, *end))
            kind = self.expect(_IN_PARENS if opened else after)
            while kind == "RPAR":
                while ops[-1][0] != "(":
                    _reduce(ops, vals)
                _, line, col = ops.pop()
                vals[-1] = (*vals[-1][:7], line, col, lx.line, lx.end_col)
                opened -= 1
                kind = self.expect(_IN_PARENS if opened else after)
            if kind not in _BINARY:
                while ops:
                    _reduce(ops, vals)
                root = vals[0]
                return _Builder(self.path).prop(root, 0), kind, (root[9], root[10])
            op = _BINARY[kind]
            prec = _PRECEDENCE[op]
            while ops and ops[-1][0] != "(":
                pending = _PRECEDENCE[ops[-1][0]]
                if pending < prec or (pending == prec and op == "implies"):
                    break
                _reduce(ops, vals)
            ops.append((op, 0, 0))


def _fast_operand(m: re.Match[str], path: str, line: int, ls: int) -> S.RawOperand:
    """The operand of a `_FAST_OPERAND` match (`ls`: the offset of its line). The spans are
    made here, from the match's offsets: a suite's parse makes two of them a test line."""
    col = 1 - ls  # an offset on the line plus this is its column
    if (start := m.start("reg")) >= 0:
        return S.RawReg(m.group("reg"), Span(path, line, start + col - 1, line, m.end("reg") + col))
    if m.start("open") >= 0:
        return _fast_address(m, path, line, col)
    if (start := m.start("var")) >= 0:
        return S.RawVar(m.group("var"), Span(path, line, start + col - 1, line, m.end("var") + col))
    if (start := m.start("int")) >= 0:
        return S.RawInt(m.group("int"), Span(path, line, start + col, line, m.end("int") + col))
    if (start := m.start("ident")) >= 0:
        span = Span(path, line, start + col, line, m.end("ident") + col)
        return S.RawIdent(m.group("ident"), span)
    span = Span(path, line, m.start("bang") + col - 1, line, m.end("bang") + col)
    return S.RawReg(m.group("breg"), span, negated=True)


def _fast_address(m: re.Match[str], path: str, line: int, col: int) -> S.RawAddress:
    """The `[base]`, `[base + offset]` or `[base - n]` operand of a `_FAST_OPERAND` match
    (`col`: what makes an offset on the line its column)."""

    def span(group: str, sigil: int) -> Span:
        return Span(path, line, m.start(group) + col - sigil, line, m.end(group) + col)

    base: S.RawReg | S.RawVar | S.RawInt
    if m.start("areg") >= 0:
        base = S.RawReg(m.group("areg"), span("areg", 1))
    elif m.start("avar") >= 0:
        base = S.RawVar(m.group("avar"), span("avar", 1))
    else:
        base = S.RawInt(m.group("aint"), span("aint", 0))
    offset: S.RawReg | S.RawInt | None = None
    negative = m.start("nint") >= 0
    if negative:
        offset = S.RawInt(m.group("nint"), span("nint", 0))
    elif m.start("oreg") >= 0:
        offset = S.RawReg(m.group("oreg"), span("oreg", 1))
    elif m.start("oint") >= 0:
        offset = S.RawInt(m.group("oint"), span("oint", 0))
    return S.RawAddress(base, offset, negative, span("address", 0))


def _reduce(ops: list[tuple[str, int, int]], vals: list[_Node]) -> None:
    op, line, col = ops.pop()
    rhs = vals.pop()
    end = rhs[9], rhs[10]
    if op == "not":
        vals.append(("not", line, col, *end, rhs, None, line, col, *end))
        return
    lhs = vals.pop()
    start = lhs[7], lhs[8]
    vals.append((op, *start, *end, lhs, rhs, *start, *end))


class _Builder:
    """Condition nodes to syntax.py nodes: chains flattened, `~~` cancelled, depth bounded."""

    def __init__(self, path: str) -> None:
        self.path = path

    def prop(self, node: _Node, depth: int) -> S.RawProp:
        kind = node[0]
        span = Span(self.path, node[1], node[2], node[3], node[4])
        if depth > MAX_PROP_DEPTH:
            raise PisaMMError.at(
                span,
                f"condition nested more than {MAX_PROP_DEPTH} levels deep; flatten it",
                "limit",
            )
        if kind == "leaf":
            leaf: S.RawProp = node[5]
            return leaf
        if kind == "not":
            # a run of `~` is walked in a loop: `~~p` is `p`
            negations = 0
            while node[0] == "not":
                negations, node = negations + 1, node[5]
            inner = self.prop(node, depth + 1)
            return S.RawNot(inner, span) if negations % 2 else inner
        if kind == "implies":
            lhs = self.prop(node[5], depth + 1)
            return S.RawBinary("implies", lhs, self.prop(node[6], depth + 1), span)
        # a chain (nested on the left, and on the right by parentheses) is collected with a
        # stack, so that it stays flat however long it is
        args: list[_Node] = []
        stack = [node]
        while stack:
            n = stack.pop()
            if n[0] == kind:
                stack += (n[6], n[5])
            else:
                args.append(n)
        return S.RawJunction(kind, tuple(self.prop(a, depth + 1) for a in args), span)
