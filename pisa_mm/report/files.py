"""Writing report files atomically: a temporary file beside the target, then os.replace."""

from __future__ import annotations

import os
import tempfile
from pathlib import Path

from pisa_mm.errors import PisaMMError

__all__ = ["write_atomic"]


def write_atomic(path: str | Path, data: str | bytes) -> None:
    """Write `data` to `path` so that a reader sees the old file or the whole new one."""
    target = Path(path)
    raw = data.encode("utf-8") if isinstance(data, str) else data
    try:
        target.parent.mkdir(parents=True, exist_ok=True)
        fd, tmp = tempfile.mkstemp(dir=target.parent, prefix=f".{target.name}.", suffix=".tmp")
        try:
            with os.fdopen(fd, "wb") as fh:
                fh.write(raw)
            os.chmod(tmp, 0o666 & ~_umask())  # mkstemp makes it private; a report is not
            os.replace(tmp, target)
        except BaseException:
            os.unlink(tmp)
            raise
    except OSError as exc:
        raise PisaMMError.at(None, f"cannot write {path}: {exc}", "io") from exc


def _umask() -> int:
    mask = os.umask(0)
    os.umask(mask)
    return mask
