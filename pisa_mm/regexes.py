"""`prime`: the regular expressions a process compiles, their programs kept in the user's cache.

A one-test run compiles ~40 regexes (argparse's, the litmus parser's and lexer's, errors.py's,
...): 24 M instructions of 300 M, more than any module's import. `re.compile` looks a pattern
up in `re._cache` first, by (type, pattern, flags), and compiles it only on a miss: what it
compiles is the SRE program (`re._compiler._code`) handed with the pattern's flags and
groups to `_sre.compile`, which checks the program and makes the `Pattern`. `prime` fills
`re._cache` from the programs a process of the same subcommand stored before (group "re run"
of the table of compiled code, pisa_mm/codecache.py: sealed, and only read by the same
Python), each made by `_sre.compile` from exactly what `_compiler.compile` would give it, so
that `re.compile` returns an equal `Pattern` (same pattern, flags and program:
`Pattern.__eq__` compares them) without compiling. At exit, the patterns compiled since are
added (their programs computed then, once). Only under CPython 3.11, whose `re` this
follows; elsewhere `prime` does nothing.
The table keeps what `re._cache` holds at exit, which `re` bounds (`re._MAXCACHE`).
"""

from __future__ import annotations

import re
import sys

from pisa_mm.hints import Any

__all__ = ["prime"]

# re.DEBUG compiles print and are never cached; re.TEMPLATE warns on each compile
_UNCACHED = re.DEBUG | re.TEMPLATE

_Key = tuple[str, int]
# (flags, program, groups - 1, name -> group, group -> name): `_sre.compile`'s arguments
_Program = tuple[int, list[int], int, dict[str, int], tuple[str | None, ...]]

# the patterns put into `re._cache` from the table; None until `prime` ran
_primed: set[_Key] | None = None


def prime(command: str) -> None:
    """Put the patterns stored by earlier processes of the subcommand `command` into `re`'s
    cache (once per process). A group per subcommand: each compiles its own few dozen, and a
    `run` then builds only the patterns a `run` compiles."""
    global _primed
    cache = getattr(re, "_cache", None)
    if _primed is not None or sys.version_info[:2] != (3, 11) or not isinstance(cache, dict):
        return
    primed = _primed = set()
    import atexit
    from _sre import compile as sre_compile  # type: ignore[import-not-found]

    from pisa_mm.codecache import CODES

    group = f"re {command}"
    stored: dict[Any, Any] = CODES.group(group)
    for key, program in stored.items():
        try:
            pattern, flags = key
            if (str, pattern, flags) not in cache and not flags & _UNCACHED:
                cache[str, pattern, flags] = sre_compile(pattern, *program)
                primed.add(key)
        except Exception:  # a program `_sre` refuses (its own check), a malformed entry
            continue
    atexit.register(_save, command, primed)


def program(pattern: str, flags: int) -> _Program:
    """What `re._compiler.compile(pattern, flags)` gives `_sre.compile` after the pattern."""
    from re import _compiler, _parser  # type: ignore[attr-defined]

    parsed = _parser.parse(pattern, flags)
    state = parsed.state
    groupindex: dict[str, int] = dict(state.groupdict)
    indexgroup: list[str | None] = [None] * state.groups
    for name, index in groupindex.items():
        indexgroup[index] = name
    # plain ints: the opcodes are `_NamedIntConstant`s, which marshal does not write
    code = [int(word) for word in _compiler._code(parsed, flags)]
    return int(flags | state.flags), code, state.groups - 1, groupindex, tuple(indexgroup)


def _save(command: str, primed: set[_Key]) -> None:
    """Store the programs of what `re._cache` holds, if this process compiled any pattern
    (`primed`: those it did not compile) and `command` is a subcommand (not a mistyped word,
    whose group would stay in the table)."""
    cli = sys.modules.get("pisa_mm.cli")
    if command not in getattr(cli, "SUBCOMMANDS", ()):
        return
    cache: dict[Any, Any] = getattr(re, "_cache", {})
    keys = [
        (pattern, flags)
        for kind, pattern, flags in list(cache)
        if kind is str and isinstance(flags, int) and not flags & _UNCACHED
    ]
    if all(key in primed for key in keys):
        return
    from pisa_mm.codecache import CODES

    group = f"re {command}"
    stored: dict[Any, Any] = CODES.group(group)
    table: dict[Any, Any] = {}
    for key in keys:
        made = stored.get(key) if key in primed else None
        if made is None:
            try:
                made = program(*key)
            except Exception:  # a pattern re compiled once cannot fail again; if it does, skip
                continue
        table[key] = made
    CODES.replace(group, table)
