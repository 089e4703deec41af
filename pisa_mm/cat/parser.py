"""Parse cat model text into a `CatFile`; every lark error becomes a PisaMMError with a span."""

from __future__ import annotations

import functools
from pathlib import Path

from lark import Lark, Token, Tree
from lark.exceptions import LarkError, UnexpectedCharacters, UnexpectedEOF, UnexpectedToken

from pisa_mm.cache import lark_cache
from pisa_mm.cat.syntax import (
    Binary,
    BinaryOp,
    Binding,
    CatFile,
    CheckKind,
    CheckStmt,
    Empty,
    Expr,
    IncludeStmt,
    LetStmt,
    Name,
    ShowStmt,
    Statement,
    Unary,
    UnaryOp,
    Universe,
)
from pisa_mm.errors import PisaMMError, Span

__all__ = ["parse"]

_BINARY = {
    "union_op": BinaryOp.UNION,
    "seq_op": BinaryOp.SEQ,
    "diff_op": BinaryOp.DIFF,
    "inter_op": BinaryOp.INTER,
    "cart_op": BinaryOp.CARTESIAN,
}
_POSTFIX = {
    "inv_op": UnaryOp.INVERSE,
    "plus_op": UnaryOp.PLUS,
    "star_op": UnaryOp.STAR,
    "opt_op": UnaryOp.OPT,
}
_CHECK_KINDS = {kind.value: kind for kind in CheckKind if kind is not CheckKind.FLAG}

# How terminals are named in syntax errors.
_TOKEN_WORDS = {"NAME": "a name", "STRING": "a quoted string", "$END": "end of file"}
# Terminals that can start an expression: when all of them are expected, say "an expression".
_EXPR_START = {"NAME", "LPAR", "LSQB", "TILDE", "DOMAIN", "RANGE", "UNDERSCORE", "__ANON_1"}
_BINARY_OPS = {"VBAR", "SEMICOLON", "BACKSLASH", "AMPERSAND"}
_STATEMENT_START = {"LET", "INCLUDE", "ACYCLIC", "IRREFLEXIVE", "EMPTY", "FLAG", "SHOW", "UNSHOW"}
# Lark's contextual lexer would let a keyword pass as a name where no keyword can occur;
# herd reserves them, and so do we (a relation called `empty` would read badly anyway).
KEYWORDS = frozenset(
    {"let", "rec", "and", "include", "as", "acyclic", "irreflexive", "empty", "flag", "show"}
    | {"unshow", "domain", "range"}
)


def parse(source: str, filename: str = "<string>") -> CatFile:
    """Parse one cat file. `include`s are kept as statements (the loader expands them)."""
    text = _blank_comments(source, filename)
    try:
        tree = _lark().parse(text)
    except LarkError as exc:
        raise _syntax_error(exc, text, filename) from None
    return _Builder(text, filename).file(tree)


@functools.cache
def _lark() -> Lark:
    grammar = (Path(__file__).parent / "grammar.lark").read_text(encoding="utf-8")
    # keep_all_tokens: punctuation stays in the tree so that every node's span covers its
    # brackets, and a check's source text can be cut out exactly.
    return Lark(  # cache: the LALR tables, rebuilt when the grammar changes (start-up time)
        grammar,
        parser="lalr",
        keep_all_tokens=True,
        propagate_positions=True,
        cache=lark_cache("cat"),
    )


def _blank_comments(source: str, filename: str) -> str:
    """Replace `(* ... *)` comments (which nest) by spaces, keeping newlines and positions."""
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


def _unquote(token: Token) -> str:
    body = str(token)[1:-1]
    out: list[str] = []
    i = 0
    while i < len(body):
        if body[i] == "\\" and i + 1 < len(body):
            i += 1
        out.append(body[i])
        i += 1
    return "".join(out)


