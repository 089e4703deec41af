"""pisa_mm/finder.py: the package's modules are found and loaded as the path finder would
load them (the same spec, attributes and code), and anything it cannot vouch for is left to
the import system."""

from __future__ import annotations

import importlib
import json
import marshal
import os
import py_compile
import shutil
import subprocess
import sys
from pathlib import Path

from fresh_process import run_script

from pisa_mm import finder

ROOT = Path(__file__).resolve().parents[2]

# In a fresh process (the .pyc files written first): every module of the package, imported
# through the finder, against the spec the path finder makes for it.
SCRIPT = r"""
import compileall, importlib.machinery, json, pkgutil, sys
compileall.compile_dir("pisa_mm", quiet=1)
import pisa_mm
from pisa_mm import finder
out = []
for info in pkgutil.walk_packages(pisa_mm.__path__, "pisa_mm."):
    if info.name.startswith("pisa_mm.web"):
        continue
    module = importlib.import_module(info.name)
    parent = sys.modules[info.name.rpartition(".")[0]]
    theirs = importlib.machinery.PathFinder.find_spec(info.name, parent.__path__)
    ours = module.__spec__
    out.append({
        "name": info.name,
        "ours": isinstance(module.__loader__, finder._Loader),
        "same": [ours.origin == theirs.origin, ours.cached == theirs.cached,
                 ours.has_location == theirs.has_location,
                 ours.submodule_search_locations == theirs.submodule_search_locations,
                 ours.parent == theirs.parent, module.__file__ == theirs.origin,
                 module.__cached__ == theirs.cached,
                 getattr(module, "__path__", None) == theirs.submodule_search_locations,
                 ours.loader.get_filename(info.name) == theirs.loader.get_filename(info.name),
                 ours.loader.is_package(info.name) == theirs.loader.is_package(info.name),
                 ours.loader.get_source(info.name) == theirs.loader.get_source(info.name)],
    })
print(json.dumps(out))
"""


def test_every_module_of_the_package_is_loaded_as_the_path_finder_would(tmp_path: Path) -> None:
    modules = run_script(SCRIPT, tmp_path)
    assert len(modules) > 100
    usual = [m["name"] for m in modules if not m["ours"]]
    # imported by the package before the finder is installed (hints: by the finder)
    assert usual == ["pisa_mm.finder", "pisa_mm.hints"]
    assert all(all(m["same"]) for m in modules), [m for m in modules if not all(m["same"])]


def _compiled(tmp_path: Path, text: str) -> tuple[Path, Path]:
    source = tmp_path / "m.py"
    source.write_text(text)
    cached = tmp_path / "m.pyc"
    py_compile.compile(str(source), str(cached), doraise=True)
    return source, cached


def test_the_bytecode_of_the_source_is_read(tmp_path: Path) -> None:
    source, cached = _compiled(tmp_path, "x = 1\n")
    code = finder._read(str(source), str(cached))
    assert code is not None
    namespace: dict[str, object] = {}
    exec(code, namespace)
    assert namespace["x"] == 1


def test_a_stale_foreign_or_missing_bytecode_file_is_left_to_the_import_system(
    tmp_path: Path,
) -> None:
    source, cached = _compiled(tmp_path, "x = 1\n")
    stat = source.stat()
    source.write_text("x = 22\n")  # another size
    os.utime(source, ns=(stat.st_atime_ns, stat.st_mtime_ns))
    assert finder._read(str(source), str(cached)) is None
    source, cached = _compiled(tmp_path, "x = 1\n")
    os.utime(source, (stat.st_atime + 10, stat.st_mtime + 10))  # another time
    assert finder._read(str(source), str(cached)) is None
    source, cached = _compiled(tmp_path, "x = 1\n")
    data = cached.read_bytes()
    cached.write_bytes(b"\0\0\0\0" + data[4:])  # another Python's magic number
    assert finder._read(str(source), str(cached)) is None
    cached.write_bytes(data[:4] + b"\1\0\0\0" + data[8:])  # hash-based
    assert finder._read(str(source), str(cached)) is None
    cached.write_bytes(data[:20])  # truncated, its header whole: the source compiled instead
    code = finder._read(str(source), str(cached))  # (the import system's loader would raise)
    assert code is not None and code.co_filename == str(source)
    cached.unlink()
    assert finder._read(str(source), str(cached)) is None


