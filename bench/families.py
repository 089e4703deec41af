"""Scaling families of litmus tests, generated as text (shared by the benchmark and tests)."""

from __future__ import annotations

from collections.abc import Callable

Generator = Callable[[int], str]


def _test(name: str, variables: list[str], threads: list[list[str]], cond: str,
          extra: str = "", places: list[str] | None = None) -> str:  # fmt: skip
    init = "\n".join(f"  .global .32b @{v} = 0;" for v in variables)
    body = []
    for i, instrs in enumerate(threads):
        place = places[i] if places else f"wg {i}"
        lines = "\n".join(f"  {s}" for s in instrs)
        body.append(f"P{i} @ {place} {{\n{lines}\n}}")
    return f"PISA {name}\n{extra}{{\n{init}\n}}\n" + "\n".join(body) + f"\n{cond}\n"


def sb_ring(n: int) -> str:
    """n work-items in a ring: each stores its variable and loads the next one's (seq_cst)."""
    xs = [f"x{i}" for i in range(n)]
    threads = [
        [f"st.global.seq_cst.gpu.32b [@{xs[i]}], 1;",
         f"ld.global.seq_cst.gpu.32b %r0, [@{xs[(i + 1) % n]}];"]
        for i in range(n)
    ]  # fmt: skip
    cond = " /\\ ".join(f"P{i}:%r0 == 0" for i in range(n))
    return _test(f"SB-ring-{n}", xs, threads, f"exists ({cond})")


