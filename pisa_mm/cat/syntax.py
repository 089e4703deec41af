"""The cat model IR: expression and statement trees, and the loaded, typed `Model`."""

from __future__ import annotations

from collections.abc import Iterable, Iterator, Mapping

from pisa_mm.enums import Enum
from pisa_mm.errors import PisaMMError, Span
from pisa_mm.hints import assert_never
from pisa_mm.records import field, pickled_by_fields, record, replace

__all__ = [
    "Binary",
    "BinaryOp",
    "Binding",
    "CatFile",
    "Check",
    "CheckKind",
    "CheckStmt",
    "Definition",
    "Empty",
    "Expr",
    "IncludeStmt",
    "LetStmt",
    "Model",
    "Name",
    "RecGroup",
    "ShowStmt",
    "Statement",
    "Ty",
    "Unary",
    "UnaryOp",
    "Universe",
    "format_expr",
    "names_in",
    "subexpressions",
]


class Ty(Enum):
    """Every cat expression denotes a set of events or a binary relation over events."""

    SET = "set"
    REL = "relation"


class UnaryOp(Enum):
    """Operators with one operand. The comment gives operand type -> result type."""

    IDENTITY = "[_]"  # [S]: SET -> REL, {(e, e) | e in S}
    COMPLEMENT = "~"  # ~E: T -> T, complement w.r.t. the universe (or universe x universe)
    INVERSE = "^-1"  # REL -> REL
    PLUS = "+"  # transitive closure: REL -> REL
    STAR = "*"  # reflexive-transitive closure (reflexive on the universe): REL -> REL
    OPT = "?"  # reflexive closure (reflexive on the universe): REL -> REL
    DOMAIN = "domain"  # domain(E): REL -> SET
    RANGE = "range"  # range(E): REL -> SET


class BinaryOp(Enum):
    """Operators with two operands. The comment gives operand types -> result type."""

    UNION = "|"  # T, T -> T
    INTER = "&"  # T, T -> T
    DIFF = "\\"  # T, T -> T
    SEQ = ";"  # REL, REL -> REL, relational composition
    CARTESIAN = "*"  # SET, SET -> REL, every pair (a, b) with a in the left set, b in the right


@pickled_by_fields  # the model cache holds hundreds (cat/loader.py)
@record
class Name:
    """A reference to a built-in (`po`, `R`) or to a `let`-defined name."""

    name: str
    span: Span


@pickled_by_fields  # the model cache holds hundreds (cat/loader.py)
@record
class Universe:
    """`_`: the set of all events of the execution."""

    span: Span


@pickled_by_fields  # the model cache holds hundreds (cat/loader.py)
@record
class Empty:
    """`0`: the empty set or relation. `ty` is None only straight out of the parser; the
    checker fills it in from the context (a lone `0` is a relation, as in herd)."""

    span: Span
    ty: Ty | None = None


@pickled_by_fields  # the model cache holds hundreds (cat/loader.py)
@record
class Unary:
    op: UnaryOp
    arg: Expr
    span: Span


@pickled_by_fields  # the model cache holds hundreds (cat/loader.py)
@record
class Binary:
    """A binary operator. Chains are nested: `a ; b ; c` is `Binary(SEQ, a, Binary(SEQ, b, c))`
    (`|`, `;`, `&` associate to the right as in herd, `\\` to the left)."""

    op: BinaryOp
    left: Expr
    right: Expr
    span: Span


Expr = Name | Universe | Empty | Unary | Binary


class CheckKind(Enum):
    """What a check requires of its expression. FLAG is herd's `flag ~empty E`: it does not
    make an execution inconsistent; it reports undefined behaviour when E is non-empty."""

    ACYCLIC = "acyclic"
    IRREFLEXIVE = "irreflexive"
    EMPTY = "empty"
    FLAG = "flag"


@pickled_by_fields  # the model cache holds hundreds (cat/loader.py)
@record
class Definition:
    """`let name = expr` (or one binding of a `let rec` group)."""

    name: str
    expr: Expr
    ty: Ty
    span: Span  # the binding `name = expr`


@record
class RecGroup:
    """`let rec a = e1 and b = e2 ...`: the least fixpoint of the bindings, computed together
    (each name starts empty; the checker ensures they occur only in monotone positions)."""

    definitions: tuple[Definition, ...]
    span: Span


