"""The `pisa-mm` console script: Ctrl-C and SIGTERM stop it cleanly from its first moment."""

from __future__ import annotations

# `_signal`, not `signal`: its Python module imports `enum` (with `functools`), ~20 ms of
# start-up on a loaded machine during which a signal still had Python's default action
import _signal  # type: ignore[import-not-found]  # (no stubs: the C half of `signal`)
import gc
import os
import sys
from types import FrameType, ModuleType

__all__ = ["main"]


def _stop(signum: int, frame: FrameType | None) -> None:
    """Before the command's own handlers (while the CLI is imported, or as it exits): no
    file is being written then, so stop at once. Python's default would print a
    KeyboardInterrupt traceback for SIGINT and die silently on SIGTERM; a background job
    (`pisa-mm ... &` in a script) inherits SIGINT ignored, and would run on."""
    os.write(2, b"pisa-mm: interrupted\n")
    os._exit(128 + signum)


def _import_argparse() -> None:
    """argparse, given the identity for the two functions it takes from gettext (`gettext`
    and `ngettext`, through which it passes each of its messages). gettext compiles a regex
    as it is imported, and each call of its `gettext` looks for a catalog of the domain
    "messages", importing `locale` on the first: 8 M instructions of a one-test run (~3%),
    for messages that no catalog translates (Python ships none, and pisa-mm's own are
    English). Without a catalog, gettext's functions are the identity (`NullTranslations`);
    a process that imports gettext after this gets the real module."""
    if "argparse" in sys.modules or "gettext" in sys.modules:
        return
    stand_in = ModuleType("gettext", "gettext's two functions as they are without a catalog")
    vars(stand_in).update(gettext=_message, ngettext=_plural)
    sys.modules["gettext"] = stand_in
    try:
        import argparse  # noqa: F401  # (imported to be kept in sys.modules)
    finally:
        del sys.modules["gettext"]


def _message(message: str) -> str:
    return message


def _plural(singular: str, plural: str, n: int) -> str:
    return singular if n == 1 else plural


def main() -> int:
    for signum in (_signal.SIGINT, _signal.SIGTERM):
        _signal.signal(signum, _stop)
    from pisa_mm.regexes import prime

    # before the first regex is compiled, by argparse or a module of the package; the
    # subcommand is the first word that is not an option (as `cli.main` reads it)
    prime(next((word for word in sys.argv[1:] if not word.startswith("-")), ""))
    _import_argparse()
    from pisa_mm.cli import main as cli_main

    code = cli_main()
    # The interpreter's finalisation then collects garbage twice over everything the run made
    # (the model, the tests, the results): 10 M instructions, 3% of a one-test run, to free
    # memory the process is about to give back. Frozen, that is skipped; the atexit handlers,
    # the flush of stdout and stderr, and everything freed by reference counting happen as
    # before (Python never promised to run the finalisers of objects alive at exit).
    gc.disable()
    gc.freeze()
    return _finish(code)


def _finish(code: int) -> int:
    """Exit with `code` after what Python's finalisation would do that matters here (the
    atexit hooks, the flush of stdout and stderr), while `_stop` and the command's handlers
    are still in place: finalisation puts back the default actions, and a SIGTERM in the
    last milliseconds of a run then ended the process with no `interrupted` message
    (tests/hostile/round4.py, 1 of 48 signals sent as a pool ends). Where that is not
    all Python would do (a thread that is not a daemon, a flush that fails), Python does it
    as before."""
    threading = sys.modules.get("threading")
    if threading is not None and any(
        not thread.daemon and thread is not threading.main_thread()
        for thread in threading.enumerate()
    ):
        return code
    import atexit

    atexit._run_exitfuncs()
    try:
        # and the original streams, which Python flushes as it frees them
        for stream in (sys.stdout, sys.stderr, sys.__stdout__, sys.__stderr__):
            if stream is not None:
                stream.flush()
    except (OSError, ValueError):  # a closed pipe, a full disk, a closed stream
        return code
    os._exit(code)
