"""Benchmark: time and peak memory of the frontend (parse, validate, build) against test size.

Generates tests of growing size in two shapes, many threads with one store each and one thread
with many stores (up to 2,000 threads and 4,000 stores by default, the sizes of issue 14),
and prints for each size the time and tracemalloc peak of each stage (`--render` adds the
`pisa-mm parse` table), and
the growth ratio against the previous size (2.0 for linear growth when the size doubles).
Each size runs in a child process, so that one size's memory does not count for the next.

`--commands` measures whole commands end to end instead, each in its own process: CPU time
(user + sys) and peak RSS of `pisa-mm parse --json` (`parse-json`) and of `pisa-mm run`
with each engine of `--engines` (`run`, under run's own `--timeout`: a size it cannot
finish ends as `Unknown (timeout)` or `Unknown (memory)`, printed as the verdict).

`--parse` measures the litmus parser on the small tests people run by the thousand: the
suite of bench/run_bench.py (`pisa-mm gen`, 1,530 tests of the classic shapes), each tree in
fresh processes: the CPU time of `import pisa_mm.litmus` (median of --repeat processes, and
whether lark was imported), of the first parse (a parser's set-up: lark loaded its tables
there), and per test (`parse_raw` over the suite, the best of three passes). With
`--baseline SRC` (another source tree, e.g. `git archive REV | tar -x -C SRC`) the same
figures for it, and the ratios baseline / this tree.

`--stages` measures what `pisa-mm run DIR --jobs 1` spends per test on the same generated
suite (or `--suite DIR`), in one process and stage by stage, CPU time per test (least of
--passes passes): reading the file, the parse, validate, build, the engine (`--engine`,
default auto, the model compiled before the clock starts), the Liveness check, the Job and
Record pickled both ways (what a worker of `--jobs N` sends and receives), `run_job` whole
under run's default `--max-memory` budget (printed as its own overhead: what it costs
beyond the stages above, a difference of two timings), judging the record against its
expectation (`commands/run.py` `judge`) and the herd-style block. `--profile FILE` also
writes a cProfile of one more pass (`python -m pstats FILE`; pstats merges the records'
generated methods, which all live at `<string>:2`). With `--baseline SRC` the same figures
for that tree, and the ratios baseline / this tree.

`--stages --instructions` counts instead the machine instructions (valgrind's callgrind,
which must be installed) that reading, parsing, validating and building take per test:
the difference between a process that loads --instructions-tests tests of the suite (every
5th, after 60 warming ones) and one that loads none, divided by their number. Unlike CPU
time, the count does not depend on the machine's load (it is the figure to compare on a
shared machine); it runs about 50 times slower, so it takes a few minutes per tree.

    python bench/bench_frontend.py --stages [--suite DIR] [--baseline SRC] [--profile FILE]
    python bench/bench_frontend.py --stages --instructions [--baseline SRC]
    python bench/bench_frontend.py [--shape threads|stores|both] [--sizes 250,500,1000] [--render]
    python bench/bench_frontend.py --commands parse-json,run --engines auto,smt [--timeout 300]
    python bench/bench_frontend.py --parse [--baseline SRC] [--repeat 5]
    python bench/bench_frontend.py --scale all [--sizes 250,500,1000,2000,4000] [--timeout 30]
    python bench/bench_frontend.py --scale threads,stores --stages-only

`--scale` adds three shapes (2,000 threads loading once each, a chain of dependent `iadd`s
after a load, one thread loading into thousands of registers) and, per size, the CPU time
and the peak RSS growth of each stage (parse, validate, build, the static relations' linear
forms) and of whole `pisa-mm parse` and `pisa-mm run --timeout 30` commands.
"""

from __future__ import annotations

import argparse
import json
import multiprocessing as mp
import os
import signal
import statistics
import subprocess
import sys
import tempfile
import threading
import time
import tracemalloc
from pathlib import Path
from typing import Any

from common import ROOT

CLI = "import sys; from pisa_mm.cli import main; sys.exit(main(sys.argv[1:]))"


def many_threads(n: int) -> str:
    """`n` threads in their own work-groups, each storing to its own variable and to @x."""
    lines = ["PISA ManyThreads", "{", "  .global .32b @x = 0;"]
    lines += [f"  .global .32b @v{i} = 0;" for i in range(n)]
    lines.append("}")
    for i in range(n):
        lines += [f"P{i} @ wg {i} {{", f"  st.global.32b [@v{i}], 1;", "}"]
    lines.append("exists (@x == 0)")
    return "\n".join(lines) + "\n"


