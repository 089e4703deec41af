"""The raw syntax tree of a litmus file: what was written, with a span on every node."""

from __future__ import annotations

from pisa_mm.errors import Span, int_literal
from pisa_mm.records import record


@record
class Name:
    """A located piece of text: a register, variable, label or qualifier as written."""

    text: str
    span: Span


@record
class RawInt:
    """An integer literal, kept as text so that decoding knows hex from decimal (PISA 3.2)."""

    text: str
    span: Span

    @property
    def is_hex(self) -> bool:
        return self.text.lstrip("-+")[:2].lower() == "0x"

    @property
    def value(self) -> int:
        text = self.text
        if len(text) < 19 and text.isascii() and text.isdigit():
            return int(text)  # the common case, as int_literal reads it (no sign, hex, limit)
        return int_literal(text, self.span)


@record
class RawFloat:
    text: str
    span: Span


@record
class RawReg:
    """`%r`, `%v.x`; `negated` is the `!` of a predicate operand (`!%p`)."""

    name: str
    span: Span
    negated: bool = False


@record
class RawVar:
    name: str
    span: Span


@record
class RawIdent:
    """A bare identifier operand: a label (`goto L;`)."""

    name: str
    span: Span


@record
class RawAddress:
    base: RawReg | RawVar | RawInt
    offset: RawReg | RawInt | None
    negative: bool  # `[@x - 4]`
    span: Span


RawOperand = RawReg | RawVar | RawInt | RawFloat | RawIdent | RawAddress


@record
class RawInstr:
    """An instruction: the whole dotted mnemonic as one token, then its operands."""

    opcode: Name
    operands: tuple[RawOperand, ...]
    span: Span
    text: str


@record
class RawLabel:
    name: str
    span: Span


@record
class RawRegDecl:
    """`.reg .v4.32b %v, %w;` or `.pred %p;` (`type` is None for predicates)."""

    type: Name | None
    names: tuple[Name, ...]
    span: Span


@record
class RawVarDecl:
    """`.global .32b @a[2] = {1, 2};`; `count` None for a scalar, `init` None if omitted."""

    space: Name
    type: Name
    name: Name
    count: RawInt | None
    init: tuple[RawInt | RawFloat, ...] | None
    init_is_list: bool
    span: Span


@record
class RawRegInit:
    thread: Name
    reg: Name
    value: RawInt | RawFloat | RawVar
    span: Span


@record
class RawPlace:
    """One placement component: `sg K`, `wg K`, `gpu K` or `host` (value None)."""

    kind: str
    value: RawInt | None
    span: Span


RawStatement = RawInstr | RawLabel | RawRegDecl | RawVarDecl


@record
class RawThread:
    name: Name
    placement: tuple[RawPlace, ...]
    body: tuple[RawStatement, ...]
    span: Span


@record
class RawRegObs:
    thread: Name
    reg: Name
    span: Span


@record
class RawMemObs:
    var: Name
    index: RawInt | None
    wg: Name | None
    span: Span
    gpu: Name | None = None  # `gpuN:` before the work-group prefix


RawObservable = RawRegObs | RawMemObs


@record
class RawAtom:
    obs: RawObservable
    op: str  # "==" / "=" / "!="
    value: RawInt | RawFloat  # a float only for a float-typed observable
    span: Span


@record
class RawBool:
    value: bool
    span: Span


@record
class RawNot:
    arg: RawProp
    span: Span


@record
class RawBinary:
    """`->` (`op` is "implies"); right-associative, so a chain nests on the right."""

    op: str
    lhs: RawProp
    rhs: RawProp
    span: Span


@record
class RawJunction:
    """A chain `a /\\ b /\\ c` or `a \\/ b \\/ c` (`op` "and" or "or"), flat as written."""

    op: str
    args: tuple[RawProp, ...]
    span: Span


RawProp = RawAtom | RawBool | RawNot | RawBinary | RawJunction


@record
class RawCondition:
    quantifier: Name
    prop: RawProp
    span: Span


@record
class RawTest:
    name: Name
    description: str | None
    metadata: tuple[tuple[str, str], ...]
    variables: tuple[RawVarDecl, ...]
    reg_inits: tuple[RawRegInit, ...]
    threads: tuple[RawThread, ...]
    locations: tuple[RawObservable, ...]
    condition: RawCondition
    path: str
    source: str
    # where each `metadata` entry is: (line, col, end col); its Span is made when asked
    # (`metadata_spans`), since only an error shows one and a generated test has ten
    metadata_places: tuple[tuple[int, int, int], ...] = ()
    filter: RawProp | None = None

    @property
    def metadata_spans(self) -> tuple[Span, ...]:
        """One span per `metadata` entry."""
        return tuple(
            Span(self.path, line, col, line, end) for line, col, end in self.metadata_places
        )
