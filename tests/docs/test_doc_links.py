"""The documentation is self-contained: every relative link resolves inside the repository,
and nothing points at files outside it (such as the steering repository's shared/)."""

from __future__ import annotations

import re
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[2]
DOCS = sorted(
    [
        ROOT / "README.md",
        ROOT / "CONTRIBUTING.md",
        ROOT / "CHANGELOG.md",
        ROOT / "litmus" / "README.md",
        *(ROOT / "docs").glob("*.md"),
    ]
)
# [text](target) links, without the images' "!" distinction (both must resolve)
LINK = re.compile(r"\]\(([^)\s]+)\)")


def _relative_targets(text: str) -> list[str]:
    out = []
    for target in LINK.findall(text):
        if re.match(r"[a-z]+:", target) or target.startswith("#"):
            continue  # a URL or an anchor in the same page
        out.append(target.split("#", 1)[0])
    return out


@pytest.mark.parametrize("doc", DOCS, ids=[str(d.relative_to(ROOT)) for d in DOCS])
def test_relative_links_resolve_inside_the_repository(doc: Path) -> None:
    text = doc.read_text(encoding="utf-8")
    missing = []
    for target in _relative_targets(text):
        path = (doc.parent / target).resolve()
        if not path.exists() or (ROOT not in path.parents and path != ROOT):
            missing.append(target)
    assert not missing, f"{doc.relative_to(ROOT)} links to {missing}"


@pytest.mark.parametrize("doc", DOCS, ids=[str(d.relative_to(ROOT)) for d in DOCS])
def test_no_reference_leaves_the_repository(doc: Path) -> None:
    text = doc.read_text(encoding="utf-8")
    assert "../shared" not in text
    assert "model-decisions.md" not in text, "cite docs/model.md section 0 instead"