class _Builder:
    """Turn lark's tree into syntax.py nodes, each with its span."""

    def __init__(self, text: str, filename: str) -> None:
        self.text = text
        self.filename = filename

    def span(self, node: Tree[Token] | Token) -> Span:
        if isinstance(node, Token):
            line, col = node.line or 1, node.column or 1
            return Span(self.filename, line, col, node.end_line, node.end_column)
        meta = node.meta
        return Span(self.filename, meta.line, meta.column, meta.end_line, meta.end_column)

    def source(self, node: Tree[Token] | Token) -> str:
        if isinstance(node, Token):
            start, end = node.start_pos, node.end_pos
        else:
            start, end = node.meta.start_pos, node.meta.end_pos
        return " ".join(self.text[start:end].split())

    def file(self, tree: Tree[Token]) -> CatFile:
        title: str | None = None
        statements: list[Statement] = []
        for child in tree.children:
            assert isinstance(child, Tree)
            if child.data == "title":
                title = _unquote(_token(child.children[0]))
            else:
                statements.append(self.statement(child))
        return CatFile(self.filename, title, tuple(statements))

    def statement(self, tree: Tree[Token]) -> Statement:
        kids = tree.children
        span = self.span(tree)
        match tree.data:
            case "let_stmt" | "let_rec_stmt":
                bindings = tuple(
                    self.binding(k) for k in kids if isinstance(k, Tree) and k.data == "binding"
                )
                return LetStmt(bindings, tree.data == "let_rec_stmt", span)
            case "include_stmt":
                return IncludeStmt(_unquote(_token(kids[1])), span)
            case "check_stmt":
                test = _tree(kids[0])
                kind = _CHECK_KINDS[str(_token(test.children[0]))]
                return self.check(kind, kids[1], kids[2:], span)
            case "flag_stmt":  # "flag" "~" "empty" expr ("as" NAME)?
                return self.check(CheckKind.FLAG, kids[3], kids[4:], span)
            case "show_stmt":
                items = tuple(self.expr(k.children[0]) for k in kids[1:] if isinstance(k, Tree))
                return ShowStmt(items, span)
            case other:
                raise AssertionError(f"unknown statement {other}")

    def name(self, token: Token) -> str:
        if str(token) in KEYWORDS:
            message = f"'{token}' is a keyword and cannot be used as a name"
            raise PisaMMError.at(self.span(token), message, "cat-syntax")
        return str(token)

    def binding(self, tree: Tree[Token]) -> Binding:
        token = _token(tree.children[0])
        name = self.name(token)
        return Binding(name, self.expr(tree.children[2]), self.span(tree), self.span(token))

    def check(
        self,
        kind: CheckKind,
        expr_node: Tree[Token] | Token,
        rest: list[Tree[Token] | Token],
        span: Span,
    ) -> CheckStmt:
        name_token = _token(rest[1]) if rest else None
        if name_token is not None:
            self.name(name_token)
        return CheckStmt(
            kind,
            self.expr(expr_node),
            None if name_token is None else str(name_token),
            self.source(expr_node),
            span,
            None if name_token is None else self.span(name_token),
        )

    def expr(self, node: Tree[Token] | Token) -> Expr:
        tree = _tree(node)
        kids = tree.children
        span = self.span(tree)
        kind = tree.data
        if kind in _BINARY:
            return Binary(_BINARY[kind], self.expr(kids[0]), self.expr(kids[2]), span)
        if kind in _POSTFIX:
            return Unary(_POSTFIX[kind], self.expr(kids[0]), span)
        match kind:
            case "name_ref":
                return Name(self.name(_token(kids[0])), span)
            case "universe":
                return Universe(span)
            case "empty_rel":
                return Empty(span)
            case "paren":
                return self.expr(kids[1])
            case "identity":
                return Unary(UnaryOp.IDENTITY, self.expr(kids[1]), span)
            case "compl_op":
                return Unary(UnaryOp.COMPLEMENT, self.expr(kids[1]), span)
            case "domain_op":
                return Unary(UnaryOp.DOMAIN, self.expr(kids[2]), span)
            case "range_op":
                return Unary(UnaryOp.RANGE, self.expr(kids[2]), span)
            case other:
                raise AssertionError(f"unknown expression {other}")


def _tree(node: Tree[Token] | Token) -> Tree[Token]:
    assert isinstance(node, Tree), node
    return node


def _token(node: Tree[Token] | Token) -> Token:
    assert isinstance(node, Token), node
    return node
