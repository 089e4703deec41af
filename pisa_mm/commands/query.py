"""`pisa-mm query`: is one final state allowed? A witness execution, or why not."""

from __future__ import annotations

import argparse
import sys

from pisa_mm.cat.loader import load_model
from pisa_mm.commands.run import load_test, test_unroll
from pisa_mm.events.build import build
from pisa_mm.events.model import EventStructure
from pisa_mm.litmus import parse_prop
from pisa_mm.outcomes.condition import prop_text
from pisa_mm.outcomes.expectations import DEFAULT_MODEL
from pisa_mm.report.explain import render_query
from pisa_mm.report.graphs import query_graph
from pisa_mm.report.render import FORMATS, write_picture
from pisa_mm.runner.files import check_outputs, write_atomic
from pisa_mm.runner.job import Spent, under_budget
from pisa_mm.runner.options import (
    add_budget_arguments,
    add_model_path_argument,
    budget_of,
    model_path_of,
)
from pisa_mm.runner.outcome import Exit
from pisa_mm.smt.query import Allowed, QueryResult, query

HELP = "ask whether a final-state outcome is allowed: a witness execution, or why not"


def add_arguments(parser: argparse.ArgumentParser) -> None:
    parser.add_argument("test", metavar="TEST", help="a litmus file")
    parser.add_argument(
        "--outcome",
        required=True,
        metavar="PROP",
        help="a final-state proposition in the condition syntax "
        "(e.g. 'P1:%%r0 == 1 /\\ P1:%%r1 == 0')",
    )
    parser.add_argument(
        "--model",
        default=DEFAULT_MODEL,
        metavar="NAME|PATH",
        help=f"a shipped model name or a .cat file (default: {DEFAULT_MODEL})",
    )
    add_model_path_argument(parser)
    parser.add_argument(
        "--dot", metavar="FILE", help="write the witness (or a violating execution) as Graphviz"
    )
    parser.add_argument(
        "--svg", metavar="FILE", help="draw the witness (or violating execution) as SVG (Graphviz)"
    )
    parser.add_argument(
        "--png", metavar="FILE", help="draw the witness (or violating execution) as PNG (Graphviz)"
    )
    parser.add_argument(
        "--derived",
        action="store_true",
        help="also draw the model's derived orders (hb, hb_G, ...) in the pictures",
    )
    parser.add_argument("--unroll", type=int, metavar="N", help="loop unrolling bound")
    add_budget_arguments(parser)
    parser.add_argument("--strict", action="store_true", help="strict input checking")


# Exit statuses (docs/cli.md): one per answer.
EXIT_STATUS = {
    Allowed.YES: Exit.OK,
    Allowed.NO: Exit.NEGATIVE,
    Allowed.UNKNOWN: Exit.UNKNOWN,
    Allowed.CUT: Exit.CUT,
}


def main(args: argparse.Namespace) -> int:
    """Exit 0 when the outcome is allowed, 1 when forbidden, 4 when unknown (the budget ran
    out), 5 when only executions cut by the unroll bound reach it."""
    check_outputs([args.dot, args.svg, args.png], [args.test])
    test = load_test(args.test, strict=args.strict)
    for w in test.warnings:
        print(w, file=sys.stderr)
    prop = parse_prop(args.outcome, test)
    model = load_model(args.model, model_path_of(args))

    def work() -> tuple[EventStructure, QueryResult]:
        es = build(test, unroll=test_unroll(test, args.unroll))
        return es, query(test, es, model, prop)

    try:
        es, result = under_budget(budget_of(args), work)
    except Spent as spent:
        print(f"Test {test.name}: outcome {prop_text(prop)}\nUnknown ({spent.message})")
        return int(Exit.UNKNOWN)
    print(render_query(es, prop_text(prop), model, result), end="")
    if args.dot or args.svg or args.png:
        dot = query_graph(es, model, test.name, prop_text(prop), result, derived=args.derived)
        if dot is not None:
            _write_pictures(args, dot)
    return int(EXIT_STATUS[result.answer])


def _write_pictures(args: argparse.Namespace, dot: str) -> None:
    if args.dot:
        write_atomic(args.dot, dot)
    for fmt in FORMATS:
        path = getattr(args, fmt)
        if path:
            write_picture(path, dot, fmt, args.timeout)
