"""`pisa-mm query`: is one final state allowed? A witness execution, or why not."""

from __future__ import annotations

import argparse

from pisa_mm.cat.loader import load_model
from pisa_mm.cat.syntax import Model
from pisa_mm.commands.run import load_test, test_unroll
from pisa_mm.errors import PisaMMError
from pisa_mm.events.build import build
from pisa_mm.events.model import EventStructure
from pisa_mm.litmus import parse_prop
from pisa_mm.outcomes.condition import prop_text
from pisa_mm.outcomes.expectations import DEFAULT_MODEL
from pisa_mm.report.dot import execution_dot
from pisa_mm.report.explain import hb_edges, render_query, violation_steps
from pisa_mm.smt.query import Allowed, QueryResult, query
from pisa_mm.smt.solver import Budget

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
    parser.add_argument(
        "--dot", metavar="FILE", help="write the witness (or a violating execution) as Graphviz"
    )
    parser.add_argument("--unroll", type=int, metavar="N", help="loop unrolling bound")
    parser.add_argument(
        "--timeout",
        type=float,
        metavar="S",
        help="give up after S seconds and answer 'unknown' (default: no limit)",
    )
    parser.add_argument("--strict", action="store_true", help="strict input checking")


# Exit statuses (docs/cli.md): one per answer.
EXIT_STATUS = {Allowed.YES: 0, Allowed.NO: 1, Allowed.UNKNOWN: 4, Allowed.CUT: 5}


def main(args: argparse.Namespace) -> int:
    """Exit 0 when the outcome is allowed, 1 when forbidden, 4 when unknown (the budget ran
    out), 5 when only executions cut by the unroll bound reach it."""
    test = load_test(args.test, strict=args.strict)
    prop = parse_prop(args.outcome, test)
    if args.timeout is not None and args.timeout <= 0:
        raise PisaMMError.at(None, f"--timeout must be positive, not {args.timeout}")
    model = load_model(args.model)
    es = build(test, unroll=test_unroll(test, args.unroll))
    result = query(test, es, model, prop, Budget(timeout=args.timeout))
    print(render_query(es, prop_text(prop), model, result), end="")
    if args.dot:
        _write_dot(args.dot, es, model, test.name, prop_text(prop), result)
    return EXIT_STATUS[result.answer]


def _write_dot(
    path: str, es: EventStructure, model: Model, name: str, outcome: str, result: QueryResult
) -> None:
    text = None
    if result.witness is not None:
        w = result.witness
        text = execution_dot(
            es,
            w.candidate,
            title=f"{name}: {outcome} {result.answer.value}",
            extra=hb_edges(w.result, model, es),
        )
    elif result.why_not is not None and result.why_not.violations:
        v = result.why_not.violations[0]
        axiom = v.failed[0] if v.failed else None
        steps = violation_steps(v.result, model, axiom) if axiom else ()
        text = execution_dot(
            es,
            v.candidate,
            title=f"{name}: {outcome} forbidden ({axiom})",
            cycle=[(s.src, s.dst, s.label) for s in steps],
        )
    if text is None:
        return
    try:
        with open(path, "w", encoding="utf-8") as fh:
            fh.write(text)
    except OSError as exc:
        raise PisaMMError.at(None, f"cannot write {path}: {exc}", "io") from exc