@record
class Check:
    """An axiom (`acyclic`, `irreflexive`, `empty`) or a flag. `name` comes from `as NAME` or,
    without it, from the expression's source text with whitespace normalised."""

    kind: CheckKind
    expr: Expr
    name: str
    span: Span

    @property
    def is_flag(self) -> bool:
        return self.kind is CheckKind.FLAG


@record
class Binding:
    """One `name = expr` of a `let` statement."""

    name: str
    expr: Expr
    span: Span
    name_span: Span


@record
class LetStmt:
    """`let b1 and b2 ...` or, with `recursive`, `let rec b1 and b2 ...`."""

    bindings: tuple[Binding, ...]
    recursive: bool
    span: Span


@record
class IncludeStmt:
    path: str
    span: Span


@record
class CheckStmt:
    """A check as written: `name` is None without `as NAME`; `text` is the expression's source
    with whitespace normalised (the name such a check gets)."""

    kind: CheckKind
    expr: Expr
    name: str | None
    text: str
    span: Span
    name_span: Span | None


@record
class ShowStmt:
    """`show ...` / `unshow ...`: accepted for herd compatibility; its names are still checked."""

    items: tuple[Expr, ...]
    span: Span


Statement = LetStmt | IncludeStmt | CheckStmt | ShowStmt


@record
class CatFile:
    """One parsed cat file, its `include`s not yet expanded."""

    path: str
    title: str | None
    statements: tuple[Statement, ...]


def _no_types() -> Mapping[str, Ty]:
    return {}


@record(eq=False, weakref_slot=True)
class Model:
    """A loaded cat model: includes expanded, every name resolved, every expression typed.

    Definitions come in source order (an included file's definitions at its `include`), and
    every name is defined once, so a `Name` means the same thing wherever it occurs: the
    definition of that name if there is one, else the built-in of `pisa_mm.cat.builtins`.
    Models compare by identity.
    """

    name: str  # "pisa" for a shipped model, else the file's stem
    title: str
    path: str
    definitions: tuple[Definition | RecGroup, ...]
    checks: tuple[Check, ...]
    types: Mapping[str, Ty] = field(default_factory=_no_types)  # defined and built-in names
    builtins_used: frozenset[str] = frozenset()
    sources: Mapping[str, str] = field(default_factory=dict)  # file -> text, for diagnostics
    _by_name: Mapping[str, Definition] = field(init=False, repr=False)

    def __post_init__(self) -> None:
        by_name: dict[str, Definition] = {}
        for item in self.definitions:
            for d in item.definitions if isinstance(item, RecGroup) else (item,):
                by_name[d.name] = d
        object.__setattr__(self, "_by_name", by_name)  # frozen: set once, here

    def type_of(self, expr: Expr) -> Ty:
        """The type of any sub-expression of this model (computed structurally)."""
        match expr:
            case Name(name=name):
                return self.types[name]
            case Universe():
                return Ty.SET
            case Empty(ty=ty):
                return Ty.REL if ty is None else ty
            case Unary(op=op, arg=arg):
                if op in (UnaryOp.DOMAIN, UnaryOp.RANGE):
                    return Ty.SET
                if op is UnaryOp.COMPLEMENT:
                    return self.type_of(arg)
                return Ty.REL
            case Binary(op=op, left=left):
                if op in (BinaryOp.SEQ, BinaryOp.CARTESIAN):
                    return Ty.REL
                return self.type_of(left)
            case _:
                assert_never(expr)

    def definition(self, name: str) -> Definition | None:
        """The definition of `name`, or None for a built-in."""
        return self._by_name.get(name)

    def recursive_group(self, name: str) -> RecGroup | None:
        """The `let rec` group that defines `name`, if any."""
        for item in self.definitions:
            if isinstance(item, RecGroup) and any(d.name == name for d in item.definitions):
                return item
        return None

    def check(self, name: str) -> Check:
        """The check called `name`; a PisaMMError names the available ones otherwise."""
        for c in self.checks:
            if c.name == name:
                return c
        known = ", ".join(c.name for c in self.checks)
        raise PisaMMError.at(
            None, f"model '{self.name}' has no check named '{name}' (it has: {known})", "cat-check"
        )

    @property
    def axioms(self) -> tuple[Check, ...]:
        """The checks that decide consistency (everything but flags)."""
        return tuple(c for c in self.checks if not c.is_flag)

    @property
    def flags(self) -> tuple[Check, ...]:
        return tuple(c for c in self.checks if c.is_flag)

    def with_checks(self, names: Iterable[str]) -> Model:
        """The same model keeping only the named checks (in model order), e.g. to ask which
        axioms forbid an execution one at a time."""
        wanted = {self.check(n).name for n in names}
        return replace(self, checks=tuple(c for c in self.checks if c.name in wanted))


