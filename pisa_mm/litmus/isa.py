"""The instruction and qualifier tables of PISA sections 5, 8 and 9 and the register ops."""

from __future__ import annotations

from pisa_mm.events.kinds import Order, Scope, Space
from pisa_mm.litmus.program import AddrSpace, AluOp, CmpOp, FAtomOp, IAtomOp
from pisa_mm.values.expr import FpFormat

SPACES = {s.value: s for s in AddrSpace}
ORDERS = {
    "relaxed": Order.RLX,
    "acquire": Order.ACQ,
    "release": Order.REL,
    "acq_rel": Order.ACQ_REL,
    "seq_cst": Order.SC,
}
SCOPES = {"subgroup": Scope.SG, "workgroup": Scope.WG, "gpu": Scope.GPU, "system": Scope.SYS}
WIDTHS = {"8b": 8, "16b": 16, "32b": 32, "64b": 64, "128b": 128}
VECS = {"v2": 2, "v3": 3, "v4": 4, "v8": 8}
FTYPES = {f.value[0]: f for f in FpFormat}

# Space of a declared variable, and its address size in bits (PISA 2.1 / 3.3).
DECL_SPACES = {"global": Space.GLOBAL, "shared": Space.SHARED, "const": Space.CONST}
ADDRESS_BITS = {Space.GLOBAL: 64, Space.CONST: 64, Space.SHARED: 32, Space.PRIVATE: 32}

# ---------------------------------------------------------------- ld / st (PISA 8.3, 8.5)
LD_ATOMIC_ORDERS = frozenset({"relaxed", "acquire", "seq_cst"})
ST_ATOMIC_ORDERS = frozenset({"relaxed", "release", "seq_cst"})
NONATOMIC_TYPES = frozenset({8, 16, 32, 64})
ATOMIC_TYPES = frozenset({16, 32, 64, 128})
LD_NONATOMIC_SPACES = frozenset(AddrSpace)
ST_NONATOMIC_SPACES = frozenset(AddrSpace) - {AddrSpace.CONST}
ATOMIC_SPACES = frozenset({AddrSpace.GLOBAL, AddrSpace.SHARED, AddrSpace.GENERIC})
# Vector lengths allowed per element type (PISA 5.2 and 8.3/8.5 restrictions).
VEC_TYPES = {
    2: frozenset({8, 16, 32, 64}),
    3: frozenset({32, 64}),
    4: frozenset({8, 16, 32, 64}),
    8: frozenset({32}),
}


def _cc_combos(l1: tuple[str, ...], l2: tuple[str, ...], l3: tuple[str, ...]) -> set[str]:
    return {f"{a}.{b}.{c}" for a in l1 for b in l2 for c in l3}


# Non-atomic cache controls, written as dotted groups (`.L1uc.L2c.L3c`).
LD_CC = frozenset(_cc_combos(("L1uc", "L1c", "L1s"), ("L2uc", "L2c"), ("L3uc", "L3c")) | {"ri"})
ST_CC = frozenset(
    _cc_combos(("L1uc", "L1wt"), ("L2uc", "L2wb"), ("L3uc", "L3wb"))
    | {"L1s.L2uc.L3uc", "L1s.L2uc.L3wb", "L1s.L2wb.L3uc"}
    | {"L1wb.L2uc.L3uc", "L1wb.L2wb.L3uc", "L1wb.L2uc.L3wb"}
)
ATOMIC_CC = frozenset({"uc", "L2wb", "L3wb"})
CC_PARTS = frozenset(
    {"uc", "ri", "L1uc", "L1c", "L1s", "L1wb", "L1wt", "L2uc", "L2c", "L2wb", "L3uc", "L3c", "L3wb"}
)

# ---------------------------------------------------------------- iatom (PISA 8.2)
IATOM_OPS = {o.value: o for o in IAtomOp}
_I13 = frozenset(IAtomOp) - {IAtomOp.INCWRAP, IAtomOp.DECWRAP}
_I12 = _I13 - {IAtomOp.CAS}
_WRAP = frozenset({IAtomOp.INCWRAP, IAtomOp.DECWRAP})
_CASX = frozenset({IAtomOp.CAS, IAtomOp.XCHG})
# (spaces, ops, widths): the rows of the "supported combinations" table.
IATOM_TABLE: tuple[tuple[frozenset[AddrSpace], frozenset[IAtomOp], frozenset[int]], ...] = (
    (frozenset({AddrSpace.GLOBAL}), _I13, frozenset({16, 32, 64})),
    (frozenset({AddrSpace.GLOBAL}), _WRAP, frozenset({32, 64})),
    (frozenset({AddrSpace.SHARED, AddrSpace.GENERIC}), _I12, frozenset({16, 32})),
    (
        frozenset({AddrSpace.SHARED, AddrSpace.GENERIC}),
        frozenset({IAtomOp.CAS}),
        frozenset({16, 32, 64}),
    ),
    (frozenset({AddrSpace.SHARED, AddrSpace.GENERIC}), _WRAP, frozenset({32})),
    (ATOMIC_SPACES, _CASX, frozenset({128})),
)


