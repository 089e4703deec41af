"""`pisa-mm trace`: print one schedule of the operational machine that reaches an outcome."""

from __future__ import annotations

import argparse
import sys
from typing import assert_never

from pisa_mm.cat.loader import load_model
from pisa_mm.commands.run import test_unroll
from pisa_mm.errors import PisaMMError, printable
from pisa_mm.events.build import build
from pisa_mm.events.kinds import Kind
from pisa_mm.events.model import EventStructure
from pisa_mm.litmus import load_test, parse_prop
from pisa_mm.litmus.decode.declarations import MAX_UNROLL, unroll_limit_message
from pisa_mm.litmus.program import Condition, LitmusTest, Prop, Quantifier
from pisa_mm.operational.explore import Final, find_run
from pisa_mm.operational.step import Machine, Step
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

Run = tuple[list[Step], Final]  # a schedule and the state it ends in


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
    """Exit 0 when a complete run reaches the outcome, 5 when only runs cut by the unroll
    bound do, 1 when none does (with the reason, from the axiomatic models), 4 when the
    budget ran out."""
    started: list[bool] = []

    def search() -> tuple[Run | None, bool, str, Run | None]:
        """A complete run, else a cut one; the reason when neither reaches the outcome; and
        a run that reaches an invalid address, when the test may have one (whatever the
        answer, as `query` says it). All of it under the budget: a huge test's parse is
        per-test work too."""
        test = load_test(args.test, strict=args.strict)
        for w in test.warnings:
            print(w, file=sys.stderr)
        prop = parse_prop(args.outcome, test)
        unroll = test_unroll(test, args.unroll)
        if unroll > MAX_UNROLL:  # the machine unrolls lazily, but one bound holds everywhere
            raise PisaMMError.at(None, unroll_limit_message(unroll), "limit")
        machine = Machine(test, unroll, tracing=True)
        asked = condition_observables(Condition(Quantifier.EXISTS, prop, test.condition.span))
        obs = tuple(dict.fromkeys((*observables(test), *asked)))
        print(f"Test {test.name}: outcome {prop_text(prop)} (unroll {unroll})")
        started.append(True)
        es = build(test, unroll=unroll)
        # an access may have an invalid address: never a silent answer
        wild = any(e.kind is Kind.EXIT and e.addr is not None for e in es.events)
        bad = find_run(machine, obs, lambda f: f.ended) if wild else None
        complete = find_run(machine, obs, lambda f: f.complete and eval_prop(prop, dict(f.values)))
        if complete is not None:
            return complete, False, "", bad
        cut = find_run(machine, obs, lambda f: f.cut and eval_prop(prop, dict(f.values)))
        if cut is not None:
            return cut, True, "", bad
        return None, False, why_unreachable(test, es, prop), bad

    try:
        found, only_cut, reason, bad = under_budget(budget_of(args), search)
    except Spent as spent:
        if not started:  # before the test was read: its path and the proposition as given
            print(printable(f"Test {args.test}: outcome {args.outcome}"))
        print(f"Unknown ({spent.message})")
        return int(Exit.UNKNOWN)
    code = 0
    if found is None:
        print("No schedule of the operational machine reaches this outcome.")
        print(reason)
        if bad is None:
            return 1
        print(
            "Flag invalid-address: this schedule reaches an invalid address instead "
            "(undefined behaviour); the work-item stops there, with no final state:"
        )
        _print_run(bad)
        return 1
    if only_cut:
        print(
            "Only runs cut by the unroll bound reach these values: they are not a final "
            "state (a larger --unroll may show whether a complete run does). A cut run:"
        )
        code = int(Exit.CUT)
    _print_run(found)
    if bad is not None:
        print(
            "Flag invalid-address: another schedule reaches an invalid address (undefined "
            "behaviour); the work-item stops there, with no final state:"
        )
        _print_run(bad)
    return code


def _print_run(run: Run) -> None:
    steps, final = run
    for i, step in enumerate(steps, 1):
        lines = str(step).split("\n")
        print(f"{i:>3}. {lines[0]}")
        for extra in lines[1:]:
            print(f"     {extra}")
    label = "Final state" if final.complete else "State at the cut"
    if final.ended:
        label = "State at the invalid access"
    print(f"{label}: {make_state(dict(final.values))}")


def why_unreachable(test: LitmusTest, es: EventStructure, prop: Prop) -> str:
    """Why the machine reaches no state with `prop`: the axiomatic answer under `pisa`, and
    under `pisa-rc11` (which forbids po | aso | rf cycles, the machine's one difference)."""
    from pisa_mm.smt.query import Allowed, query

    under_pisa = query(test, es, load_model("pisa"), prop).answer
    match under_pisa:
        case Allowed.NO:
            return "pisa forbids it too (`pisa-mm query` shows why)."
        case Allowed.CUT:
            return (
                "pisa allows these values only in executions cut by the unroll bound, which "
                "the machine does not complete either: not a final state."
            )
        case Allowed.UNKNOWN:
            return "Whether pisa allows it is unknown (the solver gave up)."
        case Allowed.YES:
            pass
        case _:
            assert_never(under_pisa)
    if query(test, es, load_model("pisa-rc11"), prop).answer is Allowed.NO:
        return (
            "pisa allows it, but every allowed execution with it has a po | rf cycle (load "
            "buffering: a read takes a value from a write that comes after it in program order "
            "through the other work-items). The machine executes each work-item in program "
            "order and reads only messages already written (it has no promises), so it never "
            "produces such an execution (docs/operational.md)."
        )
    return (
        "pisa and pisa-rc11 both allow it, with an execution free of po | rf cycles: the "
        "machine should reach it. This is a difference `pisa-mm crossval` reports."
    )
