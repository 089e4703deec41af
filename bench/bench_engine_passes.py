"""Benchmark: machine instructions per test of `pisa-mm run DIR --no-time --jobs 1`, on a
fixed subset of the generated suite, for the first pass in a fresh process and in the
steady state (the same directory run again in that process), per engine (callgrind).

The subset is every 10th test (sorted by path) of the suite of run_bench.py's throughput
section (`pisa-mm gen MP SB LB 2+2W S R WRC IRIW --orders all --scopes sys --fences all
--rmw none,xchg,add,cas`, 1,530 tests: 153 tests), copied to a directory. Per engine and
tree, three callgrind runs of one process each: the subset's first test alone, the subset
once, the subset twice. The first pass is (subset once - first test alone) / (n - 1): the
process's start-up and the model's loading, which the one-test run has too, left out, and
what the first tests compile once per process (the evaluator, the shared memos) counted
in. The steady state is (subset twice - subset once) / n.

    python bench/bench_engine_passes.py [--baseline SRC] [--engines explicit,auto]
                                        [--every 10] [--suite DIR]

With --engine-alone, the engine's own instructions instead: every test of the subset
loaded and built first, then judged once (the first pass) and twice (the second one is the
steady state), less the count of loading them only.

With --baseline SRC (e.g. `git archive main | tar -x -C SRC`), the same figures for that
tree, measured in the same run, and the ratios. Each tree runs with a fixed hash seed and
a cache directory of its own (XDG_CACHE_HOME), filled by one run without valgrind first:
two trees sharing one would replace each other's compiled model, and a run that compiles
it counts the compilation.
"""

from __future__ import annotations

import argparse
import os
import shutil
import subprocess
import sys
import tempfile
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]

SHAPES = ["MP", "SB", "LB", "2+2W", "S", "R", "WRC", "IRIW"]
GEN_OPTIONS = ["--orders", "all", "--scopes", "sys", "--fences", "all"]
GEN_OPTIONS += ["--rmw", "none,xchg,add,cas"]

# Run under callgrind with PYTHONPATH on the measured tree: argv = directory, passes, engine.
_CHILD = """
import os, sys
from pisa_mm.cli import main
suite, passes, engine = sys.argv[1], int(sys.argv[2]), sys.argv[3]
out = os.open(os.devnull, os.O_WRONLY)
os.dup2(out, 1)
os.dup2(out, 2)
for _ in range(passes):
    main(["run", suite, "--no-time", "--jobs", "1", "--engine", engine])
"""


# `--engine-alone`: every test of the directory loaded and built first, then judged by the
# engine alone, argv[2] times (argv = directory, passes, engine).
_ALONE_CHILD = """
import sys
from pathlib import Path
from pisa_mm.engines import EngineOptions, get_engine
from pisa_mm.runner.job import cached_model, load_source
model = cached_model("pisa")
tests = [load_source(str(p), p.read_text("utf-8"), unroll=None, strict=False)
         for p in sorted(Path(sys.argv[1]).rglob("*.litmus"))]
run = get_engine(sys.argv[3])
for _ in range(int(sys.argv[2])):
    for t in tests:
        run(t.test, t.structure, model, EngineOptions(unroll=t.unroll))
"""


def _env(src: Path, cache: Path) -> dict[str, str]:
    # A fixed hash seed: set and dict orders (and so the work) do not vary between the runs.
    # A cache directory per tree: two trees' compiled models would replace each other's.
    return dict(os.environ, PYTHONPATH=str(src), PYTHONHASHSEED="0", XDG_CACHE_HOME=str(cache))


def _count(
    src: Path, cache: Path, suite: Path, passes: int, engine: str, child: str = _CHILD
) -> int:
    env = _env(src, cache)
    argv = ["valgrind", "--tool=callgrind", "--callgrind-out-file=/dev/null",
            sys.executable, "-P", "-c", child, str(suite), str(passes), engine]  # fmt: skip
    err = subprocess.run(argv, env=env, capture_output=True, text=True, check=True).stderr
    collected = [line for line in err.splitlines() if "Collected :" in line]
    return int(collected[-1].split()[-1])


