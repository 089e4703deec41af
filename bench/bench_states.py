"""Benchmark: tests with many final states, and `--verdict-only`, measured in one run.

The family is bench/families.py's `many_states(n, k)`: n work-groups of k relaxed accesses
(stores and loads alternating over two locations), every register and location observed;
and `Many-74k` (`--sizes 74k`), the issue's test: 4 work-groups, 16 relaxed accesses,
73,984 final states (see MANY74K below). For each test it prints the number of states and
the CPU seconds (user+sys of the child that runs the engine, model loaded and compiled
before the clock starts, the best of 5 runs when a run takes under a second; wall seconds
in brackets) of:

- `explicit`, `smt` (now: smt/allsat.py's search over the observables' values), and
  `smt-before` (the enumeration this replaced, one blocking clause per state, rebuilt here
  on the engine's Problem so that the two are measured in the same run);
- `auto` (what it picks, and auto / the better of explicit and smt);
- `--verdict-only` for explicit and smt, with the speed-up over the full run.

Each engine runs in a child process, stopped past the budget of CPU seconds (`over`; the
machine may be shared, so wall time is no limit until 20 times the budget); an engine over
budget at one size is not run at larger ones of the family. Results are compared: states,
verdict, flags.

    python bench/bench_states.py [--quick] [--budget CPU_S] [--sizes 3x3,4x3] [--engines a,b]
"""

from __future__ import annotations

import argparse
import resource
import signal
import sys
import time
from pathlib import Path
from typing import Any

sys.path.insert(0, str(Path(__file__).resolve().parent))

from common import timed
from families import many_states

# The issue's many-states test (4 work-groups, 16 relaxed accesses, about 74,000 final
# states): work-items A, B, A', B' where A' and B' are A and B with x0 and x1 swapped.
# Relaxed accesses of distinct work-groups order nothing across locations, so the final
# states are the product of each location's, and each location's are the distinct (loads'
# values, final value) of the interleavings of its accesses (coherence is SC per
# location): 272 for each of x0 and x1, 73,984 in all. Found by searching two-location
# patterns of four accesses per work-item for the count nearest 74,000.
_A = (("st", 0), ("ld", 0), ("ld", 1), ("st", 1))
_B = (("ld", 0), ("st", 0), ("ld", 0), ("ld", 1))
MANY74K = "Many-74k"

SIZES = ((2, 4), (4, 2), (3, 3), (3, 4), (4, 3), (3, 5), (3, 6), (0, 0), (4, 4))
QUICK_SIZES = ((3, 3), (3, 4), (4, 3), (3, 5))
FULL = ("explicit", "smt", "smt-before", "auto")
QUICK = ("explicit", "smt")
REPEAT = 5
WALL_FACTOR = 20  # the wall-clock limit of a run, in CPU budgets (a loaded machine)


def many_74k() -> str:
    """The litmus text of MANY74K: every loaded register and both locations are observed;
    the condition (work-items B and B' first read the initial values) holds in some state,
    so one witness decides it (`--verdict-only`)."""
    patterns = (_A, _B, _A, _B)
    init = "\n".join(f"  .global .32b @x{i} = 0;" for i in range(2))
    bodies, observed = [], []
    value = 0
    for t, pattern in enumerate(patterns):
        lines = []
        for j, (op, loc) in enumerate(pattern):
            x = f"@x{loc ^ (t >= 2)}"
            if op == "st":
                value += 1
                lines.append(f"  st.global.relaxed.32b [{x}], {value};")
            else:
                lines.append(f"  ld.global.relaxed.32b %r{j}, [{x}];")
                observed.append(f"P{t}:%r{j}")
        bodies.append(f"P{t} @ wg {t} {{\n" + "\n".join(lines) + "\n}")
    where = "; ".join([*observed, "@x0", "@x1"])
    return (f"PISA {MANY74K}\n{{\n{init}\n}}\n" + "\n".join(bodies)
            + f"\nlocations [{where};]\nexists (P1:%r0 == 0 /\\ P3:%r0 == 0)\n")  # fmt: skip


def _text(n: int, k: int) -> tuple[str, str]:
    """(name, litmus text) of a size: Many-nxk, or MANY74K for 0x0."""
    if (n, k) == (0, 0):
        return MANY74K, many_74k()
    return f"Many-{n}x{k}", many_states(n, k)


