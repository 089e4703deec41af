"""Random herd C11 litmus tests with fences, read-modify-writes and plain accesses.

The shapes of bench/c11_shapes.py hold atomic loads and stores only. These tests add what
they lack, to compare pisa-mm's answers with herd7's on more of RC11 (the `herd-random`
section of bench/run_bench.py): 2-4 threads of 1-4 events over 2-3 locations, each event
one of an atomic store (relaxed, release, seq_cst), an atomic load (relaxed, acquire,
seq_cst), `atomic_thread_fence` (acquire, release, acq_rel, seq_cst), `atomic_fetch_add` or
`atomic_exchange` (relaxed to seq_cst), or a plain `*x = v` / `r = *x` (races, which RC11
flags). Half the release and seq_cst stores are followed by a relaxed store to their
location (where RC11's release sequences and C++20's, pisa's, differ). Stored values are
distinct. Every register and location is listed in `locations`, so that the final states
compared are whole, not only the condition's observables; the condition is a conjunction
of 1-3 registers and 0-2 final values, each equal to a value that was stored or 0. A seed
gives the same tests; `pisa-mm import` skips the seq_cst read-modify-writes, which PISA has
no order for (PISA 8.2).
"""

from __future__ import annotations

import random
from pathlib import Path

LOCATIONS = ("x", "y", "z")
STORE = ("relaxed", "release", "seq_cst")
LOAD = ("relaxed", "acquire", "seq_cst")
RMW = ("relaxed", "acquire", "release", "acq_rel", "seq_cst")
FENCE = ("acquire", "release", "acq_rel", "seq_cst")


class _Test:
    """One test being drawn: the next value to store, the registers, the locations used."""

    def __init__(self, rng: random.Random) -> None:
        self.rng = rng
        self.value = 1
        self.registers: list[str] = []
        self.used: set[str] = set()

    def event(self, thread: int, register: int, locations: tuple[str, ...]) -> tuple[str, int]:
        """The C text of one event, and the number of registers it took (0 or 1)."""
        rng, loc, v = self.rng, self.rng.choice(locations), self.value
        kind = rng.choice(("store", "store", "load", "load", "load", "fence", "add", "xchg",
                           "plain"))  # fmt: skip
        if kind == "fence":
            return f"atomic_thread_fence(memory_order_{rng.choice(FENCE)});", 0
        self.used.add(loc)
        if kind == "plain":
            kind = rng.choice(("plain-store", "plain-load"))
        if kind in ("store", "plain-store"):
            self.value += 1
            if kind == "plain-store":
                return f"*{loc} = {v};", 0
            order = rng.choice(STORE)
            store = f"atomic_store_explicit({loc}, {v}, memory_order_{order});"
            if order != "relaxed" and rng.random() < 0.5:
                # a relaxed store to the location after a release one: RC11's release
                # sequence goes on through it, C++20's (pisa's) does not
                self.value += 1
                return f"{store}\n  atomic_store_explicit({loc}, {v + 1}, memory_order_relaxed);", 0
            return store, 0
        self.registers.append(f"{thread}:r{register}")
        if kind == "plain-load":
            return f"int r{register} = *{loc};", 1
        if kind == "load":
            return f"int r{register} = atomic_load_explicit({loc}, "\
                   f"memory_order_{rng.choice(LOAD)});", 1  # fmt: skip
        self.value += 1
        call = "atomic_fetch_add_explicit" if kind == "add" else "atomic_exchange_explicit"
        return f"int r{register} = {call}({loc}, {v}, memory_order_{rng.choice(RMW)});", 1


def render(name: str, rng: random.Random) -> str:
    """The herd C11 text of one random test."""
    test = _Test(rng)
    threads: list[list[str]] = []
    n = rng.randint(2, 4)
    for i in range(n):
        locations = LOCATIONS[: rng.randint(2, 3)]
        events, registers = [], 0
        for _ in range(rng.randint(1, 3 if n > 2 else 4)):
            text, took = test.event(i, registers, locations)
            events.append(text)
            registers += took
        threads.append(events)
    used = sorted(test.used) or ["x"]
    lines = [f"C {name}", "{ " + " ".join(f"[{loc}] = 0;" for loc in used) + " }", ""]
    params = ", ".join(f"atomic_int* {loc}" for loc in used)
    for i, events in enumerate(threads):
        lines += [f"P{i} ({params}) {{", *(f"  {e}" for e in events), "}", ""]
    values = range(test.value)
    registers = rng.sample(test.registers, min(len(test.registers), rng.randint(1, 3)))
    finals = rng.sample(used, rng.randint(0, min(2, len(used))))
    terms = [f"{name}={rng.choice(values)}" for name in (*registers, *finals)]
    # every register and location observed: the final states compared are whole
    lines.append("locations [" + " ".join(f"{name};" for name in (*test.registers, *used)) + "]")
    lines.append("exists (" + r" /\ ".join(terms or [f"{used[0]}=0"]) + ")")
    return "\n".join(lines) + "\n"


def write_random(directory: Path, n: int, seed: int) -> list[Path]:
    """Writes `n` tests T0..T(n-1) as DIRECTORY/NAME.litmus; returns their paths."""
    directory.mkdir(parents=True, exist_ok=True)
    rng = random.Random(seed)
    paths = []
    for i in range(n):
        path = directory / f"T{i}.litmus"
        path.write_text(render(f"T{i}", rng), encoding="utf-8")
        paths.append(path)
    return paths
