"""Budgets at their edges, found by the second round of scripted attacks of issue 14 (kept
outside the repo): a deadline that fires at any moment of a test ends it as Unknown, with
nothing printed but the answer."""

from __future__ import annotations

import subprocess
import sys
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[2]
MP = ROOT / "litmus" / "pisa" / "mp" / "MP+rel.gpu+acq.gpu.litmus"
CLI = "import sys; from pisa_mm.cli import main; sys.exit(main(sys.argv[1:]))"


@pytest.mark.parametrize("timeout", ["1e-4", "3e-3"])
def test_a_deadline_during_the_solvers_first_use_prints_no_traceback(timeout: str) -> None:
    # was: z3's context was made lazily inside the budget; the deadline's OutOfTime landed
    # in its __init__ and the half-built context's __del__ printed a traceback (a fresh
    # process is needed: the context is made once per process)
    argv = ["query", str(MP), "--outcome", "P1:%r0 == 1", "--timeout", timeout]
    proc = subprocess.run(
        [sys.executable, "-c", CLI, *argv], capture_output=True, text=True, timeout=60
    )
    assert proc.returncode == 4, proc.stderr
    assert "Unknown (timeout" in proc.stdout
    assert proc.stderr == ""
