"""`collect_tests`: a directory gives the files that `Path.rglob("*.litmus")` finds and that
are files, named as pathlib writes them (commands/run.py `litmus_files`, which reads the
entries' types from `os.scandir` instead of asking about each file again)."""

from __future__ import annotations

import os
from pathlib import Path

import pytest

from pisa_mm.commands.run import collect_tests, litmus_files

ROOT = Path(__file__).resolve().parents[2]


def _rglob(top: str) -> list[str]:
    return sorted(str(f) for f in Path(top).rglob("*.litmus") if f.is_file())


def _tree(root: Path) -> None:
    (root / "a" / "b").mkdir(parents=True)
    for name in ("a/x.litmus", "a/b/y.litmus", ".hidden.litmus", ".litmus", "z.LITMUS", "w.txt"):
        (root / name).write_text("")
    (root / "dir.litmus").mkdir()  # a directory with the suffix: searched, not listed
    (root / "dir.litmus" / "in.litmus").write_text("")
    (root / "link.litmus").symlink_to(root / "a" / "x.litmus")  # a link to a file counts
    (root / "linked-dir").symlink_to(root / "a")  # a link to a directory is not followed
    # a broken link is skipped (a link must lead to a *.litmus name: tests/hostile/test_round5)
    (root / "broken.litmus").symlink_to(root / "missing.litmus")
    os.mkfifo(root / "fifo.litmus")


def test_a_tree_of_every_kind_of_entry_gives_what_rglob_gives(tmp_path: Path) -> None:
    _tree(tmp_path)
    found = sorted(litmus_files(str(tmp_path)))
    assert found == _rglob(str(tmp_path))
    names = [f[len(str(tmp_path)) + 1 :] for f in found]
    assert names == [".hidden.litmus", ".litmus", "a/b/y.litmus", "a/x.litmus",
                     "dir.litmus/in.litmus", "link.litmus"]  # fmt: skip


@pytest.mark.parametrize("spelling", ["{t}", "{t}/", "{t}//a/..", "{t}/./a"])
def test_the_names_are_pathlib_s(tmp_path: Path, spelling: str) -> None:
    _tree(tmp_path)
    top = spelling.format(t=tmp_path)
    assert sorted(litmus_files(top)) == _rglob(top)


def test_the_current_directory_and_the_shipped_suite(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    _tree(tmp_path)
    monkeypatch.chdir(tmp_path)
    assert sorted(litmus_files(".")) == _rglob(".")
    assert collect_tests(["a"]) == _rglob("a")
    monkeypatch.chdir(ROOT)
    assert collect_tests(["litmus"]) == _rglob("litmus")
