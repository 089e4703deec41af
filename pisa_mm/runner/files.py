"""Every file pisa-mm writes goes through `write_atomic`; `check_outputs` vets the paths first.

A write goes to a temporary file in the target's directory, is flushed to disk, and is then
renamed over the target: an interrupt, a crash or a full disk leaves the old file or the new
one, never an empty or partial one.
"""

from __future__ import annotations

import contextlib
import os
from collections.abc import Iterable
from pathlib import Path

from pisa_mm.errors import PisaMMError

__all__ = ["check_outputs", "write_atomic"]


def _umask() -> int:
    mask = os.umask(0)
    os.umask(mask)
    return mask


def write_atomic(path: str | Path, data: str | bytes) -> None:
    """Replace the file at `path` with `data` (text is written as UTF-8), atomically; its
    directory is created when missing (reports and graphs go to directories of their own)."""
    import tempfile  # only when writing (it imports random)

    target = Path(path)
    raw = data.encode("utf-8") if isinstance(data, str) else data
    try:
        mode = target.stat().st_mode & 0o777
    except OSError:
        mode = 0o666 & ~_umask()
    tmp: str | None = None
    try:
        target.parent.mkdir(parents=True, exist_ok=True)
        fd, tmp = tempfile.mkstemp(dir=target.parent, prefix=f".{target.name}.", suffix=".tmp")
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


def check_outputs(outputs: Iterable[str | None], inputs: Iterable[str]) -> None:
    """Before any work: each output path (None and `-`, stdout, skipped) must be writable and
    must not be one of the run's own inputs, nor a directory."""
    files = [out for out in outputs if out is not None and out != "-"]
    if not files:
        return  # resolving thousands of inputs costs more than a small test's run
    inputs_resolved = {Path(p).resolve() for p in inputs}
    for out in files:
        p = Path(out)
        if p.resolve() in inputs_resolved:
            raise PisaMMError.at(None, f"refusing to write over an input of this run: {out}", "io")
        if p.is_dir():
            raise PisaMMError.at(None, f"cannot write {out}: it is a directory", "io")
        parent = p.parent if str(p.parent) else Path(".")
        if not parent.is_dir():
            raise PisaMMError.at(None, f"cannot write {out}: no directory {parent}", "io")
        if not os.access(parent, os.W_OK) or (p.exists() and not os.access(p, os.W_OK)):
            raise PisaMMError.at(None, f"cannot write {out}: permission denied", "io")
