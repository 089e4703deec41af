"""Machine-readable results: one JSON document per run, stable key order."""

from __future__ import annotations

import json
from collections.abc import Sequence
from typing import Any

from pisa_mm.outcomes.condition import observation
from pisa_mm.outcomes.model import TestResult

__all__ = ["result_to_dict", "results_to_json"]

# 2: `cut` is a count (executions, or distinct states when `counts_executions` is false),
# flags carry `cut` (raised only by cut executions).
# 3: `liveness` (null without spin loops, else {"status", "detail"}).
# 4: `verdict_only` (run --verdict-only): then states and flags are empty, positive and
# negative 0 and observation null (nothing was listed), and cut 1 means "some".
# 5: `seconds` is null under `run --no-time`, so that two runs' documents compare.
SCHEMA_VERSION = 5


def result_to_dict(result: TestResult, *, time: bool = True) -> dict[str, Any]:
    """`time` False (`run --no-time`): `seconds` is null."""
    return {
        "name": result.name,
        "model": result.model,
        "engine": result.engine,
        "quantifier": result.quantifier,
        "condition": result.condition_text,
        "observables": [str(o) for o in result.observables],
        "states": [dict(s.values) for s in sorted(result.states)],
        "verdict": result.verdict.value,
        "positive": result.positive,
        "negative": result.negative,
        "counts_executions": result.counts_executions,
        "observation": None
        if result.verdict_only
        else observation(result.positive, result.negative),
        "flags": [
            {
                "name": f.name,
                "events": list(f.events),
                "description": f.description,
                "cut": f.cut,
            }
            for f in sorted(result.flags, key=lambda f: (f.name, f.events))
        ],
        "cut": result.cut,
        "liveness": None
        if result.liveness is None
        else {"status": result.liveness.status.value, "detail": result.liveness.detail},
        "verdict_only": result.verdict_only,
        "seconds": round(result.seconds, 3) if time else None,
    }


def results_to_json(
    records: Sequence[tuple[str, TestResult, Sequence[str]]], *, time: bool = True
) -> str:
    """One record per (test file, result, differences from its expectation or other engines);
    `time` False leaves the times out (null)."""
    doc = {
        "version": SCHEMA_VERSION,
        "results": [
            {"file": path, **result_to_dict(r, time=time), "mismatches": list(diffs)}
            for path, r, diffs in records
        ],
    }
    return json.dumps(doc, indent=2) + "\n"
