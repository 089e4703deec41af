"""Benchmark: start-up, suite throughput, many final states, the explicit/smt crossover,
`auto`, and herd7 side by side, in one run.

Sections (all by default; `--only a,b` picks some):

- `startup`: `pisa-mm run MP.litmus` (one small test, default options, started as the
  installed script starts it), after the interpreter's own floor (`python -c pass`, and
  with `-S`: without site's .pth files, where an editable install's finder would be
  imported): median and minimum wall and CPU time of --repeat runs after one untimed run
  (which fills the user's cache: lark's tables, the compiled model, the code of the
  records' method templates), the instructions of one run and of `python -c pass` when
  valgrind is installed (cachegrind: the one figure that the machine's load leaves alone),
  and what `python -X importtime` says of that run, each module's
  smallest figure over three runs: the modules imported, their total self time, the
  largest packages, the top offenders (self and cumulative ms), and whether z3, lark,
  pebble and multiprocessing were imported at all. Then what `@record` saves
  (pisa_mm/records.py): the CPU time of making 120 frozen slotted dataclasses of four
  fields with `dataclasses.dataclass` and with `record`, its compiled methods in the cache.
- `throughput`: `pisa-mm run DIR --no-time` at `--jobs 1` and at the default (the
  machine's cores), in tests per second of wall time and per CPU second (the process and
  its workers), the median of `--rounds` runs in which the trees and the two runs take
  turns, each tree with a cache of its own, on a suite this script generates with
  `pisa-mm gen`:
  the classic shapes MP, SB, LB, 2+2W, S, R, WRC and IRIW (2 to 4 work-items, one per
  work-group, 2 to 6 accesses) at system scope, with every order scheme (`--orders all`),
  every fence in place of each po edge (`--fences all`) and each access in turn made an
  atomic exchange, add or compare-and-swap (`--rmw none,xchg,add,cas`): 1,530 tests.
  Then the CPU per test of the explicit and auto engines alone, each test loaded and
  built before the clock starts (least of three passes).
- `states`: the issue's test with many final states (Many-74k: 4 work-groups, 16 relaxed
  accesses, 73,984 states; bench/bench_states.py, which also runs the family it belongs
  to): explicit, smt and auto, each in a child process with the budget (at least 60 CPU
  s), their states compared, then `--verdict-only` against the full run.
- `crossover`: the explicit and smt engines on generated scaling families
  (bench/families.py) of growing size, each run in a child process with a budget: their
  times, the ratio smt/explicit, the largest size each finishes; and the smt engine's two
  latency targets on `storers-6`.
- `auto`: the bundled suite, the generated suite (each every 3rd test with --quick) and
  each member of the families: per test, explicit, smt and auto take turns in one child
  (so that a shared machine's load weighs on them alike), each run on a structure of its
  own, in CPU seconds (the model compiled before the clock starts; a family test run
  again until 0.05 s, the mean counted); the engine auto picks by its cost model
  (pisa_mm/explicit/auto.py); auto / the better engine, auto / the per-test best (a
  perfect choice) and the picked engine / the per-test best (the choice alone, without
  the noise of auto's own run); then the same per family (`co-ring` was held out of the
  model's fit), by range of the per-test best's time, and over all
  (issue 9: auto within x1.10 of the better engine). `--fit` then refits the cost
  model's constants to these times (bench/fit_costs.py; co-ring held out) and prints
  how the current and refitted constants choose, on the fitted tests and on co-ring.

- `herd`: pisa-mm and herd7 side by side, with `--herd7 PATH` (herd7 finds its models in
  the directory `$HERDLIB` names when it is not installed): the herd C11 suite that
  bench/c11_shapes.py writes (MP, SB, LB, 2+2W, S, R, WRC, IRIW with every order
  combination: 1,458 tests), run by herd7 under its `rc11.cat` in one process, and the same
  tests imported by `pisa-mm import` and run by `pisa-mm run --no-time` at `--jobs 1` and
  at the default jobs (model `pisa`), taking turns over `--rounds`; then one small test
  (MP) started `--repeat` times by each tool; then the answers against herd7's `rc11.cat`,
  test by test (states, flags, verdict): under bench/models/rc11.cat (RC11 from pisa's
  parts: at system scope and in global memory, herd's rc11.cat), which must agree, and under
  the shipped `pisa-rc11`, which keeps pisa's C++20 release sequences.
- `herd-random`: with `--herd7 PATH`, `--herd-random N` (300) random C11 tests of
  `--seed` (1) with fences, read-modify-writes and plain (racy) accesses
  (bench/c11_random.py): herd7 under rc11.cat and pisa-mm under bench/models/rc11.cat each
  run them once, with both tools' times and herd7's slowest test; then the answers as in
  `herd` (under RC11 they must agree test by test). herd7 gives up a test past
  `--herd-timeout` (60) CPU seconds (its `-timeout`); the tests it gave up are listed
  with pisa-mm's slowest time on them.

With --baseline SRC (a source tree of another version, e.g. `git archive REV | tar -x -C
SRC`), the start-up and throughput figures are measured for it too, in the same run, with
the ratios. Both trees are byte-compiled first (`compileall`): with PYTHONDONTWRITEBYTECODE
set, a tree without .pyc files compiles every module it imports on every run.

Before the start-up and throughput work of issue 9 (commit 0bfcd00), on this 2-core
machine kind: start-up 0.66-0.8 s wall idle (0.43-0.72 s CPU measured under load), the
bundled litmus/gen suite (1,061 tests) 120 tests/s at --jobs 1 and 163 tests/s at
--jobs 2. Run with --baseline on that commit for figures measured side by side.

    python bench/run_bench.py [--only LIST] [--baseline SRC] [--repeat N] [--quick]
                              [--budget S] [--families a,b] [--fit] [--herd7 PATH]
                              [--herd-random N] [--seed N] [--herd-timeout S]
"""

from __future__ import annotations

import contextlib
import os
import re
import resource
import shutil
import statistics
import subprocess
import sys
import tempfile
import time
from collections import Counter
from pathlib import Path
from typing import Any

sys.path.insert(0, str(Path(__file__).resolve().parent))

from bench_states import MANY74K
from bench_states import report as states_report
from c11_random import write_random
from c11_shapes import write_suite
from common import ROOT, budget_and_families, command, fmt, parser_for, pisa_mm, timed
from families import FAMILIES, HELD_OUT, storers

