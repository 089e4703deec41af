"""Rendering DOT text to SVG or PNG through Graphviz's `dot` binary."""

from __future__ import annotations

import shutil
import subprocess
from pathlib import Path

from pisa_mm.errors import PisaMMError
from pisa_mm.runner.files import write_atomic

__all__ = ["FORMATS", "GRAPHVIZ_HINT", "graphviz_available", "render", "write_picture"]

FORMATS = ("svg", "png")
GRAPHVIZ_HINT = "install Graphviz (Debian/Ubuntu: apt-get install graphviz)"
# A picture of a litmus execution renders in well under a second; this only stops a hang.
_RENDER_TIMEOUT = 60.0


def graphviz_available() -> bool:
    return shutil.which("dot") is not None


def render(dot_text: str, fmt: str) -> bytes:
    """The picture of `dot_text` in `fmt` (svg or png)."""
    if fmt not in FORMATS:
        raise PisaMMError.at(None, f"unknown picture format {fmt!r} (svg or png)", "usage")
    exe = shutil.which("dot")
    if exe is None:
        raise PisaMMError.at(
            None, f"Graphviz's `dot` program is not installed: {GRAPHVIZ_HINT}", "graphviz"
        )
    try:
        done = subprocess.run(
            [exe, f"-T{fmt}"],
            input=dot_text.encode("utf-8"),
            capture_output=True,
            timeout=_RENDER_TIMEOUT,
            check=False,
        )
    except (OSError, subprocess.TimeoutExpired) as exc:
        raise PisaMMError.at(None, f"Graphviz's `dot` failed: {exc}", "graphviz") from exc
    if done.returncode != 0:
        err = done.stderr.decode("utf-8", "replace").strip()
        raise PisaMMError.at(None, f"Graphviz's `dot` failed: {err}", "graphviz")
    return done.stdout


def write_picture(path: str, dot_text: str, fmt: str) -> None:
    """Render to `path`; without Graphviz, write the DOT text beside it (X.dot) and say so."""
    try:
        data = render(dot_text, fmt)
    except PisaMMError as exc:
        if graphviz_available():
            raise
        fallback = str(Path(path).with_suffix(".dot"))
        write_atomic(fallback, dot_text)
        raise PisaMMError.at(
            None,
            f"cannot draw {path}: Graphviz's `dot` program is not installed ({GRAPHVIZ_HINT}); "
            f"the graph was written as DOT to {fallback}",
            "graphviz",
        ) from exc
    write_atomic(path, data)
