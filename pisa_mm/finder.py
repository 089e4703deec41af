"""The finder of pisa_mm's own modules: each found and its bytecode read in a few calls.

A `pisa-mm` run imports ~85 of the package's modules, and the import system's generic path
costs ~300,000 instructions for each, even an empty one (docs/architecture.md "Start-up"):
the path finder's directory check and its loop over every file suffix, `spec_from_file_location`,
the bytecode file's name worked out from the source's, its header read and checked in
Python. This finder, first on `sys.meta_path`, knows what the package is: a tree of `.py`
files and their `__pycache__/*.pyc`. For `pisa_mm.x.y` it looks `y` up in the listing of
the directory `pisa_mm/x` (read once), reads `y.py`'s size and time and the bytecode file,
and checks its header as the import system does (a timestamp `.pyc` of this Python, made
from this source); the spec and the module are then the ones the path finder would make
(`__file__`, `__cached__`, `__path__`, a `SourceFileLoader`). Anything else it leaves to the
import system, which then does what it always did: another name, a package directory
beside a module of the same name, an extension module, a `.pyc` that is missing, stale,
hash-based or of another Python, `sys.pycache_prefix` or `-O`. Where Python writes no `.pyc`
files, a missing or stale one is replaced by the code kept in the cache (`_from_table`).
"""

from __future__ import annotations

import gc
import marshal
import os
import sys

# the import system's own modules (always loaded: `importlib` is not, and costs an import)
from _frozen_importlib import ModuleSpec
from _frozen_importlib_external import MAGIC_NUMBER, SourceFileLoader
from types import CodeType, ModuleType

from pisa_mm.hints import TYPE_CHECKING, Any

if TYPE_CHECKING:
    from typing import ClassVar

__all__ = ["install"]

_PACKAGE = "pisa_mm"
_ROOT = os.path.dirname(os.path.abspath(__file__))
_TAG = sys.implementation.cache_tag
# the suffixes the path finder tries before `.py`: a module that is one is left to it
_EXTENSIONS: tuple[str, ...] = ()


class _Loader(SourceFileLoader):
    """`SourceFileLoader` (source, resources, `get_code` as usual), whose first
    `exec_module` runs the code the finder has read."""

    def __init__(self, fullname: str, path: str, code: CodeType) -> None:
        super().__init__(fullname, path)
        self.code: CodeType | None = code

    def exec_module(self, module: ModuleType) -> None:
        code, self.code = self.code, None
        if code is None:  # a reload: read again
            super().exec_module(module)
            return
        # A module's body makes long-lived objects (classes, functions, tables): a collection
        # while it runs finds next to nothing, and the modules a command imports after
        # `cli.main` froze the start-up's (the engine's, the model's, the events') ran ~10 of
        # them. What garbage the body leaves is found by the first collection after it.
        collecting = gc.isenabled()
        gc.disable()
        try:
            exec(code, module.__dict__)
        finally:
            if collecting:
                gc.enable()


class Finder:
    """The meta-path finder of `pisa_mm.*` (a class: the import system calls its methods)."""

    # directory -> the names in it (`importlib.invalidate_caches` empties it)
    listings: ClassVar[dict[str, frozenset[str]]] = {}

    @classmethod
    def find_spec(
        cls, fullname: str, path: Any = None, target: ModuleType | None = None
    ) -> ModuleSpec | None:
        if not fullname.startswith("pisa_mm.") or sys.pycache_prefix or sys.flags.optimize:
            return None
        parts = fullname.split(".")
        directory = os.path.join(_ROOT, *parts[1:-1])
        tail = parts[-1]
        names = cls.listings.get(directory)
        if names is None:
            try:
                names = cls.listings[directory] = frozenset(os.listdir(directory))
            except OSError:
                return None
        if tail in names:  # a package (or a name the path finder must judge)
            source = os.path.join(directory, tail, "__init__.py")
            cached = os.path.join(directory, tail, "__pycache__", f"__init__.{_TAG}.pyc")
            package = True
        elif tail + ".py" in names:
            source = os.path.join(directory, tail + ".py")
            cached = os.path.join(directory, "__pycache__", f"{tail}.{_TAG}.pyc")
            package = False
        else:
            return None
        for suffix in _EXTENSIONS:
            if tail + suffix in names:
                return None
        code = _read(source, cached)
        if code is None:
            code = _from_table(fullname, source)
        if code is None:
            return None
        spec = ModuleSpec(fullname, _Loader(fullname, source, code), origin=source)
        spec.has_location = True
        spec.cached = cached
        if package:
            spec.submodule_search_locations = [os.path.dirname(source)]
        return spec

    @classmethod
    def invalidate_caches(cls) -> None:
        cls.listings.clear()