SECTIONS = ("startup", "throughput", "states", "crossover", "auto", "herd", "herd-random")
ENGINES = ("smt", "explicit")
MP_TEST = ROOT / "litmus" / "pisa" / "mp" / "MP+64b+cc.litmus"
SHAPES = ("MP", "SB", "LB", "2+2W", "S", "R", "WRC", "IRIW")
GEN_OPTIONS = ("--orders", "all", "--scopes", "sys", "--fences", "all",
               "--rmw", "none,xchg,add,cas")  # fmt: skip
WATCHED = ("z3", "lark", "pebble", "multiprocessing", "rich", "networkx")
OFFENDERS = 12  # modules listed by self time
SUITE_LIMIT = 120.0  # CPU seconds of one engine on one test of a suite (auto section)


# ---------------------------------------------------------------- start-up


# What the installed `pisa-mm` script runs (not `python -m pisa_mm.cli`, which adds runpy);
# a baseline tree older than pisa_mm/entry.py had the script call `cli.main` itself. The
# `re.sub` on argv[0] is pip's: it compiles a pattern before pisa-mm starts, and a check
# that missed such a pattern made every run of the installed script write the code table
# again (28 M instructions, pisa_mm/regexes.py `_save`).
ENTRY = (
    "import re, sys\n"
    "try:\n    from pisa_mm.entry import main\n"
    "except ModuleNotFoundError:\n    from pisa_mm.cli import main\n"
    "sys.argv[0] = re.sub(r'(-script\\.pyw|\\.exe)?$', '', sys.argv[0])\n"
    "sys.exit(main())"
)


def _entry_point(src: Path, env: dict[str, str], *argv: str) -> tuple[float, float]:
    """Wall and CPU seconds of one `pisa-mm` run from the tree `src`, started as the
    installed script starts it."""
    full = dict(env, PYTHONPATH=str(src))
    before = resource.getrusage(resource.RUSAGE_CHILDREN)
    start = time.perf_counter()
    subprocess.run([sys.executable, "-P", "-c", ENTRY, *argv], env=full, check=True,
                   stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)  # fmt: skip
    wall = time.perf_counter() - start
    after = resource.getrusage(resource.RUSAGE_CHILDREN)
    return wall, after.ru_utime + after.ru_stime - before.ru_utime - before.ru_stime


def instructions(src: Path | None, env: dict[str, str], *argv: str) -> int | None:
    """Instructions executed by one run (valgrind's cachegrind, when installed): a figure
    that the load of other processes does not change, unlike wall and CPU time. `src`
    None: `python -c pass`."""
    if shutil.which("valgrind") is None:
        return None
    command = [sys.executable, "-P", "-c", ENTRY, *argv] if src else [sys.executable, "-c", "pass"]
    full = dict(env, PYTHONPATH=str(src)) if src else env
    done = subprocess.run(
        ["valgrind", "--tool=cachegrind", "--cache-sim=no", "--cachegrind-out-file=/dev/null",
         *command], env=full, capture_output=True, text=True, check=False,
    )  # fmt: skip
    found = re.search(r"I\s+refs:\s+([\d,]+)", done.stderr)
    return int(found.group(1).replace(",", "")) if found else None


def interpreter_floor(repeat: int) -> None:
    """The interpreter alone, with and without `site` (which imports the .pth files'
    modules: an editable install's import-hook finder is one)."""
    for label, flags in (("python -c pass", ()), ("python -S -c pass", ("-S",))):
        walls = []
        for _ in range(repeat):
            start = time.perf_counter()
            subprocess.run([sys.executable, *flags, "-c", "pass"], check=True)
            walls.append(time.perf_counter() - start)
        print(f"  {label}: wall median {statistics.median(walls) * 1000:.0f} ms, "
              f"min {min(walls) * 1000:.0f} ms")  # fmt: skip


def _importtime(src: Path, env: dict[str, str], runs: int = 3) -> list[str]:
    """What `-X importtime` says of `run MP.litmus`: per module, its smallest self and
    cumulative microseconds over `runs` runs (the machine is shared)."""
    env = dict(env, PYTHONPATH=str(src))
    argv = [sys.executable, "-X", "importtime", "-P", "-c", ENTRY, "run", str(MP_TEST)]
    own: dict[str, int] = {}
    cumulative: dict[str, int] = {}
    for _ in range(runs):
        run = subprocess.run(argv, env=env, capture_output=True, text=True, check=True)
        for line in run.stderr.splitlines():
            if not line.startswith("import time:") or "self [us]" in line:
                continue
            self_us, cum_us, name = line[len("import time:") :].split("|")
            module = name.strip()
            own[module] = min(own.get(module, 1 << 62), int(self_us))
            cumulative[module] = min(cumulative.get(module, 1 << 62), int(cum_us))
    packages: Counter[str] = Counter()
    for module, us in own.items():
        top = module.split(".")
        packages[".".join(top[:2]) if top[0] == "pisa_mm" else top[0]] += us
    total = sum(own.values()) / 1000
    largest = ", ".join(f"{k} {v / 1000:.1f}" for k, v in packages.most_common(8))
    watched = [w for w in WATCHED if w in own]
    lines = [f"{len(own)} modules, {total:.0f} ms self time; largest packages (ms): {largest}; "
             f"of {', '.join(WATCHED)}: {', '.join(watched) or 'none'} imported",
             "top offenders (self / cumulative ms):"]  # fmt: skip
    for module in sorted(own, key=lambda m: -own[m])[:OFFENDERS]:
        lines.append(f"  {own[module] / 1000:6.1f} {cumulative[module] / 1000:6.1f}  {module}")
    return lines


_RECORDS = """
import dataclasses, sys, time
sys.path.insert(0, {src!r})
from pisa_mm.records import record
def make(decorate, i):
    namespace = {{"__module__": "__main__", "__doc__": "A record.", "__annotations__":
                 {{"a": "int", "b": "str", "c": "tuple[int, ...]", "d": "int | None"}},
                 "d": None}}
    return decorate(type(f"C{{i}}", (), namespace))
decorate = dataclasses.dataclass(frozen=True, slots=True) if {plain} else record
start = time.process_time()
for i in range(120):
    make(decorate, i)
print(time.process_time() - start)
"""


