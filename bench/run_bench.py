"""Benchmark: the Z3 engine against the explicit engine, measured in one run.

Prints, for the whole litmus suite and for generated scaling families, the time of each
engine and their ratio, and the largest size of each family that each engine finishes
within the per-run budget (60 s; 10 s with --quick). Every engine run happens in a child
process so that a run over budget can be stopped.

    python bench/run_bench.py [--quick] [--families a,b] [--budget S]
"""

from __future__ import annotations

import sys
import time
from pathlib import Path
from typing import Any

sys.path.insert(0, str(Path(__file__).resolve().parent))

from common import ROOT, fmt, parse_args, timed
from families import FAMILIES, storers

ENGINES = ("smt", "explicit")


def _load(text: str, name: str) -> tuple[Any, Any, Any]:
    from pisa_mm.cat.loader import load_model
    from pisa_mm.commands.run import test_unroll
    from pisa_mm.events.build import build
    from pisa_mm.litmus import parse_test

    test = parse_test(text, f"{name}.litmus")
    return test, build(test, unroll=test_unroll(test, None)), load_model("pisa")


def _run(engine: str, text: str, name: str) -> tuple[float, Any]:
    from pisa_mm.engines import EngineOptions, get_engine

    test, es, model = _load(text, name)
    run = get_engine(engine)
    start = time.perf_counter()
    result = run(test, es, model, EngineOptions(unroll=es.unroll))
    seconds = time.perf_counter() - start
    flags = tuple(sorted(f.name for f in result.flags))
    return seconds, (result.states, result.verdict.value, flags, result.cut > 0)


def bench_suite() -> None:
    """The whole suite, in this process (it is small): totals and ratio."""
    from pisa_mm.cat.loader import load_model
    from pisa_mm.engines import EngineOptions, get_engine
    from pisa_mm.errors import PisaMMError
    from pisa_mm.events.build import build
    from pisa_mm.litmus import load_test

    model = load_model("pisa")
    totals = dict.fromkeys(ENGINES, 0.0)
    count = disagree = 0
    for path in sorted((ROOT / "litmus").rglob("*.litmus")):
        try:
            test = load_test(str(path))
        except PisaMMError:
            continue
        es = build(test)
        outs = []
        for engine in ENGINES:
            start = time.perf_counter()
            r = get_engine(engine)(test, es, model, EngineOptions(unroll=es.unroll))
            totals[engine] += time.perf_counter() - start
            outs.append((r.states, r.verdict, sorted(f.name for f in r.flags), r.cut > 0))
        count += 1
        disagree += outs[0] != outs[1]
    ratio = totals["smt"] / totals["explicit"] if totals["explicit"] else float("inf")
    print(f"suite: {count} tests  smt {totals['smt']:.2f}s  explicit {totals['explicit']:.2f}s"
          f"  smt/explicit {ratio:.2f}  disagreements {disagree}")  # fmt: skip


def bench_families(names: list[str], budget: float) -> None:
    print(f"\nfamilies (budget {budget:.0f}s per run; times in seconds)")
    print(f"{'family':10} {'size':>4} {'smt':>6} {'explicit':>8} {'ratio':>6}  agree")
    for name in names:
        gen, sizes = FAMILIES[name]
        largest: dict[str, int | None] = dict.fromkeys(ENGINES)
        live = set(ENGINES)
        for size in sizes:
            if not live:
                break
            text = gen(size)
            times: dict[str, float | None] = {}
            results: dict[str, Any] = {}
            for engine in ENGINES:
                if engine not in live:
                    times[engine] = None
                    continue
                times[engine], result = timed(_run, (engine, text, f"{name}-{size}"), budget)
                if result is not None:
                    results[engine] = result
                if times[engine] is None:
                    live.discard(engine)
                else:
                    largest[engine] = size
            s, e = times["smt"], times["explicit"]
            ratio = f"{s / e:6.2f}" if s is not None and e else "     -"
            agree = (
                "-"
                if len(results) < 2
                else ("yes" if results["smt"] == results["explicit"] else "NO")
            )
            print(f"{name:10} {size:>4} {fmt(s)} {fmt(e):>8} {ratio}  {agree}")  # fmt: skip
        print(f"{name:10} largest within budget: smt {largest['smt']}, "
              f"explicit {largest['explicit']}")  # fmt: skip


def bench_targets() -> None:
    """The two latency targets on '6 relaxed storers + a reader loading twice'."""
    from pisa_mm.smt.engine import run_smt
    from pisa_mm.smt.query import query

    test, es, model = _load(storers(6), "storers-6")
    run_smt(test, es, model)  # warm caches (imports, compiled grammars)
    start = time.perf_counter()
    result = run_smt(test, es, model)
    states = time.perf_counter() - start
    start = time.perf_counter()
    q = query(test, es, model, test.condition.prop)
    asked = time.perf_counter() - start
    print(f"\nstorers-6: all {len(result.states)} states in {states:.3f}s (target < 0.3s); "
          f"query of its condition: {q.answer.value} in {asked:.3f}s (target < 1s)")  # fmt: skip


def main() -> int:
    args, budget, names = parse_args(__doc__ or "", FAMILIES)
    if not args.no_suite:
        bench_suite()
    bench_targets()
    bench_families(names, budget)
    return 0


if __name__ == "__main__":
    sys.exit(main())
