"""Rendering DOT text to SVG or PNG through Graphviz's `dot` binary."""

from __future__ import annotations

import shutil
import subprocess
from pathlib import Path

from pisa_mm.errors import PisaMMError
from pisa_mm.runner.files import write_atomic

__all__ = [
    "FORMATS",
    "GRAPHVIZ_HINT",
    "graphviz_available",
    "render",
    "svg_text",
    "write_picture",
]

FORMATS = ("svg", "png")
GRAPHVIZ_HINT = "install Graphviz (Debian/Ubuntu: apt-get install graphviz)"
# A picture of a litmus execution renders in well under a second; this only stops a hang.
_RENDER_TIMEOUT = 60.0


def graphviz_available() -> bool:
    return shutil.which("dot") is not None


def render(dot_text: str, fmt: str, timeout: float | None = None) -> bytes:
    """The picture of `dot_text` in `fmt` (svg or png). `timeout`: the per-test budget's
    seconds (`Budget.timeout`, the command's --timeout), which bound `dot` as they bound the
    test's other work; None leaves only a safety net against a hang."""
    if fmt not in FORMATS:
        raise PisaMMError.at(None, f"unknown picture format {fmt!r} (svg or png)", "usage")
    exe = shutil.which("dot")
    if exe is None:
        raise PisaMMError.at(
            None, f"Graphviz's `dot` program is not installed: {GRAPHVIZ_HINT}", "graphviz"
        )
    seconds = _RENDER_TIMEOUT if timeout is None else timeout
    try:
        done = subprocess.run(
            [exe, f"-T{fmt}"],
            input=dot_text.encode("utf-8"),
            capture_output=True,
            timeout=seconds,
            check=False,
        )
    except subprocess.TimeoutExpired:
        budget = " (the per-test --timeout)" if timeout is not None else ""
        raise PisaMMError.at(
            None,
            f"Graphviz's `dot` was stopped: drawing the graph took more than {seconds:g} s{budget}",
            "graphviz",
        ) from None
    except OSError as exc:
        raise PisaMMError.at(None, f"Graphviz's `dot` failed: {exc}", "graphviz") from exc
    if done.returncode != 0:
        err = done.stderr.decode("utf-8", "replace").strip()
        raise PisaMMError.at(None, f"Graphviz's `dot` failed: {err}", "graphviz")
    return done.stdout


def svg_text(dot_text: str, timeout: float | None = None) -> str | None:
    """The SVG of `dot_text` to inline in a page (`timeout` as for `render`); None without
    Graphviz, so that the page shows the DOT text instead."""
    return render(dot_text, "svg", timeout).decode("utf-8") if graphviz_available() else None


def write_picture(path: str, dot_text: str, fmt: str, timeout: float | None = None) -> None:
    """Render to `path` (`timeout` as for `render`); without Graphviz, write the DOT text
    beside it (X.dot) and say so."""
    try:
        data = render(dot_text, fmt, timeout)
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
