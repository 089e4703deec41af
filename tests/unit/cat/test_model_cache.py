"""The on-disk cache of compiled shipped models (pisa_mm/cache.py): same model, or no cache."""

from __future__ import annotations

from collections.abc import Iterator
from pathlib import Path

import pytest

from pisa_mm.cat import loader
from pisa_mm.cat.syntax import Model


@pytest.fixture
def cache_home(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Iterator[Path]:
    monkeypatch.setenv("XDG_CACHE_HOME", str(tmp_path))
    monkeypatch.delenv("PISA_MM_NO_CACHE", raising=False)
    loader._load_shipped.cache_clear()
    yield tmp_path / "pisa-mm"
    loader._load_shipped.cache_clear()


def _fresh(name: str) -> Model:
    loader._load_shipped.cache_clear()
    return loader.load_model(name)


def _same(a: Model, b: Model) -> None:
    assert (a.name, a.title, a.path) == (b.name, b.title, b.path)
    assert a.definitions == b.definitions
    assert a.checks == b.checks
    assert dict(a.types) == dict(b.types)
    assert a.builtins_used == b.builtins_used
    assert dict(a.sources) == dict(b.sources)


def test_a_cached_model_is_the_compiled_one(cache_home: Path) -> None:
    compiled = _fresh("pisa")
    entries = list(cache_home.glob("model-pisa-*.pickle"))
    assert len(entries) == 1
    cached = _fresh("pisa")
    assert cached is not compiled
    _same(compiled, cached)


def test_each_shipped_model_has_its_own_entry(cache_home: Path) -> None:
    _fresh("pisa")
    _fresh("pisa-rc11")
    _fresh("pisa")
    names = sorted(p.name.rsplit("-", 1)[0] for p in cache_home.glob("model-*.pickle"))
    assert names == ["model-pisa", "model-pisa-rc11"]


def test_a_corrupt_entry_is_rebuilt(cache_home: Path) -> None:
    compiled = _fresh("pisa")
    (entry,) = cache_home.glob("model-pisa-*.pickle")
    entry.write_bytes(b"not a pickle")
    _same(compiled, _fresh("pisa"))
    assert entry.read_bytes() != b"not a pickle"


def test_an_entry_of_other_inputs_is_replaced(cache_home: Path) -> None:
    _fresh("pisa")
    (entry,) = cache_home.glob("model-pisa-*.pickle")
    stale = entry.with_name("model-pisa-" + "0" * 32 + ".pickle")
    entry.rename(stale)
    _fresh("pisa")
    assert [p.name for p in cache_home.glob("model-pisa-*.pickle")] == [entry.name]


def test_the_variable_turns_the_cache_off(
    cache_home: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setenv("PISA_MM_NO_CACHE", "1")
    _fresh("pisa")
    assert not list(cache_home.glob("model-*.pickle"))


def test_a_cache_dir_that_cannot_be_made_is_no_cache(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    blocker = tmp_path / "a-file"
    blocker.write_text("", encoding="utf-8")
    monkeypatch.setenv("XDG_CACHE_HOME", str(blocker))  # its pisa-mm/ cannot be made
    monkeypatch.delenv("PISA_MM_NO_CACHE", raising=False)
    try:
        assert _fresh("pisa").name == "pisa"
    finally:
        loader._load_shipped.cache_clear()
