"""The syntax tree of an imported herd C11 / OpenCL litmus test (both dialects share it)."""

from __future__ import annotations

from pisa_mm.enums import Enum
from pisa_mm.errors import Span
from pisa_mm.records import record


class Dialect(Enum):
    C11 = "c11"
    OPENCL = "opencl"


# ---------------------------------------------------------------- expressions


@record
class Const:
    value: int
    span: Span


@record
class Name:
    """An identifier: a register, a location parameter, or a constant such as
    `memory_order_relaxed` or `CLK_GLOBAL_MEM_FENCE`."""

    name: str
    span: Span


@record
class Deref:
    """`*x`: a plain read of location parameter x."""

    name: str
    span: Span


@record
class AddrOf:
    name: str
    span: Span


@record
class Call:
    func: str
    args: tuple[Expr, ...]
    span: Span


@record
class BinOp:
    """Arithmetic, bitwise, comparison and logical (`&&`, `||`) operators."""

    op: str
    lhs: Expr
    rhs: Expr
    span: Span


@record
class UnOp:
    op: str  # "-" or "!"
    arg: Expr
    span: Span


Expr = Const | Name | Deref | AddrOf | Call | BinOp | UnOp

# ---------------------------------------------------------------- statements


@record
class Decl:
    """`int r0;` or `int r0 = e;`."""

    type: tuple[str, ...]
    name: str
    init: Expr | None
    span: Span


@record
class Assign:
    name: str
    value: Expr
    span: Span


@record
class Store:
    """`*x = e;`: a plain write of location parameter x."""

    name: str
    value: Expr
    span: Span


@record
class CallStmt:
    call: Call
    span: Span


@record
class If:
    cond: Expr
    then: tuple[Stmt, ...]
    orelse: tuple[Stmt, ...]
    span: Span


@record
class While:
    cond: Expr
    body: tuple[Stmt, ...]
    span: Span


Stmt = Decl | Assign | Store | CallStmt | If | While

# ---------------------------------------------------------------- test


@record
class InitItem:
    """One init-block entry: a location (`[x] = 0`, `int x = 0`) or a register (`0:r0 = 1`).

    `pointer` is set when the value is an address (`p = &x`) or the type is a pointer."""

    thread: int | None
    name: str
    type: tuple[str, ...]
    value: int
    pointer: bool
    span: Span


@record
class Param:
    """`global atomic_int* x`: the location x as seen by one thread."""

    type: tuple[str, ...]
    name: str
    span: Span


@record
class Thread:
    proc: int
    placement: tuple[tuple[str, int], ...]
    params: tuple[Param, ...]
    body: tuple[Stmt, ...]
    span: Span


@record
class ScopeTree:
    """herd's `scopes:` tree: `(device (work_group P0 P1) (work_group P2))`."""

    level: str
    procs: tuple[int, ...]
    children: tuple[ScopeTree, ...]
    span: Span


# herd's condition


@record
class CLoc:
    """`1:r0` (thread set), `x` / `[x]`, or `a[2]` (index set)."""

    thread: int | None
    name: str
    index: int | None
    span: Span


@record
class PAtom:
    loc: CLoc
    value: int
    negated: bool


@record
class PBool:
    value: bool


@record
class PNot:
    arg: HProp


@record
class PBin:
    op: str  # "/\\", "\\/", "->"
    lhs: HProp
    rhs: HProp


HProp = PAtom | PBool | PNot | PBin


@record
class HerdTest:
    dialect: Dialect
    name: str
    description: str | None
    info: tuple[tuple[str, str], ...]  # herd's `key=value` header lines
    path: str
    inits: tuple[InitItem, ...]
    threads: tuple[Thread, ...]
    scopes: ScopeTree | None
    regions: tuple[tuple[str, str, Span], ...]
    locations: tuple[CLoc, ...]
    filter: HProp | None
    quantifier: str  # "exists", "~exists", "forall"
    prop: HProp
    header_span: Span