def iatom_widths(space: AddrSpace, op: IAtomOp) -> frozenset[int]:
    """The `.type` widths PISA 8.2 allows for `op` on `space`."""
    out: set[int] = set()
    for spaces, ops, widths in IATOM_TABLE:
        if space in spaces and op in ops:
            out |= widths
    return frozenset(out)


def iatom_sources(op: IAtomOp) -> int:
    """How many source operands follow `[addr]` (inc/dec none, cas two, else one)."""
    if op in (IAtomOp.INC, IAtomOp.DEC):
        return 0
    return 2 if op is IAtomOp.CAS else 1


# ---------------------------------------------------------------- fatom (PISA 8.1)
FATOM_OPS = {o.value: o for o in FAtomOp}
_F3 = frozenset({FpFormat.HF, FpFormat.BF, FpFormat.F})


def fatom_formats(space: AddrSpace, op: FAtomOp) -> frozenset[FpFormat]:
    if space is AddrSpace.GLOBAL and op in (FAtomOp.ADD, FAtomOp.SUB):
        return _F3 | {FpFormat.DF}
    return _F3


# ---------------------------------------------------------------- fence (PISA 9.2)
FENCE_ORDERS = frozenset({"acquire", "release", "acq_rel", "seq_cst"})
FENCE_SCOPES = {
    None: frozenset({"workgroup", "gpu"}),
    AddrSpace.SHARED: frozenset({"workgroup", "gpu"}),
    AddrSpace.GENERIC: frozenset({"workgroup", "gpu"}),
    AddrSpace.GLOBAL: frozenset({"workgroup", "gpu", "system"}),
}

# ---------------------------------------------------------------- register instructions
INT_TYPES = frozenset({16, 32, 64})
# mnemonic -> (operator, number of sources, allowed widths)
ALU = {
    "mov": (AluOp.MOV, 1, frozenset({8, 16, 32, 64, 128})),
    "iadd": (AluOp.ADD, 2, INT_TYPES),
    "isub": (AluOp.SUB, 2, INT_TYPES),
    "smul": (AluOp.SMUL, 2, INT_TYPES),
    "umul": (AluOp.UMUL, 2, INT_TYPES),
    "and": (AluOp.AND, 2, INT_TYPES),
    "or": (AluOp.OR, 2, INT_TYPES),
    "xor": (AluOp.XOR, 2, INT_TYPES),
    "not": (AluOp.NOT, 1, INT_TYPES),
    "shl": (AluOp.SHL, 2, INT_TYPES),
    "shr": (AluOp.SHR, 2, INT_TYPES),
    "asr": (AluOp.ASR, 2, INT_TYPES),
    "smin": (AluOp.SMIN, 2, INT_TYPES),
    "smax": (AluOp.SMAX, 2, INT_TYPES),
    "umin": (AluOp.UMIN, 2, INT_TYPES),
    "umax": (AluOp.UMAX, 2, INT_TYPES),
    "ineg": (AluOp.NEG, 1, INT_TYPES),
}
SHIFTS = frozenset({AluOp.SHL, AluOp.SHR, AluOp.ASR})  # src1 is a 32-bit shift amount
CMP_OPS = {o.value: o for o in CmpOp}
SHFL_OPS = frozenset({"up", "dn", "xor", "idx"})
IRED_OPS = frozenset({"sum", "smin", "smax", "umin", "umax", "and", "or", "xor", "absmax"})
CP_ASYNC_SIZES = frozenset({4, 8, 16})  # cp-size of PTX cp.async.ca

# PISA instructions that exist but that litmus threads do not model: named in the message.
UNSUPPORTED = frozenset(
    {
        "dp4a",
        "iabs",
        "sdiv",
        "udiv",
        "smad",
        "umad",
        "uaddc",
        "bfi",
        "bfn",
        "bfrev",
        "cbit",
        "fbh",
        "fbl",
        "sbfe",
        "ubfe",
        "shf",
        "extract",
        "insert",
        "f2i",
        "i2f",
        "fext",
        "frnd",
        "ftrunc",
        "ftrunc2",
        "isaddr",
        "pf2i",
        "sext",
        "trunc",
        "zext",
        "fcmp",
        "call",
        "fred",
        "fadd",
        "fsub",
        "fmul",
        "fdiv",
        "fma",
        "fmin",
        "fmax",
        "fabs",
        "fneg",
        "fsqrt",
        "frcp",
        "frsqrt",
        "fsin",
        "fcos",
        "fexp2",
        "flog2",
    }
)
