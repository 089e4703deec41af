"""The long mutation fuzzer over the other input classes (slow): shipped models (.cat),
expectation files, a baseline, and command lines. (Litmus text and its metadata:
tests/property/test_parser_fuzz.py's `test_suite_mutation_fuzz`.)

Every mutated input must end in a coded PisaMMError or a result, and a command in an exit
code other than 3 (internal error) with no traceback. `PISA_MM_FUZZ_INPUTS` (default 400)
and `PISA_MM_FUZZ_SEED` choose the run; `PISA_MM_FUZZ_REPORT=FILE` appends its figures
(inputs, escaped exceptions, slowest input) to FILE. The last recorded run is in
docs/robustness.md.
"""

from __future__ import annotations

import contextlib
import io
import os
import random
import shutil
import sys
import time
import traceback
from collections.abc import Callable
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[2]
sys.path.insert(0, str(ROOT / "tests" / "property"))

from test_parser_fuzz import HOSTILE, _mutate  # noqa: E402

from pisa_mm.cat.loader import load_model  # noqa: E402
from pisa_mm.cli import main  # noqa: E402
from pisa_mm.errors import PisaMMError  # noqa: E402
from pisa_mm.outcomes.expectations import parse_expectation  # noqa: E402
from pisa_mm.runner.baseline import read_baseline  # noqa: E402

MODELS = ROOT / "pisa_mm" / "cat" / "models"
SMALL = [ROOT / "litmus" / "pisa" / "address" / "Ptr+always-null.litmus"]
ARG_VALUES = [
    *HOSTILE[:6], "nan", "inf", "-1", "0", "", "--json", "-", "--timeout", "--max-memory",
    "--unroll", "--model", "pisa-rc11", "/dev/zero", "/nonexistent", str(ROOT / "litmus"),
    "--engine", "operational", "all", "-j", "--outcome", "true", "P0:%r0 == 1",
]  # fmt: skip
COMMANDS = [
    ["parse"],
    ["run", "--engine", "explicit", "--no-time"],
    ["query", "--outcome", "true"],
    ["trace", "--outcome", "true"],
    ["crossval"],
    ["diff", "pisa", "pisa-rc11"],
]


def _coded(exc: PisaMMError) -> None:
    assert exc.diagnostics and all(d.code for d in exc.diagnostics), exc.render()
    exc.render()


def _model_input(rng: random.Random, tmp: Path) -> Callable[[], object]:
    """A shipped model mutated in a copy of the models' directory (its includes resolve)."""
    name = rng.choice(sorted(p.name for p in MODELS.glob("*.cat")))
    text = _mutate(rng, (MODELS / name).read_text(encoding="utf-8"))
    (tmp / "models" / name).write_text(text, encoding="utf-8", errors="surrogatepass")
    return lambda: load_model(str(tmp / "models" / name))


def _expectation_input(rng: random.Random, seeds: list[str]) -> Callable[[], object]:
    text = _mutate(rng, rng.choice(seeds))
    return lambda: parse_expectation(text, "fuzz.expected")


def _baseline_input(rng: random.Random, seed: str, tmp: Path) -> Callable[[], object]:
    path = tmp / "fuzz-baseline.json"
    path.write_text(_mutate(rng, seed), encoding="utf-8", errors="surrogatepass")
    return lambda: read_baseline(str(path))


def _cli_input(rng: random.Random) -> Callable[[], object]:
    argv = [*rng.choice(COMMANDS), str(rng.choice(SMALL))]
    for _ in range(rng.randint(1, 3)):
        i = rng.randrange(len(argv) + 1)
        op = rng.choice(["insert", "replace", "delete"])
        if op == "insert":
            argv.insert(i, rng.choice(ARG_VALUES))
        elif op == "replace" and i < len(argv):
            argv[i] = rng.choice(ARG_VALUES)
        elif i < len(argv) and len(argv) > 1:
            del argv[i]

    def run() -> object:
        out, err = io.StringIO(), io.StringIO()
        with contextlib.redirect_stdout(out), contextlib.redirect_stderr(err):
            try:
                code = main([*argv, "--timeout", "20"] if argv[0] != "parse" else argv)
            except SystemExit as exc:  # argparse's usage errors
                code = exc.code if isinstance(exc.code, int) else 2
        assert code != 3 and "Traceback" not in err.getvalue(), (argv, err.getvalue()[-800:])
        return code

    return run


@pytest.mark.slow
def test_other_inputs_mutation_fuzz(tmp_path: Path) -> None:
    inputs = int(os.environ.get("PISA_MM_FUZZ_INPUTS", "400"))
    rng = random.Random(int(os.environ.get("PISA_MM_FUZZ_SEED", "14")))
    shutil.copytree(MODELS, tmp_path / "models")
    expected = [
        p.read_text(encoding="utf-8") for p in sorted(ROOT.glob("litmus/pisa/*/*.expected"))
    ]
    baseline = tmp_path / "seed-baseline.json"
    with contextlib.redirect_stdout(io.StringIO()):
        argv = ["run", "--engine", "explicit", "--baseline", str(baseline), "--update-baseline"]
        main([*argv, *map(str, sorted((ROOT / "litmus" / "pisa" / "address").glob("*.litmus")))])
    seed = baseline.read_text(encoding="utf-8")
    classes: dict[str, Callable[[], Callable[[], object]]] = {
        "model": lambda: _model_input(rng, tmp_path),
        "expectation": lambda: _expectation_input(rng, expected),
        "baseline": lambda: _baseline_input(rng, seed, tmp_path),
        "cli": lambda: _cli_input(rng),
    }
    escaped: list[str] = []
    slowest = (0.0, "")
    start_cpu = time.process_time()
    for k in range(inputs):
        kind = list(classes)[k % len(classes)]
        work = classes[kind]()
        start = time.process_time()
        try:
            work()
        except PisaMMError as exc:
            _coded(exc)
        except Exception as exc:  # counting what escapes is the point
            escaped.append(
                f"{kind} input {k}: {type(exc).__name__}: {exc}\n{traceback.format_exc()}"
            )
        elapsed = time.process_time() - start
        if elapsed > slowest[0]:
            slowest = (elapsed, f"{kind} input {k}")
    figures = (
        f"other-inputs mutation fuzz (seed {os.environ.get('PISA_MM_FUZZ_SEED', '14')}): "
        f"{inputs} inputs ({', '.join(classes)}), {len(escaped)} escaped exceptions, "
        f"slowest {slowest[1]} at {slowest[0]:.2f} s CPU, "
        f"{time.process_time() - start_cpu:.0f} s CPU in all"
    )
    print("\n" + figures)
    report = os.environ.get("PISA_MM_FUZZ_REPORT")
    if report:
        with open(report, "a", encoding="utf-8") as f:
            f.write(figures + "\n")
    assert not escaped, "\n".join(escaped[:5])
