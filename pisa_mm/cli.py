"""The `pisa-mm` command: argparse subcommands; only PisaMMError reaches the user, rendered."""

from __future__ import annotations

import argparse
import contextlib
import errno
import gc
import os
import sys
from collections.abc import Sequence

from pisa_mm import __version__
from pisa_mm.errors import PisaMMError
from pisa_mm.hints import TYPE_CHECKING, Any, NoReturn, Protocol, cast

if TYPE_CHECKING:
    from _typeshed import SupportsWrite

# Each subcommand lives in pisa_mm/commands/<name>.py and exposes add_arguments and main; its
# one-line help is here, so that `pisa-mm --help` imports no subcommand. To add one, add it
# here; only the chosen subcommand's module is imported.
SUBCOMMANDS = {
    "parse": "parse litmus tests and print their event structures (events, paths, relations)",
    "run": "run litmus tests under a model and print herd-style results",
    "query": "ask whether a final-state outcome is allowed: a witness execution, or why not; "
    "or (--liveness) whether a spin loop may hang",
    "trace": "print one operational-machine schedule that reaches a final-state outcome",
    "crossval": "cross-validate the operational machine against the axiomatic engine",
    "diff": "list the tests whose verdict, states or flags differ between two models",
    "promote": "record the current results of litmus tests as their expectations "
    "(X.litmus.expected)",
    "gen": "generate litmus tests from classic shapes or diy-style cycles, swept over PISA's "
    "parameters",
    "import": "translate herd C11 / OpenCL litmus tests into PISA litmus files",
    "serve": "serve a local web explorer: edit a litmus test, pick a model, run it, see its graphs",
}
# Subcommands whose module name differs from the command (`import` is a Python keyword).
MODULES = {"import": "import_tests"}

# herd7 options that have no pisa-mm counterpart: what to do instead.
HERD_OPTIONS = {
    "-variant": "pisa-mm has no -variant: a model variant is a model of its own, chosen with "
    "--model (pisa-rc11, pisa-samescope, pisa-ownspace)",
    "-through": "pisa-mm has no -through: every check of the model is applied; to drop one, "
    "run a copy of the model without it (--model FILE.cat)",
    "-skipcheck": "pisa-mm has no -skipcheck: every check of the model is applied; to drop "
    "one, run a copy of the model without it (--model FILE.cat)",
}


# Errors of a failed write to stdout (a full disk, a lost terminal): I/O, not a bug.
_OUTPUT_ERRNOS = frozenset({errno.ENOSPC, errno.EDQUOT, errno.EIO, errno.EBADF, errno.EFBIG})


class Command(Protocol):
    def add_arguments(self, parser: argparse.ArgumentParser) -> None: ...

    def main(self, args: argparse.Namespace) -> int: ...


def _columns() -> int:
    """The terminal's width as `shutil.get_terminal_size` finds it (`COLUMNS`, then stdout's
    terminal, then 80), without importing shutil: argparse makes a formatter for every
    `add_argument`, and shutil (with bz2, lzma and zlib) is 4 ms of start-up."""
    try:
        columns = int(os.environ["COLUMNS"])
    except (KeyError, ValueError):
        columns = 0
    if columns <= 0:
        try:
            columns = os.get_terminal_size(sys.__stdout__.fileno()).columns  # type: ignore[union-attr]
        except (AttributeError, ValueError, OSError):
            columns = 0
    return columns or 80


class _Formatter(argparse.HelpFormatter):
    """argparse's help formatter, told the width instead of asking shutil for it."""

    def __init__(
        self,
        prog: str,
        indent_increment: int = 2,
        max_help_position: int = 24,
        width: int | None = None,
    ) -> None:
        super().__init__(
            prog, indent_increment, max_help_position, _columns() - 2 if width is None else width
        )


class _Parser(argparse.ArgumentParser):
    """argparse, with suggestions for the options and habits of herd users."""

    def __init__(self, *args: Any, **kwargs: Any) -> None:
        kwargs.setdefault("formatter_class", _Formatter)
        super().__init__(*args, **kwargs)

    def error(self, message: str) -> NoReturn:
        hint = _hint(self, message)
        message = f"{message} [usage]"  # every diagnostic names its code (docs/cli.md)
        if hint:
            message = f"{message}\n{hint}"
        super().error(message)

    def _print_message(self, message: str, file: SupportsWrite[str] | None = None) -> None:
        # argparse swallows write errors: --help on a full disk would exit 0, its text lost
        if message:
            (file or sys.stderr).write(message)


class _CommandParser(_Parser):
    """A subcommand's parser: its options may come before, between or after its positional
    arguments (`diff OLD NEW --timeout 5 DIR`, `run --json F t.litmus`). argparse alone gives
    an optional positional its empty match before the first option, leaving what follows
    unrecognised; intermixed parsing reads the options first, then the positionals."""

    _intermixing = False

    def parse_known_args(  # type: ignore[override]
        self, args: Sequence[str] | None = None, namespace: argparse.Namespace | None = None
    ) -> tuple[argparse.Namespace, list[str]]:
        # argparse's subcommand action calls this; parse_known_intermixed_args calls it back
        # once per phase, which then must be the plain parse
        if self._intermixing:
            return super().parse_known_args(args, namespace)
        self._intermixing = True
        try:
            return self.parse_known_intermixed_args(_after_dashes(args), namespace)
        finally:
            self._intermixing = False


