"""Why a herd test cannot be expressed in PISA: the skip reasons the import summary counts."""

from __future__ import annotations

from pisa_mm.enums import Enum
from pisa_mm.errors import Span


class Reason(Enum):
    """One value per kind of inexpressible test (docs/import.md lists each with its cause)."""

    SC_RMW = "seq_cst-rmw"
    CAS_ORDER = "cas-failure-order"
    WEAK_CAS = "weak-cas"
    CONSUME = "consume"
    ORDER = "invalid-order"
    WORK_ITEM_SCOPE = "work-item-scope"
    SUBGROUP_ATOMIC = "subgroup-atomic"
    NARROW_RELAXED = "narrow-relaxed"
    SUBGROUP_FENCE = "subgroup-fence"
    SYSTEM_LOCAL_FENCE = "system-local-fence"
    FENCE_SPACES = "fence-spaces"
    BARRIER = "barrier"
    TYPE = "type"
    MIXED_SIZE = "mixed-size"
    POINTER = "pointer"
    LOOP = "loop"
    OPERATOR = "operator"
    CALL = "call"
    SPACE = "space"
    LOCAL_SHARING = "local-across-work-groups"
    PLACEMENT = "placement"
    CONDITION = "condition"
    VALIDATION = "validation"


class Unsupported(Exception):
    """Raised by the translator: the test is skipped, with a located reason."""

    def __init__(self, reason: Reason, message: str, span: Span | None) -> None:
        super().__init__(message)
        self.reason = reason
        self.message = message
        self.span = span

    def render(self) -> str:
        where = f"{self.span}: " if self.span is not None else ""
        return f"{where}skipped: {self.message} [{self.reason.value}]"
