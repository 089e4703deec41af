"""Import herd C11 and OpenCL litmus tests as PISA litmus tests (`pisa-mm import`)."""

from __future__ import annotations

from pisa_mm.errors import PisaMMError, read_source
from pisa_mm.importers.parser import EXPECTED_DIALECTS, parse_herd
from pisa_mm.importers.skips import Reason, Unsupported
from pisa_mm.importers.translate import translate
from pisa_mm.importers.writer import check, render
from pisa_mm.records import record

__all__ = ["EXPECTED_DIALECTS", "Imported", "Reason", "Unsupported", "import_text", "load"]


@record
class Imported:
    """A translated test: its PISA name and litmus text (already validated)."""

    name: str
    dialect: str
    text: str


def import_text(text: str, path: str) -> Imported:
    """Translate one herd test. Bad input raises PisaMMError; a test PISA cannot express raises
    Unsupported. The text returned parses and validates under pisa_mm's own loader."""
    herd = parse_herd(text, path)
    test = translate(herd)
    out = render(test)
    try:
        check(out, f"{test.name}.litmus")
    except PisaMMError as exc:
        # The translator aims never to get here; if it does, the test is skipped, not written.
        first = exc.render(getattr(exc, "sources", None)).splitlines()[0]
        raise Unsupported(
            Reason.VALIDATION, f"the translation does not validate: {first}", herd.header_span
        ) from None
    return Imported(test.name, herd.dialect.value, out)


def load(path: str) -> Imported:
    """Read and translate the file at `path`."""
    try:
        text = read_source(path)
    except PisaMMError as exc:
        exc.sources = {path: ""}  # type: ignore[attr-defined]
        raise
    return import_text(text, path)
