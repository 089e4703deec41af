"""Every data type of pisa_mm is made by `records.record`, the one decorator (start-up time)."""

from __future__ import annotations

import ast
from pathlib import Path

ROOT = Path(__file__).resolve().parents[2] / "pisa_mm"


def _is_dataclass(decorator: ast.expr) -> bool:
    target = decorator.func if isinstance(decorator, ast.Call) else decorator
    if isinstance(target, ast.Name):
        return target.id == "dataclass"
    return isinstance(target, ast.Attribute) and target.attr == "dataclass"


def test_no_class_is_decorated_with_dataclass() -> None:
    found = [
        f"{path.relative_to(ROOT.parent)}:{node.lineno}: class {node.name}"
        for path in sorted(ROOT.rglob("*.py"))
        if path.name != "records.py"
        for node in ast.walk(ast.parse(path.read_text("utf-8")))
        if isinstance(node, ast.ClassDef) and any(map(_is_dataclass, node.decorator_list))
    ]
    assert not found, "use @record (pisa_mm/records.py), not @dataclass:\n" + "\n".join(found)
