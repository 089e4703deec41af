"""Turn lark's tree of a cat file into syntax.py statements: names resolved (with herd's
shadowing), functions and `let ... in` substituted, procedures inlined, chains balanced.

Everything herd-specific ends here: the statements that leave this module use only the IR
every engine already knows. One `Scope` serves all the files of one model, in the order the
loader visits them (an `include` is elaborated where it stands), so a function defined in an
included file is known after the include.
"""

from __future__ import annotations

from collections.abc import Callable, Mapping, Sequence

from lark import Token, Tree

from pisa_mm.cat.builtins import BUILTINS
from pisa_mm.cat.limits import BALANCE_FROM, balanced, check_depth, check_size
from pisa_mm.cat.syntax import (
    Binary,
    BinaryOp,
    Binding,
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
    format_expr,
)
from pisa_mm.errors import PisaMMError, Span
from pisa_mm.records import field, record

__all__ = ["KEYWORDS", "File", "Prelude", "Scope", "elaborate", "title_of", "unsupported"]

# herd reserves these, and so do we (a relation called `empty` would read badly anyway).
KEYWORDS = frozenset(
    {"let", "rec", "and", "include", "as", "acyclic", "irreflexive", "empty", "flag", "show"}
    | {"unshow", "domain", "range", "in", "fun", "procedure", "call", "end"}
    | {"undefined_unless"}
)
_BINARY = {
    "union_op": BinaryOp.UNION,
    "seq_op": BinaryOp.SEQ,
    "diff_op": BinaryOp.DIFF,
    "inter_op": BinaryOp.INTER,
    "cart_op": BinaryOp.CARTESIAN,
}
# Chains, and the side on which the grammar nests them (union and diff are left-recursive).
_CHAIN_LEFT = {"union_op", "diff_op"}
_CHAIN_RIGHT = {"seq_op", "inter_op"}
_POSTFIX = {
    "inv_op": UnaryOp.INVERSE,
    "plus_op": UnaryOp.PLUS,
    "star_op": UnaryOp.STAR,
    "opt_op": UnaryOp.OPT,
}
_CHECK_KINDS = {kind.value: kind for kind in CheckKind if kind is not CheckKind.FLAG}
_STATEMENT_RULES = {
    "let_stmt",
    "let_rec_stmt",
    "include_stmt",
    "check_stmt",
    "flag_stmt",
    "undefined_stmt",
    "show_stmt",
    "procedure_stmt",
    "call_stmt",
}


def unsupported(span: Span, what: str) -> PisaMMError:
    return PisaMMError.at(span, f"{what} is not supported", "cat-unsupported")


@record
class File:
    """One parsed file: its blanked text (for check names) and its lark tree."""

    filename: str
    text: str
    tree: Tree[Token]


@record
class _Callable:
    """A function (`let f(x) = e`) or a procedure (`procedure p(x) = ... end`), with the
    names its body saw where it was defined (lexical scope, as in herd)."""

    name: str
    params: tuple[str, ...]
    body: tuple[Tree[Token] | Token, ...]  # one expression, or the procedure's statements
    file: File
    names: Mapping[str, str]
    functions: Mapping[str, _Callable]
    procedures: Mapping[str, _Callable]
    in_prelude: bool
    span: Span


@record(frozen=False)
class Prelude:
    """herd's standard names, defined on first use (no include needed): the bindings of
    stdlib.cat and compat/prelude.cat, by name."""

    bindings: dict[str, tuple[File, Tree[Token]]] = field(default_factory=dict)
    functions: dict[str, tuple[File, Tree[Token]]] = field(default_factory=dict)
    procedures: dict[str, tuple[File, Tree[Token]]] = field(default_factory=dict)

    def add(self, file: File) -> None:
        for stmt in file.tree.children:
            if not isinstance(stmt, Tree):
                continue
            if stmt.data == "let_stmt":
                for b in stmt.children:
                    if isinstance(b, Tree) and b.data == "binding":
                        name = str(b.children[0])
                        is_fun = _is_function(b)
                        (self.functions if is_fun else self.bindings)[name] = (file, b)
            elif stmt.data == "procedure_stmt":
                self.procedures[str(stmt.children[1])] = (file, stmt)


