"""The HTML writer's pieces: highlighting escapes the source, pages are written atomically."""

from __future__ import annotations

import os
from pathlib import Path

from pisa_mm.report.html import Picture, TestPage, highlight_litmus, page_name, write_suite_report
from pisa_mm.runner.files import write_atomic


def test_highlighting_escapes_and_classes_the_tokens() -> None:
    html = highlight_litmus('PISA T "a <b> & c"\nP0 @ wg 0 {\n  st.global.32b [@x], 1; // <w>\n}\n')
    assert "<b>" not in html and "&lt;b&gt;" in html and "&amp;" in html
    assert '<span class="m">  st.global.32b</span>' in html
    assert '<span class="v">@x</span>' in html and '<span class="c">// &lt;w&gt;</span>' in html


def test_page_names_are_numbered_and_safe() -> None:
    assert page_name(3, "MP+rel/acq <x>") == "0003-MP+rel_acq__x_.html"


def test_write_atomic_replaces_the_file_and_leaves_no_temporary(tmp_path: Path) -> None:
    target = tmp_path / "sub" / "index.html"
    write_atomic(target, "old")
    write_atomic(target, b"new")
    assert target.read_text() == "new"
    assert os.listdir(target.parent) == ["index.html"]
    mask = os.umask(0)
    os.umask(mask)
    assert target.stat().st_mode & 0o777 == 0o666 & ~mask


def _page(name: str, **kw: object) -> TestPage:
    base: dict[str, object] = dict(
        path=f"{name}.litmus", name=name, source="PISA x\n", verdict="Ok", expected="Ok",
        changed=False, states=("a=1;",), flags=(), seconds=0.5, engine="smt", problems=(),
        result_text="", explanation="", pictures=(),
    )  # fmt: skip
    base.update(kw)
    return TestPage(**base)  # type: ignore[arg-type]


def test_rows_carry_the_filter_classes_and_dot_stands_in_for_a_missing_svg(
    tmp_path: Path,
) -> None:
    pages = [
        _page("ok"),
        _page("wrong", verdict="No"),
        _page("raced", flags=(("data-race", "P0: st / P1: ld"),), changed=True),
        _page("drawn", pictures=(Picture("allowed", None, "digraph g {}"),)),
    ]
    write_suite_report(tmp_path, "t", pages)
    index = (tmp_path / "index.html").read_text()
    assert '<tr class=""><td><a href="0001-ok.html">' in index
    assert '<tr class="failed"><td><a href="0002-wrong.html">' in index
    assert '<tr class="flagged changed"><td><a href="0003-raced.html">' in index
    assert "4 tests: 1 failed, 1 flagged, 1 changed" in index
    drawn = (tmp_path / "0004-drawn.html").read_text()
    assert "Graphviz is not installed" in drawn and "digraph g {}" in drawn