def many_stores(n: int) -> str:
    """One thread storing `n` times to @x, and a second thread loading it once."""
    lines = ["PISA ManyStores", "{", "  .global .32b @x = 0;", "}", "P0 @ wg 0 {"]
    lines += [f"  st.global.32b [@x], {i % 1000};" for i in range(n)]
    lines += ["}", "P1 @ wg 1 {", "  ld.global.32b %r0, [@x];", "}", "exists (P1:%r0 == 0)"]
    return "\n".join(lines) + "\n"


SHAPES = {"threads": many_threads, "stores": many_stores}


# ---------------------------------------------------------------- --scale (issue 14)


def many_loads(n: int) -> str:
    """`n` threads in their own work-groups, each loading @x once (all read the init)."""
    lines = ["PISA ManyLoads", "{", "  .global .32b @x = 0;", "}"]
    for i in range(n):
        lines += [f"P{i} @ wg {i} {{", "  ld.global.32b %r0, [@x];", "}"]
    lines.append("exists (P0:%r0 == 1)")
    return "\n".join(lines) + "\n"


def iadd_chain(n: int) -> str:
    """A load, then `n` dependent `iadd`s on its value and a store of the sum; a second
    thread stores to the same location (two final states)."""
    lines = ["PISA IaddChain", "{", "  .global .32b @x = 0;", "}", "P0 @ wg 0 {"]
    lines.append("  ld.global.32b %r0, [@x];")
    lines += ["  iadd.32b %r0, %r0, 1;"] * n
    lines += ["  st.global.32b [@x], %r0;", "}", "P1 @ wg 1 {", "  st.global.32b [@x], 5;", "}"]
    lines.append(f"exists (P0:%r0 == {n})")
    return "\n".join(lines) + "\n"


def many_registers(n: int) -> str:
    """One thread loading @x into `n` distinct registers, a second thread storing to it."""
    lines = ["PISA ManyRegisters", "{", "  .global .32b @x = 0;", "}", "P0 @ wg 0 {"]
    lines += [f"  ld.global.32b %r{i}, [@x];" for i in range(n)]
    lines += ["}", "P1 @ wg 1 {", "  st.global.32b [@x], 1;", "}", "exists (P0:%r0 == 1)"]
    return "\n".join(lines) + "\n"


SCALE_SHAPES = {
    "threads": many_threads,
    "stores": many_stores,
    "loads": many_loads,
    "chain": iadd_chain,
    "registers": many_registers,
}
SCALE_STAGES = ("parse", "validate", "build", "static")


def _scale_child(shape: str, n: int, conn: Any) -> None:
    """Each stage's CPU seconds and the peak RSS growth it caused, in this fresh process."""
    from pisa_mm.events.build import build
    from pisa_mm.events.relations import incl_blocks, static_relations, static_sets
    from pisa_mm.litmus.parser import parse_raw
    from pisa_mm.litmus.validate import validate

    text = SCALE_SHAPES[shape](n)

    def static(es: Any) -> None:
        # what the relations' linear forms cost: the sets, the equivalence classes, incl's
        # blocks, po's edges and the dependency pairs (all-pairs streams are the engines')
        rels = static_relations(es)
        static_sets(es)
        for name in ("int", "sinstr", "same-sg", "same-wg", "same-gpu"):
            rels.classes(name)
        incl_blocks(es)
        list(es.po.edges())

    steps = (lambda v: parse_raw(v, "gen.litmus"), validate, build, static)
    # first the CPU time of each stage, then (again, tracemalloc slows it) its peak memory
    times: list[float] = []
    value: Any = text
    for step in steps:
        t0 = time.process_time()
        value = step(value)
        times.append(time.process_time() - t0)
    peaks: list[int] = []
    value = text
    for step in steps:
        value, _, peak = _stage(lambda: step(value))  # noqa: B023  # called at once
        peaks.append(peak)
    conn.send(list(zip(times, peaks, strict=True)))


def _ratio(now: tuple[float, int], prev: tuple[float, int] | None) -> str:
    """Growth of time and memory against the previous size ("-" where a figure is too
    small to divide: under 10 ms or 100 kB)."""
    if prev is None:
        return ""
    t = f"x{now[0] / prev[0]:.1f}" if prev[0] >= 0.01 else "-"
    m = f"x{now[1] / prev[1]:.1f}" if prev[1] >= 100_000 else "-"
    return f" {t}/{m}"


