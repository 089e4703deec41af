"""Where pisa-mm keeps files that only save time (lark's parse tables, compiled models, the
code of generated Python source): the user's cache dir, `$XDG_CACHE_HOME/pisa-mm` (else
`~/.cache/pisa-mm`); `PISA_MM_NO_CACHE=1` turns it off.

Nothing here changes a result: every entry is keyed by everything that made it (the inputs'
text or its hash, the code that built it, pisa-mm's and Python's versions), and a missing,
stale, unreadable or unwritable entry only means the work is done again.
"""

from __future__ import annotations

import contextlib
import os
import pickle
import sys
from collections.abc import Callable, Iterable
from pathlib import Path
from typing import TypeVar

__all__ = ["cache_dir", "lark_cache", "pickled", "read_entry", "write_entry"]

T = TypeVar("T")

# Set to anything but "" or "0" to read and write no cache file.
DISABLE_VARIABLE = "PISA_MM_NO_CACHE"


def cache_dir() -> Path | None:
    """The cache directory, private to the user (made when missing); None when caching is
    off or the directory cannot be made or written."""
    if os.environ.get(DISABLE_VARIABLE, "") not in ("", "0"):
        return None
    base = os.environ.get("XDG_CACHE_HOME") or os.path.join(os.path.expanduser("~"), ".cache")
    directory = Path(base) / "pisa-mm"
    try:
        directory.mkdir(mode=0o700, parents=True, exist_ok=True)
        if not os.access(directory, os.W_OK):
            return None
    except OSError:
        return None
    return directory


def lark_cache(name: str) -> str | bool:
    """A cache file for lark (`Lark(cache=...)`), private to the user.

    Not lark's default (a predictable name in the shared temp dir, which another user could
    plant a pickle at). lark checks the grammar's hash on load and rebuilds when it
    differs. False (no cache) when there is no cache directory.
    """
    directory = cache_dir()
    if directory is None:
        return False
    import lark

    version = f"{lark.__version__}-py{sys.version_info[0]}{sys.version_info[1]}"
    return str(directory / f"{name}-{version}.lark")


def digest(parts: Iterable[str | bytes]) -> str:
    """A hash of `parts` (with pisa-mm's and Python's versions), for a cache key."""
    try:  # CPython's own SHA-256: hashlib loads OpenSSL first, a few ms of every start-up
        from _sha256 import sha256  # type: ignore[import-not-found]
    except ImportError:  # another Python (3.12 names it _sha2)
        from hashlib import sha256

    from pisa_mm import __version__

    h = sha256(f"pisa-mm {__version__} python {sys.version}".encode())
    for part in parts:
        data = part.encode("utf-8") if isinstance(part, str) else part
        h.update(len(data).to_bytes(8, "little"))
        h.update(data)
    hexdigest: str = h.hexdigest()
    return hexdigest


def pickled(kind: str, key: str, build: Callable[[], T]) -> T:
    """`build()`, or the value a previous `build()` with the same `key` pickled to the cache.

    The entry is written atomically (runner/files.write_atomic), so a concurrent reader
    sees a whole entry or none, and the entries of `kind` with other keys are removed (an
    upgrade or an edit of the inputs leaves one file, not one per version). Only the user
    can write the directory (0700): the pickle is as trusted as the code. An entry that
    fails to load is built again and replaced."""
    directory = cache_dir()
    if directory is None:
        return build()
    path = directory / f"{kind}-{key[:32]}.pickle"
    with contextlib.suppress(Exception):  # a missing, truncated or stale entry
        with open(path, "rb") as fh:
            stored_key, value = pickle.load(fh)
        if stored_key == key:
            return value  # type: ignore[no-any-return]
    value = build()
    from pisa_mm.errors import PisaMMError
    from pisa_mm.runner.files import write_atomic

    with contextlib.suppress(PisaMMError, pickle.PicklingError, TypeError, AttributeError):
        write_atomic(path, pickle.dumps((key, value), protocol=pickle.HIGHEST_PROTOCOL))
        for stale in directory.glob(f"{kind}-*.pickle"):
            rest = stale.name[len(kind) + 1 : -len(".pickle")]
            if stale != path and len(rest) == 32 and "-" not in rest:  # not `{kind}-rc11-...`
                with contextlib.suppress(OSError):
                    stale.unlink()
    return value


def read_entry(name: str) -> bytes | None:
    """The bytes of the cache file `name`, or None (no cache, no such file, unreadable); the
    caller checks that they are still valid (pisa_mm/codecache.py)."""
    directory = cache_dir()
    if directory is None:
        return None
    try:
        with open(directory / name, "rb") as fh:
            return fh.read()
    except OSError:
        return None


def write_entry(name: str, data: bytes) -> None:
    """Replace the cache file `name` with `data`, atomically; a failure only means that the
    next run does the work again."""
    directory = cache_dir()
    if directory is None:
        return
    from pisa_mm.errors import PisaMMError
    from pisa_mm.runner.files import write_atomic

    with contextlib.suppress(PisaMMError):
        write_atomic(directory / name, data)
