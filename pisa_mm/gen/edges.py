"""The edge and event-annotation vocabulary of generator cycles (frozen data, no behaviour)."""

from __future__ import annotations

from pisa_mm.enums import Enum
from pisa_mm.errors import Span
from pisa_mm.events.kinds import Order, Scope
from pisa_mm.records import record, replace


class Dir(Enum):
    """The kind of a memory event of the cycle: a read or a write."""

    R = "R"
    W = "W"


class EdgeKind(Enum):
    PO = "Po"  # program order
    FENCE = "Fence"  # program order with a fence between
    DP = "Dp"  # program order with a syntactic dependency
    RF = "Rf"
    FR = "Fr"
    CO = "Co"


class DepKind(Enum):
    ADDR = "Addr"
    DATA = "Data"
    CTRL = "Ctrl"


class RmwKind(Enum):
    """The `iatom` operation an access becomes (PISA 8.2)."""

    XCHG = "xchg"
    ADD = "add"
    CAS = "cas"


class LocSpace(Enum):
    """The space a generated location is declared in."""

    GLOBAL = "global"
    SHARED = "shared"


class FenceSpace(Enum):
    """The address-space qualifier of a fence (PISA 9.2); GENERIC covers both spaces."""

    GLOBAL = "global"
    SHARED = "shared"
    GENERIC = "generic"


COMMUNICATION = frozenset({EdgeKind.RF, EdgeKind.FR, EdgeKind.CO})

# Cycle spelling of orders and scopes (lower case; `weak` is a non-atomic access).
ORDER_WORDS: dict[str, Order] = {
    "weak": Order.NA,
    "rlx": Order.RLX,
    "acq": Order.ACQ,
    "rel": Order.REL,
    "acq_rel": Order.ACQ_REL,
    "sc": Order.SC,
}
SCOPE_WORDS: dict[str, Scope] = {"sg": Scope.SG, "wg": Scope.WG, "gpu": Scope.GPU, "sys": Scope.SYS}
ORDER_NAMES = {v: k for k, v in ORDER_WORDS.items()}
SCOPE_NAMES = {v: k for k, v in SCOPE_WORDS.items()}


@record
class FenceSpec:
    """A fence's qualifiers; None fields are filled in by the sweep (order/space) or scope."""

    order: Order | None = None
    space: FenceSpace | None = None
    scope: Scope | None = None


@record
class Edge:
    """One relation of the cycle, from one memory event to the next.

    `same_loc` and `external` describe the two endpoints; `src`/`dst` are the event kinds the
    edge fixes (None: left to the neighbouring edges, as for a bare `Fence`).
    """

    kind: EdgeKind
    same_loc: bool
    external: bool
    src: Dir | None
    dst: Dir | None
    fence: FenceSpec | None = None
    dep: DepKind | None = None
    text: str = ""
    span: Span | None = None
    place: Scope | None = None  # external edges: the narrowest scope the two threads share

    def with_dirs(self, src: Dir, dst: Dir) -> Edge:
        return replace(self, src=src, dst=dst)


@record
class EventAnnot:
    """What an annotation item (`rel.gpu`, `xchg.acq_rel`, `shared`) fixes about one event."""

    order: Order | None = None
    scope: Scope | None = None
    space: LocSpace | None = None
    generic: bool = False
    rmw: RmwKind | None = None
    span: Span | None = None

    def merge(self, other: EventAnnot) -> EventAnnot:
        """Fields of `other` override (used when the sweep fills what the cycle left open)."""
        return EventAnnot(
            other.order if other.order is not None else self.order,
            other.scope if other.scope is not None else self.scope,
            other.space if other.space is not None else self.space,
            self.generic or other.generic,
            other.rmw if other.rmw is not None else self.rmw,
            self.span or other.span,
        )


NO_ANNOT = EventAnnot()


@record
class Cycle:
    """A cycle: edge i goes from event i to event i+1 (mod n); annots[i] decorates event i."""

    edges: tuple[Edge, ...]
    annots: tuple[EventAnnot, ...]
    text: str = ""

    def __len__(self) -> int:
        return len(self.edges)

    def rotate(self, k: int) -> Cycle:
        """The same cycle read from event k."""
        return Cycle(self.edges[k:] + self.edges[:k], self.annots[k:] + self.annots[:k], self.text)
