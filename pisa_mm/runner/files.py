"""Every file pisa-mm writes goes through `write_atomic`; `check_outputs` vets the paths first.

A write goes to a temporary file in the target's directory, is flushed to disk, and is then
renamed over the target: an interrupt, a crash or a full disk leaves the old file or the new
one, never an empty or partial one.
"""

from __future__ import annotations

import contextlib
import os
import stat
from collections.abc import Iterable

from pisa_mm.errors import PisaMMError, clip
from pisa_mm.hints import TYPE_CHECKING

# pathlib (with the `urllib.parse` and `ipaddress` it imports) only when a file is written:
# a run imports this module whatever it writes
if TYPE_CHECKING:
    from pathlib import Path

    from pisa_mm.cat.syntax import Model

__all__ = ["OutputDir", "check_outputs", "model_files", "not_regular", "write_atomic"]

_KINDS = (
    (stat.S_ISBLK, "a block device"),
    (stat.S_ISFIFO, "a FIFO"),
    (stat.S_ISSOCK, "a socket"),
    (stat.S_ISDIR, "a directory"),
)


def _mode(path: str | Path) -> int | None:
    try:
        return os.stat(path).st_mode
    except (OSError, ValueError):
        return None


def not_regular(path: str | Path) -> str | None:
    """What `path` is when it exists and can be neither replaced nor written into (symlinks
    followed), e.g. "a FIFO" (a write would wait for a reader); else None. A character
    device (`/dev/null`) is written into, never replaced: renaming a new file over it would
    replace the device itself (as root, for every process of the machine)."""
    mode = _mode(path)
    if mode is None:
        return None
    return next((what for test, what in _KINDS if test(mode)), None)


def _umask() -> int:
    mask = os.umask(0)
    os.umask(mask)
    return mask


def write_atomic(path: str | Path, data: str | bytes) -> None:
    """Replace the file at `path` with `data` (text is written as UTF-8), atomically; its
    directory is created when missing (reports and graphs go to directories of their own).
    A Ctrl-C or SIGTERM during the write takes effect once the temporary file has been
    renamed into place or removed (runner/guard.signals_deferred)."""
    from pathlib import Path

    from pisa_mm.runner.guard import signals_deferred

    target = Path(path)
    # a file name that is no UTF-8 (`bad\xff.litmus`) reaches reports as surrogates: written
    # as `\udcff`, so that a report is always UTF-8 text
    raw = data.encode("utf-8", "backslashreplace") if isinstance(data, str) else data
    if what := not_regular(target):
        raise PisaMMError.at(None, f"cannot write {path}: it is {what}", "io")
    if (mode := _mode(target)) is not None and stat.S_ISCHR(mode):
        _write_device(target, raw)
        return
    try:
        mode = target.stat().st_mode & 0o777
    except OSError:
        mode = 0o666 & ~_umask()
    with signals_deferred():
        _replace(target, raw, mode, path)


def _replace(target: Path, raw: bytes, mode: int, path: str | Path) -> None:
    # The temporary file's name is known before the file exists: an exception raised in
    # this thread at any moment (a deadline's OutOfTime) still leaves it to be removed.
    tmp: str | None = None
    try:
        target.parent.mkdir(parents=True, exist_ok=True)
        stem = _tmp_stem(target.name)
        for _ in range(100):
            tmp = str(target.parent / f".{stem}.{os.urandom(6).hex()}.tmp")
            try:
                fd = os.open(tmp, _CREATE, 0o600)
                break
            except FileExistsError:
                tmp = None
        else:
            raise FileExistsError(17, "no free temporary name")
        with os.fdopen(fd, "wb") as fh:
            fh.write(raw)
            fh.flush()
            os.fsync(fh.fileno())
        os.chmod(tmp, mode)
        os.replace(tmp, target)
        tmp = None
    except OSError as exc:
        raise PisaMMError.at(None, f"cannot write {path}: {exc.strerror or exc}", "io") from None
    finally:
        if tmp is not None:
            with contextlib.suppress(OSError):
                os.unlink(tmp)


# A file name's limit in bytes on Linux, macOS and the BSDs (NAME_MAX); the temporary name
# adds 18 bytes to the target's, so a target whose name is near it has its stem clipped.
_NAME_MAX = 255
_TMP_EXTRA = len(".") + 1 + 12 + len(".tmp")


def _tmp_stem(name: str) -> str:
    """`name`, clipped so that `.{stem}.{12 hex digits}.tmp` is at most _NAME_MAX bytes."""
    raw = os.fsencode(name)
    if len(raw) + _TMP_EXTRA <= _NAME_MAX:
        return name
    # a cut inside a UTF-8 sequence leaves surrogate escapes: still a valid name's bytes
    return os.fsdecode(raw[: _NAME_MAX - _TMP_EXTRA])