def records_cost(src: Path) -> None:
    """CPU ms of making 120 frozen slotted classes, by dataclasses and by `record` (after a
    first run: the methods' code from a cache of its own)."""
    seconds = {}
    with tempfile.TemporaryDirectory() as cache:
        env = dict(os.environ, XDG_CACHE_HOME=cache)
        env.pop("PISA_MM_NO_CACHE", None)
        for label, plain in (("dataclass", True), ("record", False)):
            code = _RECORDS.format(src=str(src), plain=plain)
            runs = [subprocess.run([sys.executable, "-P", "-c", code], capture_output=True,
                                   text=True, env=env, check=True) for _ in range(4)]  # fmt: skip
            seconds[label] = min(float(r.stdout) for r in runs[1:])
    print(f"  120 dataclasses (frozen, slots, 4 fields): dataclasses.dataclass "
          f"{seconds['dataclass'] * 1000:.0f} ms CPU, records.record "
          f"{seconds['record'] * 1000:.0f} ms CPU")  # fmt: skip


def startup(src: Path, repeat: int) -> dict[str, float]:
    """The start-up figures of the tree `src`, with a cache directory of its own (another
    tree, or another user of the machine, would replace its entries)."""
    with tempfile.TemporaryDirectory() as cache:
        # an installed script's modules have their .pyc; without them every run compiles
        # every module again (1,200 M instructions instead of 300 M)
        return _startup(src, repeat, tree_env(cache))


def _startup(src: Path, repeat: int, env: dict[str, str]) -> dict[str, float]:
    _entry_point(src, env, "run", str(MP_TEST))  # fills the caches, as any earlier run would
    runs = [_entry_point(src, env, "run", str(MP_TEST)) for _ in range(repeat)]
    walls, cpus = [w for w, _ in runs], [c for _, c in runs]
    figures = {
        "wall_median": statistics.median(walls),
        "wall_min": min(walls),
        "cpu_median": statistics.median(cpus),
        "cpu_min": min(cpus),
    }
    print(f"  start-up: wall median {figures['wall_median'] * 1000:.0f} ms, min "
          f"{figures['wall_min'] * 1000:.0f} ms; CPU median {figures['cpu_median'] * 1000:.0f}"
          f" ms, min {figures['cpu_min'] * 1000:.0f} ms ({repeat} runs)")  # fmt: skip
    if (count := instructions(src, env, "run", str(MP_TEST))) is not None:
        figures["instructions"] = count
        floor = instructions(None, env)
        print(f"  instructions (valgrind cachegrind, one run): {count / 1e6:.0f} M"
              + (f" (python -c pass: {floor / 1e6:.0f} M)" if floor else ""))  # fmt: skip
    for line in _importtime(src, env):
        print(f"  {line}")
    if (src / "pisa_mm" / "records.py").exists():
        records_cost(src)
    figures.update(_without_pyc(src, repeat))
    return figures


def _without_pyc(src: Path, repeat: int) -> dict[str, float]:
    """Start-up from a copy of the tree without .pyc files, under PYTHONDONTWRITEBYTECODE:
    an editable install (the README's) where the variable is set, as in many containers
    and CI images (this machine's among them). Python then writes no .pyc for the package,
    and a tree that keeps no compiled code of its own compiles every module at every run."""
    with tempfile.TemporaryDirectory() as tmp:
        copy = Path(tmp) / "tree"
        shutil.copytree(src / "pisa_mm", copy / "pisa_mm", ignore=shutil.ignore_patterns("*.pyc"))
        env = dict(tree_env(str(Path(tmp) / "cache")), PYTHONDONTWRITEBYTECODE="1")
        _entry_point(copy, env, "run", str(MP_TEST))
        walls = [_entry_point(copy, env, "run", str(MP_TEST))[0] for _ in range(repeat)]
    wall = statistics.median(walls)
    print(f"  without .pyc files (PYTHONDONTWRITEBYTECODE=1, a copy of the package): wall "
          f"median {wall * 1000:.0f} ms, min {min(walls) * 1000:.0f} ms")  # fmt: skip
    return {"no_pyc_wall_median": wall}


# ---------------------------------------------------------------- throughput


def generate_suite(directory: Path) -> int:
    pisa_mm(ROOT, "gen", *SHAPES, *GEN_OPTIONS, "-o", str(directory))
    return len(list(directory.rglob("*.litmus")))


def tree_env(cache: str) -> dict[str, str]:
    """The environment of a tree's runs: a cache directory of its own (two trees sharing one
    replace each other's model pickle and code table, and each run then compiles anew what
    the other tree's run replaced), and the .pyc files an installed script has."""
    env = dict(os.environ, XDG_CACHE_HOME=cache)
    env.pop("PISA_MM_NO_CACHE", None)
    env.pop("PYTHONDONTWRITEBYTECODE", None)
    return env


_RUNS = (("jobs1", ["--jobs", "1"]), ("default", []))


def throughput(
    trees: list[tuple[str, Path]],
    envs: dict[str, dict[str, str]],
    suite: Path,
    n: int,
    rounds: int,
) -> dict[str, dict[str, float]]:
    """Per tree, tests per second of wall and of CPU at `--jobs 1` and the default jobs,
    from the median of `rounds` runs. The trees and the two runs take turns in each round:
    this VM's speed drifts by 10-40% within minutes, and one tree measured after the other
    took the drift for a difference."""
    for label, src in trees:  # fills the tree's cache, as the run before it would (not counted)
        pisa_mm(src, "run", str(suite), "--no-time", "--jobs", "1", env=envs[label])
    got: dict[str, dict[str, list[tuple[float, float]]]] = {
        label: {run: [] for run, _ in _RUNS} for label, _ in trees
    }
    for _ in range(rounds):
        for label, src in trees:
            for run, jobs in _RUNS:
                got[label][run].append(
                    pisa_mm(src, "run", str(suite), "--no-time", *jobs, env=envs[label])
                )
    cores = os.cpu_count() or 1
    figures: dict[str, dict[str, float]] = {}
    for label, src in trees:
        print(f" {label} ({src})")
        mine = figures[label] = {}
        for run, jobs in _RUNS:
            walls = sorted(w for w, _ in got[label][run])
            wall, cpu = statistics.median(walls), statistics.median(c for _, c in got[label][run])
            mine[run], mine[f"{run}_cpu"] = n / wall, n / cpu
            what = "--jobs 1" if jobs else f"default jobs ({cores} cores)"
            print(f"  {what}: {wall:.2f} s wall (median of {rounds}; {walls[0]:.2f}-"
                  f"{walls[-1]:.2f} s), {cpu:.2f} s CPU: {n / wall:.0f} tests/s, "
                  f"{n / cpu:.0f} tests per CPU second")  # fmt: skip
    return figures


