"""`compiled`: Python source generated at run time, compiled once and kept in the user's cache.

(`stored` keeps other code the same way: pisa-mm's own modules when Python writes no .pyc
files, pisa_mm/finder.py.) Two modules generate source and run it: `records.py` (the
methods `dataclasses` writes for each `@record`) and `cat/inline.py` (one function per
dynamic cat definition or check).
Compiling it is most of what they cost at start-up, so both take their code objects from
here: one marshal table in the cache (pisa_mm/cache.py, entry `code-5-cpython-311.marshal`: the
table's format and the Python that compiled it are in the name), group ->
the marshalled bytes of that group's own table (source text -> code object). The file is read on
first use, but a group is unmarshalled only when it is first asked for (a process uses a few
of the groups that all processes wrote), and the table is written back atomically at exit
when some source was not in it. The key is the source text itself, so an edited class or
model finds no entry and is compiled anew; the table records the Python that compiled it (and
its own format) and is ignored under another one (marshal's format and the bytecode change
between versions).

A group is what one process uses whole: records.py's groups are modules (all of a module's
classes are made at its import), inline.py's are the cat models (one group per model: its
generated functions). When a group misses, the table keeps for it only the code this process
used, so that the entries an edit made stale are dropped, not kept forever; the other groups
keep what they had, unread.
"""

from __future__ import annotations

import contextlib
import marshal
import os
import sys
import threading
from collections.abc import Callable
from types import CodeType

from pisa_mm.hints import Any

__all__ = ["compiled", "stored"]

# The table's format: "5", a group's table marshalled on its own after its digest (`_sealed`),
# records made from templates.
_FORMAT = "5"
# The cache entry's name carries the format and the bytecode's tag: two installed versions of
# another format or Python (two venvs, a CI matrix) each keep their own table, where one shared
# entry was replaced by each in turn, and every run of either started cold.
ENTRY = f"code-{_FORMAT}-{sys.implementation.cache_tag}.marshal"
# What its code objects depend on besides their text (checked when the table is read).
_PYTHON = f"{_FORMAT} {sys.version} {sys.implementation.cache_tag}"
# The entries of earlier formats (records.py's own table, then one table for every format and
# Python): removed on the first write, so an upgrade leaves no stale megabyte behind.
_OLD_ENTRIES = ("records.marshal", "code.marshal", f"code-4-{sys.implementation.cache_tag}.marshal")
# The bytes of a group's digest (pisa_mm/cache.py's `seal`), before its marshalled table.
_DIGEST = 16
# The bytes of the groups a process did not use that the table keeps when it is written,
# the most recently written first. A group per model file run (tests generate thousands):
# unbounded, the table reached 5 MB on a developer's machine, read at every start and
# written again at each miss (440 M instructions more for a one-test run).
TABLE_BYTES = 2 << 20

_Group = dict[str, CodeType]