def _load(n: int, k: int) -> tuple[Any, Any, Any]:
    from pisa_mm.runner.job import cached_model, load_source

    name, text = _text(n, k)
    item = load_source(f"{name}.litmus", text, unroll=None, strict=False)
    assert item.test is not None and item.structure is not None, item.error
    return item.test, item.structure, cached_model("pisa")


def _before(test: Any, es: Any, model: Any) -> int:
    """The number of states by the smt engine's enumeration before smt/allsat.py: one solver
    check and one blocking clause ("some observable differs") per state, over the engine's
    own encoding (the family has no filter, no loops and no symmetric work-items)."""
    from pisa_mm.outcomes.condition import observables
    from pisa_mm.smt.engine import Problem
    from pisa_mm.smt.lits import lnot
    from pisa_mm.smt.solver import Answer, Budget

    problem = Problem(es, model, observables(test), Budget())
    problem.assert_axioms()
    c, s = problem.c, problem.session
    problem.assert_lits([problem.complete()])
    count = 0
    while s.check() is Answer.SAT:
        values = problem.state_of(s.model())
        count += 1
        problem.assert_lits(
            [c.lor_all(lnot(c.atom(problem.is_value(o, v))) for o, v in values.items())]
        )
    return count


class _OverBudget(Exception):
    pass


def _over_budget(signum: int, frame: Any) -> None:
    raise _OverBudget


def _run(engine: str, n: int, k: int, verdict_only: bool, cpu_budget: float) -> tuple[float, Any]:
    """(wall seconds, (cpu seconds, what the engine found)) of one engine on Many-nxk, or
    (0, None) past `cpu_budget` CPU seconds (the machine may be shared: wall time is not
    the engine's)."""
    soft = int(time.process_time() + cpu_budget) + 1
    resource.setrlimit(resource.RLIMIT_CPU, (soft, resource.RLIM_INFINITY))
    signal.signal(signal.SIGXCPU, _over_budget)
    try:
        return _measure(engine, n, k, verdict_only)
    except _OverBudget:
        return 0.0, None


def _measure(engine: str, n: int, k: int, verdict_only: bool) -> tuple[float, Any]:
    from pisa_mm.engines import EngineOptions, get_engine
    from pisa_mm.explicit.auto import pick

    test, es, model = _load(n, k)
    options = EngineOptions(unroll=es.unroll, verdict_only=verdict_only)
    if engine == "smt-before":
        cpu, wall = time.process_time(), time.perf_counter()
        found: Any = ("states", _before(test, es, model))
        return time.perf_counter() - wall, (time.process_time() - cpu, found)
    run = get_engine(engine)
    warm_test, warm_es, _ = _load(2, 2)  # compile the model (once per process in a suite run)
    for name in ("explicit", "smt"):
        get_engine(name)(warm_test, warm_es, model, EngineOptions(unroll=warm_es.unroll))
    seconds = cpu = float("inf")
    for _ in range(REPEAT):  # the best of a few runs when they are short (noise)
        cpu0, wall0 = time.process_time(), time.perf_counter()
        r = run(test, es, model, options)
        seconds = min(seconds, time.perf_counter() - wall0)
        cpu = min(cpu, time.process_time() - cpu0)
        if cpu > 1.0:
            break
    flags = tuple(sorted(f.label for f in r.flags))
    picked = pick(test, es) if engine == "auto" else engine
    return seconds, (cpu, (r.states, r.verdict.value, flags, r.cut, picked))


def _timed(
    engine: str, n: int, k: int, verdict_only: bool, budget: float
) -> tuple[float | None, Any]:
    """The child's answer; (None, None) when it ran out of CPU (or of WALL_FACTOR times as
    much wall time)."""
    wall, payload = timed(_run, (engine, n, k, verdict_only, budget), budget * WALL_FACTOR)
    return (None, None) if payload is None else (wall, payload)


def _cell(t: tuple[float | None, Any]) -> str:
    wall, payload = t
    if wall is None:
        return "over".rjust(15)
    return f"{payload[0]:7.2f} [{wall:5.1f}]"