# The engines' own CPU per test on the suite, in a child process on the tree: every test
# loaded and built first (not timed), then judged three times by each engine, the least CPU
# time counted. The engines take turns (one pass of each, three times): all passes of one
# engine, then all of the next, made the second look ~15% slower than it was (auto 1.66 ms
# against explicit's 1.36 ms, which picks explicit on every test; 1.43-1.55 in turns).
_ENGINE_CPU = """
import sys, time
from pathlib import Path
from pisa_mm.engines import EngineOptions, get_engine
from pisa_mm.runner.job import cached_model, load_source
model = cached_model("pisa")
tests = [load_source(str(p), p.read_text("utf-8"), unroll=None, strict=False)
         for p in sorted(Path(sys.argv[1]).rglob("*.litmus"))]
runs = {engine: get_engine(engine) for engine in sys.argv[2:]}
best = dict.fromkeys(runs, float("inf"))
for _ in range(3):
    for engine, run in runs.items():
        start = time.process_time()
        for t in tests:
            run(t.test, t.structure, model, EngineOptions(unroll=t.unroll))
        best[engine] = min(best[engine], time.process_time() - start)
for engine, spent in best.items():
    print(engine, spent / len(tests))
"""


def engine_cpu(
    src: Path, suite: Path, engines: tuple[str, ...], env: dict[str, str]
) -> dict[str, float]:
    """CPU seconds per test of each engine alone (parse and build not counted)."""
    env = dict(env, PYTHONPATH=str(src))
    argv = [sys.executable, "-P", "-c", _ENGINE_CPU, str(suite), *engines]
    out = subprocess.run(argv, env=env, capture_output=True, text=True, check=True).stdout
    figures = {
        f"{name}_engine_ms": float(per) * 1000 for name, per in map(str.split, out.splitlines())
    }
    print("  engine alone (CPU per test, parse and build not counted): "
          + ", ".join(f"{k.split('_')[0]} {v:.2f} ms" for k, v in figures.items()))  # fmt: skip
    return figures


def _ratios(label: str, new: dict[str, float], old: dict[str, float], lower: bool) -> None:
    """new/old for each figure; `lower`: figures where less is better (times)."""
    parts = []
    for key, value in new.items():
        if old.get(key):
            ratio = old[key] / value if lower else value / old[key]
            parts.append(f"{key} x{ratio:.2f}")
    print(f"  {label} speed-up (this tree against the baseline): {', '.join(parts)}")


# ---------------------------------------------------------------- crossover


def _load(text: str, name: str) -> tuple[Any, Any, Any]:
    from pisa_mm.runner.job import cached_model, load_source

    loaded = load_source(f"{name}.litmus", text, unroll=None, strict=False)
    assert loaded.test is not None and loaded.structure is not None, loaded.error
    return loaded.test, loaded.structure, cached_model("pisa")


def _run_family(engine: str, text: str, name: str) -> tuple[float, Any]:
    from pisa_mm.engines import EngineOptions, get_engine

    test, es, model = _load(text, name)
    run = get_engine(engine)
    start = time.perf_counter()
    result = run(test, es, model, EngineOptions(unroll=es.unroll))
    seconds = time.perf_counter() - start
    flags = tuple(sorted(f.name for f in result.flags))
    return seconds, (result.states, result.verdict.value, flags, result.cut > 0)


def crossover(names: list[str], budget: float) -> None:
    print(f"  (budget {budget:.0f}s per run; times in seconds)")
    print(f"  {'family':10} {'size':>4} {'smt':>6} {'explicit':>8} {'ratio':>6}  agree")
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
                times[engine], result = timed(_run_family, (engine, text, f"{name}-{size}"), budget)
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
            print(f"  {name:10} {size:>4} {fmt(s)} {fmt(e):>8} {ratio}  {agree}")  # fmt: skip
        print(f"  {name:10} largest within budget: smt {largest['smt']}, "
              f"explicit {largest['explicit']}")  # fmt: skip
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
    print(f"  storers-6: all {len(result.states)} states in {states:.3f}s (target < 0.3s); "
          f"query of its condition: {q.answer.value} in {asked:.3f}s (target < 1s)")  # fmt: skip


# ---------------------------------------------------------------- auto


def _jobs(texts: list[tuple[str, str]]) -> list[tuple[Any, Any, Any]]:
    """(test, structure, options) of each (path, text) that loads (a suite's bad-input
    tests do not)."""
    from pisa_mm.engines import EngineOptions
    from pisa_mm.runner.job import load_source, test_unroll

    jobs = []
    for path, text in texts:
        item = load_source(path, text, unroll=None, strict=False)
        if item.test is not None and item.structure is not None:
            jobs.append(
                (item.test, item.structure, EngineOptions(unroll=test_unroll(item.test, None)))
            )
    return jobs


REPEAT_CPU = 0.05  # a family test shorter than this is run again until it adds up (noise)
RANGES = ((0.0, 0.01), (0.01, 0.1), (0.1, float("inf")))  # per-test best, CPU seconds
AUTO_ENGINES = (*ENGINES, "auto")


class _Over(Exception):
    """A run used up its CPU budget (SIGPROF)."""


def _over(signum: int, frame: Any) -> None:
    raise _Over


def _warm_run(fn: Any, t: Any, es: Any, model: Any, o: Any, limit: float) -> None:
    """One untimed run (within `limit` CPU seconds: an engine over it is caught by the
    timed run that follows)."""
    import signal

    signal.setitimer(signal.ITIMER_PROF, limit)
    try:
        fn(t, es, model, o)
    except _Over:
        pass
    finally:
        signal.setitimer(signal.ITIMER_PROF, 0)