class Codes:
    """The compiled code by group and source text: that read from the cache (each group
    unmarshalled on first use), and that this process used (what is written back for the
    groups that missed)."""

    def __init__(self) -> None:
        self.stored: dict[str, bytes] | None = None  # group -> its marshalled table
        self.groups: dict[str, _Group] = {}  # the groups unmarshalled so far
        self.used: dict[str, _Group] = {}
        self.missed: set[str] = set()  # the groups with a source not in the cache
        # reentrant: loading the table imports pisa_mm.cache, which could one day define a
        # record of its own
        self._lock = threading.RLock()
        # reading or writing the table: code asked for meanwhile (a module that the reading
        # or writing imports, pisa_mm/finder.py) is made and not kept
        self._busy = False

    def load(self) -> dict[str, bytes]:
        """The table read from the cache: group -> its marshalled table (not yet read)."""
        if self.stored is None:
            self._busy = True
            try:
                self.stored = self._read()
            finally:
                self._busy = False
        return self.stored

    def _read(self) -> dict[str, bytes]:
        from pisa_mm.cache import read_entry

        data = read_entry(ENTRY)
        if data is None:
            return {}
        try:
            python, table = marshal.loads(data)
        # a truncated, foreign or damaged entry (marshal raises SystemError and MemoryError on
        # some damaged bytes)
        except Exception:
            return {}
        return table if python == _PYTHON and isinstance(table, dict) else {}

    def group(self, name: str) -> _Group:
        """The code stored for group `name` (source text -> code), unmarshalled on first use."""
        codes = self.groups.get(name)
        if codes is None:
            codes = {}
            data = self.load().get(name)
            # only bytes whose digest holds: marshal checks nothing, and a damaged code
            # object can answer wrongly or crash the interpreter when it runs
            if isinstance(data, bytes) and data[:_DIGEST] == _digest(data[_DIGEST:]):
                with contextlib.suppress(Exception):
                    table = marshal.loads(data[_DIGEST:])
                    if isinstance(table, dict):
                        codes = table
            self.groups[name] = codes
        return codes

    def compiled(self, key: str, group: str, make: Callable[[], CodeType]) -> CodeType:
        """The code stored under `key` in `group`, else `make()`'s, stored at exit."""
        with self._lock:
            if self._busy:
                return make()
            used = self.used.setdefault(group, {})
            # what this process compiled comes first: a source the table lacks would be
            # compiled again at each use (cat/inline.py asks once per evaluator, i.e. per
            # test) until a process that exits normally saves it, and a pool's workers never
            # do, so with --jobs N they compiled on every test (0.9 G instructions a worker
            # on 153 small tests, measured with callgrind)
            code = used.get(key) or self.group(group).get(key)
            if code is None:
                code = make()
                if not self.missed:
                    import atexit

                    atexit.register(self.save)
                self.missed.add(group)
            used[key] = code
            return code

    def replace(self, group: str, table: dict[Any, Any]) -> None:
        """Store `table` as `group`'s, written now: for a caller that makes a group whole at
        exit (pisa_mm/regexes.py), whose exit hook may run after `save`'s."""
        with self._lock:
            self.groups[group] = self.used[group] = table
            self.missed.add(group)
            self.save()

    def save(self) -> None:
        """Write the table back: the groups with a miss get the code this process used
        (dropping what an edit made stale), the others keep their bytes as they were."""
        from pisa_mm.cache import cache_dir, write_entry

        with self._lock:
            if not self.missed:
                return
            stored = self.load()
            # The groups of this process last (the order of a marshalled dict is kept), the
            # others before them, most recently written last, down to TABLE_BYTES.
            others = [(g, data) for g, data in stored.items() if g not in self.used]
            kept, size = [], 0
            for group, data in reversed(others):
                size += len(data) if isinstance(data, bytes) else 0
                if size > TABLE_BYTES:
                    break
                kept.append((group, data))
            table = dict(reversed(kept))
            for group in self.used:
                if group in self.missed:
                    code = marshal.dumps(self.used[group])
                    table[group] = _digest(code) + code
                elif group in stored:
                    table[group] = stored[group]
            self._busy = True  # writing imports modules (pisa_mm/runner/files.py)
            try:
                write_entry(ENTRY, marshal.dumps((_PYTHON, table)))
            finally:
                self._busy = False
            self.stored, self.missed = table, set()
            directory = cache_dir()
            if directory is not None:
                for old in _OLD_ENTRIES:
                    with contextlib.suppress(OSError):
                        os.unlink(os.path.join(directory, old))


def _digest(data: bytes) -> bytes:
    from pisa_mm.cache import seal

    return seal(data)


CODES = Codes()


def compiled(source: str, group: str, filename: str) -> CodeType:
    """`compile(source, filename, "exec")`, or the code a process compiled from the same
    `source` in `group` before (its `co_filename` is the one it was compiled with)."""
    # dont_inherit: compiled as `exec(source)` would, not under this module's `__future__`
    # imports (which would turn annotations into strings)
    return CODES.compiled(
        source, group, lambda: compile(source, filename, "exec", dont_inherit=True)
    )


def stored(key: str, group: str, make: Callable[[], CodeType]) -> CodeType:
    """`make()`, or the code a process stored under `key` in `group` before: for code whose
    key is not its source (pisa_mm/finder.py: a module file's size and time)."""
    return CODES.compiled(key, group, make)
