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
import sys
from collections.abc import Callable, Iterable
from typing import TypeVar

__all__ = ["cache_dir", "lark_cache", "pickled", "read_entry", "write_entry"]

T = TypeVar("T")

# Set to anything but "" or "0" to read and write no cache file.
DISABLE_VARIABLE = "PISA_MM_NO_CACHE"


def cache_dir() -> str | None:
    """The cache directory, private to the user (made when missing); None when caching is
    off or the directory cannot be made or written. (A string: pathlib, with the
    `urllib.parse` and `ipaddress` it imports, would cost a run a few ms.)"""
    if os.environ.get(DISABLE_VARIABLE, "") not in ("", "0"):
        return None
    base = os.environ.get("XDG_CACHE_HOME") or os.path.join(os.path.expanduser("~"), ".cache")
    directory = os.path.join(base, "pisa-mm")
    try:
        os.makedirs(directory, mode=0o700, exist_ok=True)
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
    return os.path.join(directory, f"{name}-{version}.lark")


def digest(parts: Iterable[str | bytes]) -> str:
    """A hash of `parts` (with pisa-mm's and Python's versions), for a cache key."""
    # BLAKE2b from CPython's own module: hashlib loads OpenSSL first (a few ms of every
    # start-up), and SHA-256 takes 3-4 times as long over the ~175 kB of the cat package
    # that a shipped model's key reads on every run
    try:
        from _blake2 import blake2b
    except ImportError:  # a Python built without it
        from hashlib import blake2b

    from pisa_mm import __version__

    h = blake2b(f"pisa-mm {__version__} python {sys.version}".encode(), digest_size=32)
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
    name = f"{kind}-{key[:32]}.pickle"
    path = os.path.join(directory, name)
    with contextlib.suppress(Exception):  # a missing, truncated or stale entry
        # `_pickle`, not `pickle`: its Python module (with `struct` and the compatibility
        # tables) is only needed to write
        from _pickle import load

        with open(path, "rb") as fh:
            stored_key, value = load(fh)
        if stored_key == key:
            return value  # type: ignore[no-any-return]
    value = build()
    import pickle

    from pisa_mm.errors import PisaMMError
    from pisa_mm.runner.files import write_atomic

    with contextlib.suppress(PisaMMError, pickle.PicklingError, TypeError, AttributeError):
        write_atomic(path, pickle.dumps((key, value), protocol=pickle.HIGHEST_PROTOCOL))
        with contextlib.suppress(OSError):
            for stale in os.listdir(directory):
                if not (stale.startswith(f"{kind}-") and stale.endswith(".pickle")):
                    continue
                rest = stale[len(kind) + 1 : -len(".pickle")]
                if stale != name and len(rest) == 32 and "-" not in rest:  # not `{kind}-rc11-...`
                    with contextlib.suppress(OSError):
                        os.unlink(os.path.join(directory, stale))
    return value


def read_entry(name: str) -> bytes | None:
    """The bytes of the cache file `name`, or None (no cache, no such file, unreadable); the
    caller checks that they are still valid (pisa_mm/codecache.py)."""
    directory = cache_dir()
    if directory is None:
        return None
    try:
        with open(os.path.join(directory, name), "rb") as fh:
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
        write_atomic(os.path.join(directory, name), data)