@record(frozen=False)
class Scope:
    """The state shared by the files of one model."""

    herd: bool = False  # herd's rules: a later `let` shadows an earlier one
    prelude: Prelude | None = None
    names: dict[str, str] = field(default_factory=dict)  # source name -> internal name
    spans: dict[str, Span] = field(default_factory=dict)  # source name -> its definition
    functions: dict[str, _Callable] = field(default_factory=dict)
    procedures: dict[str, _Callable] = field(default_factory=dict)
    taken: set[str] = field(default_factory=set)  # internal names in use
    prelude_names: dict[str, str] = field(default_factory=dict)
    prelude_functions: dict[str, _Callable] = field(default_factory=dict)
    prelude_procedures: dict[str, _Callable] = field(default_factory=dict)
    check_names: set[str] = field(default_factory=set)
    out: list[Statement] = field(default_factory=list)

    def fresh(self, name: str) -> str:
        """`name`, or `name#2`, `name#3`... when it is taken (shadowing): `#` cannot occur in
        a cat name, so an internal name never collides with one the user writes."""
        candidate, k = name, 1
        while candidate in self.taken or candidate in BUILTINS:
            k += 1
            candidate = f"{name}#{k}"
        self.taken.add(candidate)
        return candidate


IncludeHook = Callable[[str, Span], None]


@record(frozen=False)
class _Ctx:
    """Where an expression is built: its file, the names visible, and the local bindings
    (parameters, `let ... in`) that are substituted."""

    file: File
    names: Mapping[str, str]
    functions: Mapping[str, _Callable]
    procedures: Mapping[str, _Callable]
    local: dict[str, Expr]
    in_prelude: bool
    in_call: bool  # inside a call's body: check names come from the substituted text


def elaborate(file: File, scope: Scope, include: IncludeHook | None) -> None:
    """Append the statements of `file` to `scope.out`. `include` is called for each
    `include` (None: keep them as `IncludeStmt`s, for `parse`)."""
    check_depth(file.tree, file.filename, _BINARY)
    ctx = _Ctx(file, scope.names, scope.functions, scope.procedures, {}, False, False)
    builder = _Builder(scope, include)
    for child in file.tree.children:
        if isinstance(child, Tree) and child.data in _STATEMENT_RULES:
            builder.statement(child, ctx)


def title_of(file: File) -> tuple[str | None, bool]:
    """The file's title, and whether its header is herd's bare identifier (`C RC11`)."""
    for child in file.tree.children:
        if isinstance(child, Tree) and child.data == "title":
            return _unquote(_token(child.children[0])), False
        if isinstance(child, Tree) and child.data == "herd_title":
            last = _token(child.children[-1])
            return (_unquote(last) if last.type == "STRING" else str(last)), True
    return None, False


