"""Benchmark: the operational machine against the explicit engine, measured in one run.

Prints, for the whole litmus suite and for generated tests of growing size, the time of
the operational machine, the time of the explicit engine on the same test, and their
ratio (operational / explicit), with the number of machine states explored. The explicit
engine runs the model the machine must match exactly (pisa_mm/operational/machine.cat:
pisa with acyclic (po | rf | aso), docs/operational.md), so every line also says whether
the two agree. Each generated run happens in a child
process so that a run over budget (60 s; 10 s with --quick) can be stopped.

    python bench/bench_operational.py [--quick] [--budget S] [--no-suite] [--families a,b]
"""

from __future__ import annotations

import sys
import time
from collections.abc import Callable
from pathlib import Path
from typing import Any

sys.path.insert(0, str(Path(__file__).resolve().parent))

from common import ROOT, budget_and_families, fmt, parser_for, timed
from families import _test, iriw, mp_chain, sb_ring

ENGINES = ("operational", "explicit")


def sb_ring2(n: int) -> str:
    """n work-items in a ring, two rounds of store buffering each (seq_cst): 4n
    instructions (n = 4 is the 4-work-item, 16-instruction shape)."""
    xs = [f"x{i}" for i in range(n)]
    ys = [f"y{i}" for i in range(n)]
    threads = [
        [f"st.global.seq_cst.gpu.32b [@{xs[i]}], 1;",
         f"ld.global.seq_cst.gpu.32b %r0, [@{xs[(i + 1) % n]}];",
         f"st.global.seq_cst.gpu.32b [@{ys[i]}], 1;",
         f"ld.global.seq_cst.gpu.32b %r1, [@{ys[(i + 1) % n]}];"]
        for i in range(n)
    ]  # fmt: skip
    cond = " /\\ ".join(f"P{i}:%r0 == 0" for i in range(n))
    return _test(f"SB2-ring-{n}", xs + ys, threads, f"exists ({cond})")


def sb_ring_fenced(n: int) -> str:
    """The SB ring with relaxed accesses around seq_cst fences (psc through fences)."""
    xs = [f"x{i}" for i in range(n)]
    threads = [
        [f"st.global.relaxed.32b [@{xs[i]}], 1;", "fence.seq_cst.gpu;",
         f"ld.global.relaxed.32b %r0, [@{xs[(i + 1) % n]}];"]
        for i in range(n)
    ]  # fmt: skip
    cond = " /\\ ".join(f"P{i}:%r0 == 0" for i in range(n))
    return _test(f"SB-fence-ring-{n}", xs, threads, f"exists ({cond})")


FAMILIES: dict[str, tuple[Callable[[int], str], range]] = {
    "sb-ring": (sb_ring, range(2, 11)),
    "sb-fence-ring": (sb_ring_fenced, range(2, 9)),
    "sb2-ring": (sb_ring2, range(2, 7)),
    "iriw": (iriw, range(4, 13)),
    "mp-chain": (mp_chain, range(1, 11)),
}


def _run(engine: str, text: str, name: str) -> tuple[float, Any]:
    from pisa_mm.commands.run import test_unroll
    from pisa_mm.engines import EngineOptions, get_engine
    from pisa_mm.events.build import build
    from pisa_mm.litmus import parse_test
    from pisa_mm.operational.engine import machine_outcomes
    from pisa_mm.operational.relation import machine_model

    test = parse_test(text, f"{name}.litmus")
    es = build(test, unroll=test_unroll(test, None))
    model = machine_model()
    start = time.perf_counter()
    result = get_engine(engine)(test, es, model, EngineOptions(unroll=es.unroll))
    seconds = time.perf_counter() - start
    states = machine_outcomes(test, es.unroll).states if engine == "operational" else 0
    flags = tuple(sorted(f.name for f in result.flags))
    return seconds, ((result.states, flags, result.cut > 0), states)


def bench_suite() -> None:
    """The whole litmus suite, in this process: totals, ratio, agreement with the model."""
    from pisa_mm.commands.run import test_unroll
    from pisa_mm.engines import EngineOptions, get_engine
    from pisa_mm.errors import PisaMMError
    from pisa_mm.events.build import build
    from pisa_mm.litmus import load_test
    from pisa_mm.operational.relation import machine_model

    model = machine_model()
    totals = dict.fromkeys(ENGINES, 0.0)
    slowest = ("", 0.0)
    count = disagree = 0
    for path in sorted((ROOT / "litmus").rglob("*.litmus")):
        try:
            test = load_test(str(path))
        except PisaMMError:
            continue
        es = build(test, unroll=test_unroll(test, None))
        outs = []
        for engine in ENGINES:
            start = time.perf_counter()
            r = get_engine(engine)(test, es, model, EngineOptions(unroll=es.unroll))
            seconds = time.perf_counter() - start
            totals[engine] += seconds
            if engine == "operational" and seconds > slowest[1]:
                slowest = (test.name, seconds)
            outs.append((r.states, sorted(f.name for f in r.flags), r.cut > 0))
        count += 1
        disagree += outs[0] != outs[1]
    ratio = totals["operational"] / totals["explicit"] if totals["explicit"] else float("inf")
    print(f"suite: {count} tests  operational {totals['operational']:.2f}s  "
          f"explicit {totals['explicit']:.2f}s  operational/explicit {ratio:.2f}  "
          f"disagreements with the machine's model {disagree}  "
          f"(slowest for the machine: {slowest[0]} {slowest[1]:.2f}s)")  # fmt: skip


def bench_families(names: list[str], budget: float) -> None:
    print(f"\ngenerated tests (budget {budget:.0f}s per run; times in seconds; "
          f"ratio = operational / explicit)")  # fmt: skip
    print(f"{'family':14} {'size':>4} {'oper':>7} {'explicit':>8} {'ratio':>6} "
          f"{'states':>7}  agree")  # fmt: skip
    for name in names:
        gen, sizes = FAMILIES[name]
        live = set(ENGINES)
        for size in sizes:
            if not live:
                break
            text = gen(size)
            times: dict[str, float | None] = {}
            results: dict[str, Any] = {}
            states = 0
            for engine in ENGINES:
                if engine not in live:
                    times[engine] = None
                    continue
                times[engine], got = timed(_run, (engine, text, f"{name}-{size}"), budget)
                result, n = got if got is not None else (None, 0)
                states = max(states, n)
                if result is not None:
                    results[engine] = result
                if times[engine] is None:
                    live.discard(engine)
            o, e = times["operational"], times["explicit"]
            ratio = f"{o / e:6.2f}" if o is not None and e else "     -"
            agree = (
                "-"
                if len(results) < 2
                else ("yes" if results["operational"] == results["explicit"] else "NO")
            )
            print(f"{name:14} {size:>4} {fmt(o, 7)} {fmt(e, 7):>8} {ratio} {states:>7}  {agree}")


def main() -> int:
    parser = parser_for(__doc__ or "", FAMILIES)
    parser.add_argument("--no-suite", action="store_true", help="skip the litmus suite")
    args = parser.parse_args()
    budget, names = budget_and_families(parser, args, FAMILIES)
    if not args.no_suite:
        bench_suite()
    bench_families(names, budget)
    return 0


if __name__ == "__main__":
    sys.exit(main())
