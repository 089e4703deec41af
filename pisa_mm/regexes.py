"""`prime`: the regular expressions a process compiles, their programs kept in the user's cache.

A one-test run compiles ~40 regexes (argparse's, the litmus parser's and lexer's, errors.py's,
...): 24 M instructions of 300 M, more than any module's import. `re.compile` looks a pattern
up in `re._cache` first, by (type, pattern, flags), and compiles it only on a miss: what it
compiles is the SRE program (`re._compiler._code`) handed with the pattern's flags and
groups to `_sre.compile`, which checks the program and makes the `Pattern`. `prime` gives
`re._cache` the programs a process of the same subcommand stored before (group "re run"
of the table of compiled code, pisa_mm/codecache.py: sealed, and only read by the same
Python), each made by `_sre.compile` from exactly what `_compiler.compile` would give it, so
that `re.compile` returns an equal `Pattern` (same pattern, flags and program:
`Pattern.__eq__` compares them) without compiling. A pattern is made when `re` first asks
for it, so the group written back at exit when some pattern missed holds what this process
used (as the code groups do), each program computed once. Only under CPython 3.11, whose
`re` this follows; elsewhere `prime` does nothing.
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


def prime(command: str) -> None:
    """Give `re`'s cache the programs stored by earlier processes of the subcommand `command`
    (once per process). A group per subcommand: each compiles its own few dozen."""
    cache = getattr(re, "_cache", None)
    if sys.version_info[:2] != (3, 11) or type(cache) is not dict:  # another Python, or primed
        return
    import atexit

    from pisa_mm.codecache import CODES

    group = f"re {command}"
    primed = _Cache(cache, CODES.group(group))
    re._cache = primed  # type: ignore[attr-defined]
    atexit.register(_save, command, primed)


class _Cache(dict[Any, Any]):
    """`re._cache` (type, pattern, flags) -> `Pattern`, which makes a pattern it lacks from
    its stored program, if there is one, before `re` compiles it (`re._compile` reads the
    cache by subscript: a miss calls `__missing__`, a KeyError from it compiles). Only what
    is asked for is made: a group may hold what a cold run compiled (lark's patterns, when
    a model was parsed) that warm runs never use."""

    def __init__(self, entries: dict[Any, Any], stored: dict[Any, Any]) -> None:
        super().__init__(entries)
        self.stored = stored  # (pattern, flags) -> program
        self.made: set[_Key] = set()  # what was made from a stored program
        # what was compiled before priming (pip's console script tidies `sys.argv[0]` with
        # `re.sub`): no stored program could have made it, so it is never a miss
        self.early: set[_Key] = {(p, f) for kind, p, f in entries if kind is str}

    def __missing__(self, key: Any) -> Any:
        kind, pattern, flags = key
        program = self.stored.get((pattern, flags)) if kind is str else None
        if program is None or not isinstance(flags, int) or flags & _UNCACHED:
            raise KeyError(key)
        from _sre import compile as sre_compile  # type: ignore[import-not-found]

        try:
            made_flags, code, *rest = program
            # the program's words as C unsigned ints (SRE_CODE): unmarshalled as one bytes
            # object where a list of ints is an object per word
            made = sre_compile(pattern, made_flags, memoryview(code).cast("I").tolist(), *rest)
        except Exception:  # a program `_sre` refuses (its own check), a malformed entry
            raise KeyError(key) from None
        if len(self) >= getattr(re, "_MAXCACHE", 512):  # re's bound, as re keeps it
            del self[next(iter(self))]
        self[key] = made
        self.made.add((pattern, flags))
        return made


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


def _save(command: str, cache: _Cache) -> None:
    """Store the programs of the patterns this process used, if it compiled any and
    `command` is a subcommand (not a mistyped word, whose group would stay in the table)."""
    cli = sys.modules.get("pisa_mm.cli")
    if command not in getattr(cli, "SUBCOMMANDS", ()) or getattr(re, "_cache", None) is not cache:
        return
    keys = [
        (pattern, flags)
        for kind, pattern, flags in list(cache)
        if kind is str and isinstance(flags, int) and not flags & _UNCACHED
    ]
    # A pattern compiled before `prime` is no miss: counted as one, every run of pip's
    # script wrote the table again (28 M instructions, a tenth of a one-test run). A stored
    # program that `_sre` refused still is one, and is written anew.
    if all(key in cache.made or key in cache.early for key in keys):
        return
    table: dict[Any, Any] = {}
    for key in keys:
        made = cache.stored.get(key) if key in cache.made else None
        if made is None:
            try:
                flags, code, *rest = program(*key)
            except Exception:  # a pattern re compiled once cannot fail again; if it does, skip
                continue
            words = b"".join(word.to_bytes(4, sys.byteorder) for word in code)
            made = (flags, words, *rest)
        table[key] = made
    from pisa_mm.codecache import CODES

    CODES.replace(f"re {command}", table)
