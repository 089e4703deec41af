"""Rewrite the expected `pisa-mm parse` outputs (tests/golden/parse/*.out) on purpose.

Usage: python tests/golden/promote_parse.py [NAME ...]   (default: every *.litmus there)
Review the diff afterwards: the .out files are never edited by hand.
"""

from __future__ import annotations

import contextlib
import io
import sys
from pathlib import Path

PARSE_DIR = Path(__file__).resolve().parent / "parse"


def render(case: Path) -> tuple[int, str]:
    """Exit code and stdout+stderr of `pisa-mm parse --color never CASE`."""
    from pisa_mm.cli import main

    out = io.StringIO()
    with contextlib.redirect_stdout(out), contextlib.redirect_stderr(out):
        code = main(["parse", "--color", "never", str(case)])
    # spans name the file; keep expectations independent of where the repo lives
    return code, out.getvalue().replace(str(case), case.name)


def cases(names: list[str] | None = None) -> list[Path]:
    found = sorted(PARSE_DIR.glob("*.litmus"))
    if names:
        wanted = {n.removesuffix(".litmus") for n in names}
        found = [c for c in found if c.stem in wanted]
    return found


def main(argv: list[str]) -> int:
    for case in cases(argv):
        code, text = render(case)
        case.with_suffix(".out").write_text(text, encoding="utf-8")
        print(f"promoted {case.name} (exit {code})")
    return 0


if __name__ == "__main__":
    sys.path.insert(0, str(PARSE_DIR.parents[2]))
    sys.exit(main(sys.argv[1:]))
