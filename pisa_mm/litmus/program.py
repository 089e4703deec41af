"""The checked litmus program: decoded, validated instructions that builders and machines run.

The parser turns text into a syntax tree; validation decodes every instruction's qualifiers
against the PISA tables into these types. Everything downstream (the event-structure
builder, the operational machine, reports) reads only this module's types.
"""

from __future__ import annotations

from pisa_mm.enums import Enum
from pisa_mm.errors import Span
from pisa_mm.events.kinds import Order, Scope, Space
from pisa_mm.records import field, pickled_by_fields, record
from pisa_mm.values.expr import FpFormat


class AddrSpace(Enum):
    """The address-space qualifier as written (GENERIC resolves at run time, PISA 3.3.1)."""

    GLOBAL = "global"
    SHARED = "shared"
    GENERIC = "generic"
    PRIVATE = "private"
    CONST = "const"


# ---------------------------------------------------------------- operands


@record
class Reg:
    """A register or one element of a vector register (`%v.y` is Reg("v", 1))."""

    name: str
    elem: int | None = None
    span: Span | None = None

    def __str__(self) -> str:
        return f"%{self.name}" if self.elem is None else f"%{self.name}.{'xyzw'[self.elem]}"


@record
class Pred:
    """A predicate register, possibly negated (`!%p`)."""

    name: str
    negated: bool = False
    span: Span | None = None


@record
class Imm:
    """An immediate, already converted to the operand's bit pattern (PISA 3.2)."""

    value: int
    span: Span | None = None


@record
class VarRef:
    """The address of a memory variable (`@x`)."""

    name: str
    span: Span | None = None


Operand = Reg | Imm | VarRef


@record
class Address:
    """`[base]` or `[base + offset]`; offsets in bytes (PISA 3.3)."""

    base: Reg | VarRef | Imm
    offset: Reg | Imm | None
    span: Span | None = None


# ---------------------------------------------------------------- instructions


@record
class Load:
    """`ld`: `order` None is a weak (non-atomic) access; `vec` is 1 for scalars."""

    dst: Reg
    addr: Address
    space: AddrSpace
    order: Order | None
    scope: Scope | None
    width: int
    vec: int


@record
class Store:
    addr: Address
    src: Reg | Imm
    space: AddrSpace
    order: Order | None
    scope: Scope | None
    width: int
    vec: int


class IAtomOp(Enum):
    """PISA 8.2's 15 integer atomic operations."""

    ADD = "add"
    SUB = "sub"
    SMIN = "smin"
    SMAX = "smax"
    UMIN = "umin"
    UMAX = "umax"
    AND = "and"
    OR = "or"
    XOR = "xor"
    XCHG = "xchg"
    CAS = "cas"
    INC = "inc"
    DEC = "dec"
    INCWRAP = "incwrap"
    DECWRAP = "decwrap"


class FAtomOp(Enum):
    """PISA 8.1's 5 floating-point atomic operations."""

    ADD = "add"
    SUB = "sub"
    MIN = "min"
    MAX = "max"
    CAS = "cas"


@record
class IAtom:
    op: IAtomOp
    dst: Reg
    addr: Address
    src0: Reg | Imm | None
    src1: Reg | Imm | None
    space: AddrSpace
    order: Order  # RLX when `.relaxed` or no order is written
    scope: Scope  # SYS for relaxed (model-decisions: relaxed atomics have system scope)
    width: int


@record
class FAtom:
    op: FAtomOp
    fmt: FpFormat
    dst: Reg
    addr: Address
    src0: Reg | Imm
    src1: Reg | Imm | None
    space: AddrSpace
    order: Order
    scope: Scope


@record
class Fence:
    """A fence; `spaces` is what it orders (PISA 9.2: no space or .generic = both)."""

    spaces: frozenset[Space]
    order: Order
    scope: Scope


@record
class Barrier:
    """`barrier.workgroup` (PISA 9.1)."""


@record
class CpAsync:
    """`cp.async.shared.global [dst], [src], size`: `size` bytes, global -> shared."""

    dst: Address
    src: Address
    size: int


