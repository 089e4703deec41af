"""`pisa-mm import`: translate herd C11 and OpenCL litmus tests into PISA litmus files."""

from __future__ import annotations

import argparse
import sys
from collections import Counter
from pathlib import Path

from pisa_mm.commands.run import collect_tests
from pisa_mm.errors import PisaMMError
from pisa_mm.importers import Unsupported, load
from pisa_mm.importers.writer import write_atomic


def add_arguments(parser: argparse.ArgumentParser) -> None:
    parser.add_argument(
        "sources",
        nargs="+",
        metavar="SRC",
        help="herd litmus files, or directories searched recursively for *.litmus",
    )
    parser.add_argument(
        "-o",
        "--output",
        required=True,
        metavar="DIR",
        help="directory the PISA tests are written to (as NAME.litmus; created if missing)",
    )


def main(args: argparse.Namespace) -> int:
    sources = [Path(p) for p in collect_tests(args.sources)]
    outdir = Path(args.output)
    if outdir.exists() and not outdir.is_dir():
        raise PisaMMError.at(None, f"--output {outdir} is not a directory", "io")
    written: dict[str, Path] = {}
    skipped: Counter[str] = Counter()
    bad = 0
    for src in sources:
        try:
            imported = load(str(src))
        except Unsupported as exc:
            skipped[exc.reason.value] += 1
            print(exc.render())
            continue
        except PisaMMError as exc:
            bad += 1
            print(exc.render(getattr(exc, "sources", None)), file=sys.stderr)
            continue
        if imported.name in written:
            skipped["duplicate-name"] += 1
            print(
                f"{src}: skipped: test name {imported.name} already imported from "
                f"{written[imported.name]} [duplicate-name]"
            )
            continue
        target = outdir / f"{imported.name}.litmus"
        try:
            write_atomic(target, imported.text)
        except OSError as exc:
            raise PisaMMError.at(None, f"cannot write {target}: {exc}", "io") from exc
        written[imported.name] = src
        print(f"{src} -> {target} ({imported.dialect})")
    summary = f"{len(sources)} files: {len(written)} imported, {sum(skipped.values())} skipped"
    if skipped:
        summary += " (" + ", ".join(f"{r}: {n}" for r, n in sorted(skipped.items())) + ")"
    if bad:
        summary += f", {bad} bad input"
    print(summary)
    return 2 if bad else 0