def _run_many(texts: list[tuple[str, str]], suite: bool, limit: float,
              skip: frozenset[str]) -> tuple[float, Any]:  # fmt: skip
    """Wall seconds over the tests `texts` (each run on a structure parsed and built for it
    before the clock starts; the engines' imports and compiled model are the parent's,
    `_warm`), and per engine of AUTO_ENGINES but those
    in `skip`, each test's verdict and CPU seconds (None once a run is over `limit` CPU
    seconds: that engine is not run on the later tests, unless `suite`, where it counts as
    infinite on that test alone). The engines take turns on each test, so that the load of
    a shared machine weighs on them alike; in a suite each goes first as often (a first run
    compiles code for the test's shape, which later runs reuse), elsewhere each has an
    untimed run first and is then run again until its runs take REPEAT_CPU in all (their
    mean counts; at most 50 runs)."""
    import signal

    from pisa_mm.engines import get_engine
    from pisa_mm.runner.job import cached_model

    model = cached_model("pisa")
    live = [e for e in AUTO_ENGINES if e not in skip]
    verdicts: dict[str, list[str] | None] = {e: [] for e in live}
    cpus: dict[str, list[float] | None] = {e: [] for e in live}
    signal.signal(signal.SIGPROF, _over)
    start = time.perf_counter()
    for k, text in enumerate(texts):
        if not _jobs([text]):
            continue
        turn = k % len(live) if live else 0  # in a suite, each engine goes first as often
        for engine in live[turn:] + live[:turn] if suite else list(live):
            fn = get_engine(engine)
            if not suite:  # what a first run compiles for the test's shape, for each alike
                ((t, es, o),) = _jobs([text])
                _warm_run(fn, t, es, model, o, limit)
            runs, total = 0, 0.0
            signal.setitimer(signal.ITIMER_PROF, limit)
            try:
                while True:
                    # a structure of its own (what a run caches on it must not help the next)
                    ((t, es, o),) = _jobs([text])
                    cpu = time.process_time()
                    verdict = fn(t, es, model, o).verdict.value
                    total += time.process_time() - cpu
                    runs += 1
                    if suite or total >= REPEAT_CPU or runs == 50:
                        break
            except _Over:
                if suite:  # the others are still measured; this one counts as over
                    verdicts[engine].append("over")  # type: ignore[union-attr]
                    cpus[engine].append(float("inf"))  # type: ignore[union-attr]
                    continue
                live.remove(engine)
                verdicts[engine] = cpus[engine] = None
                continue
            finally:
                signal.setitimer(signal.ITIMER_PROF, 0)
            verdicts[engine].append(verdict)  # type: ignore[union-attr]
            cpus[engine].append(total / runs)  # type: ignore[union-attr]
    return time.perf_counter() - start, (verdicts, cpus)


class _Row:
    """One suite or family test: per test, the CPU seconds of each engine (None: over the
    budget) and auto's pick."""

    def __init__(self, label: str, picks: list[str], cpus: dict[str, list[float] | None],
                 shapes: list[Any]):  # fmt: skip
        self.label, self.picks, self.cpus, self.shapes = label, picks, cpus, shapes

    def samples(self) -> list[tuple[Any, float, float]]:
        """(shape, explicit CPU, smt CPU) per test, inf for an engine over the budget."""
        return [
            (s, self.per_test("explicit", i), self.per_test("smt", i))
            for i, s in enumerate(self.shapes)
        ]

    def total(self, engine: str) -> float | None:
        c = self.cpus[engine]
        return None if c is None else sum(c)

    def per_test(self, engine: str, i: int) -> float:
        c = self.cpus[engine]
        return float("inf") if c is None else c[i]

    def best(self, i: int) -> float:
        return min(self.per_test("explicit", i), self.per_test("smt", i))

    def picked(self, i: int) -> float:
        """What auto's choice costs: the picked engine's own time (no noise of a run of
        auto's own)."""
        return self.per_test(self.picks[i], i)


def _auto_row(label: str, texts: list[tuple[str, str]], limit: float, suite: bool,
              skip: frozenset[str]) -> _Row:  # fmt: skip
    """Runs explicit, smt and auto over `texts` (in a child; each run within `limit` CPU
    seconds; not the engines in `skip`), checks that they agree, prints the row."""
    from pisa_mm.explicit.auto import pick
    from pisa_mm.explicit.size import shape
    from pisa_mm.outcomes.condition import observables

    jobs = _jobs(texts)
    picks = [pick(t, es) for t, es, _ in jobs]
    shapes = [shape(es, observables(t)) for t, es, _ in jobs]
    _, found = timed(_run_many, (texts, suite, limit, skip), 24 * 3600.0)
    verdicts, cpus = found
    for engine in skip:
        verdicts[engine] = cpus[engine] = None
    done = [v for v in verdicts.values() if v is not None]
    if any(v != done[0] for v in done):
        raise SystemExit(f"{label}: the engines disagree: {verdicts}")
    row = _Row(label, picks, cpus, shapes)
    n = len(picks)
    oracle = sum(row.best(i) for i in range(n))
    known = [t for e in ENGINES if (t := row.total(e)) is not None]
    auto = row.total("auto")
    chosen = sum(row.picked(i) for i in range(n))
    picked = "/".join(f"{e} {k}" for e, k in sorted(Counter(picks).items()))
    print(f"  {label:<18} {n:>5} {picked:<22} {fmt(row.total('explicit'))} "
          f"{fmt(row.total('smt'))} {fmt(auto)} {_x(auto, min(known, default=None))} "
          f"{_x(auto, oracle)} {_x(chosen, oracle)}")  # fmt: skip
    return row


def _x(a: float | None, b: float | None) -> str:
    """a / b as a ratio, in 9 characters."""
    if b is None or not b or b == float("inf"):
        return "        -"
    if a is None:  # auto over the budget where an engine was not
        return "     over"
    return "     over" if a == float("inf") else f"{f'x{a / b:.2f}':>9}"


def _summary(label: str, rows: list[_Row]) -> None:
    """auto / the better engine over `rows` taken together, auto / the per-test best, and
    the picked engine / the per-test best."""
    total = {e: [r.total(e) for r in rows] for e in (*ENGINES, "auto")}
    sums = {
        e: None if None in ts else sum(t for t in ts if t is not None) for e, ts in total.items()
    }
    oracle = sum(r.best(i) for r in rows for i in range(len(r.picks)))
    chosen = sum(r.picked(i) for r in rows for i in range(len(r.picks)))
    known = [t for e in ENGINES if (t := sums[e]) is not None]
    auto = sums["auto"]
    print(f"  {label:<18} {sum(len(r.picks) for r in rows):>5} {'':<22} {fmt(sums['explicit'])} "
          f"{fmt(sums['smt'])} {fmt(auto)} {_x(auto, min(known, default=None))} "
          f"{_x(auto, oracle)} {_x(chosen, oracle)}")  # fmt: skip


