"""pisa_mm/regexes.py: the patterns put into `re`'s cache from the stored programs are those
`re.compile` would make, a damaged program is compiled again, and a mistyped command stores
nothing."""

from __future__ import annotations

import re
from pathlib import Path

from fresh_process import run_script

from pisa_mm import regexes

ROOT = Path(__file__).resolve().parents[2]
MP = ROOT / "litmus" / "pisa" / "mp" / "MP+64b+cc.litmus"

# patterns with what a program carries besides its opcodes: groups by name and number, flags
# given and inline, lookarounds, repeats, classes, non-ASCII text
PATTERNS = [
    (r"[ \t]*(?:%(?P<reg>[A-Za-z_$.][A-Za-z0-9_$.]*)|@(?P<var>\w+))", 0),
    (r"(?i)cut: (\d+) (executions|states)\b", 0),
    (r"(?<=a)b(?!c)|(?>x+)y", re.MULTILINE),
    (r"^\s*(?P<name>[^\W\d]\w*)\s*=\s*(.*?)\s*$", re.IGNORECASE | re.DOTALL),
    (r"é+|[α-ω]{2,5}?", 0),
    (r" a  b # spaced", re.VERBOSE),
    (r"(a)(b)?(?(2)c|d)", re.ASCII),
]


def test_a_program_makes_the_pattern_re_compile_makes() -> None:
    from _sre import compile as sre_compile  # type: ignore[import-not-found]

    for pattern, flags in PATTERNS:
        made = sre_compile(pattern, *regexes.program(pattern, flags))
        fresh = re._compiler.compile(pattern, flags)  # type: ignore[attr-defined]
        assert made == fresh  # pattern, flags and the program itself
        assert (made.groups, made.groupindex, made.flags) == (
            fresh.groups,
            fresh.groupindex,
            fresh.flags,
        )


# What a fresh process made from the stored programs, against what compiling gives.
SCRIPT = """
import contextlib, io, json, re, sys
sys.argv = ["pisa-mm", *{argv}]
from pisa_mm import regexes
regexes.prime(sys.argv[1])
from pisa_mm import cli
with contextlib.redirect_stdout(io.StringIO()), contextlib.redirect_stderr(io.StringIO()):
    code = cli.main(sys.argv[1:])
made = [key for key in re._cache if key[1:] in re._cache.made]
same = all(re._cache[key] == re._compiler.compile(key[1], key[2]) for key in made)
print(json.dumps([code, len(made), same]))
"""


def test_a_second_run_makes_what_the_first_compiled(tmp_path: Path) -> None:
    script = SCRIPT.replace("{argv}", repr(["run", str(MP)]))
    code, made, _ = run_script(script, tmp_path)
    assert (code, made) == (0, 0)  # an empty cache
    code, made, same = run_script(script, tmp_path)
    assert code == 0 and made > 20 and same


# pip's console script compiles a pattern (to tidy sys.argv[0]) before `prime` runs.
EARLY = SCRIPT.replace(
    "from pisa_mm import regexes",
    "re.sub(r'(-script\\.pyw|\\.exe)?$', '', 'pisa-mm')\n" + "from pisa_mm import regexes",
)


def test_a_pattern_compiled_before_priming_is_stored_once(tmp_path: Path) -> None:
    script = EARLY.replace("{argv}", repr(["run", str(MP)]))
    run_script(script, tmp_path)
    (table,) = tmp_path.rglob("code-*.marshal")
    stored = table.stat().st_mtime_ns, table.read_bytes()
    for _ in range(2):  # the early pattern is stored now: nothing to write again
        code, made, same = run_script(script, tmp_path)
        assert code == 0 and made > 20 and same
        assert (table.stat().st_mtime_ns, table.read_bytes()) == stored


def test_a_mistyped_command_stores_nothing(tmp_path: Path) -> None:
    script = SCRIPT.replace("{argv}", repr(["rnu", str(MP)]))
    run_script(script, tmp_path)
    assert not list(tmp_path.rglob("code-*.marshal"))


DAMAGED = """
import json, re
from pisa_mm import codecache, regexes
group = codecache.CODES.group("re run")
group[("a+b", 0)] = (0, [1, 2, 3], 0, {}, (None,))  # not a program _sre accepts
group[("c", 0)] = "not a program"
regexes.prime("run")
matches = re.compile("a+b").match("aab") is not None and re.compile("c").match("c") is not None
print(json.dumps([matches, sorted(re._cache.made)]))
"""


def test_a_damaged_program_is_compiled_again(tmp_path: Path) -> None:
    matches, made = run_script(DAMAGED, tmp_path)
    assert matches  # compiled by re
    assert made == []  # neither made from what was stored


# A run whose stored program of a pattern it uses is damaged writes a good one at exit,
# though every other pattern it uses was stored by the run before it.
REPAIRED = """
import json, re, sys
from pisa_mm import codecache, regexes
regexes.prime("run")
from pisa_mm import cli
re.compile("a+b")
regexes._save("run", re._cache)
codecache.CODES.groups.clear(); codecache.CODES.stored = None  # read back from the file
flags, words, *rest = codecache.CODES.group("re run")[("a+b", 0)]
print(json.dumps([flags, list(memoryview(words).cast("I")), *rest]))
"""
DAMAGE = """
from pisa_mm import codecache
group = dict(codecache.CODES.group("re run"))
group[("a+b", 0)] = (0, [1, 2, 3], 0, {}, (None,))
codecache.CODES.replace("re run", group)
print(1)
"""


def test_a_damaged_program_is_written_anew(tmp_path: Path) -> None:
    good = run_script(REPAIRED, tmp_path)
    assert good[:2] == list(regexes.program("a+b", 0)[:2])
    run_script(DAMAGE, tmp_path)
    assert run_script(REPAIRED, tmp_path) == good