def scale(args: argparse.Namespace) -> None:
    """`--scale`: per shape and size, CPU time and tracemalloc peak of each frontend stage
    (in a fresh child process), then of `pisa-mm parse` and `pisa-mm run --timeout T` (whole
    commands, CPU of the command and its workers, peak RSS of the largest), with the growth
    ratio against the previous size (x2.0 is linear when the size doubles)."""
    shapes = args.scale.split(",") if args.scale != "all" else list(SCALE_SHAPES)
    sizes = [int(x) for x in args.sizes.split(",")]
    with tempfile.TemporaryDirectory() as tmp:
        for shape in shapes:
            print(f"{shape}: per stage CPU s and peak MB (tracemalloc); whole commands CPU s")
            print("  and peak RSS MB; growth against the previous size (time/memory)")
            prev: list[tuple[float, int]] | None = None
            for n in sizes:
                parent, child = mp.Pipe()
                proc = mp.Process(target=_scale_child, args=(shape, n, child))
                proc.start()
                if not parent.poll(args.budget):
                    proc.kill()
                    proc.join()
                    print(f"  {n:>6}  stages over the {args.budget:.0f} s budget")
                    break
                stages: list[tuple[float, int]] = parent.recv()
                proc.join()
                figures, names, verdict = stages, list(SCALE_STAGES), ""
                if not args.stages_only:
                    path = Path(tmp) / f"{shape}{n}.litmus"
                    path.write_text(SCALE_SHAPES[shape](n))
                    parse_cpu, parse_rss, _ = run_command(["parse", str(path)], args.budget)
                    limit = ["--timeout", f"{args.timeout:g}"]
                    run_cpu, run_rss, verdict = run_command(
                        ["run", "-j", "1", "--no-time", *limit, str(path)], args.budget
                    )
                    figures = [*stages, (parse_cpu, parse_rss), (run_cpu, run_rss)]
                    names += ["cmd parse", "cmd run"]
                    verdict = f"  [{verdict}]"
                cells = []
                for i, (name, (t, m)) in enumerate(zip(names, figures, strict=True)):
                    growth = _ratio((t, m), None if prev is None else prev[i])
                    cells.append(f"{name} {t:6.2f}s {m / 2**20:7.1f}MB{growth}")
                print(f"  {n:>6}  " + " | ".join(cells) + verdict)
                prev = figures


def _stage(fn: Any) -> tuple[Any, float, int]:
    tracemalloc.start()
    t0 = time.perf_counter()
    out = fn()
    elapsed = time.perf_counter() - t0
    _, peak = tracemalloc.get_traced_memory()
    tracemalloc.stop()
    return out, elapsed, peak


def _child(shape: str, n: int, stages: str, conn: Any) -> None:
    from pisa_mm.events.build import build
    from pisa_mm.litmus.parser import parse_raw
    from pisa_mm.litmus.validate import validate

    text = SHAPES[shape](n)
    raw, t_parse, m_parse = _stage(lambda: parse_raw(text, "gen.litmus"))
    test, t_val, m_val = _stage(lambda: validate(raw))
    result = [(t_parse, m_parse), (t_val, m_val)]
    if "build" in stages:
        es, t_build, m_build = _stage(lambda: build(test))
        result.append((t_build, m_build))
        if "render" in stages:
            from pisa_mm.report.parse_table import render_plain

            _, t_render, m_render = _stage(lambda: render_plain(es))
            result.append((t_render, m_render))
    conn.send(result)


def measure(shape: str, n: int, stages: str, budget: float) -> list[tuple[float, int]] | None:
    parent, child = mp.Pipe()
    proc = mp.Process(target=_child, args=(shape, n, stages, child))
    proc.start()
    if not parent.poll(budget):
        proc.kill()
        proc.join()
        return None
    out: list[tuple[float, int]] = parent.recv()
    proc.join()
    return out