def subexpressions(expr: Expr) -> Iterator[Expr]:
    """Every node of `expr`, children before parents (post-order).

    Iterative: a nested generator per level made each node cost its depth (the names of
    every definition are asked for when a model is compiled), and a deep one recursed."""
    # (node, whether its children are already out)
    stack: list[tuple[Expr, bool]] = [(expr, False)]
    while stack:
        node, expanded = stack.pop()
        if expanded:
            yield node
            continue
        match node:
            case Unary(arg=arg):
                stack += ((node, True), (arg, False))
            case Binary(left=left, right=right):
                stack += ((node, True), (right, False), (left, False))
            case Name() | Universe() | Empty():
                yield node
            case _:
                assert_never(node)


def names_in(expr: Expr) -> frozenset[str]:
    """The names `expr` refers to directly (not through definitions)."""
    names: set[str] = set()
    stack = [expr]
    while stack:
        node = stack.pop()
        if isinstance(node, Binary):
            stack += (node.right, node.left)
        elif isinstance(node, Unary):
            stack.append(node.arg)
        elif isinstance(node, Name):
            names.add(node.name)
    return frozenset(names)


# Binding strength, loosest first; used to print the fewest parentheses that re-parse the same.
_LEVEL_UNION, _LEVEL_SEQ, _LEVEL_DIFF, _LEVEL_INTER, _LEVEL_CART, _LEVEL_PREFIX = range(6)
_LEVEL_POSTFIX, _LEVEL_ATOM = 6, 7
_BINARY_LEVEL = {
    BinaryOp.UNION: _LEVEL_UNION,
    BinaryOp.SEQ: _LEVEL_SEQ,
    BinaryOp.DIFF: _LEVEL_DIFF,
    BinaryOp.INTER: _LEVEL_INTER,
    BinaryOp.CARTESIAN: _LEVEL_CART,
}


def format_expr(expr: Expr) -> str:
    """Cat source text for `expr`, with only the parentheses precedence requires."""
    return _fmt(expr)[0]


def _fmt(expr: Expr) -> tuple[str, int]:
    match expr:
        case Name(name=name):
            return name, _LEVEL_ATOM
        case Universe():
            return "_", _LEVEL_ATOM
        case Empty():
            return "0", _LEVEL_ATOM
        case Unary(op=op, arg=arg):
            if op is UnaryOp.IDENTITY:
                return f"[{format_expr(arg)}]", _LEVEL_ATOM
            if op in (UnaryOp.DOMAIN, UnaryOp.RANGE):
                return f"{op.value}({format_expr(arg)})", _LEVEL_ATOM
            if op is UnaryOp.COMPLEMENT:
                return f"~{_wrap(arg, _LEVEL_PREFIX)}", _LEVEL_PREFIX
            return f"{_wrap(arg, _LEVEL_POSTFIX)}{op.value}", _LEVEL_POSTFIX
        case Binary(op=op, left=left, right=right):
            level = _BINARY_LEVEL[op]
            if op is BinaryOp.CARTESIAN:
                # The left operand of a cartesian product is a postfix expression (`~S * T`
                # does not parse, as in herd).
                return f"{_wrap(left, _LEVEL_POSTFIX)} * {_wrap(right, _LEVEL_PREFIX)}", level
            if op is BinaryOp.DIFF:  # left-associative
                return f"{_wrap(left, level)} \\ {_wrap(right, level + 1)}", level
            if op is BinaryOp.UNION:
                # `|` is associative, so a union on either side prints without parentheses.
                return f"{_wrap(left, level)} | {_wrap(right, level)}", level
            sep = " ; " if op is BinaryOp.SEQ else f" {op.value} "
            return f"{_wrap(left, level + 1)}{sep}{_wrap(right, level)}", level
        case _:
            assert_never(expr)


def _wrap(expr: Expr, min_level: int) -> str:
    text, level = _fmt(expr)
    return text if level >= min_level else f"({text})"