@record
class CommitGroup:
    pass


@record
class WaitGroup:
    """`cp.async.wait_group n`; `cp.async.wait_all` is decoded as CommitGroup + WaitGroup(0)."""

    n: int


class AluOp(Enum):
    """Register data flow of the litmus format; each maps to one value-IR operator."""

    MOV = "mov"
    ADD = "add"
    SUB = "sub"
    SMUL = "smul"  # low half
    UMUL = "umul"
    AND = "and"
    OR = "or"
    XOR = "xor"
    NOT = "not"
    SHL = "shl"
    SHR = "shr"  # logical
    ASR = "asr"  # arithmetic
    SMIN = "smin"
    SMAX = "smax"
    UMIN = "umin"
    UMAX = "umax"
    NEG = "neg"


@record
class Alu:
    op: AluOp
    dst: Reg
    srcs: tuple[Reg | Imm | VarRef, ...]
    width: int


class CmpOp(Enum):
    EQ = "eq"
    NE = "ne"
    LT = "lt"
    LE = "le"
    GT = "gt"
    GE = "ge"


@record
class Compare:
    """`scmp`/`ucmp`: sets predicate `dst`."""

    op: CmpOp
    signed: bool
    dst: Pred
    a: Reg | Imm
    b: Reg | Imm
    width: int


@record
class Select:
    """`sel`: dst = cond ? a : b."""

    dst: Reg
    cond: Pred
    a: Reg | Imm
    b: Reg | Imm
    width: int


@record
class AddrOf:
    """`addrof`: the address of a variable (PISA 4.2), as a value of `width` bits."""

    dst: Reg
    var: VarRef
    width: int


@record
class Goto:
    label: str
    cond: Pred | None
    label_span: Span | None = None


@record
class Return:
    cond: Pred | None


class CollectiveKind(Enum):
    SHFL = "shfl"
    IRED = "ired"
    REDFIRSTIDX = "redfirstidx"


@record
class Collective:
    """A sub-group collective (PISA 7); `op` and `mode` keep the qualifiers as decoded."""

    kind: CollectiveKind
    op: str
    dst: Reg | Pred
    srcs: tuple[Reg | Imm | Pred, ...]
    width: int


Op = (
    Load
    | Store
    | IAtom
    | FAtom
    | Fence
    | Barrier
    | CpAsync
    | CommitGroup
    | WaitGroup
    | Alu
    | Compare
    | Select
    | AddrOf
    | Goto
    | Return
    | Collective
)


@record
class Instruction:
    """One decoded instruction; `index` is its position in the thread body (static id)."""

    op: Op
    index: int
    span: Span
    text: str
    labels: tuple[str, ...] = ()  # labels attached to this instruction


# ---------------------------------------------------------------- the test


@record
class VarDecl:
    """A memory variable; `init` has one bit pattern per element (scalars have count 1)."""

    name: str
    space: Space
    width: int
    count: int
    init: tuple[int, ...]
    span: Span
    thread: int | None = None  # the owning thread of a `.private` variable
    fmt: FpFormat | None = None  # float-typed: the one format fatoms use it with


@record
class RegInit:
    thread: int
    reg: Reg | Pred
    value: int | VarRef
    span: Span


@record
class ThreadPlacement:
    """Placement as written and completed with the documented defaults (litmus-format)."""

    host: bool
    gpu: int | None
    wg: int | None
    sg: int | None
    span: Span


@record
class Thread:
    index: int
    placement: ThreadPlacement
    regs: tuple[tuple[str, int], ...]  # every register and its (element) width (".pred" -> 1)
    body: tuple[Instruction, ...]
    span: Span
    vectors: tuple[tuple[str, int], ...] = ()  # vector registers and their element counts
    end_labels: tuple[str, ...] = ()  # labels after the last instruction (jump = fall off the end)
    floats: tuple[tuple[str, FpFormat], ...] = ()  # float-typed registers and their format

    def label_index(self, label: str) -> int:
        """The body index a `goto label` jumps to; len(body) for a label at the end."""
        return _label_indices(self)[label]


