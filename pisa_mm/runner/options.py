"""The runner's command-line options, shared by every command that runs tests."""

from __future__ import annotations

import argparse

from pisa_mm.runner.budget import (
    DEFAULT_TIMEOUT,
    Budget,
    default_jobs,
    default_memory,
    parse_jobs,
    parse_memory,
    parse_timeout,
)
from pisa_mm.runner.pool import Plan

__all__ = [
    "add_budget_arguments",
    "add_model_path_argument",
    "add_pool_arguments",
    "budget_of",
    "model_path_of",
    "plan_of",
]


def add_model_path_argument(parser: argparse.ArgumentParser) -> None:
    """`--model-path DIR` (repeatable), for every command that loads a model from a file."""
    parser.add_argument(
        "--model-path",
        action="append",
        default=[],
        metavar="DIR",
        help="a directory where the model's `include`s may also be found (repeatable); "
        "includes never read outside the model's own directory, these and the shipped models",
    )


def model_path_of(args: argparse.Namespace) -> tuple[str, ...]:
    """The `--model-path` directories, in order (the search path of `load_model`)."""
    return tuple(args.model_path)


class _StoreTimeout(argparse.Action):
    """Stores --timeout's value (None for `none`) and that it was given: `budget_of` tells
    the default budget from a limit the user set, and from `--timeout none`."""

    def __call__(
        self,
        parser: argparse.ArgumentParser,
        namespace: argparse.Namespace,
        values: object,
        option_string: str | None = None,
    ) -> None:
        setattr(namespace, self.dest, values)
        namespace.timeout_given = True


def add_budget_arguments(parser: argparse.ArgumentParser) -> None:
    parser.add_argument(
        "--timeout",
        type=parse_timeout,
        action=_StoreTimeout,
        metavar="S",
        help="give up on a test after S seconds of work (parsing, building, solving, "
        "enumerating): it is then Unknown (timeout), never Allowed or Forbidden "
        f"('none': no limit; default: {DEFAULT_TIMEOUT:g} s)",
    )
    parser.set_defaults(timeout_given=False)
    parser.add_argument(
        "--max-memory",
        type=parse_memory,
        metavar="SIZE",
        help="give up on a test that needs more than SIZE of memory (e.g. 512M, 2G; 'none': "
        "no limit): it is then Unknown (memory) (default: half the machine's memory shared "
        "among the workers, at most 1.5G each)",
    )


def add_pool_arguments(parser: argparse.ArgumentParser) -> None:
    add_budget_arguments(parser)
    parser.add_argument(
        "-j",
        "--jobs",
        type=parse_jobs,
        metavar="N",
        help="run the tests in N worker processes; the output is the same for every N "
        f"(default: the machine's cores, here {default_jobs()})",
    )
    parser.add_argument(
        "--dask",
        metavar="ADDRESS",
        help="run the tests on the Dask cluster whose scheduler is at ADDRESS "
        "(e.g. tcp://host:8786; needs pip install 'pisa-mm[dask]'; see docs/scaling.md)",
    )


def budget_of(args: argparse.Namespace, workers: int = 1) -> Budget:
    memory: int | None = args.max_memory
    sized_here = memory is None
    if memory is None:
        memory = default_memory(workers)
    if args.timeout_given:
        return Budget(timeout=args.timeout, max_memory=memory or None, sized_here=sized_here)
    return Budget(
        timeout=DEFAULT_TIMEOUT, max_memory=memory or None, implicit=True, sized_here=sized_here
    )


def plan_of(args: argparse.Namespace) -> Plan:
    jobs = args.jobs if args.jobs is not None else default_jobs()
    return Plan(jobs=jobs, budget=budget_of(args, jobs), dask=args.dask)
