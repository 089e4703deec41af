"""Litmus files and the command-line call for the tests that run `pisa-mm` commands."""

from __future__ import annotations

from pathlib import Path

import pytest

from pisa_mm import cli

Capture = pytest.CaptureFixture[str]

MP = """PISA MP+rel+acq
{
  .global .32b @x = 0;
  .global .32b @y = 0;
}

P0 @ wg 0 {
  st.global.32b [@x], 1;
  st.global.release.gpu.32b [@y], 1;
}

P1 @ wg 1 {
  ld.global.acquire.gpu.32b %r0, [@y];
  ld.global.32b %r1, [@x];
}

exists (P1:%r0 == 1 /\\ P1:%r1 == 0)
"""

LB = """PISA LB
{
  .global .32b @x = 0;
  .global .32b @y = 0;
}

P0 @ wg 0 {
  ld.global.relaxed.32b %r0, [@x];
  st.global.relaxed.32b [@y], 1;
}

P1 @ wg 1 {
  ld.global.relaxed.32b %r0, [@y];
  st.global.relaxed.32b [@x], 1;
}

exists (P0:%r0 == 1 /\\ P1:%r0 == 1)
"""

BAD = """PISA Bad
{
  .global .32b @x = 0;
}

P0 @ wg 0 {
  frobnicate.global.32b [@x], 1;
}

exists (true)
"""


def pisa_mm(*argv: str) -> int:
    """`pisa-mm ARGV...` in this process: its exit code (output goes to capsys)."""
    return cli.main(list(argv))


def write(dir: Path, name: str, text: str) -> Path:
    path = dir / name
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text(text, encoding="utf-8")
    return path
