"""Benchmark: CPU time and peak RSS of `pisa-mm run --engine E` against the size of big, easy tests.

Three shapes of bench_frontend.py (issue 14): `stores`, one thread storing n times to @x and a
second loading it once (n+1 candidates: co among the stores is forced by the model), `loads`,
n threads each loading @x once (one candidate), and `threads`, n threads each storing once to
its own variable (one candidate). Each size runs as its own `pisa-mm run --timeout T
--no-time` process; the figures are its own CPU time (user + sys, from wait4) and peak RSS,
the verdict line (`Unknown` when the budget ran out), and the growth of the CPU time against
the previous size (2.0 per doubling is linear, 8.0 cubic). `--engine` takes a list: each
shape runs under each engine (`auto` picks explicit on these: BIG_EVENTS in explicit/auto.py).
With `--baseline SRC` (another source tree, e.g. /work/base6d) each size also runs there, in
the same run, and the last column is the baseline's CPU time over this tree's.

    python bench/bench_scale_engine.py [--shape stores,loads,threads]
        [--sizes 250,500,1000,2000,4000] [--engine explicit,auto] [--timeout 60]
        [--baseline SRC]

Measured (CPU seconds of each child, 2 cores shared by 5 sessions, against 6d0e5cf with
--baseline): stores (explicit) 250 / 500 / 1,000: 1.7 / 3.3 / 17.8 s (was 2.9 / 10.1 / 48.8);
loads (auto) 4,000: 4.2 s (was 4.4). 2,000 and 4,000 stores still end as `Unknown (timeout)`
(docs/robustness.md, "Size"). threads (auto) against b255daf, under a load of 11:
2,000 / 4,000 / 8,000: 2.6 s 162 MB / 5.5 s 528 MB / 17.5 s 1,786 MB (was 2.6 s 283 MB /
6.9 s 1,055 MB / `Unknown (memory)` at 2 GB). The issue's variants (`--timeout 120`, wall):
stores-only 1,000: 2.2 s 65 MB; stores-distinct 1,000: 18.5 s 76 MB; loop 255: 1.6 s;
arith 10,000: 1.5 s; two-writers 20: 0.7 s (smt); load-store 2,000: `Unknown (timeout)`,
751 MB.

Issue 14, item 3 (explicit/forced.py, the big-universe `irreflexive`, the packed row join),
against 21a01f0 with --baseline /work/base21, `--engine auto`, CPU seconds and peak RSS of
each child on 2 cores under loads of 13 to 23: stores-only 1,000 / 2,000 / 4,000: 1.3 s
66 MB / 1.8 s 174 MB / 4.4 s 566 MB (was 2.8 s / 12.3 s then `Unknown` at 120 s wall /
over the budget); stores 1,000: 12.3 s 71 MB (was 21.0 s), 2,000: 74 s CPU (explicit, no
budget; the base: `Unknown` at 200 s wall after 46 s CPU); stores-distinct 1,000: 11.7 s
(was 18.3 s); threads 8,000 (explicit): 17.3 s 1,727 MB (was 19.0 s, 1,727 MB); loads
4,000: 3.2 s 248 MB (was 3.4 s). two-writers and load-store are not easy (C(n, n/2)
coherence orders, (n+1)^n rf choices): `Unknown` at 1,000 before and after.

Incremental closure of eco (cat/rows.py insert/product, `Geo.closure_of_union`), CPU seconds
with another process on the second core, against 819675c: stores 1,000 / 2,000 / 4,000:
1.8 / 6.9 / 49.3 s (was 12.1 / 74.8 / over 120 s); stores-distinct 1.6 / 8.1 / 56.0 s (was
12.7 / 76.8 / over 120 s); threads 8,000: 18.1 s, 1,629 MB; stores-only 4,000: 2.5 s.

Further shapes for issue 14's variants: `stores-only` (no reader: one candidate),
`stores-distinct` (distinct values: n+1 states), `two-writers` (two work-items of n/2 stores:
C(n, n/2) coherence orders), `load-store` (n work-items each loading and storing @x: a
budgeted answer), `loop` (a counted loop of n stores, unrolled n+1 times: n at most 255)
and `arith` (n register instructions).
"""

from __future__ import annotations

import argparse
import os
import subprocess
import sys
import tempfile
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent))

from bench_frontend import many_loads, many_stores, many_threads


def _stores(name: str, n: int, value: str, reader: bool) -> str:
    lines = [f"PISA {name}", "{", "  .global .32b @x = 0;", "}", "P0 @ wg 0 {"]
    lines += [f"  st.global.32b [@x], {value.format(i=i)};" for i in range(n)]
    lines.append("}")
    if reader:
        lines += ["P1 @ wg 1 {", "  ld.global.32b %r0, [@x];", "}", "exists (P1:%r0 == 0)"]
    else:
        lines.append("exists (@x == 0)")
    return "\n".join(lines) + "\n"


def stores_only(n: int) -> str:
    """One thread storing `n` times to @x and no reader (one candidate)."""
    return _stores("StoresOnly", n, "{i}", reader=False)


def stores_distinct(n: int) -> str:
    """`stores` with distinct values (n + 1 states)."""
    return _stores("StoresDistinct", n, "{i}", reader=True)


