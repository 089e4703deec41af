"""The sweep dimensions of `pisa-mm gen`: order schemes, spaces, placements, fences, RMWs."""

from __future__ import annotations

from pisa_mm.enums import Enum
from pisa_mm.events.kinds import Order, Scope
from pisa_mm.gen.edges import FenceSpace, RmwKind
from pisa_mm.records import record


class OrderScheme(Enum):
    """How the accesses that the cycle leaves unannotated get their memory order."""

    WEAK = "weak"  # every access non-atomic
    RLX = "rlx"  # every access relaxed
    REL_ACQ = "rel-acq"  # writes release, reads acquire (an iatom by its role)
    ACQ_REL = "acq_rel"  # as rel-acq, and every iatom acq_rel
    SYNC = "sync"  # release/acquire at the synchronisation points only, others weak
    SC = "sc"  # every access seq_cst


class SpaceChoice(Enum):
    GLOBAL = "global"
    SHARED = "shared"
    GENERIC = "generic"  # global locations, every access through a .generic pointer


class Placement(Enum):
    SAME_SG = "same-sg"  # all threads work-items of one sub-group
    SAME_WG = "same-wg"  # one work-group, a sub-group each
    DIFF_WG = "diff-wg"  # one NDRange, a work-group each
    DIFF_GPU = "diff-gpu"  # an NDRange each
    HOST = "host"  # one thread on the host (each in turn), the others a work-group each


class FenceKind(Enum):
    NONE = "none"  # keep Pod edges as they are
    SC = "sc"
    ACQ_REL = "acq_rel"
    REL_ACQ = "rel-acq"  # release before a write, acquire between two reads, none W->R
    SG = "sg"  # fence.subgroup


@record
class FenceChoice:
    """A value of --fences: a kind and, optionally, the fences' space (else the data's)."""

    kind: FenceKind
    space: FenceSpace | None = None

    def __str__(self) -> str:
        return self.kind.value + (f".{self.space.value}" if self.space is not None else "")


NO_FENCE = FenceChoice(FenceKind.NONE)


@record
class RmwChoice:
    """Replace event `position` of the shape's cycle (as written) by an iatom `kind`."""

    kind: RmwKind
    position: int


@record
class Params:
    """One point of the sweep."""

    orders: OrderScheme = OrderScheme.RLX
    scope: Scope = Scope.GPU
    space: SpaceChoice = SpaceChoice.GLOBAL
    placement: Placement = Placement.DIFF_WG
    fence: FenceChoice = NO_FENCE
    rmw: RmwChoice | None = None
    host_thread: int = 0  # for Placement.HOST: which thread runs on the host


SCHEME_ORDERS = {
    OrderScheme.WEAK: Order.NA,
    OrderScheme.RLX: Order.RLX,
    OrderScheme.SC: Order.SC,
}
