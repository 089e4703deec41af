"""Hypothesis strategies for well-formed value expressions and bindings of their reads."""

from __future__ import annotations

from dataclasses import dataclass

from hypothesis import strategies as st

from pisa_mm.values.expr import BOOL, Apply, Const, Contribution, Expr, FpFormat, Op, ReadValue

WIDTHS = (8, 16, 32, 64, 128)
READS_PER_WIDTH = 2
FORMATS_BY_WIDTH = {16: (FpFormat.HF, FpFormat.BF), 32: (FpFormat.F,), 64: (FpFormat.DF,)}


def read_event(width: int, j: int) -> int:
    """Read events are numbered so that an event id determines its width."""
    return width * 1000 + j


def event_width(event: int) -> int:
    return event // 1000


def fp_specials(fmt: FpFormat) -> list[int]:
    """Zeros, infinities, NaNs (quiet, signalling, negative, payloads), subnormals, extremes."""
    w, fb = fmt.width, fmt.sbits - 1
    sign = 1 << (w - 1)
    exp_ones = ((1 << fmt.ebits) - 1) << fb
    bias = (1 << (fmt.ebits - 1)) - 1
    one = bias << fb
    out = [
        0,
        exp_ones,
        exp_ones | (1 << (fb - 1)),  # canonical quiet NaN
        exp_ones | 1,  # signalling NaN
        exp_ones | (1 << (fb - 1)) | 1,  # quiet NaN with payload
        1,  # smallest subnormal
        (1 << fb) - 1,  # largest subnormal
        1 << fb,  # smallest normal
        exp_ones - 1,  # largest finite
        one,  # 1.0
        one | 1,  # 1.0 + ulp
        one - 1,  # 1.0 - ulp/2
        (bias + 1) << fb,  # 2.0
    ]
    return out + [v | sign for v in out]


def _pool(width: int) -> list[int]:
    base = [0, 1, 2, 3, (1 << width) - 1, 1 << (width - 1), (1 << (width - 1)) - 1, width]
    for fmt in FORMATS_BY_WIDTH.get(width, ()):
        base += fp_specials(fmt)
    return base


def values(width: int) -> st.SearchStrategy[int]:
    """Unsigned patterns of `width` bits, biased towards edge and FP-special values."""
    return st.one_of(st.sampled_from(_pool(width)), st.integers(0, (1 << width) - 1))


@dataclass(frozen=True)
class Binding:
    """Values for every read event and contribution the expression strategies can mention."""

    reads: dict[int, int]
    contribs: dict[tuple[int, int], int]

    def read(self, event: int) -> int:
        return self.reads[event]

    def contribution(self, thread: int, index: int) -> int:
        return self.contribs[(thread, index)]


@st.composite
def bindings(draw: st.DrawFn) -> Binding:
    reads = {}
    contribs = {}
    for w in WIDTHS:
        for j in range(READS_PER_WIDTH):
            reads[read_event(w, j)] = draw(values(w))
        contribs[(0, w)] = draw(values(w))
    return Binding(reads, contribs)


def _leaf(draw: st.DrawFn, width: int) -> Expr:
    if width == BOOL:
        return Const(draw(st.integers(0, 1)), BOOL)
    kind = draw(st.sampled_from(["const", "read", "read", "contrib"]))
    if kind == "const":
        return Const(draw(values(width)), width)
    if kind == "read":
        return ReadValue(read_event(width, draw(st.integers(0, READS_PER_WIDTH - 1))), width)
    return Contribution(0, width, width)


_BV_BINARY = [Op.SUB, Op.SMIN, Op.SMAX, Op.UMIN, Op.UMAX, Op.INCWRAP, Op.DECWRAP]
_BV_NARY = [Op.ADD, Op.MUL, Op.AND, Op.OR, Op.XOR]
_CMP = [Op.EQ, Op.NE, Op.SLT, Op.SLE, Op.SGT, Op.SGE, Op.ULT, Op.ULE, Op.UGT, Op.UGE]


