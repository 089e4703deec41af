"""`pisa-mm import`: translate herd C11 and OpenCL litmus tests into PISA litmus files."""

from __future__ import annotations

import argparse
import sys
from collections import Counter
from pathlib import Path

from pisa_mm.commands.run import collect_tests
from pisa_mm.errors import PisaMMError, printable
from pisa_mm.importers import Unsupported, load
from pisa_mm.runner.files import check_outputs, write_atomic


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
    check_outputs([], [], dirs=[args.output])
    inputs = {src.resolve() for src in sources}
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
                printable(
                    f"{src}: skipped: test name {imported.name} already imported from "
                    f"{written[imported.name]} [duplicate-name]"
                )
            )
            continue
        target = outdir / f"{imported.name}.litmus"
        if target.resolve() in inputs:
            bad += 1
            message = f"{src}: error: refusing to write over an input of this run: {target} [io]"
            print(printable(message))
            continue
        write_atomic(target, imported.text)
        written[imported.name] = src
        print(printable(f"{src} -> {target} ({imported.dialect})"))
    summary = f"{len(sources)} files: {len(written)} imported, {sum(skipped.values())} skipped"
    if skipped:
        summary += " (" + ", ".join(f"{r}: {n}" for r, n in sorted(skipped.items())) + ")"
    if bad:
        summary += f", {bad} bad input"
    print(summary)
    return 2 if bad else 0
