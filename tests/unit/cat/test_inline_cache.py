"""The generated functions of cat/inline.py come from the cache of compiled code
(pisa_mm/codecache.py) in a second process, and give the same results."""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path
from typing import Any

ROOT = Path(__file__).resolve().parents[3]
TESTS = [
    ROOT / "litmus" / "pisa" / part
    for part in (
        "mp/MP+64b+cc.litmus",
        "coherence/CoRR+generic.litmus",
        "fence/ISA2+fence.shared.gpu+relay-wg.litmus",
        "barrier/Barrier+divergence.litmus",
    )
]
# One process: the explicit engine on the pisa model (an Evaluator with generated
# functions), its results, and what the cache gave the generated functions.
SCRIPT = """
import dataclasses, json, sys
from pisa_mm import codecache
from pisa_mm.cat.loader import load_model
from pisa_mm.engines import EngineOptions
from pisa_mm.events.build import build
from pisa_mm.explicit.engine import run_test
from pisa_mm.litmus import load_test

group = "cat inline " + load_model("pisa").path  # the pisa model's group
results = []
for path in sys.argv[1:]:
    test = load_test(path)
    result = run_test(test, build(test), load_model("pisa"), EngineOptions())
    results.append(repr(dataclasses.replace(result, seconds=0.0)))
print(json.dumps({
    "results": results,
    "sources": sorted(codecache.CODES.used.get(group, {})),
    "missed": group in codecache.CODES.missed,
}))
"""


def _process(cache: Path, *, off: bool = False, seed: str = "0") -> dict[str, Any]:
    env = {**os.environ, "XDG_CACHE_HOME": str(cache), "PYTHONHASHSEED": seed}
    env.pop("PISA_MM_NO_CACHE", None)
    if off:
        env["PISA_MM_NO_CACHE"] = "1"
    done = subprocess.run(
        [sys.executable, "-c", SCRIPT, *map(str, TESTS)],
        env=env,
        capture_output=True,
        text=True,
        check=True,
        cwd=ROOT,
    )
    answer: dict[str, Any] = json.loads(done.stdout)
    return answer


def test_a_second_process_takes_the_generated_code_from_the_cache(tmp_path: Path) -> None:
    first = _process(tmp_path, seed="1")
    assert len(first["results"]) == len(TESTS)
    assert first["missed"] and first["sources"]  # compiled, then written at exit
    second = _process(tmp_path, seed="2")  # another hash seed: set orders differ
    assert not second["missed"]  # every generated function's code came from the cache
    assert second["sources"] == first["sources"]  # the same text in every process
    assert second["results"] == first["results"]
    uncached = _process(tmp_path / "unused", off=True)
    assert uncached["results"] == first["results"]
    assert not (tmp_path / "unused").exists()