def run_command(argv: list[str], budget: float) -> tuple[float, int, str]:
    """`pisa-mm *argv` in its own process: (CPU seconds, peak RSS in bytes, verdict), the
    verdict being the `Observation` or `Unknown` line of a run, the exit status otherwise."""
    with tempfile.TemporaryFile("w+") as out:
        proc = subprocess.Popen(
            [sys.executable, "-c", CLI, *argv], stdout=out, stderr=subprocess.STDOUT, cwd=ROOT
        )
        timer = threading.Timer(budget, lambda: os.kill(proc.pid, signal.SIGKILL))
        timer.start()
        _, status, usage = os.wait4(proc.pid, 0)
        timer.cancel()
        proc.returncode = os.waitstatus_to_exitcode(status)
        out.seek(0)
        lines = out.read().splitlines()
    verdict = next(
        (line for line in lines if line.startswith(("Observation", "Unknown"))),
        f"exit {proc.returncode}" + (" (killed at the budget)" if proc.returncode < 0 else ""),
    )
    return usage.ru_utime + usage.ru_stime, usage.ru_maxrss * 1024, verdict


def commands(args: argparse.Namespace, shapes: tuple[str, ...]) -> None:
    """The `--commands` table: one row per size and command."""
    wanted = args.commands.split(",")
    runs: list[tuple[str, list[str]]] = []
    if "parse-json" in wanted:
        runs.append(("parse --json", ["parse", "--json"]))
    if "run" in wanted:
        for engine in args.engines.split(","):
            argv = ["run", "--no-time", "-j", "1", "--engine", engine, "--timeout"]
            runs.append((f"run {engine}", [*argv, str(args.timeout)]))
    with tempfile.TemporaryDirectory() as tmp:
        for shape in shapes:
            print(f"{shape}:")
            for label, argv in runs:
                prev: tuple[float, int] | None = None
                for n in (int(s) for s in args.sizes.split(",")):
                    path = Path(tmp) / f"{shape}{n}.litmus"
                    path.write_text(SHAPES[shape](n))
                    cpu, rss, verdict = run_command([*argv, str(path)], args.budget)
                    ratio = "" if prev is None else f" x{cpu / max(prev[0], 1e-3):.1f}"
                    ratio += "" if prev is None else f"/x{rss / max(prev[1], 1):.1f}"
                    print(
                        f"  {label:<14} {n:>6}  {cpu:8.2f}s cpu {rss / 2**20:8.1f}MB rss"
                        f"{ratio:<12}  {verdict}"
                    )
                    prev = (cpu, rss)


# Run in a fresh process with the tree under test first on the path: argv = the test files.
_PARSE_CHILD = """
import json, sys, time
t0 = time.process_time()
import pisa_mm.litmus
t1 = time.process_time()
from pisa_mm.litmus.parser import parse_raw
texts = [open(f, encoding="utf-8").read() for f in sys.argv[1:]]
t2 = time.process_time()
parse_raw(texts[0], "first.litmus")
t3 = time.process_time()
passes = []
for _ in range(3 if len(texts) > 1 else 0):
    start = time.process_time()
    for text in texts:
        parse_raw(text, "t.litmus")
    passes.append(time.process_time() - start)
print(json.dumps({"import": t1 - t0, "first": t3 - t2, "lark": "lark" in sys.modules,
                  "per_test": min(passes) / len(texts) if passes else 0.0}))
"""


def _parse_figures(src: Path, files: list[str], repeat: int) -> dict[str, float]:
    """The `--parse` figures of the tree `src` (seconds of CPU)."""

    def child(argv: list[str]) -> dict[str, Any]:
        env = dict(os.environ, PYTHONPATH=str(src))
        out = subprocess.run([sys.executable, "-P", "-c", _PARSE_CHILD, *argv], env=env,
                             check=True, capture_output=True, text=True).stdout  # fmt: skip
        got: dict[str, Any] = json.loads(out)
        return got

    subprocess.run([sys.executable, "-m", "compileall", "-q", str(src / "pisa_mm")],
                   check=True, stdout=subprocess.DEVNULL)  # fmt: skip
    child(files[:1])  # fills the user's cache (lark's tables, for a tree that has them)
    starts = [child(files[:1]) for _ in range(repeat)]
    suite = child(files)
    return {
        "import": statistics.median(s["import"] for s in starts),
        "first_parse": statistics.median(s["first"] for s in starts),
        "per_test": suite["per_test"],
        "lark": float(suite["lark"]),
    }


