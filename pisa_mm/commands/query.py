"""`pisa-mm query`: is one final state allowed? A witness execution, or why not. With
`--liveness`: can each spin loop hang? The starving schedule and the stuck execution."""

from __future__ import annotations

import argparse
import sys
from collections.abc import Iterable

from pisa_mm.cat.loader import load_model
from pisa_mm.cat.syntax import Model
from pisa_mm.commands.run import load_test, test_unroll
from pisa_mm.errors import PisaMMError
from pisa_mm.events.build import build
from pisa_mm.events.model import EventStructure
from pisa_mm.litmus import parse_prop
from pisa_mm.litmus.program import LitmusTest, Prop
from pisa_mm.liveness.progress import PROGRESS_MODELS
from pisa_mm.outcomes.condition import prop_text
from pisa_mm.outcomes.expectations import DEFAULT_MODEL
from pisa_mm.outcomes.model import LivenessStatus
from pisa_mm.report.explain import render_query
from pisa_mm.report.graphs import query_graph
from pisa_mm.report.render import FORMATS, write_picture
from pisa_mm.runner.files import check_outputs, model_files, write_atomic
from pisa_mm.runner.job import Spent, under_budget
from pisa_mm.runner.options import (
    add_budget_arguments,
    add_model_path_argument,
    budget_of,
    model_path_of,
)
from pisa_mm.runner.outcome import Exit
from pisa_mm.smt.query import Allowed, QueryResult, query


def add_arguments(parser: argparse.ArgumentParser) -> None:
    parser.add_argument("test", metavar="TEST", help="a litmus file")
    parser.add_argument(
        "--outcome",
        metavar="PROP",
        help="a final-state proposition in the condition syntax "
        "(e.g. 'P1:%%r0 == 1 /\\ P1:%%r1 == 0'); required unless --liveness",
    )
    parser.add_argument(
        "--liveness",
        action="store_true",
        help="instead of an outcome: for each spin loop, whether it terminates, and for one "
        "that may hang the starving schedule and the stuck execution (docs/progress.md)",
    )
    parser.add_argument(
        "--progress",
        choices=PROGRESS_MODELS,
        default="pisa",
        help="with --liveness: the forward-progress model, pisa (PISA 1.1.1), obe "
        "(occupancy-bound), fair or unfair (default: pisa)",
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


# Exit statuses of --liveness (docs/cli.md): the worst answer over the spin loops.
LIVENESS_EXIT = {
    LivenessStatus.TERMINATES: Exit.OK,
    LivenessStatus.MAY_HANG: Exit.NEGATIVE,
    LivenessStatus.UNDECIDED: Exit.CUT,
}


def main(args: argparse.Namespace) -> int:
    """Exit 0 when the outcome is allowed, 1 when forbidden, 4 when unknown (the budget ran
    out), 5 when only executions cut by the unroll bound reach it. With --liveness: 0 when
    every spin loop terminates, 1 when one may hang, 5 when one is undecided within the
    bound, 4 when the budget ran out, 6 when the test has no spin loop."""
    _check_usage(args)
    outputs = [args.dot, args.svg, args.png]
    check_outputs(outputs, [args.test])
    if args.liveness:
        return _liveness(args)
    loaded: list[tuple[LitmusTest, Prop]] = []

    def work() -> tuple[EventStructure, Model, QueryResult]:
        # all of it under the budget: a huge test's parse is per-test work too
        test = _load(args)
        prop = parse_prop(args.outcome, test)
        loaded.append((test, prop))
        model = load_model(args.model, model_path_of(args))
        check_outputs(outputs, model_files(model))
        es = build(test, unroll=test_unroll(test, args.unroll))
        return es, model, query(test, es, model, prop)

    try:
        es, model, result = under_budget(budget_of(args), work)
    except Spent as spent:
        # before the test was read, its path and the proposition as given
        name, text = (
            (loaded[0][0].name, prop_text(loaded[0][1])) if loaded else (args.test, args.outcome)
        )
        print(f"Test {name}: outcome {text}\nUnknown ({spent.message})")
        return int(Exit.UNKNOWN)
    test, prop = loaded[0]
    print(render_query(es, prop_text(prop), model, result), end="")
    if args.dot or args.svg or args.png:
        dot = query_graph(es, model, test.name, prop_text(prop), result, derived=args.derived)
        if dot is not None:
            _write_pictures(args, dot)
    return int(EXIT_STATUS[result.answer])


def _load(args: argparse.Namespace) -> LitmusTest:
    test = load_test(args.test, strict=args.strict)
    for w in test.warnings:
        print(w, file=sys.stderr)
    return test


def _write_pictures(args: argparse.Namespace, dot: str) -> None:
    if args.dot:
        write_atomic(args.dot, dot)
    for fmt in FORMATS:
        path = getattr(args, fmt)
        if path:
            write_picture(path, dot, fmt, args.timeout)


def _check_usage(args: argparse.Namespace) -> None:
    if args.liveness and args.outcome is not None:
        raise PisaMMError.at(None, "give --outcome PROP or --liveness, not both", "usage")
    if not args.liveness and args.outcome is None:
        raise PisaMMError.at(None, "query needs --outcome PROP (or --liveness)", "usage")
    if args.liveness and (args.dot or args.svg or args.png):
        raise PisaMMError.at(
            None, "--dot/--svg/--png draw an outcome's witness: not with --liveness", "usage"
        )
    if not args.liveness and args.progress != "pisa":
        raise PisaMMError.at(None, "--progress is an option of --liveness", "usage")


def _liveness(args: argparse.Namespace) -> int:
    """Each spin loop's answer under --progress, its schedule and stuck execution."""
    from pisa_mm.liveness.check import Analysis, analyse
    from pisa_mm.liveness.loops import spin_loops
    from pisa_mm.liveness.progress import Progress
    from pisa_mm.report.liveness import render_liveness

    progress = Progress(args.progress)
    loaded: list[tuple[LitmusTest, int]] = []

    def work() -> tuple[EventStructure, list[Analysis]]:
        test = _load(args)
        model = load_model(args.model, model_path_of(args))
        unroll = test_unroll(test, args.unroll)
        loaded.append((test, unroll))
        es = build(test, unroll=unroll)
        found = [analyse(test, es, model, progress, only=loop) for loop in spin_loops(test)]
        return es, [a for a in found if a is not None]

    try:
        es, analyses = under_budget(budget_of(args), work)
    except Spent as spent:
        name = loaded[0][0].name if loaded else args.test
        print(f"Test {name}: liveness under --progress {args.progress}")
        print(f"Unknown ({spent.message})")
        return int(Exit.UNKNOWN)
    test, unroll = loaded[0]
    print(render_liveness(test.name, es, args.progress, unroll, analyses), end="")
    if not analyses:
        return int(Exit.NO_SPIN_LOOP)
    return int(worst_liveness(LIVENESS_EXIT[a.liveness.status] for a in analyses))


def worst_liveness(codes: Iterable[Exit]) -> Exit:
    """may hang, then undecided, then terminates."""
    seen = set(codes)
    return next(c for c in (Exit.NEGATIVE, Exit.CUT, Exit.OK) if c in seen)
