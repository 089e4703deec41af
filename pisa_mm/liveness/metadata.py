"""A test's `liveness.PROGRESS =` metadata (bare `liveness =`: pisa's) against its Liveness line."""

from __future__ import annotations

from collections.abc import Sequence

from pisa_mm.outcomes.model import TestResult

__all__ = ["liveness_problems"]


def liveness_problems(
    metadata: Sequence[tuple[str, str]], progress: str, results: Sequence[TestResult]
) -> list[str] | None:
    """Differences between the stated and computed liveness under `progress`; None when
    none is stated for it, or when the check was skipped (`--progress none`): nothing was
    compared."""
    meta = dict(metadata)
    want = meta.get(f"liveness.{progress}")
    if want is None and progress == "pisa":
        want = meta.get("liveness")
    if want is None:
        return None
    out = []
    for r in results[:1]:  # computed once per test, whatever the engine
        got = "none" if r.liveness is None else r.liveness.status.value
        if not got.startswith(want.strip()):
            out.append(
                f"liveness: metadata expects {want.strip()} (--progress {progress}), got {got}"
            )
    return out
