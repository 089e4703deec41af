"""Benchmark: the `auto` engine against the better of explicit and smt, measured in one run.

For each scaling family (bench/families.py) at growing sizes, and for the small shapes of
bench_runner.py taken together: the candidate-space estimate `auto` decides on
(pisa_mm/explicit/size.py), the engine it picks, the seconds of explicit, smt and auto
(each in a child process, the model loaded and compiled before the clock starts, so that
this measures the engines and not start-up), and auto / best. `over` is past the budget.

    python bench/bench_auto.py [--quick] [--budget S] [--families a,b] [--no-suite]
"""

from __future__ import annotations

import sys
import time
from pathlib import Path
from typing import Any

sys.path.insert(0, str(Path(__file__).resolve().parent))

from common import fmt, parse_args, timed
from families import FAMILIES

from pisa_mm.engines import EngineOptions, get_engine
from pisa_mm.explicit.auto import THRESHOLD, pick
from pisa_mm.explicit.size import candidate_space
from pisa_mm.runner.job import cached_model, load_source, test_unroll


def _run(engine: str, texts: list[str]) -> tuple[float, Any]:
    """Seconds of `engine` over the tests `texts` (parsed, built and the model compiled by a
    first untimed run), and the verdicts."""
    model = cached_model("pisa")
    fn = get_engine(engine)
    loaded = [
        load_source(f"t{i}.litmus", t, unroll=None, strict=False) for i, t in enumerate(texts)
    ]
    jobs = []
    for item in loaded:
        assert item.test is not None and item.structure is not None, item.error
        jobs.append((item.test, item.structure, EngineOptions(unroll=test_unroll(item.test, None))))
    fn(*jobs[0][:2], model, jobs[0][2])  # compile the model (once per process in a suite run)
    start = time.perf_counter()
    verdicts = [fn(t, es, model, o).verdict.value for t, es, o in jobs]
    return time.perf_counter() - start, verdicts


def _row(label: str, texts: list[str], budget: float) -> float | None:
    structures = [load_source("t.litmus", t, unroll=None, strict=False).structure for t in texts]
    size = max(candidate_space(es) for es in structures if es is not None)
    picked = {pick(es) for es in structures if es is not None}
    times: dict[str, float | None] = {}
    verdicts: dict[str, Any] = {}
    for engine in ("explicit", "smt", "auto"):
        times[engine], verdicts[engine] = timed(_run, (engine, texts), budget)
    done = [v for v in verdicts.values() if v is not None]
    if any(v != done[0] for v in done):
        raise SystemExit(f"{label}: the engines disagree: {verdicts}")
    known = [t for e, t in times.items() if e != "auto" and t is not None]
    best = min(known) if known else None
    auto = times["auto"]
    ratio = auto / best if auto is not None and best else None
    print(f"{label:<18} {size:>14.3g} {'/'.join(sorted(picked)):<12} "
          f"{fmt(times['explicit'])} {fmt(times['smt'])} {fmt(auto)} "
          f"{'' if ratio is None else f'x{ratio:.2f}'}")  # fmt: skip
    return ratio


def main() -> int:
    args, budget, names = parse_args(__doc__ or "", FAMILIES)
    print(f"threshold {THRESHOLD}; budget {budget:.0f} s per run")
    print(f"{'test':<18} {'estimate':>14} {'auto picks':<12} {'explicit':>6} {'smt':>6} "
          f"{'auto':>6} auto/best")  # fmt: skip
    ratios: list[float] = []
    if not args.no_suite:
        from bench_runner import shapes

        ratio = _row("small shapes", list(shapes().values()), budget)
        ratios += [] if ratio is None else [ratio]
    for name in names:
        gen, sizes = FAMILIES[name]
        for n in sizes:
            ratio = _row(f"{name}-{n}", [gen(n)], budget)
            ratios += [] if ratio is None else [ratio]
    if ratios:
        print(f"auto/best: worst x{max(ratios):.2f}, best x{min(ratios):.2f}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
