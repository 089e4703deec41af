"""Every tests/errors/NAME.litmus is rejected with exactly the message in NAME.err.

Rewrite the expectations on purpose with `PISA_MM_UPDATE_ERRORS=1 pytest tests/errors`,
then review the diff. Files named `strict_*` are parsed with strict=True.
"""

from __future__ import annotations

import os
from pathlib import Path

import pytest

from pisa_mm.errors import PisaMMError
from pisa_mm.litmus import load_test

HERE = Path(__file__).parent
ROOT = HERE.parent.parent
CASES = sorted(p.stem for p in HERE.glob("*.litmus"))


def render(name: str) -> str:
    rel = f"tests/errors/{name}.litmus"
    cwd = os.getcwd()
    os.chdir(ROOT)  # messages name the file relative to the repository root
    try:
        load_test(rel, strict=name.startswith("strict_"))
    except PisaMMError as exc:
        return exc.render(getattr(exc, "sources", None)) + "\n"
    finally:
        os.chdir(cwd)
    raise AssertionError(f"{rel} was accepted")


def test_enough_cases() -> None:
    assert len(CASES) >= 45


@pytest.mark.parametrize("name", CASES)
def test_error_message(name: str) -> None:
    got = render(name)
    expected_path = HERE / f"{name}.err"
    if os.environ.get("PISA_MM_UPDATE_ERRORS"):
        expected_path.write_text(got, encoding="utf-8")
    assert expected_path.exists(), f"missing {expected_path.name}"
    assert got == expected_path.read_text(encoding="utf-8")
    assert got.count(": error: ") == 1
