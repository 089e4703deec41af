"""pisa_mm/hints.py: its stand-ins do at run time what their uses need, and a run imports
neither `typing` nor (through the console script) gettext and locale."""

from __future__ import annotations

from pathlib import Path

import pytest
from fresh_process import run_script

ROOT = Path(__file__).resolve().parents[2]
MP = ROOT / "litmus" / "pisa" / "mp" / "MP+64b+cc.litmus"

# the names as a run's modules see them: a fresh process, so that nothing imported typing
STAND_INS = """
import json, sys
from pisa_mm import hints
T = hints.TypeVar("T", covariant=True)
class Box(hints.Generic[T]):
    def __init__(self, item): self.item = item
class Sized(hints.Protocol[T]):
    def size(self) -> int: return 3
class Three(Sized):
    pass
@hints.overload
def f(x): ...
def f(x): return x
try:
    hints.assert_never(5)
    never = "returned"
except AssertionError as exc:
    never = str(exc)
print(json.dumps({
    "typing": "typing" in sys.modules,
    "cast": hints.cast(int, "same"),
    "box": Box[int] is Box and Box(2).item,
    "three": Three().size(),
    "never": never,
    "overload": f(4),
    "transform": hints.dataclass_transform(frozen_default=True)(Box) is Box,
    "checking": hints.TYPE_CHECKING,
    "any": repr(hints.Any[int]),
}))
"""


def test_the_stand_ins_do_what_their_uses_need(tmp_path: Path) -> None:
    out = run_script(STAND_INS, tmp_path)
    assert out == {
        "typing": False,
        "cast": "same",
        "box": 2,
        "three": 3,
        "never": "Expected code to be unreachable, but got: 5",
        "overload": 4,
        "transform": True,
        "checking": False,
        "any": "pisa_mm.hints.Any",
    }


# The console script's path (pisa_mm.entry), as the installed `pisa-mm` runs it. It ends
# the process itself (`os._exit` after the atexit hooks), so the modules are reported by a
# hook and the run's code is the process's exit status (run_script checks it is 0).
ENTRY = f"""
import atexit, contextlib, io, json, re, sys
sys.argv = ["pisa-mm", "run", {str(MP)!r}]
atexit.register(lambda: print(json.dumps(sorted(sys.modules)), file=sys.__stdout__))
from pisa_mm import entry
with contextlib.redirect_stdout(io.StringIO()):
    sys.exit(entry.main())
"""


@pytest.mark.parametrize("module", ["typing", "gettext", "locale"])
def test_a_run_through_the_console_script_does_not_import(tmp_path: Path, module: str) -> None:
    run_script(ENTRY, tmp_path)  # fills the caches
    modules = run_script(ENTRY, tmp_path)
    assert module not in modules
    assert "argparse" in modules
