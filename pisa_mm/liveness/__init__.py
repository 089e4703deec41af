"""Forward progress: spin loops and whether they can wait forever (docs/progress.md)."""

from pisa_mm.liveness.check import Analysis, analyse, check_liveness
from pisa_mm.liveness.loops import SpinLoop, spin_loops
from pisa_mm.liveness.progress import PROGRESS_MODELS, Progress
from pisa_mm.outcomes.model import LivenessStatus

__all__ = [
    "PROGRESS_MODELS",
    "Analysis",
    "LivenessStatus",
    "Progress",
    "SpinLoop",
    "analyse",
    "check_liveness",
    "spin_loops",
]
