"""`pisa-mm gen`: write litmus tests from classic shapes or diy-style cycles, swept."""

from __future__ import annotations

import argparse
import sys
from collections.abc import Callable
from pathlib import Path
from typing import TYPE_CHECKING, TypeVar

from pisa_mm.errors import PisaMMError
from pisa_mm.events.kinds import Scope
from pisa_mm.gen.cycle import parse_cycle
from pisa_mm.gen.edges import SCOPE_WORDS, FenceSpace, RmwKind
from pisa_mm.gen.params import (
    FenceChoice,
    FenceKind,
    OrderScheme,
    Placement,
    SpaceChoice,
)
from pisa_mm.gen.shapes import SHAPES

if TYPE_CHECKING:
    from pisa_mm.gen.sweep import Source, Sweep

HELP = "generate litmus tests from classic shapes or diy-style cycles, swept over PISA's parameters"

T = TypeVar("T")


def add_arguments(parser: argparse.ArgumentParser) -> None:
    parser.add_argument(
        "shapes",
        nargs="*",
        metavar="SHAPE",
        help=f"classic shapes to generate ({', '.join(SHAPES)}), or `all`",
    )
    parser.add_argument(
        "--cycle",
        action="append",
        default=[],
        metavar="CYCLE",
        help='a diy-style cycle of edges, e.g. "PodWW Rfe PodRR Fre" (repeatable; see docs/gen.md)',
    )
    add_sweep_arguments(parser, GEN_DEFAULTS)
    parser.add_argument(
        "-o",
        "--output",
        metavar="DIR",
        help="write DIR/SHAPE/NAME.litmus (default: print the tests on stdout)",
    )
    parser.add_argument("--max", type=int, metavar="N", help="stop after N tests")
    parser.add_argument(
        "--list", action="store_true", help="print the test names only; write nothing"
    )
    parser.add_argument(
        "--name",
        metavar="NAME",
        help="name the test NAME instead of its systematic name (only when one test results)",
    )
    parser.add_argument(
        "--list-shapes", action="store_true", help="print the classic shapes and their cycles"
    )


# The sweep's defaults for `gen` (one test per shape); `diff --search` has wider ones.
GEN_DEFAULTS = {
    "orders": "rlx",
    "scopes": "gpu",
    "spaces": "global",
    "placements": "diff-wg",
    "fences": "none",
    "rmw": "none",
}


def add_sweep_arguments(parser: argparse._ActionsContainer, defaults: dict[str, str]) -> None:
    """The sweep options (--orders, --scopes, --spaces, --placements, --fences, --rmw), read
    by `parse_sweep`; `defaults` gives each option's default, by name."""
    helps = {
        "orders": "order schemes for unannotated accesses: weak, rlx, rel-acq, acq_rel, sync, "
        "sc, or all",
        "scopes": "scopes of ordered accesses and fences: sg, wg, gpu, sys, or all",
        "spaces": "address spaces: global, shared, generic, or all",
        "placements": "thread placements: same-sg, same-wg, diff-wg, diff-gpu, host, or all",
        "fences": "fences replacing each Pod edge: none, sc, acq_rel, rel-acq, sg, each "
        "optionally .global/.shared/.generic (e.g. sc.generic), or all",
        "rmw": "replace each access in turn by an iatom: xchg, add, cas; none keeps the test "
        "as it is (e.g. none,xchg for both)",
    }
    for name, text in helps.items():
        parser.add_argument(
            f"--{name}",
            default=defaults[name],
            metavar="LIST",
            help=f"{text} (default: {defaults[name]})",
        )


def _values(option: str, text: str, table: dict[str, T], every: tuple[T, ...]) -> tuple[T, ...]:
    out: list[T] = []
    for word in (w.strip() for w in text.split(",")):
        if word == "all":
            out.extend(v for v in every if v not in out)
        elif word in table:
            if table[word] not in out:
                out.append(table[word])
        else:
            raise PisaMMError.at(
                None,
                f"unknown {option} value '{word}' (choose from {', '.join(table)}, all)",
                "usage",
            )
    if not out:
        raise PisaMMError.at(None, f"{option} needs at least one value", "usage")
    return tuple(out)


