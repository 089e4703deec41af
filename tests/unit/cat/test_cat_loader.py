"""Loading models: shipped names, paths, includes (relative, once, cycles, missing)."""

from __future__ import annotations

from pathlib import Path

import pytest

from pisa_mm.cat.loader import SHIPPED_MODELS, load_model, load_model_source
from pisa_mm.cat.syntax import CheckKind, Definition
from pisa_mm.errors import PisaMMError

AXIOMS = ("coherence", "atomicity", "sc", "no-thin-air")
FLAGS = ("data-race", "heterogeneous-race", "barrier-divergence", "async-race", "invalid-address")
DECISIONS = ("scope-ok", "Aorder", "rs-head", "thin-air")


@pytest.mark.parametrize("name", SHIPPED_MODELS)
def test_shipped_models_load_with_the_same_checks(name: str) -> None:
    m = load_model(name)
    assert m.name == name
    assert m.title.startswith(f"{name}:")
    assert tuple(c.name for c in m.axioms) == AXIOMS
    assert tuple(c.name for c in m.flags) == FLAGS
    assert m.check("coherence").kind is CheckKind.IRREFLEXIVE
    assert m.check("atomicity").kind is CheckKind.EMPTY
    assert m.check("sc").kind is CheckKind.ACYCLIC
    assert m.check("no-thin-air").kind is CheckKind.ACYCLIC
    assert load_model(name) is m  # loaded once per process


def _decisions(name: str) -> dict[str, str]:
    m = load_model(name)
    out = {}
    for d in m.definitions:
        assert isinstance(d, Definition)
        if d.name in DECISIONS:
            out[d.name] = m.sources[d.span.file].splitlines()[d.span.line - 1]
    return out


def test_each_variant_turns_exactly_one_decision() -> None:
    base = _decisions("pisa")
    changed = {
        "pisa-rc11": {"thin-air"},
        "pisa-samescope": {"scope-ok"},
        "pisa-ownspace": {"Aorder"},
        "pisa-rs11": {"rs-head"},
    }
    assert set(changed) == set(SHIPPED_MODELS) - {"pisa"}
    assert set(base) == set(DECISIONS)
    for variant, names in changed.items():
        mine = _decisions(variant)
        assert {n for n in base if base[n] != mine[n]} == names, variant


def test_unknown_model() -> None:
    with pytest.raises(PisaMMError, match="unknown model 'nope'"):
        load_model("nope")


def test_model_from_path_with_relative_and_package_includes(tmp_path: Path) -> None:
    (tmp_path / "lib").mkdir()
    (tmp_path / "lib" / "extra.cat").write_text("let mine = po-loc | rfe\n")
    model = tmp_path / "my.cat"
    model.write_text(
        '"My model"\ninclude "stdlib.cat"\ninclude "lib/extra.cat"\nacyclic mine as mine-ok\n'
    )
    m = load_model(str(model))
    assert m.name == "my" and m.title == "My model"
    assert m.check("mine-ok").kind is CheckKind.ACYCLIC
    assert m.definition("fr") is not None  # from the package's stdlib.cat


def test_a_file_is_included_once(tmp_path: Path) -> None:
    (tmp_path / "a.cat").write_text('include "stdlib.cat"\nlet a = eco\n')
    (tmp_path / "m.cat").write_text('include "stdlib.cat"\ninclude "a.cat"\ninclude "a.cat"\n')
    m = load_model(str(tmp_path / "m.cat"))
    assert m.definition("a") is not None


def test_include_cycle(tmp_path: Path) -> None:
    (tmp_path / "a.cat").write_text('include "b.cat"\n')
    (tmp_path / "b.cat").write_text('let x = po\ninclude "a.cat"\n')
    with pytest.raises(PisaMMError) as info:
        load_model(str(tmp_path / "a.cat"))
    exc = info.value
    text = exc.render(getattr(exc, "sources", None))
    assert "error: include cycle: a.cat -> b.cat -> a.cat [cat-include]" in text
    assert 'include "a.cat"\n^~~~~~~~~~~~~~~' in text


def test_missing_include_shows_the_line() -> None:
    with pytest.raises(PisaMMError) as info:
        load_model_source('let a = po\ninclude "missing.cat"\n', "m.cat")
    exc = info.value
    assert exc.render(getattr(exc, "sources", None)) == (
        "m.cat:2:1: error: cannot find included file 'missing.cat' [cat-include]\n"
        'include "missing.cat"\n'
        "^~~~~~~~~~~~~~~~~~~~~"
    )


def test_errors_in_included_files_name_that_file(tmp_path: Path) -> None:
    (tmp_path / "bad.cat").write_text("let x = R ; po\n")
    (tmp_path / "m.cat").write_text('include "bad.cat"\n')
    with pytest.raises(PisaMMError) as info:
        load_model(str(tmp_path / "m.cat"))
    exc = info.value
    text = exc.render(getattr(exc, "sources", None))
    assert text.startswith(f"{tmp_path / 'bad.cat'}:1:9: error: ';' needs relations")
    assert text.endswith("let x = R ; po\n        ^")