class _Builder:
    def __init__(self, scope: Scope, include: IncludeHook | None) -> None:
        self.scope = scope
        self.include = include

    # ------------------------------------------------------------ helpers

    @staticmethod
    def span(ctx: _Ctx, node: Tree[Token] | Token) -> Span:
        name = ctx.file.filename
        if isinstance(node, Token):
            line, col = node.line or 1, node.column or 1
            return Span(name, line, col, node.end_line, node.end_column)
        meta = node.meta
        return Span(name, meta.line, meta.column, meta.end_line, meta.end_column)

    @staticmethod
    def source(ctx: _Ctx, node: Tree[Token] | Token) -> str:
        if isinstance(node, Token):
            start, end = node.start_pos, node.end_pos
        else:
            start, end = node.meta.start_pos, node.meta.end_pos
        return " ".join(ctx.file.text[start:end].split())

    def name_of(self, ctx: _Ctx, token: Token) -> str:
        if str(token) in KEYWORDS:
            message = f"'{token}' is a keyword and cannot be used as a name"
            raise PisaMMError.at(self.span(ctx, token), message, "cat-syntax")
        return str(token)

    def emit(self, stmt: Statement) -> None:
        self.scope.out.append(stmt)

    # ------------------------------------------------------------ statements

    def statement(self, tree: Tree[Token], ctx: _Ctx) -> None:
        kids = tree.children
        span = self.span(ctx, tree)
        match tree.data:
            case "let_stmt":
                self.let(tree, ctx, recursive=False)
            case "let_rec_stmt":
                self.let(tree, ctx, recursive=True)
            case "include_stmt":
                path = _unquote(_token(kids[1]))
                if ctx.in_call:
                    raise unsupported(span, "'include' inside a procedure")
                if self.include is None:
                    self.emit(IncludeStmt(path, span))
                else:
                    self.include(path, span)
            case "check_stmt":
                negated = isinstance(kids[0], Tree) and kids[0].data == "negation"
                rest = kids[1:] if negated else kids
                kind = _CHECK_KINDS[str(_token(_tree(rest[0]).children[0]))]
                if negated:
                    raise unsupported(span, f"herd's negated check '~{kind.value}'")
                self.check(kind, rest[1], rest[2:], span, ctx)
            case "flag_stmt" | "undefined_stmt":
                self.flag(tree, span, ctx)
            case "show_stmt":
                items = tuple(
                    self.expr(k.children[0], ctx) for k in kids[1:] if isinstance(k, Tree)
                )
                self.emit(ShowStmt(items, span))
            case "procedure_stmt":
                self.procedure(tree, span, ctx)
            case "call_stmt":
                self.call(tree, span, ctx)
            case other:
                raise AssertionError(f"unknown statement {other}")

    def let(self, tree: Tree[Token], ctx: _Ctx, *, recursive: bool) -> None:
        bindings = [k for k in tree.children if isinstance(k, Tree) and k.data == "binding"]
        span = self.span(ctx, tree)
        if ctx.in_call:
            # A procedure's `let`s are local to the call: substituted, like `let ... in`.
            for b in bindings:
                if recursive or _is_function(b):
                    what = "'let rec'" if recursive else "a function"
                    raise unsupported(self.span(ctx, b), f"{what} inside a procedure")
            values = [self.expr(b.children[-1], ctx) for b in bindings]
            for b, v in zip(bindings, values, strict=True):
                ctx.local[self.name_of(ctx, _token(b.children[0]))] = v
            return
        if recursive:
            self.let_rec(bindings, span, ctx)
            return
        seen: set[str] = set()
        for b in bindings:
            token = _token(b.children[0])
            if str(token) in seen:
                message = f"'{token}' is bound twice in this 'let'"
                raise PisaMMError.at(self.span(ctx, token), message, "cat-redefined")
            seen.add(str(token))
        relations: list[tuple[Tree[Token], Expr]] = []
        functions: list[tuple[Tree[Token], _Callable]] = []
        for b in bindings:  # simultaneous: every body sees the names before this `let`
            if _is_function(b):
                functions.append((b, self.function(b, ctx)))
            else:
                relations.append((b, self.expr(b.children[-1], ctx)))
        out: list[Binding] = []
        for b, value in relations:
            token = _token(b.children[0])
            internal = self.define(ctx, token)
            out.append(Binding(internal, value, self.span(ctx, b), self.span(ctx, token)))
        for b, fn in functions:
            token = _token(b.children[0])
            self.define_callable(ctx, token, fn, self.scope.functions)
        if out:
            self.emit(LetStmt(tuple(out), False, span))

    def let_rec(self, bindings: list[Tree[Token]], span: Span, ctx: _Ctx) -> None:
        for b in bindings:
            if _is_function(b):
                raise unsupported(self.span(ctx, b), "a recursive function ('let rec f(x)')")
        tokens = [_token(b.children[0]) for b in bindings]
        internals = [self.define(ctx, t) for t in tokens]
        values = [self.expr(b.children[-1], ctx) for b in bindings]
        out = tuple(
            Binding(n, v, self.span(ctx, b), self.span(ctx, t))
            for n, v, b, t in zip(internals, values, bindings, tokens, strict=True)
        )
        self.emit(LetStmt(out, True, span))

    def define(self, ctx: _Ctx, token: Token) -> str:
        """Bind the relation or set `token` names; its internal name."""
        name = self.name_of(ctx, token)
        scope = self.scope
        if ctx.in_prelude:
            internal = scope.fresh(name)
            scope.prelude_names[name] = internal
            return internal
        taken = name in scope.names or name in scope.functions or name in scope.procedures
        if taken and not scope.herd:
            # Our own models keep the error: a redefinition is usually a slip.
            raise PisaMMError.at(
                self.span(ctx, token),
                f"'{name}' is already defined (at {scope.spans.get(name)}); only models with "
                "herd's header (a first line such as `C name`) may shadow names",
                "cat-redefined",
            )
        # A built-in keeps its name outside herd's rules: the checker then says it is one.
        internal = name if name in BUILTINS and not scope.herd else scope.fresh(name)
        scope.names[name] = internal
        scope.spans[name] = self.span(ctx, token)
        scope.functions.pop(name, None)
        scope.procedures.pop(name, None)
        return internal

    def define_callable(
        self, ctx: _Ctx, token: Token, fn: _Callable, table: dict[str, _Callable]
    ) -> None:
        name = self.name_of(ctx, token)
        scope = self.scope
        if ctx.in_prelude:
            table[name] = fn
            return
        if not scope.herd and (
            name in scope.names or name in scope.functions or name in scope.procedures
        ):
            where = scope.spans.get(name)
            raise PisaMMError.at(
                self.span(ctx, token),
                f"'{name}' is already defined" + (f" (at {where})" if where else ""),
                "cat-redefined",
            )
        scope.names.pop(name, None)
        scope.spans[name] = self.span(ctx, token)
        table[name] = fn

    def function(self, b: Tree[Token], ctx: _Ctx) -> _Callable:
        kids = b.children
        body = kids[-1]
        if isinstance(body, Tree) and body.data == "fun":
            if len(kids) > 3:  # `let f(x) = fun y -> ...`: a curried function
                raise unsupported(self.span(ctx, body), "a function returning a function")
            params = self.params(_tree(body.children[1]), ctx)
            body = body.children[-1]
        else:
            params = self.params(_tree(kids[1]), ctx)
        return self.closure(str(kids[0]), params, (body,), ctx, self.span(ctx, b))

    def closure(
        self,
        name: str,
        params: tuple[str, ...],
        body: tuple[Tree[Token] | Token, ...],
        ctx: _Ctx,
        span: Span,
    ) -> _Callable:
        if ctx.local:
            raise unsupported(span, "a function or procedure defined inside another one")
        scope = self.scope
        if ctx.in_prelude:
            # Prelude bodies see the prelude's names only (hygiene: never the user's).
            names: Mapping[str, str] = scope.prelude_names
            functions: Mapping[str, _Callable] = scope.prelude_functions
            procedures: Mapping[str, _Callable] = scope.prelude_procedures
        else:
            names, functions = dict(scope.names), dict(scope.functions)
            procedures = dict(scope.procedures)
        return _Callable(
            name, params, body, ctx.file, names, functions, procedures, ctx.in_prelude, span
        )

    def params(self, tree: Tree[Token], ctx: _Ctx) -> tuple[str, ...]:
        names = [self.name_of(ctx, t) for t in tree.children if isinstance(t, Token)]
        names = [n for n in names if n not in "(),"]
        if len(set(names)) != len(names):
            raise PisaMMError.at(self.span(ctx, tree), "a parameter is repeated", "cat-call")
        return tuple(names)

    def check(
        self,
        kind: CheckKind,
        expr_node: Tree[Token] | Token,
        rest: Sequence[Tree[Token] | Token],
        span: Span,
        ctx: _Ctx,
    ) -> None:
        name_token = _token(rest[1]) if rest else None
        if name_token is not None:
            self.name_of(ctx, name_token)
        expr = self.expr(expr_node, ctx)
        text = format_expr(expr) if ctx.in_call else self.source(ctx, expr_node)
        name = None if name_token is None else str(name_token)
        name_span = None if name_token is None else self.span(ctx, name_token)
        self.emit(CheckStmt(kind, expr, name, text, span, name_span))

    def flag(self, tree: Tree[Token], span: Span, ctx: _Ctx) -> None:
        """herd's `flag ~empty e` (raised when e is non-empty) and `undefined_unless empty e`
        (the execution is undefined unless e is empty): both are our flags."""
        kids = tree.children
        keyword = str(kids[0])
        negated = isinstance(kids[1], Tree) and kids[1].data == "negation"
        rest = kids[2:] if negated else kids[1:]
        test = str(_token(_tree(rest[0]).children[0]))
        wanted = (True, "empty") if keyword == "flag" else (False, "empty")
        if (negated, test) != wanted:
            written = f"{keyword} {'~' if negated else ''}{test}"
            supported = "flag ~empty" if keyword == "flag" else "undefined_unless empty"
            raise unsupported(span, f"'{written}' (only '{supported}' is)")
        self.check(CheckKind.FLAG, rest[1], rest[2:], span, ctx)

    def procedure(self, tree: Tree[Token], span: Span, ctx: _Ctx) -> None:
        kids = tree.children
        token = _token(kids[1])
        params = self.params(_tree(kids[2]), ctx)
        body = tuple(k for k in kids[4:] if isinstance(k, Tree))
        proc = self.closure(str(token), params, body, ctx, span)
        table = self.scope.prelude_procedures if ctx.in_prelude else self.scope.procedures
        self.define_callable(ctx, token, proc, table)

    def call(self, tree: Tree[Token], span: Span, ctx: _Ctx) -> None:
        kids = tree.children
        name = str(kids[1])
        proc = ctx.procedures.get(name) or self.prelude_callable(name, procedure=True, ctx=ctx)
        if proc is None:
            raise PisaMMError.at(self.span(ctx, kids[1]), f"unknown procedure '{name}'", "cat-name")
        args = self.arguments(_tree(kids[2]), ctx)
        inner = self.bind(proc, args, self.span(ctx, tree))
        start = len(self.scope.out)
        for node in proc.body:
            assert isinstance(node, Tree)
            self.statement(node, inner)
        call_name = str(kids[4]) if len(kids) > 4 else None
        if call_name is None:
            return
        # `call p(...) as N`: its one check is N; several are N.<their names>.
        produced = self.scope.out[start:]
        checks = [s for s in produced if isinstance(s, CheckStmt)]
        for i, stmt in enumerate(produced):
            if isinstance(stmt, CheckStmt):
                own = stmt.name if stmt.name is not None else stmt.text
                new = call_name if len(checks) == 1 else f"{call_name}.{own}"
                produced[i] = CheckStmt(
                    stmt.kind, stmt.expr, new, stmt.text, stmt.span, self.span(ctx, kids[4])
                )
        self.scope.out[start:] = produced

    def bind(self, fn: _Callable, args: list[Expr], span: Span) -> _Ctx:
        if len(args) != len(fn.params):
            kind = "function" if len(fn.body) == 1 and not _is_stmt(fn.body[0]) else "procedure"
            raise PisaMMError.at(
                span,
                f"{kind} '{fn.name}' takes {len(fn.params)} argument(s), "
                f"but {len(args)} are given (defined at {fn.span})",
                "cat-call",
            )
        return _Ctx(
            fn.file,
            fn.names,
            fn.functions,
            fn.procedures,
            dict(zip(fn.params, args, strict=True)),
            fn.in_prelude,
            True,
        )

    def prelude_callable(self, name: str, *, procedure: bool, ctx: _Ctx) -> _Callable | None:
        scope, prelude = self.scope, self.scope.prelude
        if prelude is None:
            return None
        table = scope.prelude_procedures if procedure else scope.prelude_functions
        if name in table:
            return table[name]
        source = (prelude.procedures if procedure else prelude.functions).get(name)
        if source is None:
            return None
        file, tree = source
        pctx = _Ctx(
            file,
            scope.prelude_names,
            scope.prelude_functions,
            scope.prelude_procedures,
            {},
            True,
            False,
        )
        if procedure:
            self.procedure(tree, self.span(pctx, tree), pctx)
        else:
            table[name] = self.function(tree, pctx)
        return table[name]

    def inject(self, name: str) -> str | None:
        """Define the prelude's `name` (and what it uses) here, on first use."""
        scope, prelude = self.scope, self.scope.prelude
        if name in scope.prelude_names:
            return scope.prelude_names[name]
        if prelude is None or name not in prelude.bindings:
            return None
        file, b = prelude.bindings[name]
        pctx = _Ctx(
            file,
            scope.prelude_names,
            scope.prelude_functions,
            scope.prelude_procedures,
            {},
            True,
            False,
        )
        value = self.expr(b.children[-1], pctx)
        token = _token(b.children[0])
        internal = self.define(pctx, token)
        binding = Binding(internal, value, self.span(pctx, b), self.span(pctx, token))
        self.emit(LetStmt((binding,), False, self.span(pctx, b)))
        return internal

    # ------------------------------------------------------------ expressions

    def arguments(self, tree: Tree[Token], ctx: _Ctx) -> list[Expr]:
        if tree.data == "name_argument":
            return [self.reference(_token(tree.children[0]), ctx)]
        return [self.expr(k, ctx) for k in tree.children if isinstance(k, Tree)]

    def reference(self, token: Token, ctx: _Ctx) -> Expr:
        name = self.name_of(ctx, token)
        span = self.span(ctx, token)
        if name in ctx.local:
            return ctx.local[name]
        if name in ctx.functions or (
            name not in ctx.names and self.prelude_callable(name, procedure=False, ctx=ctx)
        ):
            raise PisaMMError.at(
                span,
                f"'{name}' is a function: call it, as in '{name}(...)' (functions are not "
                "values here: passing one as an argument is not supported)",
                "cat-call",
            )
        if name in ctx.names:
            return Name(ctx.names[name], span)
        if name not in BUILTINS:
            injected = self.inject(name)
            if injected is not None:
                return Name(injected, span)
        return Name(name, span)

    def apply(self, tree: Tree[Token], ctx: _Ctx) -> Expr:
        token = _token(tree.children[0])
        name = str(token)
        span = self.span(ctx, tree)
        if name in ctx.local:
            raise unsupported(span, f"calling the parameter '{name}' (higher-order functions)")
        fn = ctx.functions.get(name)
        if fn is None and name not in ctx.names:
            fn = self.prelude_callable(name, procedure=False, ctx=ctx)
        if fn is None:
            known = name in ctx.names or name in BUILTINS
            why = "is not a function" if known else "is not a known function"
            if _tree(tree.children[1]).data == "name_argument":
                why += " (two names side by side: is an operator missing?)"
            raise PisaMMError.at(self.span(ctx, token), f"'{name}' {why}", "cat-call")
        args = self.arguments(_tree(tree.children[1]), ctx)
        return self.expr(fn.body[0], self.bind(fn, args, span))

    def expr(self, node: Tree[Token] | Token, ctx: _Ctx) -> Expr:
        expr = self._expr(node, ctx)
        check_size(expr, self.span(ctx, node))
        return expr

    def _expr(self, node: Tree[Token] | Token, ctx: _Ctx) -> Expr:
        tree = _tree(node)
        kids = tree.children
        span = self.span(ctx, tree)
        kind = tree.data
        if kind in _CHAIN_LEFT or kind in _CHAIN_RIGHT:
            return self.chain(tree, ctx)
        if kind == "cart_op":
            left, right = self._expr(kids[0], ctx), self._expr(kids[2], ctx)
            return Binary(BinaryOp.CARTESIAN, left, right, span)
        if kind in _POSTFIX:
            return Unary(_POSTFIX[kind], self._expr(kids[0], ctx), span)
        match kind:
            case "name_ref":
                return self.reference(_token(kids[0]), ctx)
            case "universe":
                return Universe(span)
            case "empty_rel":
                return Empty(span)
            case "paren":
                return self._expr(kids[1], ctx)
            case "identity":
                return Unary(UnaryOp.IDENTITY, self._expr(kids[1], ctx), span)
            case "compl_op":
                return Unary(UnaryOp.COMPLEMENT, self._expr(kids[1], ctx), span)
            case "domain_op":
                return Unary(UnaryOp.DOMAIN, self._expr(kids[1], ctx), span)
            case "range_op":
                return Unary(UnaryOp.RANGE, self._expr(kids[1], ctx), span)
            case "call":
                return self.apply(tree, ctx)
            case "let_in":
                return self.let_in(tree, ctx)
            case other:
                raise AssertionError(f"unknown expression {other}")

    def let_in(self, tree: Tree[Token], ctx: _Ctx) -> Expr:
        bindings = [k for k in tree.children if isinstance(k, Tree) and k.data == "binding"]
        for b in bindings:
            if _is_function(b):
                raise unsupported(self.span(ctx, b), "a local function ('let f(x) = ... in')")
        values = [self._expr(b.children[-1], ctx) for b in bindings]
        local = dict(ctx.local)
        for b, v in zip(bindings, values, strict=True):
            local[self.name_of(ctx, _token(b.children[0]))] = v
        inner = _Ctx(
            ctx.file, ctx.names, ctx.functions, ctx.procedures, local, ctx.in_prelude, True
        )
        return self._expr(tree.children[-1], inner)

    def chain(self, tree: Tree[Token], ctx: _Ctx) -> Expr:
        """A chain of one operator, walked without recursion (a model may have thousands of
        terms), then rebuilt with the nesting the grammar gives, or balanced if long."""
        kind = tree.data
        op = _BINARY[kind]
        operands: list[Tree[Token] | Token] = []
        spans: list[Span] = []  # of each spine node, outermost first
        node: Tree[Token] | Token = tree
        left = kind in _CHAIN_LEFT
        while isinstance(node, Tree) and node.data == kind:
            spans.append(self.span(ctx, node))
            operands.append(node.children[2] if left else node.children[0])
            node = node.children[0] if left else node.children[2]
        operands.append(node)
        if left:
            operands.reverse()
        values = [self._expr(o, ctx) for o in operands]
        whole = spans[0]
        if op is BinaryOp.DIFF and len(values) > BALANCE_FROM:
            # a \ b1 \ ... \ bn is a \ (b1 | ... | bn)
            rest = balanced(BinaryOp.UNION, values[1:], whole)
            return Binary(op, values[0], rest, whole)
        if len(values) > BALANCE_FROM:
            return balanced(op, values, whole)
        # The grammar's own nesting, each node with the span of its spine node.
        if left:
            out = values[0]
            for v, span in zip(values[1:], reversed(spans), strict=True):
                out = Binary(op, out, v, span)
            return out
        out = values[-1]
        for v, span in zip(reversed(values[:-1]), reversed(spans), strict=True):
            out = Binary(op, v, out, span)
        return out


def _is_function(binding: Tree[Token]) -> bool:
    kids = binding.children
    body = kids[-1]
    has_params = any(isinstance(k, Tree) and k.data == "params" for k in kids[1:-1])
    return has_params or (isinstance(body, Tree) and body.data == "fun")


def _is_stmt(node: Tree[Token] | Token) -> bool:
    return isinstance(node, Tree) and node.data in _STATEMENT_RULES


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


def _tree(node: Tree[Token] | Token | None) -> Tree[Token]:
    assert isinstance(node, Tree), node
    return node


def _token(node: Tree[Token] | Token | None) -> Token:
    assert isinstance(node, Token), node
    return node
