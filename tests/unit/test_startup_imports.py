"""What `pisa-mm run` of one small test imports once the caches are warm (start-up time,
docs/architecture.md "Start-up"): none of the modules only a rare path needs."""

from __future__ import annotations

from pathlib import Path

from fresh_process import run_script

ROOT = Path(__file__).resolve().parents[2]
MP = ROOT / "litmus" / "pisa" / "mp" / "MP+64b+cc.litmus"

# modules a warm run of one test must not import, and who needs them instead
RARE = {
    "dataclasses": "records.py builds records itself; fields are made when first read",
    "inspect": "imported by dataclasses",
    "pathlib": "cache.py, cat/loader.py, commands/run.py and runner/files.py use os.path",
    "urllib.parse": "imported by pathlib",
    "pickle": "the model cache is read with _pickle; pickle.py only writes",
    "lark": "only a model that is not in the cache is parsed",
    "pisa_mm.cat.includes": "the same",
    "tempfile": "only a write",
    "hashlib": "cache keys use _blake2",
    "z3": "only the smt engine",
    "pisa_mm.report.graphs": "only --graphs and --html draw (the default is report's)",
    "importlib.util": "the package's finder uses the import system's own classes",
    "typing": "the run path takes typing's names from pisa_mm/hints.py",
}

SCRIPT = f"""
import contextlib, io, json, sys
from pisa_mm import cli
with contextlib.redirect_stdout(io.StringIO()):
    code = cli.main(["run", {str(MP)!r}])
print(json.dumps([code, sorted(sys.modules)]))
"""


def test_a_warm_run_of_one_test_imports_no_rare_module(tmp_path: Path) -> None:
    run_script(SCRIPT, tmp_path)  # fills the caches
    code, modules = run_script(SCRIPT, tmp_path)
    assert code == 0
    imported = {name: why for name, why in RARE.items() if name in modules}
    assert not imported, imported
