"""Benchmark: start-up latency and suite throughput of `pisa-mm run`, measured in one run.

Start-up: the wall time of `pisa-mm run MP.litmus` (one small test, default options), the
minimum and median of --repeat runs. Throughput: `pisa-mm run DIR --no-time` on a suite of
small generated shapes, at --jobs 1 and at the machine's cores (tests/s, and the ratio of
the two). With --baseline SRC (a source tree of another pisa-mm version, e.g. from
`git archive`), the same figures for it and the ratios new/old.

The shapes (all at system scope, one work-group per work-item, 2 or 3 work-items):
MP, SB, LB, 2+2W, S, R, WRC and a coherence pair CoRR, each with every combination of
relaxed and release/acquire (or seq_cst) orders on its accesses.

With --cpu, also the in-process throughput of each engine on the same suite: the CPU
seconds of loading and running every test once more in a process that has already run it
(the model loaded and compiled), the best of three; a loaded machine distorts it least.

    python bench/bench_runner.py [--repeat N] [--baseline SRC] [--engine E] [--cpu]
"""

from __future__ import annotations

import argparse
import itertools
import os
import resource
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent))

from common import ROOT
from families import _test

# Orders a store / a load may take in the generated shapes.
STORE_ORDERS = ("relaxed", "release.system", "seq_cst.system")
LOAD_ORDERS = ("relaxed", "acquire.system", "seq_cst.system")


def _st(order: str, var: str, value: int = 1) -> str:
    return f"st.global.{order}.32b [@{var}], {value};"


def _ld(order: str, reg: str, var: str) -> str:
    return f"ld.global.{order}.32b %{reg}, [@{var}];"


def shapes() -> dict[str, str]:
    """Name -> litmus text, for every shape and order combination."""
    out: dict[str, str] = {}
    for s, ld in itertools.product(STORE_ORDERS, LOAD_ORDERS):
        tag = f"{s.split('.')[0]}+{ld.split('.')[0]}"
        out[f"MP+{tag}"] = _test(f"MP+{tag}", ["x", "y"],
            [[_st("relaxed", "x"), _st(s, "y")], [_ld(ld, "r0", "y"), _ld("relaxed", "r1", "x")]],
            "exists (P1:%r0 == 1 /\\ P1:%r1 == 0)")  # fmt: skip
        out[f"SB+{tag}"] = _test(f"SB+{tag}", ["x", "y"],
            [[_st(s, "x"), _ld(ld, "r0", "y")], [_st(s, "y"), _ld(ld, "r0", "x")]],
            "exists (P0:%r0 == 0 /\\ P1:%r0 == 0)")  # fmt: skip
        out[f"LB+{tag}"] = _test(f"LB+{tag}", ["x", "y"],
            [[_ld(ld, "r0", "x"), _st(s, "y")], [_ld(ld, "r0", "y"), _st(s, "x")]],
            "exists (P0:%r0 == 1 /\\ P1:%r0 == 1)")  # fmt: skip
        out[f"S+{tag}"] = _test(f"S+{tag}", ["x", "y"],
            [[_st("relaxed", "x", 2), _st(s, "y")], [_ld(ld, "r0", "y"), _st("relaxed", "x")]],
            "exists (P1:%r0 == 1 /\\ @x == 2)")  # fmt: skip
        out[f"R+{tag}"] = _test(f"R+{tag}", ["x", "y"],
            [[_st(s, "x"), _st(s, "y")], [_st(s, "y", 2), _ld(ld, "r0", "x")]],
            "exists (@y == 2 /\\ P1:%r0 == 0)")  # fmt: skip
        out[f"WRC+{tag}"] = _test(f"WRC+{tag}", ["x", "y"],
            [[_st("relaxed", "x")], [_ld(ld, "r0", "x"), _st(s, "y")],
             [_ld(ld, "r0", "y"), _ld("relaxed", "r1", "x")]],
            "exists (P1:%r0 == 1 /\\ P2:%r0 == 1 /\\ P2:%r1 == 0)")  # fmt: skip
    for s in STORE_ORDERS:
        tag = s.split(".")[0]
        out[f"2+2W+{tag}"] = _test(f"2+2W+{tag}", ["x", "y"],
            [[_st(s, "x", 2), _st(s, "y")], [_st(s, "y", 2), _st(s, "x")]],
            "exists (@x == 2 /\\ @y == 2)")  # fmt: skip
    for ld in LOAD_ORDERS:
        tag = ld.split(".")[0]
        out[f"CoRR+{tag}"] = _test(f"CoRR+{tag}", ["x"],
            [[_st("relaxed", "x")], [_ld(ld, "r0", "x"), _ld(ld, "r1", "x")]],
            "exists (P1:%r0 == 1 /\\ P1:%r1 == 0)")  # fmt: skip
    return out


def _pisa_mm(src: Path, *argv: str) -> tuple[float, float]:
    """Wall seconds of one `pisa-mm` run from the source tree `src` (which must succeed:
    a bad generated test would make the throughput a lie). `-P`: the current directory
    must not shadow `src`. Also the CPU seconds (user + sys) of the process and its
    workers, which a loaded machine distorts less than the wall time."""
    env = dict(os.environ, PYTHONPATH=str(src))
    before = resource.getrusage(resource.RUSAGE_CHILDREN)
    start = time.perf_counter()
    subprocess.run([sys.executable, "-P", "-m", "pisa_mm.cli", *argv], env=env, check=True,
                   stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)  # fmt: skip
    wall = time.perf_counter() - start
    after = resource.getrusage(resource.RUSAGE_CHILDREN)
    cpu = after.ru_utime + after.ru_stime - before.ru_utime - before.ru_stime
    return wall, cpu


