"""herd C11 litmus tests of the classic shapes with every order combination, for herd7.

The suite the issue measured herd7 on (issue 9: "small diy-style C11 shapes (MP, SB, LB,
2+2W, S, R, WRC, IRIW with every order combination, system scope, 2-4 threads, 2-6
accesses each)"), written in herd's C dialect so that herd7 runs the tests themselves and
`pisa-mm import` turns them into the PISA tests that pisa-mm runs: both tools answer the
same questions. Every access is atomic; a store takes each of relaxed, release and
seq_cst, a load each of relaxed, acquire and seq_cst: 6 shapes of 4 accesses (81 tests
each), WRC (5 accesses, 243) and IRIW (6 accesses, 729), 1,458 tests. Tests are named
`SHAPE+o1+o2+...`, the orders in thread order.
"""

from __future__ import annotations

import itertools
from pathlib import Path

# An access: ("W", location, value stored) or ("R", location, register).
Access = tuple[str, str, str]
Shape = tuple[tuple[tuple[Access, ...], ...], str]


def _t(*accesses: str) -> tuple[Access, ...]:
    """A thread from 'W x 1' / 'R y r0' words."""
    return tuple((kind, loc, arg) for kind, loc, arg in (a.split() for a in accesses))


SHAPES: dict[str, Shape] = {
    "MP": ((_t("W x 1", "W y 1"), _t("R y r0", "R x r1")), r"1:r0=1 /\ 1:r1=0"),
    "SB": ((_t("W x 1", "R y r0"), _t("W y 1", "R x r0")), r"0:r0=0 /\ 1:r0=0"),
    "LB": ((_t("R x r0", "W y 1"), _t("R y r0", "W x 1")), r"0:r0=1 /\ 1:r0=1"),
    "2+2W": ((_t("W x 1", "W y 2"), _t("W y 1", "W x 2")), r"x=1 /\ y=1"),
    "S": ((_t("W x 2", "W y 1"), _t("R y r0", "W x 1")), r"1:r0=1 /\ x=2"),
    "R": ((_t("W x 1", "W y 1"), _t("W y 2", "R x r0")), r"y=2 /\ 1:r0=0"),
    "WRC": (
        (_t("W x 1"), _t("R x r0", "W y 1"), _t("R y r0", "R x r1")),
        r"1:r0=1 /\ 2:r0=1 /\ 2:r1=0",
    ),
    "IRIW": (
        (_t("W x 1"), _t("W y 1"), _t("R x r0", "R y r1"), _t("R y r0", "R x r1")),
        r"2:r0=1 /\ 2:r1=0 /\ 3:r0=1 /\ 3:r1=0",
    ),
}
ORDERS = {"W": ("relaxed", "release", "seq_cst"), "R": ("relaxed", "acquire", "seq_cst")}
SHORT = {"relaxed": "rlx", "release": "rel", "acquire": "acq", "seq_cst": "sc"}


def render(name: str, threads: tuple[tuple[Access, ...], ...], orders: tuple[str, ...],
           condition: str) -> str:  # fmt: skip
    """The herd C11 text of one test."""
    locations = sorted({loc for thread in threads for _, loc, _ in thread})
    lines = [f"C {name}", "{ " + " ".join(f"[{loc}] = 0;" for loc in locations) + " }", ""]
    order = iter(orders)
    for i, thread in enumerate(threads):
        params = ", ".join(f"atomic_int* {loc}" for loc in sorted({a[1] for a in thread}))
        lines.append(f"P{i} ({params}) {{")
        for kind, loc, arg in thread:
            mo = f"memory_order_{next(order)}"
            if kind == "W":
                lines.append(f"  atomic_store_explicit({loc}, {arg}, {mo});")
            else:
                lines.append(f"  int {arg} = atomic_load_explicit({loc}, {mo});")
        lines += ["}", ""]
    lines.append(f"exists ({condition})")
    return "\n".join(lines) + "\n"


def write_suite(directory: Path) -> list[Path]:
    """Writes every test as DIRECTORY/NAME.litmus; returns the paths in name order."""
    directory.mkdir(parents=True, exist_ok=True)
    paths = []
    for shape, (threads, condition) in SHAPES.items():
        kinds = [kind for thread in threads for kind, _, _ in thread]
        for orders in itertools.product(*(ORDERS[k] for k in kinds)):
            name = "+".join((shape, *(SHORT[o] for o in orders)))
            path = directory / f"{name}.litmus"
            path.write_text(render(name, threads, orders, condition), encoding="utf-8")
            paths.append(path)
    return sorted(paths)