@st.composite
def exprs(draw: st.DrawFn, width: int, depth: int = 3) -> Expr:
    """A well-formed expression of `width` (BOOL or one of WIDTHS)."""
    if depth <= 0 or draw(st.integers(0, 4)) == 0:
        return _leaf(draw, width)
    sub = depth - 1
    if width == BOOL:
        kind = draw(st.sampled_from(["cmp", "cmp", "feq", "band", "bor", "bnot", "ite", "beq"]))
        if kind == "cmp":
            w = draw(st.sampled_from(WIDTHS))
            op = draw(st.sampled_from(_CMP))
            return Apply(op, (draw(exprs(w, sub)), draw(exprs(w, sub))), BOOL)
        if kind == "feq":
            fmt = draw(st.sampled_from(list(FpFormat)))
            a, b = draw(exprs(fmt.width, sub)), draw(exprs(fmt.width, sub))
            return Apply(Op.FEQ, (a, b), BOOL, fmt)
        if kind in ("band", "bor"):
            n = draw(st.integers(0, 3))
            args = tuple(draw(exprs(BOOL, sub)) for _ in range(n))
            return Apply(Op.BAND if kind == "band" else Op.BOR, args, BOOL)
        if kind == "bnot":
            return Apply(Op.BNOT, (draw(exprs(BOOL, sub)),), BOOL)
        if kind == "beq":
            op = draw(st.sampled_from([Op.EQ, Op.NE]))
            return Apply(op, (draw(exprs(BOOL, sub)), draw(exprs(BOOL, sub))), BOOL)
        c, t, e = draw(exprs(BOOL, sub)), draw(exprs(BOOL, sub)), draw(exprs(BOOL, sub))
        return Apply(Op.ITE, (c, t, e), BOOL)
    kinds = ["nary", "binary", "unary", "shift", "conv", "ite"]
    if width in FORMATS_BY_WIDTH:
        kinds += ["fp", "fp", "fp"]
    kind = draw(st.sampled_from(kinds))
    if kind == "nary":
        op = draw(st.sampled_from(_BV_NARY))
        n = draw(st.integers(1, 3))
        return Apply(op, tuple(draw(exprs(width, sub)) for _ in range(n)), width)
    if kind == "binary":
        op = draw(st.sampled_from(_BV_BINARY))
        return Apply(op, (draw(exprs(width, sub)), draw(exprs(width, sub))), width)
    if kind == "unary":
        op = draw(st.sampled_from([Op.NEG, Op.NOT]))
        return Apply(op, (draw(exprs(width, sub)),), width)
    if kind == "shift":
        op = draw(st.sampled_from([Op.SHL, Op.LSHR, Op.ASHR]))
        amount_width = draw(st.sampled_from(WIDTHS))
        return Apply(op, (draw(exprs(width, sub)), draw(exprs(amount_width, sub))), width)
    if kind == "conv":
        op = draw(st.sampled_from([Op.ZEXT, Op.SEXT, Op.TRUNC]))
        if op is Op.TRUNC:
            src = draw(st.sampled_from([w for w in WIDTHS if w >= width]))
        else:
            src = draw(st.sampled_from([w for w in WIDTHS if w <= width]))
        return Apply(op, (draw(exprs(src, sub)),), width)
    if kind == "ite":
        c, t, e = draw(exprs(BOOL, sub)), draw(exprs(width, sub)), draw(exprs(width, sub))
        return Apply(Op.ITE, (c, t, e), width)
    fmt = draw(st.sampled_from(FORMATS_BY_WIDTH[width]))
    op = draw(st.sampled_from([Op.FADD, Op.FSUB, Op.FMIN, Op.FMAX]))
    return Apply(op, (draw(exprs(width, sub)), draw(exprs(width, sub))), width, fmt)


def any_width() -> st.SearchStrategy[int]:
    return st.sampled_from((BOOL, *WIDTHS))
