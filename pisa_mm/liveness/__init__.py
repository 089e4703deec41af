"""Forward progress: spin loops and whether they can wait forever (docs/progress.md)."""

from pisa_mm.liveness.check import check_liveness
from pisa_mm.liveness.loops import SpinLoop, spin_loops
from pisa_mm.liveness.progress import PROGRESS_MODELS, Progress

__all__ = ["PROGRESS_MODELS", "Progress", "SpinLoop", "check_liveness", "spin_loops"]