def iriw(n: int) -> str:
    """n work-items: n // 2 relaxed writers of distinct variables and readers that each load
    two neighbouring variables in opposite orders (n = 4 is IRIW)."""
    writers = max(2, n // 2)
    xs = [f"x{i}" for i in range(writers)]
    threads = [[f"st.global.relaxed.32b [@{x}], 1;"] for x in xs]
    atoms = []
    for k in range(n - writers):
        first, second = xs[k % writers], xs[(k + 1) % writers]
        if k % 2:
            first, second = second, first
        threads.append(
            [f"ld.global.relaxed.32b %r0, [@{first}];", f"ld.global.relaxed.32b %r1, [@{second}];"]
        )
        atoms += [f"P{writers + k}:%r0 == 1", f"P{writers + k}:%r1 == 0"]
    cond = " /\\ ".join(atoms)
    return _test(f"IRIW-{n}", xs, threads, f"exists ({cond})")


def mp_chain(k: int) -> str:
    """Message passing through k release/acquire hops (ISA2 is k = 2)."""
    flags = [f"f{i}" for i in range(k)]
    threads = [["st.global.32b [@d], 1;", f"st.global.release.gpu.32b [@{flags[0]}], 1;"]]
    for i in range(1, k):
        threads.append([
            f"ld.global.acquire.gpu.32b %r0, [@{flags[i - 1]}];",
            f"st.global.release.gpu.32b [@{flags[i]}], %r0;",
        ])  # fmt: skip
    threads.append([f"ld.global.acquire.gpu.32b %r0, [@{flags[-1]}];", "ld.global.32b %r1, [@d];"])
    cond = f"P{k}:%r0 == 1 /\\ P{k}:%r1 == 0"
    return _test(f"MP-chain-{k}", ["d", *flags], threads, f"exists ({cond})")


def spin(k: int) -> str:
    """MP with the consumer spinning on the flag; run with --unroll k."""
    threads = [
        ["st.global.32b [@x], 1;", "st.global.release.workgroup.32b [@y], 1;"],
        [".pred %p0;", "spin:", "ld.global.acquire.workgroup.32b %r0, [@y];",
         "ucmp.eq.32b %p0, %r0, 0;", "goto.cond %p0, spin;", "ld.global.32b %r1, [@x];"],
    ]  # fmt: skip
    return _test(
        f"MP-spin-{k}", ["x", "y"], threads, "~exists (P1:%r0 == 1 /\\ P1:%r1 == 0)",
        extra=f"unroll = {k}\n", places=["wg 0, sg 0", "wg 0, sg 1"],
    )  # fmt: skip


def rmws(n: int) -> str:
    """n work-items each atomically incrementing one counter: the final value is n."""
    threads = [["iatom.global.relaxed.add.32b %r0, [@x], 1;"] for _ in range(n)]
    return _test(f"RMW-{n}", ["x"], threads, f"forall (@x == {n})")


def storers(k: int) -> str:
    """k relaxed storers of distinct values to one location and one reader loading twice."""
    threads = [[f"st.global.relaxed.32b [@x], {i + 1};"] for i in range(k)]
    threads.append(["ld.global.relaxed.32b %r0, [@x];", "ld.global.relaxed.32b %r1, [@x];"])
    return _test(f"Storers-{k}", ["x"], threads, f"exists (P{k}:%r0 == 2 /\\ P{k}:%r1 == 1)")


def lb_ring(n: int) -> str:
    """n work-items in a ring, each loading the next one's variable and storing what it
    read, plus one, to its own (relaxed): values flow through data dependencies."""
    xs = [f"x{i}" for i in range(n)]
    threads = [
        [f"ld.global.relaxed.32b %r0, [@{xs[(i + 1) % n]}];", "iadd.32b %r1, %r0, 1;",
         f"st.global.relaxed.32b [@{xs[i]}], %r1;"]
        for i in range(n)
    ]  # fmt: skip
    cond = " /\\ ".join(f"P{i}:%r0 != 0" for i in range(n))
    return _test(f"LB-ring-{n}", xs, threads, f"exists ({cond})")


def co_ring(n: int) -> str:
    """2+2W generalised to n work-items in a ring: each stores 1 to its variable, then 2 to
    the next one's (relaxed); every location has two writers, whose co orders multiply."""
    xs = [f"x{i}" for i in range(n)]
    threads = [
        [f"st.global.relaxed.32b [@{xs[i]}], 1;", f"st.global.relaxed.32b [@{xs[(i + 1) % n]}], 2;"]
        for i in range(n)
    ]  # fmt: skip
    cond = " /\\ ".join(f"@{x} == 1" for x in xs)
    return _test(f"2+2W-ring-{n}", xs, threads, f"exists ({cond})")


FAMILIES: dict[str, tuple[Generator, range]] = {
    "sb-ring": (sb_ring, range(2, 9)),
    "iriw": (iriw, range(4, 11)),
    "mp-chain": (mp_chain, range(1, 9)),
    "spin": (spin, range(1, 9)),
    "rmw": (rmws, range(2, 17)),
    "storers": (storers, range(2, 9)),
    "lb-ring": (lb_ring, range(2, 9)),
    # held out: not used to fit auto's cost model (pisa_mm/explicit/auto.py); lb-ring was,
    # until it showed the cost of computed values to smt (CHANGELOG)
    "co-ring": (co_ring, range(2, 9)),
}
HELD_OUT = ("co-ring",)


def many_states(n: int, k: int) -> str:
    """n work-groups, each with k relaxed accesses alternating a store (of a value unique to
    the test) and a load, over two locations; every loaded register and both locations are
    observed, so the final states grow into the tens of thousands (n = k = 4: 16 accesses).
    Not in FAMILIES: the larger members take the explicit engine minutes
    (bench/bench_states.py)."""
    xs = ["x0", "x1"]
    threads = []
    atoms = []
    for t in range(n):
        instrs = []
        for j in range(k):
            loc = xs[(t + j) % 2]
            if j % 2 == 0:
                instrs.append(f"st.global.relaxed.32b [@{loc}], {t * k + j + 1};")
            else:
                instrs.append(f"ld.global.relaxed.32b %r{j // 2}, [@{loc}];")
                atoms.append(f"P{t}:%r{j // 2} == 0")
        threads.append(instrs)
    cond = " /\\ ".join(atoms)
    return _test(f"Many-{n}x{k}", xs, threads, f"locations [@x0; @x1;]\nexists ({cond})")