def _after_dashes(args: Sequence[str] | None) -> Sequence[str] | None:
    """`args` with each word after `--` that starts with `-` spelt `./WORD`, the same path.

    Python 3.11's intermixed parsing drops the `--` before its second phase, which then reads
    such a word as an option (`run -- -t.litmus`: "the following arguments are required");
    after `--` every word is a path (a test, a model, a directory)."""
    if args is None or "--" not in args:
        return args
    cut = list(args).index("--") + 1
    tail = [f"./{a}" if a.startswith("-") and a != "-" else a for a in args[cut:]]
    return [*args[:cut], *tail]


def _options(parser: argparse.ArgumentParser) -> list[str]:
    return [o for a in parser._actions for o in a.option_strings]


def _hint(parser: argparse.ArgumentParser, message: str) -> str:
    import difflib  # only for a usage error

    if message.startswith("unrecognized arguments:"):
        hints = []
        for word in message.split(":", 1)[1].split():
            option = word.split("=", 1)[0]
            if not option.startswith("-"):
                continue
            known = _options(parser)
            if option in HERD_OPTIONS:
                hints.append(HERD_OPTIONS[option])
            elif not option.startswith("--") and f"-{option}" in known:
                hints.append(f"did you mean -{option}?")
            elif close := difflib.get_close_matches(option, known, n=1):
                hints.append(f"did you mean {close[0]}?")
        return "\n".join(hints)
    if "invalid choice:" in message and "argument COMMAND" in message:
        word = message.split("invalid choice:", 1)[1].split("'")[1]
        if word.endswith(".litmus") or "/" in word:
            return f"did you mean: pisa-mm run {word}"
        if close := difflib.get_close_matches(word, SUBCOMMANDS, n=1):
            return f"did you mean: pisa-mm {close[0]}"
    return ""


def _load(name: str) -> Command | None:
    qualified = f"pisa_mm.commands.{MODULES.get(name, name)}"
    try:
        __import__(qualified)  # not importlib.import_module: importlib costs start-up time
    except ModuleNotFoundError as exc:
        if exc.name == qualified:
            return None
        raise
    return cast(Command, sys.modules[qualified])


def _chosen(argv: Sequence[str]) -> str | None:
    """The subcommand named on the command line (the first word that is not an option)."""
    for word in argv:
        if not word.startswith("-"):
            return word if word in SUBCOMMANDS else None
    return None


_SUBPARSERS: dict[str, argparse.ArgumentParser] = {}
# not empty once `main` has frozen the start-up objects out of the garbage collector
_FROZEN: list[bool] = []


def build_parser(
    only: str | None = None, *, summary: bool = False
) -> tuple[argparse.ArgumentParser, dict[str, Command]]:
    """The parser with every subcommand; with `only`, that subcommand alone (start-up time:
    no other module is imported, no other parser made); with `summary`, every subcommand
    by name and help line, without importing any (`pisa-mm --help`, a usage error)."""
    parser = _Parser(
        prog="pisa-mm",
        description="Memory-model checker for Intel's Portable ISA (PISA) litmus tests.",
    )
    parser.add_argument("--version", action="version", version=f"pisa-mm {__version__}")
    parser.add_argument(
        "--traceback", action="store_true", help="show Python tracebacks (for debugging pisa-mm)"
    )
    sub = parser.add_subparsers(
        dest="command", metavar="COMMAND", required=True, parser_class=_CommandParser
    )
    commands: dict[str, Command] = {}
    for name, text in SUBCOMMANDS.items():
        if only is not None and name != only:
            continue
        if summary:
            sub.add_parser(name, help=text, add_help=False)
            continue
        cmd = _load(name)
        if cmd is None:
            continue
        p = sub.add_parser(name, help=text, description=text)
        _SUBPARSERS[name] = p
        # SUPPRESS: given before the subcommand, the top-level flag must survive
        p.add_argument(
            "--traceback",
            action="store_true",
            default=argparse.SUPPRESS,
            help="show Python tracebacks (for debugging)",
        )
        cmd.add_arguments(p)
        commands[name] = cmd
    return parser, commands


def main(argv: Sequence[str] | None = None) -> int:
    try:
        return _main(argv)
    except KeyboardInterrupt:  # Ctrl-C before the command's handlers (while importing)
        with contextlib.suppress(OSError, AttributeError):
            print("pisa-mm: interrupted", file=sys.stderr)
        return 130