def _ranges(rows: list[_Row]) -> None:
    """auto / the per-test best by the per-test best's CPU time (size ranges)."""
    for low, high in RANGES:
        tests = [(r, i) for r in rows for i in range(len(r.picks)) if low <= r.best(i) < high]
        if not tests:
            continue
        oracle = sum(r.best(i) for r, i in tests)
        auto = sum(r.per_test("auto", i) for r, i in tests)
        chosen = sum(r.picked(i) for r, i in tests)
        span = (
            f"{low * 1000:.0f}-{high * 1000:.0f} ms"
            if high < float("inf")
            else f">= {low * 1000:.0f} ms"
        )
        print(f"  best {span:<12} {len(tests):>5} tests: auto/best {_x(auto, oracle).strip()}, "
              f"pick/best {_x(chosen, oracle).strip()}")  # fmt: skip


def _warm() -> None:
    """Both engines' imports and compiled model in this process, which the children that
    time them are forked from (else each child would spend a second or two on them)."""
    from pisa_mm.engines import EngineOptions, get_engine

    test, es, model = _load(storers(2), "storers-2")
    for engine in ENGINES:
        get_engine(engine)(test, es, model, EngineOptions(unroll=es.unroll))


def _bundled() -> list[tuple[str, str]]:
    """The bundled suite's tests (litmus/), as (path, text)."""
    paths = sorted((ROOT / "litmus").rglob("*.litmus"))
    return [(str(p), p.read_text("utf-8")) for p in paths]


def auto(names: list[str], budget: float, suite: list[str], quick: bool, fit: bool) -> None:
    from pisa_mm.explicit.auto import COSTS

    print(f"  cost model (pisa_mm/explicit/auto.py): {COSTS}")
    print(f"  CPU seconds of the engines themselves (the model compiled before the clock "
          f"starts; a family test run again until {REPEAT_CPU:.2f} s; the engines take turns "
          f"on each test); at most {budget:.0f} s CPU per run of a family test, "
          f"{SUITE_LIMIT:.0f} s of a suite's. auto/best: auto over the "
          "better engine on the whole row; /per-test: over the faster engine of each test "
          "(a perfect choice); pick/per-test: the engine auto picks over that (its choice "
          "alone, no noise of auto's own run)")  # fmt: skip
    print(f"  {'test':<18} {'tests':>5} {'auto picks':<22} {'explicit':>6} {'smt':>6} "
          f"{'auto':>6} {'auto/best':>9} {'/per-test':>9} {'pick/p-t':>9}")  # fmt: skip
    _warm()
    step = 3 if quick else 1
    bundled = _bundled()[::step]
    part = " (every 3rd)" if quick else ""
    suites = [_auto_row(f"bundled suite{part}", bundled, SUITE_LIMIT, True, frozenset())]
    if suite:
        texts = [(f"g{i}.litmus", t) for i, t in enumerate(suite)][::step]
        suites.append(_auto_row(f"generated suite{part}", texts, SUITE_LIMIT, True, frozenset()))
    families: dict[str, list[_Row]] = {}
    for name in names:
        gen, sizes = FAMILIES[name]
        over: set[str] = set()  # engines over the budget at a smaller size
        for n in sizes:
            text = [(f"{name}-{n}.litmus", gen(n))]
            row = _auto_row(f"{name}-{n}", text, budget, False, frozenset(over))
            over |= {e for e in AUTO_ENGINES if row.cpus[e] is None}
            families.setdefault(name, []).append(row)
            if set(ENGINES) <= over:
                break
    print("  per family (all its sizes; a held-out family was not used to fit the model):")
    for name, rows in families.items():
        _summary(f"{name}{' (held out)' if name in HELD_OUT else ''}", rows)
    everything = suites + [r for rows in families.values() for r in rows]
    for label, rows in (
        ("suites", suites),
        ("families", [r for rs in families.values() for r in rs]),
    ):
        if rows:
            print(f"  by the per-test best's CPU time, {label}:")
            _ranges(rows)
    _summary("all", everything)
    print("  (the many-states test, Many-74k: the `states` section)")
    if fit:
        held = [r for name in HELD_OUT for r in families.get(name, [])]
        _fit([r for r in everything if r not in held], held)


def _fit(rows: list[_Row], held: list[_Row]) -> None:
    """The cost model refitted to `rows`' times, and how its choice and the current one
    compare with a perfect choice on those rows and on the held-out `held`."""
    from fit_costs import choices, fit, rounded

    from pisa_mm.explicit.auto import COSTS

    samples = [s for r in rows for s in r.samples()]
    fitted = rounded(fit(COSTS, samples))
    print(f"  refitted on {len(samples)} tests (not the held-out family): {fitted}")
    for label, group in (
        ("fitted tests", samples),
        ("held out", [s for r in held for s in r.samples()]),
    ):
        for name, costs in (("current", COSTS), ("refitted", fitted)):
            picked, best = choices(costs, group)
            print(f"    {label:<13} {name:<9} pick/per-test best {_x(picked, best).strip()}")


# ---------------------------------------------------------------- herd7 side by side


Answer = tuple[frozenset[frozenset[str]], str | None, bool]


def herd_blocks(path: Path) -> dict[str, Answer]:
    """Per test of a herd log (herd7's own, or pisa-mm's `--herd-log`): its final states, each
    a set of `1:r0=1` / `x=1` words (herd writes a C location `[x]`), the verdict (`Ok`,
    `No`, or herd's `Undef` where its model raised the `undef` flag) and whether a flag was
    raised."""
    blocks: dict[str, tuple[set[frozenset[str]], list[str | None], list[bool]]] = {}
    states: set[frozenset[str]] = set()
    verdict: list[str | None] = [None]
    flagged = [False]
    for line in path.read_text("utf-8").splitlines():
        if line.startswith("Test "):
            states, verdict, flagged = set(), [None], [False]
            blocks[line.split()[1]] = (states, verdict, flagged)
        elif line in ("Ok", "No", "Undef"):
            verdict[0] = line
        elif line.startswith("Flag "):
            flagged[0] = True
        elif "=" in line and line.endswith(";") and not line.startswith("Condition"):
            states.add(frozenset(w.strip().replace("[", "").replace("]", "")
                                 for w in line.split(";") if w.strip()))  # fmt: skip
    return {name: (frozenset(s), v[0], f[0]) for name, (s, v, f) in blocks.items()}


