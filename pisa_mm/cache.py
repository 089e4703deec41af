"""Where pisa-mm keeps files that only save time (lark's parse tables, compiled models, the
code of generated Python source): the user's cache dir, `$XDG_CACHE_HOME/pisa-mm` (else
`~/.cache/pisa-mm`); `PISA_MM_NO_CACHE=1` turns it off.

Nothing here changes a result: every entry is keyed by everything that made it (the inputs'
text or its hash, the code that built it, pisa-mm's and Python's versions), and a missing,
stale, unreadable or unwritable entry only means the work is done again.
"""

from __future__ import annotations

import contextlib
import gc
import os
import sys
from collections.abc import Callable, Iterable

from pisa_mm.hints import TYPE_CHECKING, Any, TypeVar

if TYPE_CHECKING:
    from lark import Lark

__all__ = ["cache_dir", "lark_parser", "pickled", "read_entry", "seal", "write_entry"]

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
        # made by someone else, or writable by others (`XDG_CACHE_HOME=/tmp`, where another
        # user made `pisa-mm` first): what they plant there (a pickle) would be code this
        # process runs, and a seal anyone can compute does not stop them
        info = os.stat(directory)
        if info.st_uid != os.geteuid() or info.st_mode & 0o022:
            return None
    except OSError:
        return None
    return directory


def lark_parser(name: str, grammar: str, **options: Any) -> Lark:
    """`Lark(grammar, **options)`, or the parser a previous call with the same grammar,
    options and lark version saved to the cache (`Lark.save`: its LALR tables).

    Not lark's own `cache=` (it checks the grammar's hash, never its pickle: a flipped bit
    in the tables parsed a model differently, a silent wrong answer), nor a predictable name
    in the shared temp dir (which another user could plant a pickle at): the entry is
    sealed (`seal`) and read like every other (`read_entry`)."""
    import io

    import lark

    key = digest([grammar, lark.__version__, repr(sorted(options.items()))])
    entry = f"{name}-{key[:32]}.lark"
    data = read_entry(entry)
    if data is not None and data[:16] == seal(data[16:]):
        with contextlib.suppress(Exception):  # a stale or foreign entry: built again
            loaded: Lark = lark.Lark.load(io.BytesIO(data[16:]))
            return loaded
    parser = lark.Lark(grammar, **options)
    buffer = io.BytesIO()
    with contextlib.suppress(Exception):  # (what cannot be saved is built on each run)
        parser.save(buffer)
        raw = buffer.getvalue()
        write_entry(entry, seal(raw) + raw)
        _remove_stale(name, ".lark", entry)
    return parser


def _remove_stale(kind: str, suffix: str, keep: str) -> None:
    """Remove the entries `{kind}-KEY{suffix}` other than `keep` (an upgrade or an edit of
    the inputs leaves one file, not one per version)."""
    directory = cache_dir()
    if directory is None:
        return
    with contextlib.suppress(OSError):
        for stale in os.listdir(directory):
            if stale == keep or not (stale.startswith(f"{kind}-") and stale.endswith(suffix)):
                continue
            rest = stale[len(kind) + 1 : -len(suffix)]
            # a key, not `{kind}-rc11-KEY` (model-pisa-rc11 beside model-pisa); lark's
            # entries: also those lark's own cache wrote (`cat-1.3.1-py311.lark`)
            if (len(rest) == 32 and "-" not in rest) or suffix == ".lark":
                with contextlib.suppress(OSError):
                    os.unlink(os.path.join(directory, stale))


def digest(parts: Iterable[str | bytes]) -> str:
    """A hash of `parts` (with pisa-mm's and Python's versions), for a cache key."""
    # BLAKE2b: SHA-256 takes 3-4 times as long over the ~175 kB of the cat package that a
    # shipped model's key reads on every run
    blake2b = _blake2b()
    from pisa_mm import __version__

    h = blake2b(f"pisa-mm {__version__} python {sys.version}".encode(), digest_size=32)
    for part in parts:
        data = part.encode("utf-8") if isinstance(part, str) else part
        h.update(len(data).to_bytes(8, "little"))
        h.update(data)
    hexdigest: str = h.hexdigest()
    return hexdigest


