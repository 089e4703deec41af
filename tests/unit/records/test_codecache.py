"""The cache of compiled code (pisa_mm/codecache.py) that records.py and cat/inline.py share."""

from __future__ import annotations

import marshal
import os
from collections.abc import Callable
from pathlib import Path
from typing import Any

import pytest

from pisa_mm import codecache

SOURCE = "def f(x: int) -> int:\n    return x + 1\n"
OTHER = "def g() -> str:\n    return 'g'\n"


def _run(source: str, name: str, group: str = "g") -> object:
    scope: dict[str, object] = {}
    exec(codecache.compiled(source, group, "<test>"), scope)
    return scope[name]


def test_code_is_compiled_once_and_then_read_from_the_cache(
    entry: Path, restart: Callable[[], None]
) -> None:
    first = codecache.compiled(SOURCE, "g", "<test>")
    assert first == compile(SOURCE, "<test>", "exec", dont_inherit=True)
    assert codecache.CODES.missed == {"g"}
    restart()
    assert entry.exists()
    assert codecache.compiled(SOURCE, "g", "<other name>") == first
    assert not codecache.CODES.missed
    f = _run(SOURCE, "f")
    assert callable(f) and f(1) == 2
    # compiled as `exec(source)` compiles it, not under this test's `__future__` import
    assert f.__annotations__ == {"x": int, "return": int}


def test_nothing_is_written_without_a_miss(entry: Path, restart: Callable[[], None]) -> None:
    codecache.CODES.save()
    assert not entry.exists()
    codecache.compiled(SOURCE, "g", "<test>")
    restart()
    os.utime(entry, (0, 0))
    codecache.compiled(SOURCE, "g", "<test>")
    codecache.CODES.save()
    assert entry.stat().st_mtime == 0


def test_a_group_with_a_miss_keeps_only_the_code_in_use(
    entry: Path, restart: Callable[[], None]
) -> None:
    codecache.compiled(SOURCE, "edited", "<test>")
    codecache.compiled(SOURCE, "kept", "<test>")
    restart()
    codecache.compiled(OTHER, "edited", "<test>")  # the group's source changed
    restart()
    assert set(codecache.CODES.group("edited")) == {OTHER}
    assert set(codecache.CODES.group("kept")) == {SOURCE}


def test_a_group_is_unmarshalled_only_when_used(entry: Path, restart: Callable[[], None]) -> None:
    codecache.compiled(SOURCE, "used", "<test>")
    codecache.compiled(OTHER, "unused", "<test>")
    restart()
    assert set(codecache.CODES.load()) == {"used", "unused"}  # each group's bytes
    codecache.compiled(SOURCE, "used", "<test>")
    assert set(codecache.CODES.groups) == {"used"}
    codecache.compiled(OTHER, "new", "<test>")
    restart()  # the group never read is written back as it was
    assert codecache.compiled(OTHER, "unused", "<test>") == compile(
        OTHER, "<test>", "exec", dont_inherit=True
    )
    assert not codecache.CODES.missed


@pytest.mark.parametrize(
    "content",
    [
        b"garbage",
        b"",
        "truncated",
        marshal.dumps(("Python 2.7", {})),
        marshal.dumps(["not", "a", "pair"]),
        marshal.dumps((None, None)),
        marshal.dumps((codecache._PYTHON, {"g": b"garbage"})),
        marshal.dumps((codecache._PYTHON, {"g": {SOURCE: None}})),
        marshal.dumps((codecache._PYTHON, {"g": marshal.dumps([SOURCE])})),
    ],
)
def test_a_corrupt_or_foreign_cache_file_is_ignored(
    entry: Path, restart: Callable[[], None], monkeypatch: pytest.MonkeyPatch, content: bytes | str
) -> None:
    codecache.compiled(SOURCE, "g", "<test>")
    codecache.CODES.save()
    data = entry.read_bytes()
    entry.write_bytes(data[: len(data) // 2] if content == "truncated" else content)  # type: ignore[arg-type]
    monkeypatch.setattr(codecache, "CODES", codecache.Codes())
    assert _run(SOURCE, "f")(1) == 2  # type: ignore[operator]
    assert codecache.CODES.missed == {"g"}
    restart()  # the bad file is replaced
    codecache.compiled(SOURCE, "g", "<test>")
    assert not codecache.CODES.missed


def test_no_cache_file_when_caching_is_off(entry: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("PISA_MM_NO_CACHE", "1")
    assert _run(SOURCE, "f")(1) == 2  # type: ignore[operator]
    codecache.CODES.save()
    assert not entry.parent.exists()


def test_an_unreadable_and_unwritable_entry_only_costs_time(entry: Path) -> None:
    (entry / "x").mkdir(parents=True)  # a directory where the file should be
    assert _run(SOURCE, "f")(1) == 2  # type: ignore[operator]
    codecache.CODES.save()  # cannot replace a directory: nothing written, nothing raised
    assert entry.is_dir()


def test_the_former_records_table_is_removed(entry: Path) -> None:
    entry.parent.mkdir(parents=True)
    old = entry.parent / "records.marshal"
    old.write_bytes(b"old")
    codecache.compiled(SOURCE, "g", "<test>")
    codecache.CODES.save()
    assert entry.exists() and not old.exists()


def test_a_source_the_table_lacks_is_compiled_once_per_process(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    # was: compiled again at every use until a process that exits normally saved it, and a
    # pool's workers never do: with --jobs N each worker compiled cat/inline.py's functions
    # on every test
    import builtins

    compiles: list[str] = []
    real = builtins.compile

    def counting(source: str, *args: Any, **kwargs: Any) -> Any:
        compiles.append(source)
        return real(source, *args, **kwargs)

    codes = codecache.Codes()
    codes.stored = {}  # an empty table: every source misses
    monkeypatch.setattr(codecache, "CODES", codes)
    monkeypatch.setattr(codecache, "compile", counting, raising=False)
    monkeypatch.setattr("atexit.register", lambda fn: fn)  # no save at the test run's exit
    source = "def f():\n    return 1\n"
    first = codecache.compiled(source, "group", "<test>")
    assert codecache.compiled(source, "group", "<test>") is first
    assert compiles == [source]


def test_the_table_keeps_the_groups_in_use_and_the_latest_others_up_to_its_bound(
    entry: Path, restart: Callable[[], None], monkeypatch: pytest.MonkeyPatch
) -> None:
    # one group per model file run: without a bound the table grew with every model
    for k in range(6):
        codecache.compiled(f"x = {k}\n" * 40, f"model {k}", "<test>")
        restart()
    size = len(codecache.CODES.load()["model 5"])
    monkeypatch.setattr(codecache, "TABLE_BYTES", 2 * size + size // 2)
    codecache.compiled(SOURCE, "now", "<test>")  # a miss: the table is written
    restart()
    # this process's group last, before it the two most recent others that fit
    assert list(codecache.CODES.load()) == ["model 4", "model 5", "now"]
    codecache.compiled("x = 0\n" * 40, "model 0", "<test>")  # gone: compiled again
    assert codecache.CODES.missed == {"model 0"}
    restart()  # written here: the exit hook of a table with a miss would write it at exit
