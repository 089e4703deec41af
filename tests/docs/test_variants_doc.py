"""docs/variants.md shows real `diff pisa VARIANT litmus/pisa litmus/audit` output (the
hand-written suites): regenerate it and compare."""

from __future__ import annotations

import re
import subprocess
import sys
from pathlib import Path

import pytest

from pisa_mm import cli

ROOT = Path(__file__).resolve().parents[2]
DOC = ROOT / "docs" / "variants.md"
VARIANTS = ("pisa-rc11", "pisa-samescope", "pisa-ownspace", "pisa-rs11")
# The load-buffering family: LB shapes, and 2+2W through RMWs, whose execution is the same
# po|rf cycle (its `// why:` line says so).
LB_FAMILY = {"LB", "LB+async", "LB+data+po", "LB+weak", "2+2W+xchg"}


def _documented() -> dict[str, str]:
    """Each variant's output block in the doc, by variant."""
    text = DOC.read_text(encoding="utf-8")
    blocks = re.findall(
        r"```\n\$ pisa-mm diff pisa (\S+) litmus/pisa litmus/audit\n(.*?)```\n", text, re.S
    )
    return dict(blocks)


def _diff(variant: str, *tests: str, capsys: pytest.CaptureFixture[str]) -> str:
    capsys.readouterr()
    assert cli.main(["diff", "pisa", variant, *tests]) == 0
    return capsys.readouterr().out


def _changed_blocks(out: str) -> dict[str, str]:
    """The explanation of each changed test, by test name."""
    parts = re.split(r"^(?=CHANGED |Changed tests by)", out, flags=re.M)
    return {p.split()[1]: p for p in parts if p.startswith("CHANGED ")}


def test_every_variant_is_documented() -> None:
    assert set(_documented()) == set(VARIANTS)


def test_rc11_changes_exactly_the_load_buffering_family_by_no_thin_air() -> None:
    out = _documented()["pisa-rc11"]
    assert set(_changed_blocks(out)) == LB_FAMILY
    assert "Changed tests by responsible axiom (or flag):\n  no-thin-air: 5 (" in out


def test_one_variant_still_matches_on_its_changed_tests(
    monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]
) -> None:
    """The fast check: the documented explanations of pisa-rs11 regenerate as they are."""
    monkeypatch.chdir(ROOT)
    documented = _changed_blocks(_documented()["pisa-rs11"])
    out = _diff("pisa-rs11", "litmus/pisa/relseq", capsys=capsys)
    assert _changed_blocks(out) == documented


@pytest.mark.slow
@pytest.mark.parametrize("variant", VARIANTS)
def test_the_documented_output_is_real(variant: str) -> None:
    # a fresh process, as the page was made: the solver's choice of witness may depend on
    # what earlier queries in the same process left behind
    code = "import sys; from pisa_mm.cli import main; sys.exit(main(sys.argv[1:]))"
    argv = [sys.executable, "-c", code, "diff", "pisa", variant, "litmus/pisa", "litmus/audit"]
    done = subprocess.run(argv, cwd=ROOT, capture_output=True, text=True, check=False)
    assert done.returncode == 0, done.stderr
    assert done.stdout == _documented()[variant]
