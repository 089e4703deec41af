"""`load_test`/`parse_test` under the module name some callers import them from."""

from __future__ import annotations

from pisa_mm.litmus import load_test, parse_test

__all__ = ["load_test", "parse_test"]
