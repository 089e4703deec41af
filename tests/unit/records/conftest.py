"""Fixtures of the records tests: a fresh table of compiled code in an empty cache."""

from __future__ import annotations

from collections.abc import Callable, Iterator
from pathlib import Path

import pytest

from pisa_mm import codecache


@pytest.fixture
def entry(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Iterator[Path]:
    """A fresh table of compiled code in an empty cache; yields the cache file."""
    monkeypatch.setenv("XDG_CACHE_HOME", str(tmp_path))
    monkeypatch.delenv("PISA_MM_NO_CACHE", raising=False)
    monkeypatch.setattr(codecache, "CODES", codecache.Codes())
    yield tmp_path / "pisa-mm" / codecache.ENTRY


@pytest.fixture
def restart(entry: Path, monkeypatch: pytest.MonkeyPatch) -> Callable[[], None]:
    """As a new process would: write what was compiled, then start with an empty table."""

    def restart() -> None:
        codecache.CODES.save()
        monkeypatch.setattr(codecache, "CODES", codecache.Codes())

    return restart