def herd_differ(theirs: dict[str, Answer], ours: dict[str, Answer]) -> list[str]:
    """The tests whose answers differ: states, whether a flag was raised (herd's rc11.cat
    names its race flag `undef`, pisa-mm's `data-race`), and the verdict, except where herd
    prints `Undef` for a flagged test instead of one."""

    def same(a: Answer, b: Answer | None) -> bool:
        return b is not None and a[0] == b[0] and a[2] == b[2] and a[1] in (b[1], "Undef")

    return sorted(name for name in theirs if not same(theirs[name], ours.get(name)))


def herd_side_by_side(herd7: str, rounds: int, repeat: int) -> None:
    with tempfile.TemporaryDirectory() as tmp:
        c_dir, pisa_dir = Path(tmp) / "c11", Path(tmp) / "pisa"
        c_files = [str(p) for p in write_suite(c_dir)]
        env = tree_env(str(Path(tmp) / "cache"))
        pisa_mm(ROOT, "import", str(c_dir), "-o", str(pisa_dir), env=env)
        n = len(c_files)
        herd_log, ours_log = Path(tmp) / "herd.log", Path(tmp) / "ours.log"
        runs: dict[str, list[str]] = {
            "herd7 -model rc11.cat (one process)": [herd7, "-model", "rc11.cat", *c_files],
            "pisa-mm run --jobs 1": ["run", str(pisa_dir), "--no-time", "--jobs", "1"],
            "pisa-mm run (default jobs)": ["run", str(pisa_dir), "--no-time"],
        }
        print(f"  {n} herd C11 tests (bench/c11_shapes.py), imported by pisa-mm import; "
              f"median of {rounds} rounds in turns")  # fmt: skip

        def once(label: str, argv: list[str]) -> tuple[float, float]:
            if label.startswith("herd7"):
                return command(argv, stdout=herd_log)
            return pisa_mm(ROOT, *argv, env=env)

        for label, argv in runs.items():  # fills pisa-mm's cache, as an earlier run would
            once(label, argv)
        got: dict[str, list[tuple[float, float]]] = {label: [] for label in runs}
        for _ in range(rounds):
            for label, argv in runs.items():
                got[label].append(once(label, argv))
        rate = {}
        for label in runs:
            wall = statistics.median(w for w, _ in got[label])
            cpu = statistics.median(c for _, c in got[label])
            rate[label] = n / wall
            print(f"  {label:<36} {wall:6.2f} s wall, {cpu:6.2f} s CPU: {n / wall:5.0f} tests/s")
        herd_rate = rate["herd7 -model rc11.cat (one process)"]
        for label in list(runs)[1:]:
            print(f"  {label} / herd7: x{rate[label] / herd_rate:.2f} tests per second")
        mp_c = str(c_dir / "MP+rel+rel+acq+acq.litmus")
        mp_pisa = str(pisa_dir / "MP+rel+rel+acq+acq.litmus")
        herd_one = [command([herd7, "-model", "rc11.cat", mp_c]) for _ in range(repeat)]
        ours_one = [_entry_point(ROOT, env, "run", mp_pisa) for _ in range(repeat)]
        h, o = statistics.median(w for w, _ in herd_one), statistics.median(w for w, _ in ours_one)
        print(f"  one test (MP+rel+rel+acq+acq), median wall of {repeat}: herd7 {h * 1000:.0f} "
              f"ms, pisa-mm {o * 1000:.0f} ms (x{o / h:.1f})")  # fmt: skip
        herd_answers(pisa_dir, herd_blocks(herd_log), ours_log, env)


# RC11 as herd's rc11.cat has it (two of pisa's decisions turned; the file says which).
RC11_MODEL = ROOT / "bench" / "models" / "rc11.cat"


def herd_answers(pisa_dir: Path, theirs: dict[str, Answer], log: Path, env: dict[str, str]) -> None:
    """pisa-mm's answers on the imported tests against herd7's (`theirs`), test by test:
    under RC11 (bench/models/rc11.cat), where they must agree, and under the shipped
    pisa-rc11, which keeps C++20's release sequences (model-decisions) and so may differ
    where a release write is followed by a write to its location in its thread."""
    flagged = sum(answer[2] for answer in theirs.values())
    for model, what in ((str(RC11_MODEL), "RC11"), ("pisa-rc11", "C++20 release sequences")):
        pisa_mm(ROOT, "run", str(pisa_dir), "--herd-log", "--model", model, env=env,
                stdout=log)  # fmt: skip
        differ = herd_differ(theirs, herd_blocks(log))
        name = Path(model).relative_to(ROOT) if model == str(RC11_MODEL) else model
        print(f"  answers under {name} ({what}) against herd7 rc11.cat: "
              f"{len(theirs) - len(differ)} of {len(theirs)} tests agree (states, flags, "
              f"verdict; {flagged} flagged racy by herd7)"
              + (f"; differ: {', '.join(differ[:10])}" if differ else ""))  # fmt: skip


