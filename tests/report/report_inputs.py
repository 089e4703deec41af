"""Shared inputs of the report tests: suite files and a skip for a missing Graphviz."""

from __future__ import annotations

import shutil
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[2]
MP = ROOT / "litmus/pisa/mp/MP+rel.gpu+acq.gpu.litmus"
MP_RLX = ROOT / "litmus/pisa/mp/MP+rlx+rlx.litmus"

needs_dot = pytest.mark.skipif(
    shutil.which("dot") is None,
    reason="Graphviz's `dot` is not installed (apt-get install graphviz)",
)
