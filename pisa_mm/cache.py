"""Where pisa-mm keeps files that only save time (lark's parse tables): the user's cache dir."""

from __future__ import annotations

import os
import sys
from pathlib import Path

__all__ = ["lark_cache"]


def lark_cache(name: str) -> str | bool:
    """A cache file for lark (`Lark(cache=...)`), private to the user.

    Not lark's default (a predictable name in the shared temp dir, which another user could
    plant a pickle at). lark checks the grammar's hash on load and rebuilds when it
    differs. False (no cache) when the directory cannot be made.
    """
    base = os.environ.get("XDG_CACHE_HOME") or os.path.join(os.path.expanduser("~"), ".cache")
    directory = Path(base) / "pisa-mm"
    try:
        directory.mkdir(mode=0o700, parents=True, exist_ok=True)
        if not os.access(directory, os.W_OK):
            return False
    except OSError:
        return False
    import lark

    version = f"{lark.__version__}-py{sys.version_info[0]}{sys.version_info[1]}"
    return str(directory / f"{name}-{version}.lark")