_CREATE = os.O_WRONLY | os.O_CREAT | os.O_EXCL | getattr(os, "O_NOFOLLOW", 0) | os.O_CLOEXEC


def model_files(*models: Model) -> list[str]:
    """The files loaded models were read from (their own and those they included): inputs
    a run must not write over."""
    return [name for m in models for name in (m.path, *m.sources) if name]


def _write_device(target: Path, raw: bytes) -> None:
    try:
        with open(target, "wb") as fh:
            fh.write(raw)
    except OSError as exc:
        raise PisaMMError.at(None, f"cannot write {target}: {exc.strerror or exc}", "io") from None


# An output directory, and the suffixes of the files the run writes directly into it (an
# HTML report: `.html` pages; execution graphs: `.dot` and `.svg`).
OutputDir = tuple[str | None, tuple[str, ...]]


def check_outputs(
    outputs: Iterable[str | None],
    inputs: Iterable[str],
    dirs: Iterable[str | OutputDir | None] = (),
) -> None:
    """Before any work: each output file (None skipped: not asked for, or stdout) must be
    writable, must not be one of the run's own inputs, nor a directory, nor another output
    of the run (two spellings of one file, a link to it, or a file the run writes into one
    of its output directories: one report would silently replace the other); each output
    directory (`dirs`, None skipped) must be a directory or one that can be made."""
    writes: list[tuple[str, tuple[str, ...]]] = []
    files = [out for out in outputs if out is not None]
    for d in dirs:
        directory, suffixes = d if isinstance(d, tuple) else (d, ())
        if directory is not None:
            writes.append((directory, suffixes))
    if any(not name for name in (*files, *(d for d, _ in writes))):
        # `--html "$OUT"` with OUT unset: the current directory would be sprayed with files
        raise PisaMMError.at(None, "an output file or directory named by an empty string", "usage")
    for directory, _ in writes:
        _check_dir(directory)
    if not files:
        return  # resolving thousands of inputs costs more than a small test's run
    from pathlib import Path

    try:
        inputs_resolved = {Path(p).resolve() for p in inputs}
        written = {Path(d).resolve(): suffixes for d, suffixes in writes}
    except (OSError, RuntimeError):  # an input was read, so this is only a loop of links
        inputs_resolved, written = set(), {}
    seen: dict[Path, str] = {}
    for out in files:
        try:
            _check_output(out, inputs_resolved, written, seen)
        except (OSError, RuntimeError) as exc:  # a name too long, a loop of symlinks
            why = exc.strerror if isinstance(exc, OSError) and exc.strerror else "a loop of links"
            raise PisaMMError.at(None, f"cannot write {clip(out, 80)}: {why}", "io") from None


def _check_output(
    out: str,
    inputs: set[Path],
    written: dict[Path, tuple[str, ...]],
    seen: dict[Path, str],
) -> None:
    from pathlib import Path

    p = Path(out)
    real = p.resolve()
    if real in inputs:
        raise PisaMMError.at(None, f"refusing to write over an input of this run: {out}", "io")
    if real in seen:
        raise PisaMMError.at(
            None, f"two outputs of this run name one file: {seen[real]} and {out}", "usage"
        )
    seen[real] = out
    if real.suffix in written.get(real.parent, ()):
        raise PisaMMError.at(
            None,
            f"refusing to write {out}: the run writes its {real.suffix} files into "
            f"{real.parent} (another report would replace it)",
            "usage",
        )
    if what := not_regular(p):
        raise PisaMMError.at(None, f"cannot write {out}: it is {what}", "io")
    parent = p.parent if str(p.parent) else Path(".")
    if not parent.is_dir():
        raise PisaMMError.at(None, f"cannot write {out}: no directory {parent}", "io")
    if not os.access(parent, os.W_OK) or (p.exists() and not os.access(p, os.W_OK)):
        raise PisaMMError.at(None, f"cannot write {out}: permission denied", "io")


def _check_dir(directory: str) -> None:
    """`directory` is one, or can be made: its first existing ancestor is a writable one."""
    from pathlib import Path

    p = Path(directory)
    while True:
        mode = _mode(p)
        if mode is not None:
            break
        if p.parent == p:
            return
        p = p.parent
    if not stat.S_ISDIR(mode):
        what = "it" if str(p) == directory else str(p)
        raise PisaMMError.at(
            None, f"cannot write into {directory}: {what} is not a directory", "io"
        )
    if not os.access(p, os.W_OK | os.X_OK):
        raise PisaMMError.at(None, f"cannot write into {directory}: permission denied", "io")