def _main(argv: Sequence[str] | None) -> int:
    from pisa_mm.runner.console import StdoutClosed
    from pisa_mm.runner.guard import Interrupted, interruptible
    from pisa_mm.runner.outcome import Exit

    argv = list(sys.argv[1:] if argv is None else argv)
    if sys.stdout is None or sys.stderr is None:  # started with fd 1 or 2 closed (`>&-`)
        if sys.stderr is not None:
            print("pisa-mm: error: cannot write the output: stdout is closed [io]", file=sys.stderr)
        return int(Exit.BAD_INPUT)
    _lenient(sys.stdout)
    # Importing the command makes long-lived objects only (modules, classes, tables): a
    # collection during it finds no garbage, and start-up ran ~40 of them (5% of a run).
    # Frozen after it (no collection first: there is nothing to find), they are left out of
    # every later collection, which the first test's model, parse and engine trigger: the
    # collector walked them again and again, 8% of the instructions of a one-test run. Once
    # per process: a caller of `main` in a loop (the tests) would freeze its garbage too.
    collecting = gc.isenabled()
    gc.disable()
    try:
        chosen = _chosen(argv)
        parser, commands = build_parser(chosen, summary=chosen is None)
    finally:
        if not _FROZEN:
            _FROZEN.append(True)
            gc.freeze()
        if collecting:
            gc.enable()
    try:
        for word in argv:
            if word.split("=", 1)[0] in HERD_OPTIONS:
                parser.error(HERD_OPTIONS[word.split("=", 1)[0]])
        args, extra = parser.parse_known_args(argv)
        if extra:
            # reported by the subcommand's parser, whose options the hint knows
            _SUBPARSERS.get(args.command, parser).error(
                f"unrecognized arguments: {' '.join(extra)}"
            )
    except SystemExit as exc:  # --help, --version, a usage error (2): argparse has printed
        code = exc.code if isinstance(exc.code, int) else int(Exit.BAD_INPUT)
        return _flushed(code)
    except OSError as exc:  # printing the help or a usage error failed
        return _flushed(exc)
    try:
        with interruptible():
            return commands[args.command].main(args)
    except PisaMMError as exc:
        if signum := _interrupted():
            return 128 + signum
        print(exc.render(getattr(exc, "sources", None)), file=sys.stderr)
        return int(Exit.BAD_INPUT)
    except StdoutClosed:
        return int(Exit.STDOUT_CLOSED)
    except (Interrupted, KeyboardInterrupt) as exc:
        print("pisa-mm: interrupted", file=sys.stderr)
        return exc.exit_code if isinstance(exc, Interrupted) else int(Exit.SIGINT)
    except BrokenPipeError:
        return int(Exit.STDOUT_CLOSED)
    except OSError as exc:
        if exc.errno not in _OUTPUT_ERRNOS:
            return _internal_error(args.traceback)
        # writing stdout failed (a full disk): I/O, not a bug
        print(f"pisa-mm: error: cannot write the output: {exc.strerror} [io]", file=sys.stderr)
        return int(Exit.BAD_INPUT)
    except Exception:  # the last line of defence: never a bare traceback
        return _internal_error(args.traceback)


def _lenient(stream: object) -> None:
    """Make `stream` write what its encoding cannot as escapes (`\\u0442`), as stderr does.

    A test's path is printed as it is named (`created тест.litmus.expected`, query's source
    locations); under PYTHONIOENCODING=ascii or latin-1, or a file name that is no UTF-8,
    the strict default raised UnicodeEncodeError: an internal error after the work."""
    reconfigure = getattr(stream, "reconfigure", None)
    if reconfigure is not None and getattr(stream, "errors", None) == "strict":
        with contextlib.suppress(ValueError, OSError):
            reconfigure(errors="backslashreplace")


def _flushed(code: int | OSError) -> int:
    """`code`, once what argparse printed (--help, --version) has reached stdout, or the
    error writing it: a full disk is an I/O error, a closed pipe the reader's choice."""
    from pisa_mm.runner.outcome import Exit

    try:
        if isinstance(code, OSError):
            raise code
        sys.stdout.flush()
    except BrokenPipeError:
        return int(Exit.STDOUT_CLOSED)
    except OSError as exc:
        message = f"pisa-mm: error: cannot write the output: {exc.strerror} [io]"
        with contextlib.suppress(OSError):
            print(message, file=sys.stderr)
        return int(Exit.BAD_INPUT)
    return code


def _interrupted() -> int:
    """The signal that stopped the run (0: none), reported as `interrupted`: the exception
    being handled is then the interrupt, disguised by the code it hit."""
    from pisa_mm.runner import guard

    if guard.received is None:
        return 0
    print("pisa-mm: interrupted", file=sys.stderr)
    return guard.received


def _internal_error(show_traceback: bool) -> int:
    if signum := _interrupted():
        return 128 + signum
    if show_traceback:
        import traceback

        traceback.print_exc()
    else:
        print(
            "pisa-mm: internal error (this is a bug in pisa-mm; rerun with --traceback)",
            file=sys.stderr,
        )
    return 3


if __name__ == "__main__":
    sys.exit(main())
