"""A test's `liveness =` metadata (`liveness.PROGRESS =` first) against its Liveness line."""

from __future__ import annotations

from collections.abc import Sequence

from pisa_mm.outcomes.model import TestResult

__all__ = ["liveness_problems"]


def liveness_problems(
    metadata: Sequence[tuple[str, str]], progress: str, results: Sequence[TestResult]
) -> list[str]:
    """Differences between the stated and computed liveness (empty when none is stated)."""
    meta = dict(metadata)
    want = meta.get(f"liveness.{progress}", meta.get("liveness"))
    if want is None:
        return []
    out = []
    for r in results[:1]:  # computed once per test, whatever the engine
        got = "none" if r.liveness is None else r.liveness.status.value
        if not got.startswith(want.strip()):
            out.append(
                f"liveness: metadata expects {want.strip()} (--progress {progress}), got {got}"
            )
    return out