def parse_bench(args: argparse.Namespace) -> None:
    from run_bench import generate_suite

    trees = [("this tree", ROOT)] + ([("baseline", args.baseline)] if args.baseline else [])
    with tempfile.TemporaryDirectory() as tmp:
        n = generate_suite(Path(tmp))
        files = sorted(str(f) for f in Path(tmp).rglob("*.litmus"))
        print(f"litmus parser on the generated suite ({n} tests), CPU time:")
        figures = {}
        for label, src in trees:
            f = figures[label] = _parse_figures(src, files, args.repeat)
            print(f"  {label}: import pisa_mm.litmus {f['import'] * 1000:.1f} ms (lark "
                  f"{'imported' if f['lark'] else 'not imported'}), first parse "
                  f"{f['first_parse'] * 1000:.1f} ms, per test {f['per_test'] * 1e6:.0f} us "
                  f"({1 / f['per_test']:.0f} tests/s)")  # fmt: skip
    if args.baseline:
        new, old = figures["this tree"], figures["baseline"]
        ratios = ", ".join(f"{k} x{old[k] / new[k]:.2f}" for k in ("import", "first_parse",
                                                                  "per_test"))  # fmt: skip
        print(f"  speed-up (baseline / this tree): {ratios}")


# ---------------------------------------------------------------- --stages (issue 9)

# Run with PYTHONPATH on the measured tree: argv = suite directory, engine, passes, profile
# file ("" for none). Prints {stage: CPU seconds per test} as JSON.
_STAGES_CHILD = """
import argparse, gc, io, json, pickle, sys, time
from pathlib import Path
from pisa_mm.commands.run import judge
from pisa_mm.engines import EngineOptions, get_engine
from pisa_mm.errors import read_source
from pisa_mm.events.build import build
from pisa_mm.litmus.parser import parse_raw
from pisa_mm.litmus.validate import validate
from pisa_mm.runner.budget import DEFAULT_TIMEOUT, Budget, default_memory
from pisa_mm.runner.console import Console
from pisa_mm.runner.job import EngineTask, Job, Loaded, _record, cached_model, run_job
from pisa_mm.runner.job import test_unroll, with_liveness
from pisa_mm.runner.reporters import HerdText

suite, engine, passes, profile = sys.argv[1], sys.argv[2], int(sys.argv[3]), sys.argv[4]
paths = sorted(str(p) for p in Path(suite).rglob("*.litmus"))
model = cached_model("pisa")
run = get_engine(engine)
task = EngineTask(("pisa",), (engine,))
task.warm()
args = argparse.Namespace(unroll=None, check=False, progress="pisa", traceback=False)
console = Console(0)
console.out_stream = console.err_stream = io.StringIO()
herd = HerdText(console, verbose=False, time=False, blocks=True)
# run --jobs 1's default budget
budget = Budget(timeout=DEFAULT_TIMEOUT, max_memory=default_memory(1), implicit=True)
gc.collect(); gc.freeze(); gc.set_threshold(700, 10, 100)  # as runner/pool.py does

def one(path, clock, spent):
    t = clock(); text = read_source(path)
    t1 = clock(); raw = parse_raw(text, path)
    t2 = clock(); test = validate(raw)
    t3 = clock(); unroll = test_unroll(test, None); es = build(test, unroll=unroll)
    t4 = clock(); result = run(test, es, model, EngineOptions(unroll=unroll))
    t5 = clock()
    loaded = Loaded(path, test, es, unroll, None, test.source)
    results = tuple(with_liveness(loaded, model, [result], "pisa"))
    t6 = clock(); job = Job(path, text, task)
    record = _record(job, loaded, (results,))
    pickle.loads(pickle.dumps(job, pickle.HIGHEST_PROTOCOL))
    record = pickle.loads(pickle.dumps(record, pickle.HIGHEST_PROTOCOL))
    t7 = clock(); run_job(job, budget)
    t8 = clock(); report = judge(record, model, args)
    t9 = clock(); herd.add(report)
    t10 = clock()
    times = (t, t1, t2, t3, t4, t5, t6, t7, t8, t9, t10)
    for i, name in enumerate(STAGES):
        spent[name] += times[i + 1] - times[i]

STAGES = ("read", "parse", "validate", "build", "engine", "liveness", "ipc", "run_job",
          "judge", "report")
for path in paths[:20]:  # warm: first-use compilation (lexer, model, engine) not counted
    one(path, time.process_time, dict.fromkeys(STAGES, 0.0))
best = dict.fromkeys(STAGES, float("inf"))
for _ in range(passes):
    spent = dict.fromkeys(STAGES, 0.0)
    for path in paths:
        one(path, time.process_time, spent)
    best = {k: min(best[k], spent[k] / len(paths)) for k in STAGES}
if profile:
    import cProfile
    prof = cProfile.Profile()
    spent = dict.fromkeys(STAGES, 0.0)
    prof.enable()
    for path in paths:
        one(path, time.process_time, spent)
    prof.disable()
    prof.dump_stats(profile)
print(json.dumps(best))
"""