def _blake2b() -> Callable[..., Any]:
    # BLAKE2b from CPython's own module: hashlib loads OpenSSL first (a few ms of every
    # start-up)
    try:
        from _blake2 import blake2b
    except ImportError:  # a Python built without it
        from hashlib import blake2b
    return blake2b


def seal(data: bytes) -> bytes:
    """A 16-byte digest of a cache entry's bytes, stored with them and checked on reading:
    pickle and marshal check nothing, and a damaged entry (a flipped bit) could otherwise
    load as a different model or a code object that answers wrongly or crashes."""
    digest: bytes = _blake2b()(data, digest_size=16).digest()
    return digest


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
        from _pickle import loads

        data = _read(path)
        if data is None:
            raise FileNotFoundError(path)
        stored_key, stored_seal, payload = loads(data)
        if stored_key == key and stored_seal == seal(payload):
            # what the cache holds is long-lived (a model, lark's tables): no collection while
            # it is made (the pisa model's 1,180 records ran 3)
            collecting = gc.isenabled()
            gc.disable()
            try:
                return loads(payload)  # type: ignore[no-any-return]
            finally:
                if collecting:
                    gc.enable()
    value = build()
    import pickle

    with contextlib.suppress(pickle.PicklingError, TypeError, AttributeError):
        payload = pickle.dumps(value, protocol=pickle.HIGHEST_PROTOCOL)
        entry = (key, seal(payload), payload)
        if _write(path, pickle.dumps(entry, protocol=pickle.HIGHEST_PROTOCOL)):
            _remove_stale(kind, ".pickle", name)
    return value


def read_entry(name: str) -> bytes | None:
    """The bytes of the cache file `name`, or None (no cache, no such file, unreadable); the
    caller checks that they are still valid (pisa_mm/codecache.py)."""
    directory = cache_dir()
    if directory is None:
        return None
    return _read(os.path.join(directory, name))


# A cache entry longer than this is not one pisa-mm wrote (the code table is a few MB).
MAX_ENTRY_BYTES = 64 << 20


def _read(path: str) -> bytes | None:
    """The bytes of the cache file at `path`, when it is a regular file (not a FIFO, which
    would block, nor a device such as `/dev/zero` a link may lead to) of at most
    MAX_ENTRY_BYTES; else None."""
    import stat

    try:
        fd = os.open(path, os.O_RDONLY | os.O_NONBLOCK | getattr(os, "O_CLOEXEC", 0))
    except (OSError, ValueError):
        return None
    try:
        info = os.fstat(fd)
        if not stat.S_ISREG(info.st_mode) or info.st_size > MAX_ENTRY_BYTES:
            return None
        with os.fdopen(fd, "rb", closefd=False) as fh:
            # the size fstat gave (`read(MAX_ENTRY_BYTES)` would allocate all of it first);
            # an entry that grew meanwhile is cut short, and its seal no longer holds
            data = fh.read(info.st_size + 1)
        return data if len(data) <= MAX_ENTRY_BYTES else None
    except OSError:
        return None
    finally:
        os.close(fd)


def _write(path: str, data: bytes) -> bool:
    """Replace the cache file at `path` with `data` (runner/files.write_atomic); whatever
    else holds its name in the private directory (a link, a FIFO, a device node) is removed
    first, never written through. False when it could not be written."""
    import stat

    from pisa_mm.errors import PisaMMError
    from pisa_mm.runner.files import write_atomic

    try:
        mode = os.lstat(path).st_mode
    except OSError:
        mode = None
    if mode is not None and not stat.S_ISREG(mode):
        try:
            os.unlink(path)  # a directory stays: the entry is not written
        except OSError:
            return False
    try:
        write_atomic(path, data)
    except PisaMMError:
        return False
    return True


def write_entry(name: str, data: bytes) -> None:
    """Replace the cache file `name` with `data`, atomically; a failure only means that the
    next run does the work again."""
    directory = cache_dir()
    if directory is None:
        return
    _write(os.path.join(directory, name), data)
