"""`pisa-mm trace`: print one schedule of the operational machine that reaches an outcome."""

from __future__ import annotations

import argparse
import sys

from pisa_mm.commands.run import test_unroll
from pisa_mm.litmus import load_test, parse_prop
from pisa_mm.litmus.program import Condition, Quantifier
from pisa_mm.operational.explore import find_run
from pisa_mm.operational.step import Machine
from pisa_mm.outcomes.condition import (
    condition_observables,
    eval_prop,
    make_state,
    observables,
    prop_text,
)
from pisa_mm.runner.job import Spent, under_budget
from pisa_mm.runner.options import add_budget_arguments, budget_of
from pisa_mm.runner.outcome import Exit

HELP = "print one operational-machine schedule that reaches a final-state outcome"


def add_arguments(parser: argparse.ArgumentParser) -> None:
    parser.add_argument("test", metavar="TEST", help="a litmus file")
    parser.add_argument(
        "--outcome",
        required=True,
        metavar="PROP",
        help="the final-state proposition to reach, in the condition syntax "
        "(e.g. 'P1:%%r0 == 1 /\\ P1:%%r1 == 0')",
    )
    parser.add_argument("--unroll", type=int, metavar="N", help="loop unrolling bound")
    parser.add_argument("--strict", action="store_true", help="strict input checking")
    add_budget_arguments(parser)


def main(args: argparse.Namespace) -> int:
    test = load_test(args.test, strict=args.strict)
    for w in test.warnings:
        print(w, file=sys.stderr)
    prop = parse_prop(args.outcome, test)
    unroll = test_unroll(test, args.unroll)
    asked = condition_observables(Condition(Quantifier.EXISTS, prop, test.condition.span))
    obs = tuple(dict.fromkeys((*observables(test), *asked)))

    print(f"Test {test.name}: outcome {prop_text(prop)} (unroll {unroll})")
    try:
        found = under_budget(
            budget_of(args),
            lambda: find_run(
                Machine(test, unroll, tracing=True), obs, lambda values: eval_prop(prop, values)
            ),
        )
    except Spent as spent:
        print(f"Unknown ({spent.message})")
        return int(Exit.UNKNOWN)
    if found is None:
        print("No schedule of the operational machine reaches this outcome.")
        return 1
    steps, final = found
    for i, step in enumerate(steps, 1):
        lines = str(step).split("\n")
        print(f"{i:>3}. {lines[0]}")
        for extra in lines[1:]:
            print(f"     {extra}")
    print(f"Final state: {make_state(dict(final.values))}")
    if final.cut:
        print("(this run was cut by the unroll bound)")
    return 0
