"""`pisa-mm parse`: show the event structure (threads, events, static relations) of tests."""

from __future__ import annotations

import argparse
import json
import sys

from pisa_mm.errors import PisaMMError
from pisa_mm.events.build import DEFAULT_UNROLL, build
from pisa_mm.litmus.program import LitmusTest
from pisa_mm.report.parse_table import render_plain, render_rich, structure_to_dict


def add_arguments(parser: argparse.ArgumentParser) -> None:
    parser.add_argument(
        "tests",
        nargs="+",
        metavar="TEST_OR_DIR",
        help="litmus files, or directories searched recursively for *.litmus",
    )
    parser.add_argument("--json", action="store_true", help="print one JSON list of structures")
    parser.add_argument(
        "--unroll",
        type=int,
        default=None,
        metavar="N",
        help="take each loop back-edge at most N times (default: the test's `unroll` "
        f"metadata, else {DEFAULT_UNROLL})",
    )
    parser.add_argument(
        "--strict", action="store_true", help="turn the frontend's warnings into errors"
    )
    parser.add_argument(
        "--color",
        choices=("auto", "always", "never"),
        default="auto",
        help="rich tables with colours (auto: when printing to a terminal)",
    )


def unroll_bound(test: LitmusTest, requested: int | None) -> int:
    """--unroll wins; then the test's `unroll = N` metadata; then the default (as `run`)."""
    if requested is not None:
        return requested
    return test.unroll if test.unroll is not None else DEFAULT_UNROLL


def main(args: argparse.Namespace) -> int:
    from pisa_mm.litmus import load_test
    from pisa_mm.litmus.decode.declarations import MAX_UNROLL, unroll_limit_message

    if args.unroll is not None and args.unroll < 0:
        raise PisaMMError.at(None, f"--unroll must be at least 0, not {args.unroll}", "usage")
    if args.unroll is not None and args.unroll > MAX_UNROLL:
        raise PisaMMError.at(None, f"--unroll: {unroll_limit_message(args.unroll)}", "usage")
    rich = args.color == "always" or (args.color == "auto" and sys.stdout.isatty())
    docs = []
    from pisa_mm.commands.run import collect_tests

    for path in collect_tests(args.tests):
        test = load_test(path, strict=args.strict)
        for warning in test.warnings:
            print(warning, file=sys.stderr)
        try:
            es = build(test, unroll=unroll_bound(test, args.unroll))
        except PisaMMError as exc:
            exc.sources = {test.path: test.source}  # type: ignore[attr-defined]
            raise
        if args.json:
            docs.append(structure_to_dict(es))
        elif rich:
            sys.stdout.write(render_rich(es))
        else:
            sys.stdout.write(render_plain(es))
    if args.json:
        print(json.dumps(docs, indent=2))
    return 0
