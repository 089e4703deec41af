"""Resolve names and type every expression of a cat model (set or relation) at load time."""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from typing import assert_never

from pisa_mm.cat.builtins import BUILTINS
from pisa_mm.cat.syntax import (
    Binary,
    BinaryOp,
    Binding,
    Check,
    CheckKind,
    CheckStmt,
    Definition,
    Empty,
    Expr,
    IncludeStmt,
    LetStmt,
    Model,
    Name,
    RecGroup,
    ShowStmt,
    Statement,
    Ty,
    Unary,
    UnaryOp,
    Universe,
    format_expr,
    subexpressions,
)
from pisa_mm.errors import PisaMMError, Span
from pisa_mm.records import replace

__all__ = ["check_model"]

# What each operator needs of its operand(s), as the type and as words for error messages.
_UNARY_NEEDS = {
    UnaryOp.IDENTITY: (Ty.SET, "'[...]' needs a set"),
    UnaryOp.INVERSE: (Ty.REL, "'^-1' needs a relation"),
    UnaryOp.PLUS: (Ty.REL, "'+' needs a relation"),
    UnaryOp.STAR: (Ty.REL, "'*' (closure) needs a relation"),
    UnaryOp.OPT: (Ty.REL, "'?' needs a relation"),
    UnaryOp.DOMAIN: (Ty.REL, "domain(...) needs a relation"),
    UnaryOp.RANGE: (Ty.REL, "range(...) needs a relation"),
}
_BINARY_NEEDS = {
    BinaryOp.SEQ: (Ty.REL, "';' needs relations"),
    BinaryOp.CARTESIAN: (Ty.SET, "'*' (cartesian product) needs sets"),
}
_CHECK_NEEDS = {CheckKind.ACYCLIC: Ty.REL, CheckKind.IRREFLEXIVE: Ty.REL}


def check_model(
    name: str,
    title: str,
    path: str,
    statements: Sequence[Statement],
    sources: Mapping[str, str],
) -> Model:
    """Check a model whose includes are already expanded (in order) and build the `Model`."""
    checker = _Checker()
    for stmt in statements:
        match stmt:
            case LetStmt():
                if stmt.recursive:
                    checker.let_rec(stmt)
                else:
                    checker.let(stmt)
            case CheckStmt():
                checker.check(stmt)
            case ShowStmt(items=items):
                for item in items:
                    checker.infer(item)
            case IncludeStmt():
                raise AssertionError("includes are expanded by the loader")
            case _:
                assert_never(stmt)
    types = {n: ty for n, (ty, _) in checker.env.items()}
    types.update((b, BUILTINS[b].ty) for b in checker.builtins_used)
    return Model(
        name=name,
        title=title,
        path=path,
        definitions=tuple(checker.definitions),
        checks=tuple(checker.checks),
        types=types,
        builtins_used=frozenset(checker.builtins_used),
        sources=dict(sources),
    )


def _show(expr: Expr) -> str:
    text = format_expr(expr)
    return f"'{text}'" if len(text) <= 40 else f"'{text[:37]}...'"


def _type_error(span: Span, message: str) -> PisaMMError:
    return PisaMMError.at(span, message, "cat-type")