def _size(text: str) -> tuple[int, int]:
    if text == "74k":
        return 0, 0
    n, _, k = text.partition("x")
    return int(n), int(k)


def main() -> int:
    parser = argparse.ArgumentParser(description=(__doc__ or "").split("\n")[0])
    parser.add_argument("--quick", action="store_true", help="small sizes, 30 s budget")
    parser.add_argument("--budget", type=float, help="CPU seconds per run (default 300, quick 30)")
    parser.add_argument("--sizes", help="comma-separated NxK list, 74k for Many-74k (default: all)")
    parser.add_argument("--engines", help="comma-separated subset of: " + ",".join(FULL))
    args = parser.parse_args()
    budget = args.budget or (30.0 if args.quick else 300.0)
    sizes: tuple[tuple[int, int], ...] = QUICK_SIZES if args.quick else SIZES
    if args.sizes:
        sizes = tuple(_size(s) for s in args.sizes.split(","))
    engines = tuple(args.engines.split(",")) if args.engines else QUICK if args.quick else FULL
    report(sizes, engines, budget)
    return 0


def report(sizes: tuple[tuple[int, int], ...], engines: tuple[str, ...], budget: float) -> None:
    """The table of states and times per size and engine, then --verdict-only against the
    full run; exits if the engines disagree (bench/run_bench.py's `states` section too)."""
    print(f"budget {budget:.0f} CPU s per run; CPU seconds [wall seconds]")
    head = "".join(f"{e:>16}" for e in engines)
    print(f"{'test':<10} {'states':>7}{head}  auto picks  auto/best")
    out_of_budget: set[str] = set()
    quick_rows = []
    for n, k in sizes:
        times: dict[str, tuple[float | None, Any]] = {}
        for engine in engines:
            if engine in out_of_budget and (n, k) != (0, 0):
                times[engine] = (None, None)
                continue
            times[engine] = _timed(engine, n, k, False, budget)
            if times[engine][0] is None:
                out_of_budget.add(engine)
        found = {e: t[1][1] for e, t in times.items() if t[0] is not None and e != "smt-before"}
        answers = {e: f[:4] for e, f in found.items()}
        if len(set(map(repr, answers.values()))) > 1:
            raise SystemExit(f"{_text(n, k)[0]}: the engines disagree")
        states = next((len(f[0]) for f in found.values()), None)
        before = times.get("smt-before", (None, None))
        if states is not None and before[0] is not None and before[1][1][1] != states:
            raise SystemExit(f"{_text(n, k)[0]}: smt-before found {before[1][1][1]} states")
        cpus = {e: t[1][0] for e, t in times.items() if t[0] is not None}
        best = min((cpus[e] for e in ("explicit", "smt") if e in cpus), default=None)
        auto = cpus.get("auto")
        ratio = f"x{auto / best:.2f}" if auto is not None and best else "-"
        picked = found["auto"][4] if "auto" in found else "-"
        print(f"{_text(n, k)[0]:<10} {states if states is not None else '?':>7}"
              + "".join(f"{_cell(times[e]):>16}" for e in engines)
              + f"  {picked:<10}  {ratio}")  # fmt: skip
        quick_rows.append((n, k, times))
    print("\n--verdict-only against the full run (CPU seconds; speed-up = full / verdict-only)")
    print(f"{'test':<10} {'engine':<9} {'verdict':>7} {'full':>16} {'verdict-only':>16} speed-up")
    for n, k, times in quick_rows:
        for engine in [e for e in ("explicit", "smt") if e in engines]:
            full = times.get(engine, (None, None))
            quick = _timed(engine, n, k, True, budget)
            verdict = quick[1][1][1] if quick[0] is not None else "-"
            if full[0] is not None and quick[0] is not None and full[1][1][1] != verdict:
                raise SystemExit(f"{_text(n, k)[0]}: {engine} --verdict-only says {verdict}")
            speed = (
                f"x{full[1][0] / max(quick[1][0], 1e-3):.0f}"
                if full[0] is not None and quick[0] is not None and full[1][0] >= 0.01
                else "-"
            )
            print(f"{_text(n, k)[0]:<10} {engine:<9} {verdict:>7} {_cell(full):>16} "
                  f"{_cell(quick):>16} {speed}")  # fmt: skip


if __name__ == "__main__":
    sys.exit(main())