def herd_random(herd7: str, n: int, seed: int, herd_timeout: float) -> None:
    """herd7 and pisa-mm on `n` random C11 tests with fences, read-modify-writes and plain
    accesses (bench/c11_random.py): the answers, test by test, and each tool's time. herd7
    gives up a test past `herd_timeout` CPU seconds (its `-timeout`): a few of these tests
    take it more than ten minutes (seed 1's T100: eight writes and RMWs to one location)."""
    with tempfile.TemporaryDirectory() as tmp:
        c_dir, pisa_dir = Path(tmp) / "c11", Path(tmp) / "pisa"
        write_random(c_dir, n, seed)
        env = tree_env(str(Path(tmp) / "cache"))
        pisa_mm(ROOT, "import", str(c_dir), "-o", str(pisa_dir), env=env)
        imported = sorted(pisa_dir.glob("*.litmus"))
        print(f"  {n} random tests (seed {seed}), {len(imported)} imported (pisa-mm import "
              "skips seq_cst read-modify-writes: PISA has no such order)")  # fmt: skip
        herd_log, ours_log = Path(tmp) / "herd.log", Path(tmp) / "ours.log"
        c_files = [str(c_dir / p.name) for p in imported]
        herd_argv = [herd7, "-model", "rc11.cat", "-timeout", f"{herd_timeout:g}", *c_files]
        h_wall, h_cpu = command(herd_argv, stdout=herd_log)
        o_wall, o_cpu = pisa_mm(ROOT, "run", str(pisa_dir), "--herd-log", "--model",
                                str(RC11_MODEL), env=env, stdout=ours_log)  # fmt: skip
        print(f"  herd7 -model rc11.cat (one process): {h_wall:7.2f} s wall, {h_cpu:7.2f} s CPU")
        print(f"  pisa-mm run --model rc11.cat:        {o_wall:7.2f} s wall, {o_cpu:7.2f} s CPU")
        herd_times, our_times = _herd_times(herd_log), _herd_times(ours_log)
        slow = max(herd_times.items(), key=lambda item: item[1], default=None)
        if slow is not None:
            mine = our_times.get(slow[0])
            print(f"  herd7's slowest test: {slow[0]} {slow[1]:.2f} s (pisa-mm {mine} s)")
        if given_up := sorted(set(our_times) - set(herd_times)):
            worst = max(our_times[name] for name in given_up)
            print(f"  herd7 gave up {len(given_up)} tests past {herd_timeout:g} s CPU each "
                  f"({', '.join(given_up[:10])}); pisa-mm answered them, the slowest in "
                  f"{worst:.2f} s")  # fmt: skip
        herd_answers(pisa_dir, herd_blocks(herd_log), ours_log, env)


def _herd_times(log: Path) -> dict[str, float]:
    """A herd log's `Time NAME SECONDS` lines."""
    words = (line.split() for line in log.read_text("utf-8").splitlines())
    return {w[1]: float(w[2]) for w in words if len(w) == 3 and w[0] == "Time"}


# ---------------------------------------------------------------- main


def _compile(src: Path) -> None:
    subprocess.run([sys.executable, "-m", "compileall", "-q", str(src / "pisa_mm")],
                   check=True, stdout=subprocess.DEVNULL)  # fmt: skip


def main() -> int:
    parser = parser_for(__doc__ or "", FAMILIES)
    parser.add_argument("--only", help="comma-separated subset of: " + ",".join(SECTIONS))
    parser.add_argument("--baseline", type=Path, help="a source tree to compare with")
    parser.add_argument("--repeat", type=int, default=10, help="start-up runs (default 10)")
    parser.add_argument(
        "--rounds", type=int, default=3, help="throughput: rounds of turns (default 3)"
    )
    parser.add_argument(
        "--fit", action="store_true", help="auto: also refit the cost model to the times"
    )
    parser.add_argument("--herd7", help="herd: the herd7 program to compare with")
    parser.add_argument(
        "--herd-random", type=int, default=300, help="herd-random: tests (default 300)"
    )
    parser.add_argument("--seed", type=int, default=1, help="herd-random: seed (default 1)")
    parser.add_argument(
        "--herd-timeout",
        type=float,
        default=60.0,
        help="herd-random: herd7's -timeout, CPU seconds a test (default 60)",
    )
    args = parser.parse_args()
    budget, names = budget_and_families(parser, args, FAMILIES)
    only = args.only.split(",") if args.only else list(SECTIONS)
    if unknown := [s for s in only if s not in SECTIONS]:
        parser.error(f"unknown sections: {', '.join(unknown)}")
    for section in ("herd", "herd-random"):
        if section in only and not args.herd7:
            if args.only:
                parser.error(f"the {section} section needs --herd7 PATH")
            only.remove(section)
    trees = [("this tree", ROOT)] + ([("baseline", args.baseline)] if args.baseline else [])
    for _, src in trees:
        _compile(src)
    load = os.getloadavg()
    print(f"{os.cpu_count()} cores, load average {load[0]:.2f} {load[1]:.2f} {load[2]:.2f}")
    with tempfile.TemporaryDirectory() as tmp:
        suite_dir = Path(tmp) / "suite"
        texts: list[str] = []
        if "throughput" in only or "auto" in only:
            n = generate_suite(suite_dir)
            texts = [p.read_text("utf-8") for p in sorted(suite_dir.rglob("*.litmus"))]
            print(f"generated suite: {n} tests ({', '.join(SHAPES)}; {' '.join(GEN_OPTIONS)})")
        if "startup" in only:
            print(f"\nstart-up: pisa-mm run {MP_TEST.relative_to(ROOT)}")
            interpreter_floor(args.repeat)
            figures = {}
            for label, src in trees:
                print(f" {label} ({src})")
                figures[label] = startup(src, args.repeat)
            if args.baseline:
                _ratios("start-up", figures["this tree"], figures["baseline"], lower=True)
        if "throughput" in only:
            print(f"\nthroughput: pisa-mm run SUITE --no-time ({len(texts)} tests)")
            with contextlib.ExitStack() as stack:
                envs = {
                    label: tree_env(stack.enter_context(tempfile.TemporaryDirectory()))
                    for label, _ in trees
                }
                figures = throughput(trees, envs, suite_dir, len(texts), args.rounds)
                engines = {}
                for label, src in trees:
                    print(f" {label} ({src})")
                    engines[label] = engine_cpu(src, suite_dir, ("explicit", "auto"), envs[label])
            if args.baseline:
                _ratios("throughput", figures["this tree"], figures["baseline"], lower=False)
                _ratios("engine", engines["this tree"], engines["baseline"], lower=True)
        if "states" in only:
            print(f"\nmany final states: {MANY74K} (bench/bench_states.py has the family)")
            states_report(((0, 0),), ("explicit", "smt", "auto"), max(budget, 60.0))
        if "crossover" in only:
            print("\ncrossover: smt against explicit on scaling families")
            crossover(names, budget)
        if "auto" in only:
            print("\nauto against the better of explicit and smt")
            auto(names, budget, texts, args.quick, args.fit)
        if "herd" in only:
            print(f"\nherd7 side by side ({args.herd7})")
            herd_side_by_side(args.herd7, args.rounds, args.repeat)
        if "herd-random" in only:
            print(f"\nherd7 on random tests ({args.herd7})")
            herd_random(args.herd7, args.herd_random, args.seed, args.herd_timeout)
    return 0


if __name__ == "__main__":
    sys.exit(main())