class _Checker:
    def __init__(self) -> None:
        self.env: dict[str, tuple[Ty, Span]] = {}
        # Names of a `let rec` group while its types are being inferred: None = not known yet.
        self.pending: dict[str, Ty | None] = {}
        self.builtins_used: set[str] = set()
        self.definitions: list[Definition | RecGroup] = []
        self.checks: list[Check] = []
        self.check_spans: dict[str, Span] = {}

    # --- statements

    def declare(self, binding: Binding) -> None:
        name = binding.name
        if name in BUILTINS:
            kind = "set" if BUILTINS[name].ty is Ty.SET else "relation"
            raise PisaMMError.at(
                binding.name_span,
                f"'{name}' is a built-in {kind} and cannot be redefined",
                "cat-redefined",
            )
        if name in self.env:
            raise PisaMMError.at(
                binding.name_span,
                f"'{name}' is already defined (at {self.env[name][1]})",
                "cat-redefined",
            )

    def declare_all(self, stmt: LetStmt) -> None:
        seen: set[str] = set()
        for b in stmt.bindings:
            self.declare(b)
            if b.name in seen:
                raise PisaMMError.at(
                    b.name_span, f"'{b.name}' is bound twice in this 'let'", "cat-redefined"
                )
            seen.add(b.name)

    def let(self, stmt: LetStmt) -> None:
        # `let a = e1 and b = e2` binds simultaneously: e2 cannot see a (as in herd).
        self.declare_all(stmt)
        new = [Definition(b.name, *self.typed(b.expr), b.span) for b in stmt.bindings]
        for d, b in zip(new, stmt.bindings, strict=True):
            self.env[d.name] = (d.ty, b.name_span)
        self.definitions.extend(new)

    def let_rec(self, stmt: LetStmt) -> None:
        self.declare_all(stmt)
        names = [b.name for b in stmt.bindings]
        # A recursive name's type comes from the non-recursive parts of the bodies: infer with
        # unknown names taken as "either" until nothing changes (at most one round per name).
        self.pending = dict.fromkeys(names)
        for _ in range(len(names) + 1):
            changed = False
            for b in stmt.bindings:
                ty = self.infer(b.expr)
                if ty is not None and self.pending[b.name] is None:
                    self.pending[b.name] = ty
                    changed = True
            if not changed:
                break
        for b in stmt.bindings:
            if self.pending[b.name] is None:
                raise _type_error(
                    b.name_span,
                    f"cannot tell whether '{b.name}' is a set or a relation: give its "
                    "definition a non-recursive part",
                )
        defs: list[Definition] = []
        for b in stmt.bindings:
            want = self.pending[b.name]
            assert want is not None
            expr, ty = self.typed(b.expr, want)
            if ty is not want:
                raise _type_error(
                    b.expr.span, f"'{b.name}' is used as a {want.value} but is a {ty.value}"
                )
            self.monotone(b.expr, frozenset(names), positive=True)
            defs.append(Definition(b.name, expr, ty, b.span))
        for d, b in zip(defs, stmt.bindings, strict=True):
            self.env[d.name] = (d.ty, b.name_span)
        self.pending = {}
        self.definitions.append(RecGroup(tuple(defs), stmt.span))

    def check(self, stmt: CheckStmt) -> None:
        name = stmt.name if stmt.name is not None else stmt.text
        if name in self.check_spans:
            raise PisaMMError.at(
                stmt.name_span or stmt.span,
                f"there is already a check named '{name}' (at {self.check_spans[name]})",
                "cat-redefined",
            )
        expr, ty = self.typed(stmt.expr)
        needed = _CHECK_NEEDS.get(stmt.kind)
        if needed is not None and ty is not needed:
            raise _type_error(
                stmt.expr.span,
                f"{stmt.kind.value} needs a {needed.value}, but {_show(stmt.expr)} is a {ty.value}",
            )
        self.check_spans[name] = stmt.span
        self.checks.append(Check(stmt.kind, expr, name, stmt.span))

    # --- expressions

    def typed(self, expr: Expr, expected: Ty | None = None) -> tuple[Expr, Ty]:
        """Type `expr`; a lone `0` (no context) is a relation, as in herd."""
        ty = self.infer(expr)
        ty = ty if ty is not None else (expected or Ty.REL)
        return _settle(expr, ty), ty

    def infer(self, expr: Expr) -> Ty | None:
        """The type of `expr`; None when it is `0`-only (either type fits)."""
        match expr:
            case Name(name=name, span=span):
                return self.lookup(name, span)
            case Universe():
                return Ty.SET
            case Empty():
                return None
            case Unary(op=UnaryOp.COMPLEMENT, arg=arg):
                return self.infer(arg)
            case Unary(op=op, arg=arg):
                self.expect(arg, *_UNARY_NEEDS[op])
                if op is UnaryOp.IDENTITY:
                    return Ty.REL
                return Ty.SET if op in (UnaryOp.DOMAIN, UnaryOp.RANGE) else Ty.REL
            case Binary(op=op, left=left, right=right, span=span):
                if op in _BINARY_NEEDS:
                    self.expect(left, *_BINARY_NEEDS[op])
                    self.expect(right, *_BINARY_NEEDS[op])
                    return Ty.REL
                lt, rt = self.infer(left), self.infer(right)
                if lt is not None and rt is not None and lt is not rt:
                    raise _type_error(
                        span,
                        f"'{op.value}' needs two sets or two relations, but {_show(left)} is a "
                        f"{lt.value} and {_show(right)} is a {rt.value}",
                    )
                return lt if lt is not None else rt
            case _:
                assert_never(expr)

    def expect(self, expr: Expr, needed: Ty, needs: str) -> None:
        ty = self.infer(expr)
        if ty is not None and ty is not needed:
            raise _type_error(expr.span, f"{needs}, but {_show(expr)} is a {ty.value}")

    def lookup(self, name: str, span: Span) -> Ty | None:
        if name in self.pending:
            return self.pending[name]
        if name in self.env:
            return self.env[name][0]
        if name in BUILTINS:
            self.builtins_used.add(name)
            return BUILTINS[name].ty
        known = [*self.env, *self.pending, *BUILTINS]
        import difflib  # only for a misspelling's hint, never on a good input's path

        close = difflib.get_close_matches(name, known, n=1)
        hint = f" (did you mean '{close[0]}'?)" if close else ""
        raise PisaMMError.at(span, f"unknown name '{name}'{hint}", "cat-name")

    def monotone(self, expr: Expr, group: frozenset[str], positive: bool) -> None:
        """A `let rec` has a least fixpoint when its names occur only positively: never under
        an odd number of complements or right-hand sides of `\\`."""
        match expr:
            case Name(name=name, span=span):
                if name in group and not positive:
                    raise PisaMMError.at(
                        span,
                        f"recursive name '{name}' occurs under a complement or on the right of "
                        "'\\', so 'let rec' has no least fixpoint",
                        "cat-rec",
                    )
            case Universe() | Empty():
                pass
            case Unary(op=op, arg=arg):
                self.monotone(arg, group, positive ^ (op is UnaryOp.COMPLEMENT))
            case Binary(op=op, left=left, right=right):
                self.monotone(left, group, positive)
                self.monotone(right, group, positive ^ (op is BinaryOp.DIFF))
            case _:
                assert_never(expr)


def _settle(expr: Expr, ty: Ty) -> Expr:
    """Give every `0` in `expr` (of type `ty`) the type its context requires."""
    if not any(isinstance(e, Empty) for e in subexpressions(expr)):
        return expr
    match expr:
        case Empty():
            return replace(expr, ty=ty)
        case Name() | Universe():
            return expr
        case Unary(op=op, arg=arg):
            inner = ty if op is UnaryOp.COMPLEMENT else _UNARY_NEEDS[op][0]
            return replace(expr, arg=_settle(arg, inner))
        case Binary(op=op, left=left, right=right):
            inner = _BINARY_NEEDS[op][0] if op in _BINARY_NEEDS else ty
            return replace(expr, left=_settle(left, inner), right=_settle(right, inner))
        case _:
            assert_never(expr)
