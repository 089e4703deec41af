"""The `pisa-mm` command: argparse subcommands; only PisaMMError reaches the user, rendered."""

from __future__ import annotations

import argparse
import importlib
import sys
import traceback
from collections.abc import Sequence
from typing import Protocol, cast

from pisa_mm import __version__
from pisa_mm.errors import PisaMMError

# Each subcommand lives in pisa_mm/commands/<name>.py and exposes HELP, add_arguments, main.
SUBCOMMANDS = ("parse", "run", "query", "trace", "crossval", "diff", "promote", "serve")


class Command(Protocol):
    HELP: str

    def add_arguments(self, parser: argparse.ArgumentParser) -> None: ...

    def main(self, args: argparse.Namespace) -> int: ...


def _load(name: str) -> Command | None:
    try:
        module = importlib.import_module(f"pisa_mm.commands.{name}")
    except ModuleNotFoundError as exc:
        if exc.name == f"pisa_mm.commands.{name}":
            return None
        raise
    return cast(Command, module)


def build_parser() -> tuple[argparse.ArgumentParser, dict[str, Command]]:
    parser = argparse.ArgumentParser(
        prog="pisa-mm",
        description="Memory-model checker for Intel's Portable ISA (PISA) litmus tests.",
    )
    parser.add_argument("--version", action="version", version=f"pisa-mm {__version__}")
    parser.add_argument(
        "--traceback", action="store_true", help="show Python tracebacks (for debugging pisa-mm)"
    )
    sub = parser.add_subparsers(dest="command", metavar="COMMAND", required=True)
    commands: dict[str, Command] = {}
    for name in SUBCOMMANDS:
        cmd = _load(name)
        if cmd is None:
            continue
        p = sub.add_parser(name, help=cmd.HELP, description=cmd.HELP)
        p.add_argument(
            "--traceback", action="store_true", help="show Python tracebacks (for debugging)"
        )
        cmd.add_arguments(p)
        commands[name] = cmd
    return parser, commands


def main(argv: Sequence[str] | None = None) -> int:
    parser, commands = build_parser()
    args = parser.parse_args(argv)
    try:
        return commands[args.command].main(args)
    except PisaMMError as exc:
        print(exc.render(getattr(exc, "sources", None)), file=sys.stderr)
        return 2
    except KeyboardInterrupt:
        print("pisa-mm: interrupted", file=sys.stderr)
        return 130
    except Exception:  # the last line of defence: never a bare traceback
        if args.traceback:
            traceback.print_exc()
        else:
            print(
                "pisa-mm: internal error (this is a bug in pisa-mm; rerun with --traceback)",
                file=sys.stderr,
            )
        return 3


if __name__ == "__main__":
    sys.exit(main())