# Each thread's labels and their body indices, by the thread's identity (a thread is
# immutable; the entry holds it, so its id is not reused while kept). Looking a label up by
# scanning the body made the builder and the machine quadratic in a thread's gotos (a
# chain of 20,000 took 5 s to build, 60,000 a minute).
_LABELS: dict[int, tuple[Thread, dict[str, int]]] = {}


def _label_indices(thread: Thread) -> dict[str, int]:
    kept = _LABELS.get(id(thread))
    if kept is not None and kept[0] is thread:
        return kept[1]
    if len(_LABELS) >= 256:
        _LABELS.clear()
    found: dict[str, int] = {}
    for ins in reversed(thread.body):  # the first instruction a label names wins
        found.update(dict.fromkeys(ins.labels, ins.index))
    found.update(dict.fromkeys(thread.end_labels, len(thread.body)))  # as the scan did
    _LABELS[id(thread)] = (thread, found)
    return found


# Observables and conditions (the final-state question)


@pickled_by_fields
@record(order=True)
class RegObs:
    """`P1:%r0` (or herd's `1:%r0`)."""

    thread: int
    reg: str
    elem: int | None = None
    # the float format when the register is float-typed; not part of the identity
    fmt: FpFormat | None = field(default=None, compare=False)
    # the value's width in bits (None: not known); not part of the identity
    width: int | None = field(default=None, compare=False)

    def __str__(self) -> str:
        r = self.reg if self.elem is None else f"{self.reg}.{'xyzw'[self.elem]}"
        return f"P{self.thread}:%{r}"


@pickled_by_fields
@record(order=True)
class MemObs:
    """`@x`, `@a[2]`, `wg1:@s`, `gpu1:wg0:@s`: a variable element's final value (last write
    in co). A `.shared` observable names its work-group: `wg` in NDRange `gpu` (None for
    NDRange 0, so that each instance has one MemObs)."""

    var: str
    index: int = 0
    wg: int | None = None
    gpu: int | None = None
    # the float format when the variable is float-typed; not part of the identity
    fmt: FpFormat | None = field(default=None, compare=False)
    # the value's width in bits (None: not known); not part of the identity
    width: int | None = field(default=None, compare=False)

    @property
    def instance(self) -> tuple[int, int] | None:
        """The `.shared` instance observed: its work-group as (NDRange, number)."""
        if self.wg is None:
            return None
        return (0 if self.gpu is None else self.gpu, self.wg)

    def __str__(self) -> str:
        idx = f"[{self.index}]" if self.index else ""
        pre = ""
        if self.wg is not None:
            pre = f"wg{self.wg}:" if not self.gpu else f"gpu{self.gpu}:wg{self.wg}:"
        return f"{pre}@{self.var}{idx}"


Observable = RegObs | MemObs


@record
class Atom:
    """`obs == value` or `obs != value`."""

    obs: Observable
    value: int
    negated: bool
    span: Span


@record
class BoolConst:
    value: bool


@record
class Not:
    arg: Prop


@record
class And:
    args: tuple[Prop, ...]


@record
class Or:
    args: tuple[Prop, ...]


@record
class Implies:
    lhs: Prop
    rhs: Prop


Prop = Atom | BoolConst | Not | And | Or | Implies


class Quantifier(Enum):
    EXISTS = "exists"
    NOT_EXISTS = "~exists"
    FORALL = "forall"


@record
class Condition:
    quantifier: Quantifier
    prop: Prop
    span: Span


@record
class LitmusTest:
    """A parsed and validated litmus test."""

    name: str
    description: str | None
    metadata: tuple[tuple[str, str], ...]
    variables: tuple[VarDecl, ...]
    reg_inits: tuple[RegInit, ...]
    threads: tuple[Thread, ...]
    locations: tuple[Observable, ...]
    condition: Condition
    path: str
    source: str
    warnings: tuple[str, ...] = ()  # rendered warning diagnostics
    unroll: int | None = None  # the `unroll = N` metadata, validated
    filter: Prop | None = None  # herd's `filter (PROP)`: executions failing it are discarded
