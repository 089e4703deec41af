"""The fifth round of issue 14's attacks (a black-box round, scripts kept outside the repo):
a case per input that broke a promise. Each writes in its own temporary directory; none
writes where a regression could damage the repository (a write the tool must refuse is
made to fail loudly instead)."""

from __future__ import annotations

import subprocess
import sys
from pathlib import Path

import pytest

from pisa_mm.runner import files

ROOT = Path(__file__).resolve().parents[2]
CORE = ROOT / "pisa_mm" / "cat" / "models" / "pisa-core.cat"
PUBLISH_NULL = ROOT / "litmus" / "pisa" / "address" / "Ptr+publish+null.litmus"


@pytest.fixture
def no_replace(monkeypatch: pytest.MonkeyPatch) -> None:
    """A write the run should refuse fails the test instead of replacing the file."""

    def refuse(target: Path, raw: bytes, mode: int, path: str | Path) -> None:
        raise AssertionError(f"wrote {path}")

    monkeypatch.setattr(files, "_replace", refuse)


# ---------------------------------------------------------------- interrupted writes

_WRITE_INTERRUPTED = """
import os, signal, sys
from pisa_mm.runner import files, guard
target = sys.argv[1]
real = getattr(os, sys.argv[2])
def hit(*a, **k):
    done = real(*a, **k)
    os.kill(os.getpid(), signal.SIGINT)  # its handler runs here, before the return
    return done
setattr(os, sys.argv[2], hit)
try:
    with guard.interruptible():
        files.write_atomic(target, "new")
except guard.Interrupted as exc:
    print("interrupted", exc.signum)
"""


@pytest.mark.parametrize("where", ["open", "fdopen", "fsync", "chmod", "replace"])
def test_a_signal_during_a_write_leaves_the_old_file_or_the_new_one(
    tmp_path: Path, where: str
) -> None:
    # was: 1 of 30 interrupted `promote` runs left `.X.litmus.expected.XXXX.tmp` (the
    # Interrupted raised between mkstemp's creating the file and its return)
    target = tmp_path / "T.litmus.expected"
    target.write_text("old")
    done = subprocess.run(
        [sys.executable, "-c", _WRITE_INTERRUPTED, str(target), where],
        capture_output=True,
        text=True,
        cwd=ROOT,
        timeout=60,
    )
    assert done.stdout.strip() == "interrupted 2", done.stderr
    assert [p.name for p in tmp_path.iterdir()] == [target.name]
    assert target.read_text() in ("old", "new")
