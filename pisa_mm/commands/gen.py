"""`pisa-mm gen`: write litmus tests from classic shapes or diy-style cycles, swept."""

from __future__ import annotations

import argparse
import enum
import sys
from pathlib import Path
from typing import TYPE_CHECKING, Any, Generic, TypeVar

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
from pisa_mm.records import record

if TYPE_CHECKING:
    from pisa_mm.gen.sweep import Source, Sweep

T = TypeVar("T")
E = TypeVar("E", bound=enum.Enum)


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


@record
class ListOption(Generic[T]):
    """A comma-separated option whose words name values, `all` every one of `every`: its
    help lists the words it parses (`shown`, else every word of `table`)."""

    option: str
    field: str
    what: str
    default: str
    table: dict[str, T]
    every: tuple[T, ...]
    shown: tuple[str, ...] = ()
    note: str = ""

    @property
    def name(self) -> str:
        """The option without its dashes: its argparse dest and its key in defaults."""
        return self.option.removeprefix("--")

    def add_to(self, parser: argparse._ActionsContainer, default: str) -> None:
        words = ", ".join(self.shown or tuple(self.table))
        parser.add_argument(
            self.option,
            default=default,
            metavar="LIST",
            help=f"{self.what}: {words}{self.note}, or all (default: {default})",
        )

    def parse(self, text: str) -> tuple[T, ...]:
        out: list[T] = []
        for word in (w.strip() for w in text.split(",")):
            if word == "all":
                out.extend(v for v in self.every if v not in out)
            elif word in self.table:
                if self.table[word] not in out:
                    out.append(self.table[word])
            else:
                raise PisaMMError.at(
                    None,
                    f"unknown {self.option} value '{word}' (choose from "
                    f"{', '.join(self.table)}, all)",
                    "usage",
                )
        if not out:
            raise PisaMMError.at(None, f"{self.option} needs at least one value", "usage")
        return tuple(out)


def _words(enum: type[E]) -> dict[str, E]:
    return {m.value: m for m in enum}


def _fence_table() -> dict[str, FenceChoice]:
    table: dict[str, FenceChoice] = {}
    for kind in FenceKind:
        table[kind.value] = FenceChoice(kind)
        if kind in (FenceKind.NONE, FenceKind.SG):
            continue
        for space in FenceSpace:
            table[f"{kind.value}.{space.value}"] = FenceChoice(kind, space)
    return table


_RMW: dict[str, RmwKind | None] = {"none": None, **_words(RmwKind)}

# The sweep's dimensions, in the order of --help; `field` is the Sweep's field.
LIST_OPTIONS: tuple[ListOption[Any], ...] = (
    ListOption(
        "--orders",
        "orders",
        "order schemes for unannotated accesses",
        "rlx",
        _words(OrderScheme),
        tuple(OrderScheme),
    ),
    ListOption(
        "--scopes",
        "scopes",
        "scopes of ordered accesses and fences",
        "gpu",
        {**SCOPE_WORDS, "subgroup": Scope.SG, "workgroup": Scope.WG, "system": Scope.SYS},
        tuple(Scope),
        shown=tuple(SCOPE_WORDS),
    ),
    ListOption(
        "--spaces", "spaces", "address spaces", "global", _words(SpaceChoice), tuple(SpaceChoice)
    ),
    ListOption(
        "--placements",
        "placements",
        "thread placements",
        "diff-wg",
        _words(Placement),
        tuple(Placement),
    ),
    ListOption(
        "--fences",
        "fences",
        "fences replacing each Pod edge",
        "none",
        _fence_table(),
        tuple(FenceChoice(kind) for kind in FenceKind),
        shown=tuple(k.value for k in FenceKind),
        note=", each optionally .global/.shared/.generic (e.g. sc.generic)",
    ),
    ListOption(
        "--rmw",
        "rmws",
        "replace each access in turn by an iatom",
        "none",
        _RMW,
        tuple(_RMW.values()),
        note=" (none keeps the test as it is; e.g. none,xchg for both)",
    ),
)


# The sweep's defaults for `gen` (one test per shape); `diff --search` has wider ones.
GEN_DEFAULTS = {o.name: o.default for o in LIST_OPTIONS}


def add_sweep_arguments(parser: argparse._ActionsContainer, defaults: dict[str, str]) -> None:
    """The sweep options (--orders, --scopes, --spaces, --placements, --fences, --rmw), read
    by `parse_sweep`; `defaults` gives each option's default, by name without dashes."""
    for option in LIST_OPTIONS:
        option.add_to(parser, defaults[option.name])


def parse_sweep(args: argparse.Namespace) -> Sweep:
    from pisa_mm.gen.sweep import Sweep  # imported on use: diff's start-up (its --search)

    return Sweep(**{o.field: o.parse(getattr(args, o.name)) for o in LIST_OPTIONS})


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


def _check_name(name: str) -> None:
    """`--name` is a test name (`PISA NAME`, and the file NAME.litmus under `-o`): the
    characters the litmus format allows, so that the test reads back and its file stays in
    the output directory (`../x`, `/tmp/x`, a newline)."""
    import re

    if not re.fullmatch(r"[A-Za-z0-9_.+\-]+", name) or set(name) == {"."}:
        shown = name if len(name) <= 80 else name[:77] + "..."
        raise PisaMMError.at(
            None,
            f"--name {shown!r}: a test name is letters, digits and `_ . + -` (not only dots)",
            "usage",
        )


def main(args: argparse.Namespace) -> int:
    """Exit 0 when tests were generated, 1 when every combination was skipped, 2 bad input."""
    if args.list_shapes:
        for name, cycle in SHAPES.items():
            print(f"{name:8} {cycle}")
        return 0
    srcs = sources(args)
    if not srcs:
        raise PisaMMError.at(None, "give shape names (or `all`) or --cycle", "usage")
    if args.max is not None and args.max < 1:
        raise PisaMMError.at(None, f"--max must be at least 1, not {args.max}", "usage")
    from pisa_mm.gen.sweep import generate
    from pisa_mm.runner.files import check_outputs, write_atomic

    if args.name is not None:
        _check_name(args.name)
    check_outputs([], [], dirs=[args.output])
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
            write_atomic(Path(args.output) / g.test.shape / f"{name}.litmus", g.text)
        else:
            sys.stdout.write(g.text + "\n")
    for line in summary.lines():
        print(line, file=sys.stderr)
    if not tests:
        print("pisa-mm gen: every combination was skipped; nothing to write", file=sys.stderr)
        return 1
    return 0
