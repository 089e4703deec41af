"""Benchmark: `diff --search` per shipped variant and the model edit, and diffing the suite.

For each shipped variant of `pisa` (pisa-rc11, pisa-rs11, pisa-samescope, pisa-ownspace)
and the model edit that the bundled suite misses (tests/data/models/pisa-rrfence.cat), runs
`pisa-mm diff pisa NEW --search N` with the default sweep and prints the test it finds, its
size, the candidates tried, the wall-clock seconds and the CPU seconds (the command's and
its workers'). Then the time to diff the bundled suite: `pisa-mm diff pisa pisa-rc11
litmus/`. Every run is a fresh `pisa-mm` process, as a user runs it (start-up included).

    python bench/bench_search.py [--jobs N] [--size N] [--cases a,b] [--no-suite]
"""

from __future__ import annotations

import argparse
import os
import re
import subprocess
import sys
import time
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent))

from common import ROOT, fmt

EDIT = "tests/data/models/pisa-rrfence.cat"
CASES = {
    "pisa-rc11": "pisa-rc11",
    "pisa-rs11": "pisa-rs11",
    "pisa-samescope": "pisa-samescope",
    "pisa-ownspace": "pisa-ownspace",
    "pisa-rrfence": EDIT,  # the model edit the bundled suite misses
}
FOUND = re.compile(
    r"^found (\S+) \(size (\d+), ([^)]*)\); (\d+) candidates? tried in ([\d.]+) s "
    r"\(CPU ([\d.]+) s\)",
    re.M,
)


def _run(argv: list[str]) -> tuple[float, float, subprocess.CompletedProcess[str]]:
    """Wall-clock and CPU seconds (user + system of the child and its workers) of a fresh
    `pisa-mm` process."""
    before = os.times()
    start = time.perf_counter()
    done = subprocess.run(
        [sys.executable, "-m", "pisa_mm.cli", *argv], cwd=ROOT, capture_output=True, text=True
    )
    wall = time.perf_counter() - start
    after = os.times()
    cpu = (after.children_user - before.children_user) + (
        after.children_system - before.children_system
    )
    return wall, cpu, done


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--jobs", type=int, default=1, help="pisa-mm's -j (default 1)")
    parser.add_argument("--size", type=int, default=6, help="--search N (default 6)")
    parser.add_argument("--cases", help="comma-separated subset of: " + ",".join(CASES))
    parser.add_argument("--no-suite", action="store_true", help="skip diffing litmus/")
    args = parser.parse_args()
    names = args.cases.split(",") if args.cases else list(CASES)
    if unknown := [n for n in names if n not in CASES]:
        parser.error(f"unknown cases: {', '.join(unknown)}")
    jobs = ["-j", str(args.jobs)]
    print(f"diff pisa NEW --search {args.size} {' '.join(jobs)} (default sweep), fresh process")
    print(f"{'NEW':22} {'found':66} {'size':>4} {'tried':>6} {'wall s':>7} {'CPU s':>7}")
    for name in names:
        wall, cpu, done = _run(["diff", "pisa", CASES[name], "--search", str(args.size), *jobs])
        match = FOUND.search(done.stdout)
        if match is None:
            last = (done.stdout.strip().splitlines() or ["(no output)"])[-1]
            print(f"{name:22} exit {done.returncode}: {last[:120]}")
            continue
        test, size, _step, tried = match.group(1), match.group(2), match.group(3), match.group(4)
        print(f"{name:22} {test:66} {size:>4} {tried:>6} {fmt(wall, 7)} {fmt(cpu, 7)}")
    if not args.no_suite:
        wall, cpu, done = _run(["diff", "pisa", "pisa-rc11", "litmus/", *jobs])
        summary = next(
            (ln for ln in reversed(done.stdout.splitlines()) if " tests, " in ln), "(no summary)"
        )
        print(f"\ndiff pisa pisa-rc11 litmus/ {' '.join(jobs)}: {fmt(wall, 0)} s wall, "
              f"{fmt(cpu, 0)} s CPU; {summary}")  # fmt: skip
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