def measure(
    src: Path, cache: Path, subset: Path, one: Path, engine: str, n: int
) -> tuple[float, float]:
    """(first pass, steady state) instructions per test of `src` on `subset`."""
    env = _env(src, cache)
    # once without valgrind first: what a run writes to the user's cache (the compiled
    # model, the records' methods) is then there before every counted run
    warm = [sys.executable, "-P", "-c", _CHILD, str(subset), "1", engine]
    subprocess.run(warm, env=env, check=True, capture_output=True)
    alone = _count(src, cache, one, 1, engine)
    once = _count(src, cache, subset, 1, engine)
    twice = _count(src, cache, subset, 2, engine)
    return (once - alone) / (n - 1), (twice - once) / n


def measure_alone(src: Path, cache: Path, subset: Path, engine: str, n: int) -> tuple[float, float]:
    """(first pass, steady state) instructions per test of the engine alone: the counts
    of judging the loaded tests once and twice, less that of loading them only."""
    env = _env(src, cache)
    warm = [sys.executable, "-P", "-c", _ALONE_CHILD, str(subset), "1", engine]
    subprocess.run(warm, env=env, check=True, capture_output=True)
    counts = [_count(src, cache, subset, k, engine, _ALONE_CHILD) for k in (0, 1, 2)]
    return (counts[1] - counts[0]) / n, (counts[2] - counts[1]) / n


def _subset(suite: Path, every: int, into: Path) -> tuple[Path, Path, int]:
    paths = sorted(suite.rglob("*.litmus"))[::every]
    subset, one = into / "subset", into / "one"
    for k, p in enumerate(paths):
        for d in (subset, one) if k == 0 else (subset,):
            d.mkdir(parents=True, exist_ok=True)
            shutil.copy(p, d / f"{k:04d}-{p.name}")
    return subset, one, len(paths)


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--baseline", type=Path, help="another source tree, measured too")
    parser.add_argument("--engines", default="explicit,auto")
    parser.add_argument("--every", type=int, default=10, help="every Nth test of the suite")
    parser.add_argument("--suite", type=Path, help="the generated suite (default: generate)")
    parser.add_argument(
        "--engine-alone",
        action="store_true",
        help="count the engine alone (the tests loaded and built first, not counted)",
    )
    args = parser.parse_args()
    trees = [("this tree", ROOT)]
    if args.baseline is not None:
        trees.insert(0, ("baseline", args.baseline.resolve()))
    for _, src in trees:
        subprocess.run([sys.executable, "-m", "compileall", "-q", str(src / "pisa_mm")], check=True)
    with tempfile.TemporaryDirectory() as tmp:
        suite = args.suite
        if suite is None:
            suite = Path(tmp) / "suite"
            gen = [sys.executable, "-m", "pisa_mm.cli", "gen", *SHAPES, *GEN_OPTIONS]
            env = dict(os.environ, PYTHONPATH=str(ROOT))
            subprocess.run([*gen, "-o", str(suite)], env=env, check=True, capture_output=True)
        subset, one, n = _subset(suite, args.every, Path(tmp))
        what = "the engine alone" if args.engine_alone else "pisa-mm run --jobs 1"
        print(f"{n} tests (every {args.every}th of {suite}), {what}: machine instructions per test")
        print(f"  {'engine':10}{'tree':12}{'first pass':>14}{'steady':>14}")
        for engine in args.engines.split(","):
            figures = {}
            for k, (label, src) in enumerate(trees):
                cache = Path(tmp) / f"cache-{k}"
                if args.engine_alone:
                    figures[label] = measure_alone(src, cache, subset, engine, n)
                else:
                    figures[label] = measure(src, cache, subset, one, engine, n)
                first, steady = figures[label]
                print(f"  {engine:10}{label:12}{first:14,.0f}{steady:14,.0f}", flush=True)
            if len(figures) > 1:
                (bf, bs), (tf, ts) = figures["baseline"], figures["this tree"]
                print(f"  {engine:10}{'ratio':12}{bf / tf:>13.3f}x{bs / ts:>13.3f}x")
    return 0


if __name__ == "__main__":
    sys.exit(main())