def _supports(src: Path, option: str) -> bool:
    env = dict(os.environ, PYTHONPATH=str(src))
    out = subprocess.run([sys.executable, "-P", "-m", "pisa_mm.cli", "run", "--help"], env=env,
                         capture_output=True, text=True, check=False)  # fmt: skip
    return option in out.stdout


def measure(src: Path, suite: Path, mp: Path, repeat: int, engine: list[str]) -> dict[str, float]:
    runs = [_pisa_mm(src, "run", str(mp), *engine) for _ in range(repeat)]
    walls = sorted(w for w, _ in runs)
    n = len(list(suite.glob("*.litmus")))
    figures = {
        "startup_min": walls[0],
        "startup_median": statistics.median(walls),
        "startup_cpu": min(c for _, c in runs),
    }
    jobs = os.cpu_count() or 1
    if _supports(src, "--jobs"):
        figures["jobs1"] = n / _pisa_mm(src, "run", str(suite), "--jobs", "1", *engine)[0]
        figures["jobsN"] = n / _pisa_mm(src, "run", str(suite), "--jobs", str(jobs), *engine)[0]
    else:  # an older pisa-mm: one process
        figures["jobs1"] = figures["jobsN"] = n / _pisa_mm(src, "run", str(suite), *engine)[0]
    return figures


# Run in a child with PYTHONPATH=src: argv is the suite and the engine.
_CPU_SCRIPT = """
import glob, sys, time
from pisa_mm.runner.job import cached_model, load, run_engines
files = sorted(glob.glob(sys.argv[1] + "/*.litmus"))
model = cached_model("pisa")
def go():
    for f in files:
        run_engines(load(f, unroll=None, strict=False), model, (sys.argv[2],))
go()
best = float("inf")
for _ in range(3):
    start = time.process_time()
    go()
    best = min(best, time.process_time() - start)
print(len(files) / best)
"""


def cpu_throughput(src: Path, suite: Path, engines: list[str]) -> dict[str, float]:
    """Engine -> tests per CPU second inside one process (see the module's docstring)."""
    env = dict(os.environ, PYTHONPATH=str(src))
    out = {}
    for engine in engines:
        run = subprocess.run([sys.executable, "-P", "-c", _CPU_SCRIPT, str(suite), engine],
                             env=env, capture_output=True, text=True, check=True)  # fmt: skip
        out[engine] = float(run.stdout.split()[-1])
    return out


def report(label: str, f: dict[str, float], n: int) -> None:
    cores = os.cpu_count() or 1
    print(f"{label}: start-up min {f['startup_min'] * 1000:.0f} ms, median "
          f"{f['startup_median'] * 1000:.0f} ms (CPU min {f['startup_cpu'] * 1000:.0f} ms); "
          f"{n} tests: {f['jobs1']:.0f} tests/s at --jobs 1, {f['jobsN']:.0f} tests/s at "
          f"--jobs {cores} (x{f['jobsN'] / f['jobs1']:.2f})")  # fmt: skip


def main() -> int:
    parser = argparse.ArgumentParser(description=(__doc__ or "").split("\n")[0])
    parser.add_argument("--repeat", type=int, default=10, help="start-up runs (default 10)")
    parser.add_argument("--baseline", type=Path, help="a source tree to compare with")
    parser.add_argument("--engine", help="the engine to pass to `run` (default: its default)")
    parser.add_argument("--cpu", action="store_true", help="also in-process CPU throughput")
    args = parser.parse_args()
    engine = ["--engine", args.engine] if args.engine else []
    with tempfile.TemporaryDirectory() as tmp:
        suite = Path(tmp) / "shapes"
        suite.mkdir()
        for name, text in shapes().items():
            (suite / f"{name}.litmus").write_text(text, encoding="utf-8")
        n = len(list(suite.glob("*.litmus")))
        mp = ROOT / "litmus" / "pisa" / "fence" / "MP+fence.workgroup.litmus"
        print(f"load average {os.getloadavg()[0]:.2f} on {os.cpu_count()} cores")
        new = measure(ROOT, suite, mp, args.repeat, engine)
        report("this tree", new, n)
        if args.baseline is not None:
            old = measure(args.baseline, suite, mp, args.repeat, engine)
            report("baseline", old, n)
            print(f"new/old: start-up (min) x{new['startup_min'] / old['startup_min']:.2f} "
                  f"(CPU x{new['startup_cpu'] / old['startup_cpu']:.2f}), "
                  f"throughput --jobs 1 x{new['jobs1'] / old['jobs1']:.2f}, "
                  f"all cores x{new['jobsN'] / old['jobsN']:.2f}")  # fmt: skip
        if args.cpu:
            engines = ["explicit", "smt"]
            mine = cpu_throughput(ROOT, suite, [*engines, "auto"])
            theirs = cpu_throughput(args.baseline, suite, engines) if args.baseline else {}
            for engine, rate in mine.items():
                line = f"in-process {engine}: {rate:.0f} tests per CPU second"
                if engine in theirs:
                    line += f" (baseline {theirs[engine]:.0f}, x{rate / theirs[engine]:.2f})"
                print(line)
    return 0


if __name__ == "__main__":
    sys.exit(main())
