"""The raw syntax tree of a litmus file: what was written, with a span on every node."""

from __future__ import annotations

from dataclasses import dataclass

from pisa_mm.errors import Span, int_literal


@dataclass(frozen=True, slots=True)
class Name:
    """A located piece of text: a register, variable, label or qualifier as written."""

    text: str
    span: Span


@dataclass(frozen=True, slots=True)
class RawInt:
    """An integer literal, kept as text so that decoding knows hex from decimal (PISA 3.2)."""

    text: str
    span: Span

    @property
    def is_hex(self) -> bool:
        return self.text.lstrip("-+")[:2].lower() == "0x"

    @property
    def value(self) -> int:
        return int_literal(self.text, self.span)


@dataclass(frozen=True, slots=True)
class RawFloat:
    text: str
    span: Span


@dataclass(frozen=True, slots=True)
class RawReg:
    """`%r`, `%v.x`; `negated` is the `!` of a predicate operand (`!%p`)."""

    name: str
    span: Span
    negated: bool = False


@dataclass(frozen=True, slots=True)
class RawVar:
    name: str
    span: Span


@dataclass(frozen=True, slots=True)
class RawIdent:
    """A bare identifier operand: a label (`goto L;`)."""

    name: str
    span: Span


@dataclass(frozen=True, slots=True)
class RawAddress:
    base: RawReg | RawVar | RawInt
    offset: RawReg | RawInt | None
    negative: bool  # `[@x - 4]`
    span: Span


RawOperand = RawReg | RawVar | RawInt | RawFloat | RawIdent | RawAddress


@dataclass(frozen=True, slots=True)
class RawInstr:
    """An instruction: the whole dotted mnemonic as one token, then its operands."""

    opcode: Name
    operands: tuple[RawOperand, ...]
    span: Span
    text: str


@dataclass(frozen=True, slots=True)
class RawLabel:
    name: str
    span: Span


@dataclass(frozen=True, slots=True)
class RawRegDecl:
    """`.reg .v4.32b %v, %w;` or `.pred %p;` (`type` is None for predicates)."""

    type: Name | None
    names: tuple[Name, ...]
    span: Span


@dataclass(frozen=True, slots=True)
class RawVarDecl:
    """`.global .32b @a[2] = {1, 2};`; `count` None for a scalar, `init` None if omitted."""

    space: Name
    type: Name
    name: Name
    count: RawInt | None
    init: tuple[RawInt | RawFloat, ...] | None
    init_is_list: bool
    span: Span


@dataclass(frozen=True, slots=True)
class RawRegInit:
    thread: Name
    reg: Name
    value: RawInt | RawFloat | RawVar
    span: Span


@dataclass(frozen=True, slots=True)
class RawPlace:
    """One placement component: `sg K`, `wg K`, `gpu K` or `host` (value None)."""

    kind: str
    value: RawInt | None
    span: Span


RawStatement = RawInstr | RawLabel | RawRegDecl | RawVarDecl


@dataclass(frozen=True, slots=True)
class RawThread:
    name: Name
    placement: tuple[RawPlace, ...]
    body: tuple[RawStatement, ...]
    span: Span


@dataclass(frozen=True, slots=True)
class RawRegObs:
    thread: Name
    reg: Name
    span: Span


@dataclass(frozen=True, slots=True)
class RawMemObs:
    var: Name
    index: RawInt | None
    wg: Name | None
    span: Span
    gpu: Name | None = None  # `gpuN:` before the work-group prefix


RawObservable = RawRegObs | RawMemObs


@dataclass(frozen=True, slots=True)
class RawAtom:
    obs: RawObservable
    op: str  # "==" / "=" / "!="
    value: RawInt | RawFloat  # a float only for a float-typed observable
    span: Span


@dataclass(frozen=True, slots=True)
class RawBool:
    value: bool
    span: Span


@dataclass(frozen=True, slots=True)
class RawNot:
    arg: RawProp
    span: Span


@dataclass(frozen=True, slots=True)
class RawBinary:
    """`->` (`op` is "implies"); right-associative, so a chain nests on the right."""

    op: str
    lhs: RawProp
    rhs: RawProp
    span: Span


@dataclass(frozen=True, slots=True)
class RawJunction:
    """A chain `a /\\ b /\\ c` or `a \\/ b \\/ c` (`op` "and" or "or"), flat as written."""

    op: str
    args: tuple[RawProp, ...]
    span: Span


RawProp = RawAtom | RawBool | RawNot | RawBinary | RawJunction


@dataclass(frozen=True, slots=True)
class RawCondition:
    quantifier: Name
    prop: RawProp
    span: Span


@dataclass(frozen=True, slots=True)
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
    metadata_spans: tuple[Span, ...] = ()  # one per `metadata` entry
    filter: RawProp | None = None
