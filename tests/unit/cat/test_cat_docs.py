"""docs/model.md documents every built-in and every name and check of the shipped models."""

from __future__ import annotations

from pathlib import Path

import pytest

from pisa_mm.cat import BUILTINS, SHIPPED_MODELS, load_model

DOC = (Path(__file__).parents[3] / "docs" / "model.md").read_text(encoding="utf-8")


@pytest.mark.parametrize("name", sorted(BUILTINS))
def test_every_builtin_is_documented(name: str) -> None:
    assert f"`{name}`" in DOC


@pytest.mark.parametrize("model", SHIPPED_MODELS)
def test_every_definition_and_check_is_documented(model: str) -> None:
    m = load_model(model)
    names = [m.definition(n) for n in m.types if m.definition(n) is not None]
    for d in names:
        assert d is not None
        assert f"`{d.name}`" in DOC or f"{d.name} " in DOC, d.name
    for c in m.checks:
        assert f"`{c.name}`" in DOC, c.name
    assert f"`{model}`" in DOC
