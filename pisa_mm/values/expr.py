"""The value-expression IR shared by every engine: bit-vectors, booleans and IEEE floats."""

from __future__ import annotations

from pisa_mm.enums import Enum
from pisa_mm.records import record

# A boolean expression has width BOOL; every other expression is a bit-vector of its width
# (16, 32, 64 or 128 bits, 8 for non-atomic data, 1 is never used). Floats are bit patterns:
# an FP operation interprets its bit-vector operands in the format named by `fmt`.
BOOL = 0


class FpFormat(Enum):
    """IEEE binary formats of `fatom` (PISA 2.x / 8.1): name, exponent bits, significand bits."""

    HF = ("hf", 5, 11)
    BF = ("bf", 8, 8)
    F = ("f", 8, 24)
    DF = ("df", 11, 53)

    @property
    def width(self) -> int:
        return self.value[1] + self.value[2]

    @property
    def ebits(self) -> int:
        return self.value[1]

    @property
    def sbits(self) -> int:
        return self.value[2]


class Op(Enum):
    """Operators; result width is stored on the Apply node, operand widths on the operands."""

    # bit-vector arithmetic, modulo 2**width
    ADD = "add"
    SUB = "sub"
    MUL = "mul"  # low half of the product
    NEG = "neg"
    AND = "and"
    OR = "or"
    XOR = "xor"
    NOT = "not"
    SHL = "shl"  # shift amounts >= width give 0
    LSHR = "lshr"
    ASHR = "ashr"
    SMIN = "smin"
    SMAX = "smax"
    UMIN = "umin"
    UMAX = "umax"
    INCWRAP = "incwrap"  # (old >= src) ? 0 : old + 1, unsigned (PISA 8.2)
    DECWRAP = "decwrap"  # (old == 0 || old > src) ? src : old - 1, unsigned (PISA 8.2)
    ZEXT = "zext"  # to the node's width
    SEXT = "sext"
    TRUNC = "trunc"  # low bits
    ITE = "ite"  # args: (BOOL cond, then, else)
    # comparisons, result BOOL
    EQ = "eq"
    NE = "ne"
    SLT = "slt"
    SLE = "sle"
    SGT = "sgt"
    SGE = "sge"
    ULT = "ult"
    ULE = "ule"
    UGT = "ugt"
    UGE = "uge"
    # booleans
    BAND = "band"
    BOR = "bor"
    BNOT = "bnot"
    # IEEE floating point on bit patterns in format `fmt`, round to nearest even
    FADD = "fadd"
    FSUB = "fsub"
    FMIN = "fmin"  # IEEE 754-2008 minNum: a NaN operand yields the other operand
    FMAX = "fmax"
    FEQ = "feq"  # BOOL, IEEE equality (fatom.cas compares values: -0 == +0, NaN != NaN)


@record
class Const:
    """A constant: an unsigned bit pattern of `width` bits, or 0/1 for BOOL."""

    value: int
    width: int


@record
class ReadValue:
    """The value returned by read event `event` (an event id of the event structure)."""

    event: int
    width: int


@record
class Contribution:
    """The value work-item `thread` contributes to its `index`-th sub-group collective (0-based)."""

    thread: int
    index: int
    width: int


@record
class Apply:
    """An operator applied to operands; `fmt` is set exactly for the F* operators."""

    op: Op
    args: tuple[Expr, ...]
    width: int
    fmt: FpFormat | None = None


Expr = Const | ReadValue | Contribution | Apply

TRUE = Const(1, BOOL)
FALSE = Const(0, BOOL)
