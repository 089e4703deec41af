"""JUnit XML for CI systems: one testcase per test and model."""

from __future__ import annotations

import re
import xml.etree.ElementTree as ET
from collections.abc import Sequence

from pisa_mm.records import record

__all__ = ["Case", "render_junit"]


@record
class Case:
    """One testcase: `failure` (a negative answer) or `error` (bad input, Unknown, a crash)
    carry the reason; neither is a pass. `output` is the result text."""

    name: str
    classname: str
    seconds: float
    failure: str | None = None
    error: str | None = None
    output: str = ""


# Characters XML 1.0 cannot hold, even escaped (a test's text may contain them).
_NOT_XML = re.compile("[^\t\n\r\x20-\ud7ff\ue000-\ufffd\U00010000-\U0010ffff]")


def _x(text: str) -> str:
    return _NOT_XML.sub("\ufffd", text)


def render_junit(suite: str, cases: Sequence[Case], *, time: bool = True) -> str:
    """The document; `time` False (`run --no-time`) writes every `time` attribute as 0 (kept:
    some readers require it), so that two runs' files compare byte for byte."""
    root = ET.Element(
        "testsuites",
        name=suite,
        tests=str(len(cases)),
        failures=str(sum(c.failure is not None for c in cases)),
        errors=str(sum(c.error is not None for c in cases)),
    )
    el = ET.SubElement(
        root,
        "testsuite",
        name=suite,
        tests=str(len(cases)),
        failures=str(sum(c.failure is not None for c in cases)),
        errors=str(sum(c.error is not None for c in cases)),
        skipped="0",
        time=f"{sum(c.seconds for c in cases):.3f}" if time else "0",
    )
    for c in cases:
        seconds = f"{c.seconds:.3f}" if time else "0"
        tc = ET.SubElement(el, "testcase", name=_x(c.name), classname=_x(c.classname), time=seconds)
        for tag, text in (("failure", c.failure), ("error", c.error)):
            if text is not None:
                first = text.splitlines()[0] if text else ""
                ET.SubElement(tc, tag, message=_x(first)).text = _x(text)
        if c.output:
            ET.SubElement(tc, "system-out").text = _x(c.output)
    ET.indent(root)
    return '<?xml version="1.0" encoding="UTF-8"?>\n' + ET.tostring(root, encoding="unicode") + "\n"
