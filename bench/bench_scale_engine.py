"""Benchmark: CPU time and peak RSS of `pisa-mm run --engine E` against the size of big, easy tests.

Two shapes of bench_frontend.py (issue 14): `stores`, one thread storing n times to @x and a
second loading it once (n+1 candidates: co among the stores is forced by the model), and
`loads`, n threads each loading @x once (one candidate). Each size runs as its own
`pisa-mm run --timeout T --no-time` process; the figures are its CPU time (user + sys of the
child) and peak RSS, the verdict line (`Unknown` when the budget ran out), and the growth of
the CPU time against the previous size (2.0 per doubling is linear, 8.0 cubic). `--engine`
takes a list: each shape runs under each engine (`auto` picks explicit on these: BIG_EVENTS
in explicit/auto.py).

    python bench/bench_scale_engine.py [--shape stores,loads] [--sizes 250,500,1000,2000]
        [--engine explicit,auto] [--timeout 60]
"""

from __future__ import annotations

import argparse
import os
import resource
import subprocess
import sys
import tempfile
import time
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent))

from bench_frontend import many_loads, many_stores

SHAPES = {"stores": many_stores, "loads": many_loads}


def run_one(text: str, engine: str, timeout: float) -> tuple[float, str]:
    """Wall seconds and the verdict of one run (its CPU time and RSS: `main`, from rusage)."""
    with tempfile.TemporaryDirectory() as tmp:
        path = os.path.join(tmp, "t.litmus")
        Path(path).write_text(text)
        cmd = [sys.executable, "-m", "pisa_mm.cli", "run", "--engine", engine]
        cmd += ["--timeout", str(timeout), "--no-time", "--progress", "none", path]
        start = time.perf_counter()
        done = subprocess.run(cmd, capture_output=True, text=True, check=False)
        wall = time.perf_counter() - start
    lines = done.stdout.splitlines()
    verdict = next((ln for ln in lines if ln.startswith("Observation")), "")
    if not verdict:
        verdict = next((ln for ln in lines if "Unknown" in ln), done.stdout.strip()[-60:])
    return wall, verdict


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--shape", default="stores,loads")
    ap.add_argument("--sizes", default="250,500,1000,2000,4000")
    ap.add_argument("--engine", default="explicit,auto")
    ap.add_argument("--timeout", type=float, default=60.0)
    args = ap.parse_args()
    sizes = [int(s) for s in args.sizes.split(",")]
    for shape, engine in ((s, e) for s in args.shape.split(",") for e in args.engine.split(",")):
        print(f"{shape} ({engine}, --timeout {args.timeout:g})")
        print(f"{'n':>6} {'cpu s':>8} {'x/2n':>6} {'wall s':>8} {'RSS MB':>8}  verdict")
        prev: float | None = None
        for n in sizes:
            before = resource.getrusage(resource.RUSAGE_CHILDREN)
            wall, verdict = run_one(SHAPES[shape](n), engine, args.timeout)
            after = resource.getrusage(resource.RUSAGE_CHILDREN)
            cpu = (after.ru_utime - before.ru_utime) + (after.ru_stime - before.ru_stime)
            rss = after.ru_maxrss / 1024  # the largest child so far: sizes grow
            growth = f"{cpu / prev:6.1f}" if prev else "     -"
            print(f"{n:>6} {cpu:8.2f} {growth} {wall:8.2f} {rss:8.1f}  {verdict}", flush=True)
            prev = cpu if cpu > 0.05 else None
            if "Unknown" in verdict:
                break  # the next sizes would only time out too


if __name__ == "__main__":
    main()