def _fences(text: str) -> tuple[FenceChoice, ...]:
    table: dict[str, FenceChoice] = {}
    every: list[FenceChoice] = []
    for kind in FenceKind:
        table[kind.value] = FenceChoice(kind)
        every.append(FenceChoice(kind))
        if kind in (FenceKind.NONE, FenceKind.SG):
            continue
        for space in FenceSpace:
            table[f"{kind.value}.{space.value}"] = FenceChoice(kind, space)
    return _values("--fences", text, table, tuple(every))


def parse_sweep(args: argparse.Namespace) -> Sweep:
    from pisa_mm.gen.sweep import Sweep  # imported on use: diff's start-up (its --search)

    scopes = dict(SCOPE_WORDS)
    scopes.update({"subgroup": Scope.SG, "workgroup": Scope.WG, "system": Scope.SYS})
    enum_table: Callable[[type[T]], dict[str, T]] = lambda e: {m.value: m for m in e}  # type: ignore[attr-defined]  # noqa: E731
    rmw: dict[str, RmwKind | None] = {"none": None, **{k.value: k for k in RmwKind}}
    return Sweep(
        orders=_values("--orders", args.orders, enum_table(OrderScheme), tuple(OrderScheme)),
        scopes=_values("--scopes", args.scopes, scopes, tuple(Scope)),
        spaces=_values("--spaces", args.spaces, enum_table(SpaceChoice), tuple(SpaceChoice)),
        placements=_values(
            "--placements", args.placements, enum_table(Placement), tuple(Placement)
        ),
        fences=_fences(args.fences),
        rmws=_values("--rmw", args.rmw, rmw, tuple(rmw.values())),
    )


def sources(args: argparse.Namespace) -> list[Source]:
    from pisa_mm.gen.sweep import Source

    out: list[Source] = []
    for name in args.shapes:
        names = list(SHAPES) if name == "all" else [name]
        for n in names:
            if n not in SHAPES:
                raise PisaMMError.at(
                    None,
                    f"unknown shape '{n}' (choose from {', '.join(SHAPES)}, all; "
                    "or give a --cycle)",
                    "usage",
                )
            out.append(Source(n, parse_cycle(SHAPES[n])))
    for text in args.cycle:
        cycle = parse_cycle(text)
        out.append(Source(cycle.text, cycle))  # one line: it becomes the `source` metadata
    return out


def main(args: argparse.Namespace) -> int:
    """Exit 0 when tests were generated, 1 when every combination was skipped, 2 bad input."""
    if args.list_shapes:
        for name, cycle in SHAPES.items():
            print(f"{name:8} {cycle}")
        return 0
    from pisa_mm.gen.sweep import generate, write_atomically

    srcs = sources(args)
    if not srcs:
        raise PisaMMError.at(None, "give shape names (or `all`) or --cycle", "usage")
    if args.max is not None and args.max < 1:
        raise PisaMMError.at(None, f"--max must be at least 1, not {args.max}", "usage")
    tests, summary = generate(srcs, parse_sweep(args), args.max)
    if args.name is not None:
        if len(tests) != 1:
            raise PisaMMError.at(
                None, f"--name needs exactly one generated test, not {len(tests)}", "usage"
            )
        old = tests[0].test.name
        tests[0] = type(tests[0])(
            tests[0].test, tests[0].text.replace(f"PISA {old}\n", f"PISA {args.name}\n", 1)
        )
    for g in tests:
        name = args.name if args.name is not None else g.test.name
        if args.list:
            print(name)
        elif args.output is not None:
            write_atomically(Path(args.output) / g.test.shape / f"{name}.litmus", g.text)
        else:
            sys.stdout.write(g.text + "\n")
    for line in summary.lines():
        print(line, file=sys.stderr)
    if not tests:
        print("pisa-mm gen: every combination was skipped; nothing to write", file=sys.stderr)
        return 1
    return 0