# what the stages above count twice: run_job is load + engine + liveness + its own overhead
_LOAD_AND_TASK = ("parse", "validate", "build", "engine", "liveness")


def _stage_figures(
    src: Path, suite: Path, args: argparse.Namespace, profile: str
) -> dict[str, float]:
    env = dict(os.environ, PYTHONPATH=str(src))
    argv = [sys.executable, "-P", "-c", _STAGES_CHILD, str(suite), args.engine,
            str(args.passes), profile]  # fmt: skip
    out = subprocess.run(argv, env=env, check=True, capture_output=True, text=True).stdout
    got: dict[str, float] = json.loads(out)
    got["run_job"] -= sum(got[k] for k in _LOAD_AND_TASK)  # its own overhead only
    got["non-engine"] = sum(v for k, v in got.items() if k != "engine")
    got["total"] = got["non-engine"] + got["engine"]
    return got


# Run under callgrind with PYTHONPATH on the measured tree: argv = suite directory, tests.
_LOAD_CHILD = """
import gc, sys
from pathlib import Path
from pisa_mm.errors import read_source
from pisa_mm.events.build import build
from pisa_mm.litmus.parser import parse_raw
from pisa_mm.litmus.validate import validate
paths = sorted(str(p) for p in Path(sys.argv[1]).rglob("*.litmus"))[::5]
for path in paths[:60]:  # warm: first-use compilation not counted
    build(validate(parse_raw(read_source(path), path)))
gc.collect(); gc.freeze(); gc.set_threshold(700, 10, 100)
for path in paths[60 : 60 + int(sys.argv[2])]:
    build(validate(parse_raw(read_source(path), path)))
"""


def _instructions(src: Path, suite: Path, tests: int) -> float:
    """Machine instructions per test of read + parse + validate + build (callgrind)."""
    # a fixed hash seed: set and dict orders (and so the work) do not vary between the runs
    env = dict(os.environ, PYTHONPATH=str(src), PYTHONHASHSEED="0")
    # once without valgrind first: what a run writes to the user's cache (the code of the
    # records' methods) is then written before the counted runs, not in one of them only
    warm = [sys.executable, "-P", "-c", _LOAD_CHILD, str(suite), str(tests)]
    subprocess.run(warm, env=env, check=True, capture_output=True)
    counts = []
    for n in (0, tests):
        argv = ["valgrind", "--tool=callgrind", "--callgrind-out-file=/dev/null",
                sys.executable, "-P", "-c", _LOAD_CHILD, str(suite), str(n)]  # fmt: skip
        err = subprocess.run(argv, env=env, capture_output=True, text=True, check=True).stderr
        collected = [line for line in err.splitlines() if "Collected :" in line]
        counts.append(int(collected[-1].split()[-1]))
    return (counts[1] - counts[0]) / tests


def instructions_bench(
    args: argparse.Namespace, suite: Path, trees: list[tuple[str, Path]]
) -> None:
    """`--stages --instructions`: instructions per test of loading, for each tree."""
    figures = {label: _instructions(src, suite, args.instructions_tests) for label, src in trees}
    print(f"read + parse + validate + build, {args.instructions_tests} tests: machine "
          "instructions per test (callgrind)")  # fmt: skip
    for label, count in figures.items():
        print(f"  {label:12}{count:14,.0f}")
    if len(figures) > 1:
        print(f"  ratio baseline / this tree: x{figures['baseline'] / figures['this tree']:.3f}")


