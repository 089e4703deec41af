"""What the benchmark scripts share: their command line and the child-process timing loop."""

from __future__ import annotations

import argparse
import multiprocessing as mp
import sys
from collections.abc import Callable, Collection
from pathlib import Path
from typing import Any

ROOT = Path(__file__).resolve().parents[1]
if str(ROOT) not in sys.path:
    sys.path.insert(0, str(ROOT))


def parse_args(doc: str, families: Collection[str]) -> tuple[argparse.Namespace, float, list[str]]:
    """--quick, --budget S, --families a,b, --no-suite: (args, budget per run, families)."""
    parser = argparse.ArgumentParser(description=doc.split("\n")[0])
    parser.add_argument("--quick", action="store_true", help="10 s budget per run")
    parser.add_argument("--budget", type=float, help="seconds per run (default 60, quick 10)")
    parser.add_argument("--families", help="comma-separated subset of: " + ",".join(families))
    parser.add_argument("--no-suite", action="store_true", help="skip the litmus suite")
    args = parser.parse_args()
    budget = args.budget or (10.0 if args.quick else 60.0)
    names = args.families.split(",") if args.families else list(families)
    unknown = [n for n in names if n not in families]
    if unknown:
        parser.error(f"unknown families: {', '.join(unknown)}")
    return args, budget, names


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
