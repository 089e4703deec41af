"""What the benchmark scripts share: their command line, the child-process timing loop, and
timed `pisa-mm` runs from a source tree (wall and CPU seconds)."""

from __future__ import annotations

import argparse
import multiprocessing as mp
import os
import resource
import subprocess
import sys
import time
from collections.abc import Callable, Collection
from pathlib import Path
from typing import Any

ROOT = Path(__file__).resolve().parents[1]
if str(ROOT) not in sys.path:
    sys.path.insert(0, str(ROOT))


def parser_for(doc: str, families: Collection[str]) -> argparse.ArgumentParser:
    """--quick, --budget S, --families a,b: the options of every benchmark; a script adds
    its own to the parser returned."""
    parser = argparse.ArgumentParser(description=doc.split("\n")[0])
    parser.add_argument("--quick", action="store_true", help="10 s budget per run")
    parser.add_argument("--budget", type=float, help="seconds per run (default 60, quick 10)")
    parser.add_argument("--families", help="comma-separated subset of: " + ",".join(families))
    return parser


def budget_and_families(
    parser: argparse.ArgumentParser, args: argparse.Namespace, families: Collection[str]
) -> tuple[float, list[str]]:
    budget = args.budget or (10.0 if args.quick else 60.0)
    names = args.families.split(",") if args.families else list(families)
    unknown = [n for n in names if n not in families]
    if unknown:
        parser.error(f"unknown families: {', '.join(unknown)}")
    return budget, names


def _child(run: Callable[..., tuple[float, Any]], args: tuple[Any, ...], conn: Any) -> None:
    conn.send(run(*args))


def timed(
    run: Callable[..., tuple[float, Any]], args: tuple[Any, ...], budget: float
) -> tuple[float | None, Any]:
    """`run(*args)` -> (seconds, payload) in a child process: (seconds, payload), or
    (None, None) when over `budget` (the child's start-up and imports are not charged)."""
    parent, child = mp.Pipe(duplex=False)
    proc = mp.Process(target=_child, args=(run, args, child), daemon=True)
    proc.start()
    child.close()
    if parent.poll(budget + 5.0):
        seconds, payload = parent.recv()
        proc.join()
        if seconds <= budget:
            return seconds, payload
        return None, None
    proc.kill()
    proc.join()
    return None, None


def fmt(t: float | None, width: int = 6) -> str:
    return "over".rjust(width) if t is None else f"{t:{width}.2f}"


def command(
    argv: list[str], env: dict[str, str] | None = None, stdout: Path | None = None
) -> tuple[float, float]:
    """Wall and CPU seconds (user + sys, of the process and its children) of one run of
    `argv`, which must succeed (a failing run would make the figure a lie); its standard
    output goes to the file `stdout`, or nowhere."""
    before = resource.getrusage(resource.RUSAGE_CHILDREN)
    start = time.perf_counter()
    with open(stdout or os.devnull, "w", encoding="utf-8") as out:
        subprocess.run(argv, env=env, check=True, stdout=out, stderr=subprocess.DEVNULL)
    wall = time.perf_counter() - start
    after = resource.getrusage(resource.RUSAGE_CHILDREN)
    return wall, after.ru_utime + after.ru_stime - before.ru_utime - before.ru_stime


def pisa_mm(
    src: Path, *argv: str, env: dict[str, str] | None = None, stdout: Path | None = None
) -> tuple[float, float]:
    """`command` of one `pisa-mm` run from the source tree `src`. `-P`: the current
    directory must not shadow `src`."""
    full = dict(os.environ if env is None else env, PYTHONPATH=str(src))
    return command([sys.executable, "-P", "-m", "pisa_mm.cli", *argv], full, stdout)