def _read(source: str, cached: str) -> CodeType | None:
    """The code in `cached` if it is the timestamp bytecode of `source` for this Python; that
    compiled from `source` when `cached` claims to be (its header holds) but its body is
    damaged (truncated, garbage, no code object): the import system would read the same
    bytes, and its loader raises on them (EOFError, "bad marshal data") where it could have
    compiled the source."""
    try:
        st = os.stat(source)
        fd = os.open(cached, os.O_RDONLY | os.O_CLOEXEC)
    except OSError:
        return None
    try:
        size = os.fstat(fd).st_size
        data = os.read(fd, size)
        while len(data) < size and (more := os.read(fd, size - len(data))):
            data += more
    except OSError:
        return None
    finally:
        os.close(fd)
    # the header: magic, flags (0: checked by timestamp), the source's mtime and size
    if (
        data[:4] != MAGIC_NUMBER
        or data[4:8] != b"\0\0\0\0"
        or int.from_bytes(data[8:12], "little") != int(st.st_mtime) & 0xFFFFFFFF
        or int.from_bytes(data[12:16], "little") != st.st_size & 0xFFFFFFFF
    ):
        return None
    try:
        code = marshal.loads(memoryview(data)[16:])
    # damaged bytes: marshal also raises SystemError, MemoryError, IndexError on some
    except Exception:
        code = None
    if isinstance(code, CodeType):
        return code
    try:
        with open(source, "rb") as fh:
            text = fh.read()
        compiled: CodeType = compile(text, source, "exec", dont_inherit=True)
    except (OSError, SyntaxError, ValueError):
        return None
    return compiled


def _from_table(fullname: str, source: str) -> CodeType | None:
    """Where Python writes no `.pyc` files (PYTHONDONTWRITEBYTECODE, which containers and CI
    images often set), the code of `source` from the cache's code table (pisa_mm/codecache.py,
    a group per module file), keyed by its size and time as a `.pyc` file is: compiled once
    and kept there, not compiled at every run. An editable install (the README's) has no
    `.pyc` files of its own then, and compiling the package made a one-test run three times
    as long (190 ms against 60 ms). None (the import system compiles the source, as it always
    did) where Python writes `.pyc` files, and for the table's own module and those it
    imports."""
    if not sys.dont_write_bytecode or fullname == "pisa_mm.codecache":
        return None
    table = sys.modules.get("pisa_mm.codecache")
    if table is None:
        import pisa_mm.codecache as table
    stored = getattr(table, "stored", None)  # (None while it is imported)
    if stored is None:
        return None
    try:
        st = os.stat(source)
    except OSError:
        return None

    def make() -> CodeType:
        with open(source, "rb") as fh:
            text = fh.read()
        made: CodeType = compile(text, source, "exec", dont_inherit=True)
        return made

    code: CodeType = stored(f"{st.st_mtime_ns} {st.st_size}", f"module {source}", make)
    return code


def install() -> None:
    """Put the finder first on `sys.meta_path` (once)."""
    global _EXTENSIONS
    if Finder not in sys.meta_path:
        import _imp

        _EXTENSIONS = tuple(_imp.extension_suffixes())
        sys.meta_path.insert(0, Finder)
