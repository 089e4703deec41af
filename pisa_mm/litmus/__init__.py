"""The litmus frontend: `load_test`/`parse_test` turn litmus text into a validated LitmusTest."""

from __future__ import annotations

from pisa_mm.errors import MAX_TEST_BYTES, PisaMMError, read_source
from pisa_mm.litmus.parser import parse_raw, parse_raw_prop
from pisa_mm.litmus.program import LitmusTest, Prop
from pisa_mm.litmus.validate import validate, validate_prop

__all__ = ["load_test", "parse_prop", "parse_test"]

OUTCOME_PATH = "<outcome>"


def parse_test(text: str, path: str, *, strict: bool = False) -> LitmusTest:
    """Parse and validate litmus `text` (named `path` in messages).

    Raises PisaMMError carrying `sources = {path: text}` so that callers can render carets.
    With `strict`, the model-decision warnings (e.g. a missing scope) are errors.
    """
    if text.startswith("\ufeff"):
        text = text[1:]  # a UTF-8 byte-order mark (read_source already drops it from files)
    try:
        return validate(parse_raw(text, path), strict=strict)
    except PisaMMError as exc:
        exc.sources = {path: text}  # type: ignore[attr-defined]
        raise
    except RecursionError:
        # deeply nested conditions: report instead of crashing
        raise _attach(
            PisaMMError.at(None, f"{path}: input nested too deeply", "syntax"), path, text
        ) from None


def _attach(exc: PisaMMError, path: str, text: str) -> PisaMMError:
    exc.sources = {path: text}  # type: ignore[attr-defined]
    return exc


def load_test(path: str, *, strict: bool = False) -> LitmusTest:
    """Read and parse the litmus file at `path`."""
    try:
        text = read_source(path, MAX_TEST_BYTES)
    except PisaMMError as exc:
        raise _attach(exc, path, "") from None
    return parse_test(text, path, strict=strict)


def parse_prop(text: str, test: LitmusTest) -> Prop:
    """Parse a final-state proposition (condition syntax) about `test`, e.g. a CLI outcome."""
    try:
        return validate_prop(parse_raw_prop(text, OUTCOME_PATH), test, text)
    except PisaMMError as exc:
        raise _attach(exc, OUTCOME_PATH, text) from None