def stages_bench(args: argparse.Namespace) -> None:
    """`--stages`: CPU per test of each stage of `run --jobs 1` over the generated suite."""
    from run_bench import generate_suite

    trees = [("this tree", ROOT)] + ([("baseline", args.baseline)] if args.baseline else [])
    with tempfile.TemporaryDirectory() as tmp:
        suite = args.suite or Path(tmp)
        n = len(list(suite.rglob("*.litmus"))) if args.suite else generate_suite(suite)
        if args.instructions:
            instructions_bench(args, suite, trees)
            return
        figures = {}
        for label, src in trees:
            profile = args.profile if label == "this tree" and args.profile else ""
            figures[label] = _stage_figures(src, suite, args, profile)
    print(f"run --jobs 1, stage by stage, on {n} tests (engine {args.engine}); CPU us per "
          f"test, least of {args.passes} passes" + (" (run_job: its own overhead)"))  # fmt: skip
    labels = list(figures)
    print("  " + f"{'stage':12}" + "".join(f"{label:>12}" for label in labels)
          + ("       ratio" if len(labels) > 1 else ""))  # fmt: skip
    for stage in figures["this tree"]:
        cells = [figures[label][stage] * 1e6 for label in labels]
        ratio = f"     x{cells[1] / cells[0]:.2f}" if len(cells) > 1 and cells[0] > 0 else ""
        print(f"  {stage:12}" + "".join(f"{c:12.0f}" for c in cells) + ratio)
    for label in labels:
        total = figures[label]["total"]
        print(f"  {label}: {1 / total:.0f} tests per CPU second (stages only, no start-up)")


def main() -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--shape", choices=("threads", "stores", "both"), default="both")
    ap.add_argument("--sizes", default="250,500,1000,2000,4000")
    ap.add_argument("--no-build", action="store_true", help="parse and validate only")
    ap.add_argument(
        "--render", action="store_true", help="also render `pisa-mm parse`'s table from the build"
    )
    ap.add_argument("--budget", type=float, default=120.0, help="seconds per size")
    ap.add_argument(
        "--commands", help="measure whole commands instead: comma-separated parse-json,run"
    )
    ap.add_argument("--engines", default="auto", help="engines for `run` (comma-separated)")
    ap.add_argument("--timeout", type=float, default=300.0, help="run's own --timeout")
    ap.add_argument("--parse", action="store_true", help="the litmus parser on a small suite")
    ap.add_argument(
        "--baseline", type=Path, help="--parse, --stages: a source tree to compare with"
    )
    ap.add_argument("--repeat", type=int, default=5, help="--parse: processes for start-up")
    ap.add_argument("--stages", action="store_true", help="per-stage CPU of run on a suite")
    ap.add_argument("--suite", type=Path, help="--stages: this directory, not the generated suite")
    ap.add_argument("--passes", type=int, default=3, help="--stages: passes (the least counts)")
    ap.add_argument("--engine", default="auto", help="--stages: the engine")
    ap.add_argument("--profile", help="--stages: also write a cProfile of one pass to FILE")
    ap.add_argument(
        "--instructions", action="store_true", help="--stages: count instructions (callgrind)"
    )
    ap.add_argument(
        "--instructions-tests", type=int, default=200, help="--instructions: tests loaded"
    )
    ap.add_argument("--stages-only", action="store_true", help="--scale without the whole commands")
    ap.add_argument(
        "--scale",
        help="per-stage and whole-command CPU and peak RSS for these shapes (comma-separated "
        f"{','.join(SCALE_SHAPES)}, or all); run's --timeout defaults to 30 here",
    )
    args = ap.parse_args()
    if args.stages:
        stages_bench(args)
        return 0
    if args.parse:
        parse_bench(args)
        return 0
    if args.scale:
        if "--timeout" not in sys.argv:
            args.timeout = 30.0
        scale(args)
        return 0
    shapes = ("threads", "stores") if args.shape == "both" else (args.shape,)
    if args.commands:
        commands(args, shapes)
        return 0
    stages = "parse,validate" + ("" if args.no_build else ",build")
    if args.render and not args.no_build:
        stages += ",render"
    names = stages.split(",")
    for shape in shapes:
        print(f"{shape}: " + "  ".join(f"{s:>22}" for s in names))
        prev: list[tuple[float, int]] | None = None
        for n in (int(s) for s in args.sizes.split(",")):
            got = measure(shape, n, stages, args.budget)
            if got is None:
                print(f"  {n:>6}  over the {args.budget:.0f} s budget")
                break
            cells = []
            for i, (t, m) in enumerate(got):
                ratio = ""
                if prev is not None and prev[i][0] > 0:
                    ratio = f" x{t / prev[i][0]:.1f}/x{m / max(prev[i][1], 1):.1f}"
                cells.append(f"{t:6.2f}s {m / 2**20:7.1f}MB{ratio}")
            print(f"  {n:>6}  " + "  ".join(f"{c:>22}" for c in cells))
            prev = got
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
