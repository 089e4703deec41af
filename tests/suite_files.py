"""The bundled litmus files the tests iterate over: hand-written always, generated sampled.

litmus/gen (about a thousand generated tests, their expectations recorded by `promote`)
would make every per-file test run a thousand times: the default run takes a fixed sample of
it, `-m slow` all of it (tests/golden/test_suite.py).
"""

from __future__ import annotations

from pathlib import Path

__all__ = ["GENERATED", "GENERATED_SAMPLE", "HAND_WRITTEN", "ROOT"]

ROOT = Path(__file__).resolve().parents[1]
_ALL = sorted(ROOT.glob("litmus/**/*.litmus"))
GENERATED = [p for p in _ALL if p.relative_to(ROOT / "litmus").parts[0] == "gen"]
HAND_WRITTEN = [p for p in _ALL if p not in set(GENERATED)]
# Every 40th file in sorted order: the same ~27 tests each run, spread over all the shapes.
GENERATED_SAMPLE = GENERATED[::40]