def test_other_names_and_a_reload_go_the_usual_way() -> None:
    assert finder.Finder.find_spec("json") is None
    assert finder.Finder.find_spec("pisa_mm.no_such_module") is None
    import pisa_mm.values.fold as fold

    again = importlib.reload(fold)
    assert again is fold and again.__spec__ is not None
    assert again.__spec__.origin == str(ROOT / "pisa_mm" / "values" / "fold.py")


# A `pisa-mm run` in a fresh process, in a copy of the package without .pyc files: the
# package's source files that the run compiled (an audit hook sees each `compile`), printed
# after the code table is written at exit.
RUN_SCRIPT = r"""
import atexit, contextlib, io, json, os, sys
compiled = []
sys.addaudithook(lambda event, args: compiled.append(args[1])
                 if event == "compile" and isinstance(args[1], str) else None)
atexit.register(lambda: print(json.dumps(sorted({
    os.path.relpath(f, "pisa_mm") for f in compiled if f.startswith(os.path.abspath("pisa_mm"))
}))))
from pisa_mm import cli
with contextlib.redirect_stdout(io.StringIO()):
    code = cli.main(["run", sys.argv[1]])
assert code == 0, code
"""

# imported before the code table's module (`pisa_mm.codecache`), by it, or while it reads
# the table
BOOTSTRAP = {"__init__.py", "finder.py", "hints.py", "codecache.py", "cache.py"}


def _run_in_copy(copy: Path, cache: Path, **env: str) -> list[str]:
    done = subprocess.run(
        [sys.executable, "-c", RUN_SCRIPT, str(ROOT / "litmus/pisa/mp/MP+64b+cc.litmus")],
        capture_output=True,
        text=True,
        cwd=copy,
        env={"PATH": "/usr/bin:/bin", "XDG_CACHE_HOME": str(cache), **env},
    )
    assert done.returncode == 0, done.stderr
    compiled: list[str] = json.loads(done.stdout.splitlines()[-1])
    return compiled


def _module_groups(cache: Path) -> list[str]:
    from pisa_mm.codecache import ENTRY

    _, table = marshal.loads((cache / "pisa-mm" / ENTRY).read_bytes())
    return [group for group in table if group.startswith("module ")]


def test_without_pyc_files_the_package_is_compiled_once_into_the_cache(tmp_path: Path) -> None:
    """PYTHONDONTWRITEBYTECODE, as containers set it: an editable install has no .pyc files,
    and each run compiled every module of the package (three times the run's start-up)."""
    copy, cache = tmp_path / "tree", tmp_path / "cache"
    shutil.copytree(ROOT / "pisa_mm", copy / "pisa_mm", ignore=shutil.ignore_patterns("*.pyc"))
    first = _run_in_copy(copy, cache, PYTHONDONTWRITEBYTECODE="1")
    assert {"commands/run.py", "events/build.py", "explicit/engine.py"} <= set(first)
    assert not list(copy.rglob("*.pyc"))  # the tree stays as the variable asks
    assert set(_run_in_copy(copy, cache, PYTHONDONTWRITEBYTECODE="1")) <= BOOTSTRAP
    # an edited module is compiled again (its size changed), and only it
    edited = copy / "pisa_mm" / "commands" / "run.py"
    edited.write_text(edited.read_text(encoding="utf-8") + "\n# edited\n", encoding="utf-8")
    third = set(_run_in_copy(copy, cache, PYTHONDONTWRITEBYTECODE="1"))
    assert "commands/run.py" in third
    assert third <= BOOTSTRAP | {"commands/run.py"}


def test_where_python_writes_pyc_files_the_cache_keeps_no_module(tmp_path: Path) -> None:
    copy, cache = tmp_path / "tree", tmp_path / "cache"
    shutil.copytree(ROOT / "pisa_mm", copy / "pisa_mm", ignore=shutil.ignore_patterns("*.pyc"))
    _run_in_copy(copy, cache)
    assert list(copy.rglob("*.pyc"))
    assert _module_groups(cache) == []
    assert not (set(_run_in_copy(copy, cache)) - {"__init__.py"})  # (not compiled: found)
