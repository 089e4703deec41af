"""A script run in a fresh interpreter, for the tests of what a process does from its start
(its imports, records, enums, the package's finder): a bare environment, so that nothing of
the test run's own (PYTHONPATH, a cache, PYTHONDONTWRITEBYTECODE) changes what it sees, and
a cache directory of the test's own."""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path
from typing import Any

__all__ = ["run_script"]

ROOT = Path(__file__).resolve().parents[1]


def run_script(script: str, cache: Path, **env: str) -> Any:
    """What `script`, run by `python -c` in the repository's root with `cache` as the cache
    directory and `env` added to a bare environment, prints as JSON."""
    done = subprocess.run(
        [sys.executable, "-c", script],
        capture_output=True,
        text=True,
        check=True,
        cwd=ROOT,
        env={"PATH": "/usr/bin:/bin", "XDG_CACHE_HOME": str(cache), **env},
    )
    return json.loads(done.stdout)