def two_writers(n: int) -> str:
    """Two threads storing n/2 times each to @x: C(n, n/2) coherence orders."""
    lines = ["PISA TwoWriters", "{", "  .global .32b @x = 0;", "}"]
    for t in range(2):
        lines.append(f"P{t} @ wg {t} {{")
        lines += [f"  st.global.32b [@x], {2 * i + t + 1};" for i in range(n // 2)]
        lines.append("}")
    lines.append("exists (@x == 1)")
    return "\n".join(lines) + "\n"


def load_store(n: int) -> str:
    """`n` threads each loading @x and storing to it: (n+1)^n rf choices times n! co orders."""
    lines = ["PISA LoadStore", "{", "  .global .32b @x = 0;", "}"]
    for i in range(n):
        lines += [f"P{i} @ wg {i} {{", "  ld.global.32b %r0, [@x];"]
        lines += [f"  st.global.32b [@x], {i + 1};", "}"]
    lines.append("exists (P0:%r0 == 1)")
    return "\n".join(lines) + "\n"


def counted_loop(n: int) -> str:
    """A loop storing its counter `n` times, unrolled `n + 1` times, and a reader."""
    lines = ["PISA CountedLoop", f"unroll = {n + 1}", "{", "  .global .32b @x = 0;", "}"]
    lines += ["P0 @ wg 0 {", "  .pred %done;", "  mov.32b %i, 0;", "top:"]
    lines += [f"  ucmp.ge.32b %done, %i, {n};", "  goto.cond %done, end;"]
    lines += ["  st.global.32b [@x], %i;", "  iadd.32b %i, %i, 1;", "  goto top;", "end:", "}"]
    lines += ["P1 @ wg 1 {", "  ld.global.32b %r0, [@x];", "}", "exists (P1:%r0 == 0)"]
    return "\n".join(lines) + "\n"


def arithmetic(n: int) -> str:
    """`n` register instructions (adds and multiplies of two registers) and one store."""
    lines = ["PISA Arithmetic", "{", "  .global .32b @x = 0;", "}", "P0 @ wg 0 {"]
    lines += ["  mov.32b %a, 1;", "  mov.32b %b, 2;"]
    ops = ["iadd.32b %a, %a, %b;", "umul.32b %b, %b, 3;", "iadd.32b %b, %b, %a;"]
    lines += [f"  {ops[i % 3]}" for i in range(n)]
    lines += ["  st.global.32b [@x], %a;", "}", "exists (@x == 0)"]
    return "\n".join(lines) + "\n"


SHAPES = {
    "stores": many_stores,
    "loads": many_loads,
    "threads": many_threads,
    "stores-only": stores_only,
    "stores-distinct": stores_distinct,
    "two-writers": two_writers,
    "load-store": load_store,
    "loop": counted_loop,
    "arith": arithmetic,
}
ROOT = Path(__file__).resolve().parents[1]


def run_one(text: str, engine: str, timeout: float, tree: Path) -> tuple[float, float, str]:
    """CPU seconds, peak RSS (MB) and the verdict of one run in the source tree `tree`."""
    with tempfile.TemporaryDirectory() as tmp:
        path = os.path.join(tmp, "t.litmus")
        Path(path).write_text(text)
        cmd = [sys.executable, "-m", "pisa_mm.cli", "run", "--engine", engine]
        cmd += ["--timeout", str(timeout), "--no-time", "--progress", "none", path]
        env = {**os.environ, "PYTHONPATH": str(tree)}
        with tempfile.TemporaryFile("w+") as out:
            proc = subprocess.Popen(cmd, stdout=out, stderr=subprocess.STDOUT, cwd=tree, env=env)
            _, _, usage = os.wait4(proc.pid, 0)
            proc.returncode = 0
            out.seek(0)
            stdout = out.read()
    cpu = usage.ru_utime + usage.ru_stime
    lines = stdout.splitlines()
    verdict = next((ln for ln in lines if ln.startswith("Observation")), "")
    if not verdict:
        verdict = next((ln for ln in lines if "Unknown" in ln), stdout.strip()[-60:])
    return cpu, usage.ru_maxrss / 1024, verdict


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--shape", default="stores,loads,threads")
    ap.add_argument("--sizes", default="250,500,1000,2000,4000")
    ap.add_argument("--engine", default="explicit,auto")
    ap.add_argument("--timeout", type=float, default=60.0)
    ap.add_argument("--baseline", type=Path, default=None, help="another source tree")
    args = ap.parse_args()
    sizes = [int(s) for s in args.sizes.split(",")]
    for shape, engine in ((s, e) for s in args.shape.split(",") for e in args.engine.split(",")):
        print(f"{shape} ({engine}, --timeout {args.timeout:g})")
        head = f"{'n':>6} {'cpu s':>8} {'x/2n':>6} {'RSS MB':>8}"
        if args.baseline:
            head += f" {'base s':>8} {'base MB':>8} {'base/this':>9}"
        print(head + "  verdict")
        prev: float | None = None
        base_done = False
        for n in sizes:
            text = SHAPES[shape](n)
            cpu, rss, verdict = run_one(text, engine, args.timeout, ROOT)
            growth = f"{cpu / prev:6.1f}" if prev else "     -"
            line = f"{n:>6} {cpu:8.2f} {growth} {rss:8.1f}"
            if args.baseline:
                if base_done:
                    line += f" {'-':>8} {'-':>8} {'-':>9}"
                else:
                    bcpu, brss, bverdict = run_one(text, engine, args.timeout, args.baseline)
                    line += f" {bcpu:8.2f} {brss:8.1f} {bcpu / max(cpu, 1e-9):9.2f}"
                    if "Unknown" in bverdict:
                        line += " (base: Unknown)"
                        base_done = True
            print(f"{line}  {verdict}", flush=True)
            prev = cpu if cpu > 0.05 else None
            if "Unknown" in verdict:
                break  # the next sizes would only time out too


if __name__ == "__main__":
    main()
