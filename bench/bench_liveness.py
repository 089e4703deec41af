"""Benchmark: the cost of the Liveness check (docs/progress.md "Cost"), in CPU seconds.

Finds the suite's tests with a spin loop (the static scan every test pays), then measures
`pisa-mm run -j 1 --no-time` on them with the check (`--progress pisa`, the default) and
without it (`--progress none`), each run in a fresh process whose user+sys CPU time is
taken from the kernel (start-up included, the same in both). It also times, in this
process, `check_liveness` alone per test under each progress model, and the static scan
over every test. `--suite DIR` also runs all of DIR with and without the check.

    python bench/bench_liveness.py [--suite litmus/pisa] [--repeat N]
"""

from __future__ import annotations

import argparse
import resource
import subprocess
import sys
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
if str(ROOT) not in sys.path:
    sys.path.insert(0, str(ROOT))

from pisa_mm.errors import PisaMMError  # noqa: E402
from pisa_mm.litmus import load_test  # noqa: E402
from pisa_mm.liveness.check import check_liveness  # noqa: E402
from pisa_mm.liveness.loops import spin_loops  # noqa: E402
from pisa_mm.liveness.progress import Progress  # noqa: E402
from pisa_mm.runner.job import cached_model, load_source  # noqa: E402


def _cpu_of_run(files: list[str], progress: str) -> float:
    """User+sys CPU seconds of one `pisa-mm run` process over `files`."""
    before = resource.getrusage(resource.RUSAGE_CHILDREN)
    cmd = [sys.executable, "-c", "import sys; from pisa_mm.cli import main; sys.exit(main())"]
    cmd += ["run", "-j", "1", "--no-time"]
    subprocess.run([*cmd, "--progress", progress, *files], cwd=ROOT, capture_output=True)
    after = resource.getrusage(resource.RUSAGE_CHILDREN)
    return (after.ru_utime - before.ru_utime) + (after.ru_stime - before.ru_stime)


def _scan(files: list[Path]) -> tuple[list[str], float]:
    """The tests with a spin loop, and the CPU seconds of the static scan alone."""
    tests = []
    for f in files:
        try:
            tests.append((f, load_test(str(f))))
        except PisaMMError:
            continue
    start = time.process_time()
    found = [str(f.relative_to(ROOT)) for f, t in tests if spin_loops(t)]
    return found, time.process_time() - start


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--suite", metavar="DIR", help="also run all of DIR with and without")
    parser.add_argument("--repeat", type=int, default=1, help="runs of each (the minimum is kept)")
    args = parser.parse_args()
    every = sorted((ROOT / "litmus").rglob("*.litmus"))
    loops, scan = _scan(every)
    print(f"static spin-loop scan: {len(every)} tests, {len(loops)} with a spin loop, {scan:.3f} s")
    model = cached_model("pisa")
    names = " ".join(p.value for p in Progress)
    print(f"\ncheck_liveness alone (CPU s), per progress model: {names}")
    totals = dict.fromkeys(Progress, 0.0)
    for f in loops:
        loaded = load_source(f, None, unroll=None, strict=False)
        assert loaded.test is not None and loaded.structure is not None
        row = []
        for p in Progress:
            start = time.process_time()
            check_liveness(loaded.test, loaded.structure, model, p)
            spent = time.process_time() - start
            totals[p] += spent
            row.append(f"{spent:7.2f}")
        print(f"  {f:52s} {' '.join(row)}")
    print(f"  {'total':52s} {' '.join(f'{totals[p]:7.2f}' for p in Progress)}")
    runs = [("spin-loop tests", loops)]
    if args.suite:
        runs.append((args.suite, [args.suite]))
    print("\npisa-mm run -j 1 --no-time (CPU s of the process, min of --repeat)")
    for label, files in runs:
        with_check = min(_cpu_of_run(files, "pisa") for _ in range(args.repeat))
        without = min(_cpu_of_run(files, "none") for _ in range(args.repeat))
        print(
            f"  {label}: --progress pisa {with_check:.2f} s, --progress none {without:.2f} s, "
            f"check {with_check - without:+.2f} s ({with_check / without:.2f}x)"
        )


if __name__ == "__main__":
    main()
