"""The progress models: which work-items a scheduler may starve while another spins."""

from __future__ import annotations

from pisa_mm.enums import Enum
from pisa_mm.events.model import Placement
from pisa_mm.records import record

__all__ = ["PROGRESS_MODELS", "Progress", "Starvable", "starvable"]


class Progress(Enum):
    """`--progress`: PISA 1.1.1 (the default), occupancy-bound, fair, unfair."""

    PISA = "pisa"
    OBE = "obe"
    FAIR = "fair"
    UNFAIR = "unfair"


PROGRESS_MODELS = tuple(p.value for p in Progress)


@record
class Starvable:
    """A scheduler may stop running a work-item for ever while the waiter spins: `reason`
    cites PISA 1.1.1 or Sorensen et al.; with `unstarted`, only if the work-item's whole
    work-group has not started (occupancy-bound execution)."""

    reason: str
    unstarted: bool = False


_LANE = (
    "it is another work-item of the same sub-group, which PISA 1.1.1 gives no "
    "forward-progress guarantee with respect to the waiter"
)
_OBE = (
    "its work-group may not have started, and an occupancy-bound scheduler "
    "(Sorensen et al., CONCUR 2018) need not start it while the waiter spins"
)
_HOST = (
    "one of the two runs on the host, and PISA 1.1.1 promises nothing about progress "
    "between the host and a kernel's work-groups"
)
_WG = (
    "it is in another work-group, and PISA 1.1.1 runs work-groups in an unspecified "
    "order, not necessarily in parallel"
)


def _same_wg(a: Placement, b: Placement) -> bool:
    return not a.host and not b.host and a.gpu == b.gpu and a.wg == b.wg


def starvable(progress: Progress, waiter: Placement, other: Placement) -> Starvable | None:
    """Whether (and why) a scheduler under `progress` may stop running `other` for ever
    while `waiter` spins; None when it must keep running it."""
    if progress is Progress.FAIR:
        return None
    if progress is Progress.UNFAIR:
        return Starvable("the unfair model schedules no work-item but the waiter")
    if _same_wg(waiter, other):
        if waiter.sg == other.sg:
            return Starvable(_LANE)
        return None  # PISA 1.1.1: sub-groups of one work-group make independent progress
    if waiter.host or other.host:
        return Starvable(_HOST)
    if progress is Progress.OBE:
        return Starvable(_OBE, unstarted=True)
    return Starvable(_WG)
