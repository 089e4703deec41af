"""Static, self-contained HTML reports (inline CSS, JS and SVG): a suite run, a model diff."""

from __future__ import annotations

import html
import re
from collections.abc import Sequence
from pathlib import Path
from typing import ClassVar

from pisa_mm.records import record
from pisa_mm.runner.files import write_atomic

__all__ = [
    "DiffPage",
    "Picture",
    "TestPage",
    "highlight_litmus",
    "page_name",
    "write_diff_report",
    "write_suite_report",
]


@record
class Picture:
    """One execution graph: its caption and its SVG (or, without Graphviz, its DOT text)."""

    caption: str
    svg: str | None
    dot: str


@record
class TestPage:
    """One test of a suite run: what the table row and the test's own page show.

    `verdict` is the result's validation word (Ok/No/Unknown, or `error`), `expected` the
    hand verdict of the test's `expect =` metadata (None if absent), `changed` whether the
    result differs from the recorded `.expected` file, `problems` every failure line of the
    run (engine disagreements, expectation mismatches), `result_text` the herd-style blocks,
    `flags` (name, witness description) pairs, `explanation` the `query` answer for the
    condition's outcome, `note` a line under the graphs (e.g. that the limit stopped them).
    """

    path: str
    name: str
    source: str | None
    verdict: str
    expected: str | None
    changed: bool
    states: tuple[str, ...]
    flags: tuple[tuple[str, str], ...]
    seconds: float
    engine: str
    problems: tuple[str, ...]
    result_text: str
    explanation: str
    pictures: tuple[Picture, ...]
    note: str = ""
    error: str | None = None

    __test__: ClassVar[bool] = False  # not a pytest test class, despite its name

    @property
    def failed(self) -> bool:
        wrong = self.expected is not None and self.expected != self.verdict
        return self.error is not None or bool(self.problems) or wrong

    @property
    def match(self) -> str:
        if self.error is not None:
            return "error"
        if self.expected is None:
            return "-"
        return "yes" if self.expected == self.verdict else "NO"


@record
class DiffPage:
    """One test whose results differ between two models: the differences, the separating
    state (allowed by one model only), the responsible axiom, and both graphs."""

    path: str
    name: str
    source: str | None
    differences: tuple[str, ...]
    separating: str
    axiom: str
    old: Picture | None
    new: Picture | None


_CSS = """
body{font-family:system-ui,Helvetica,Arial,sans-serif;margin:1.5em;color:#222}
h1{font-size:1.4em}h2{font-size:1.15em;margin-top:1.4em}
table{border-collapse:collapse;font-size:.9em}
th,td{border:1px solid #ccc;padding:.25em .6em;text-align:left;vertical-align:top}
th{background:#f0f0f0;cursor:pointer;user-select:none}
th.sorted-asc::after{content:" \\25B2"}th.sorted-desc::after{content:" \\25BC"}
tr.failed td{background:#fde8e8}tr.flagged td.flags{background:#fff5d6}
td.num{text-align:right}.yes{color:#1a7f37}.NO,.error{color:#c62828;font-weight:bold}
pre{background:#f7f7f7;border:1px solid #ddd;padding:.6em;overflow:auto;font-size:.85em}
pre.src .c{color:#6a737d;font-style:italic}pre.src .k{color:#005cc5;font-weight:bold}
pre.src .r{color:#6f42c1}pre.src .v{color:#b31d28}pre.src .n{color:#116329}
pre.src .m{color:#e36209}pre.src .q{color:#032f62}
.filters label{margin-right:1.2em}.graph{margin:.6em 0 1.4em}.graph svg{max-width:100%;height:auto}
.caption{font-size:.9em;color:#555}.note{color:#8a6d00}
"""

_TABLE_JS = """
(function(){
var table=document.getElementById('tests');if(!table)return;
var body=table.tBodies[0];
function key(td){var v=td.getAttribute('data-sort');if(v===null)v=td.textContent;
  var n=parseFloat(v);return isNaN(n)?v.toLowerCase():n;}
Array.prototype.forEach.call(table.tHead.rows[0].cells,function(th,i){
  th.addEventListener('click',function(){
    var asc=!th.classList.contains('sorted-asc');
    Array.prototype.forEach.call(table.tHead.rows[0].cells,function(o){
      o.classList.remove('sorted-asc','sorted-desc');});
    th.classList.add(asc?'sorted-asc':'sorted-desc');
    var rows=Array.prototype.slice.call(body.rows);
    rows.sort(function(a,b){var x=key(a.cells[i]),y=key(b.cells[i]);
      return (x<y?-1:x>y?1:0)*(asc?1:-1);});
    rows.forEach(function(r){body.appendChild(r);});});});
function apply(){
  var want=[];document.querySelectorAll('.filters input:checked').forEach(function(c){
    want.push(c.value);});
  var shown=0;Array.prototype.forEach.call(body.rows,function(r){
    var ok=want.every(function(w){return r.classList.contains(w);});
    r.style.display=ok?'':'none';if(ok)shown++;});
  document.getElementById('shown').textContent=shown;}
document.querySelectorAll('.filters input').forEach(function(c){
  c.addEventListener('change',apply);});
apply();
})();
"""

# The litmus syntax, coarsely: comments, strings, registers, variables, numbers, mnemonics.
_TOKENS = re.compile(
    r"(?P<c>//[^\n]*|\(\*.*?\*\))|(?P<q>\"[^\"\n]*\")|(?P<r>%[A-Za-z_][\w]*)"
    r"|(?P<v>@[A-Za-z_][\w]*)|(?P<n>\b0x[0-9a-fA-F]+\b|\b\d+\b)"
    r"|(?P<k>\b(?:PISA|exists|forall|~exists|expect|flags|unroll)\b)"
    r"|(?P<m>^[ \t]+[a-z][a-z_0-9]*(?:\.[A-Za-z_0-9]+)*\b(?!:))",
    re.S | re.M,
)


def highlight_litmus(source: str) -> str:
    """HTML of a litmus source with its tokens in classed spans (escaped)."""
    out: list[str] = []
    pos = 0
    for m in _TOKENS.finditer(source):
        out.append(html.escape(source[pos : m.start()]))
        kind = m.lastgroup or ""
        out.append(f'<span class="{kind}">{html.escape(m.group(0))}</span>')
        pos = m.end()
    out.append(html.escape(source[pos:]))
    return "".join(out)


def page_name(index: int, name: str) -> str:
    """The file name of a test's page: numbered (names need not be unique), filesystem-safe."""
    safe = re.sub(r"[^A-Za-z0-9_.+-]", "_", name)[:80]
    return f"{index:04d}-{safe}.html"


def _doc(title: str, body: str, *, script: str = "") -> str:
    js = f"<script>{script}</script>" if script else ""
    return (
        '<!DOCTYPE html>\n<html lang="en"><head><meta charset="utf-8">'
        f"<title>{html.escape(title)}</title><style>{_CSS}</style></head>"
        f"<body>{body}{js}</body></html>\n"
    )


def _picture(p: Picture) -> str:
    cap = f'<div class="caption">{html.escape(p.caption)}</div>'
    if p.svg is not None:
        return f'<div class="graph">{cap}{_strip_xml_prolog(p.svg)}</div>'
    return (
        f'<div class="graph">{cap}<p class="note">Graphviz is not installed: the graph as '
        f"DOT text.</p><pre>{html.escape(p.dot)}</pre></div>"
    )


def _strip_xml_prolog(svg: str) -> str:
    """Inline SVG must not carry an XML declaration or DOCTYPE."""
    start = svg.find("<svg")
    return svg[start:] if start >= 0 else svg


def _pre(text: str) -> str:
    return f"<pre>{html.escape(text)}</pre>"


def _test_page(page: TestPage) -> str:
    esc = html.escape
    parts = [f'<p><a href="index.html">&larr; all tests</a></p><h1>{esc(page.name)}</h1>']
    parts.append(
        f"<p>{esc(page.path)} &middot; verdict <b>{esc(page.verdict)}</b>"
        + (f" (expected {esc(page.expected)})" if page.expected else "")
        + f" &middot; engine {esc(page.engine)} &middot; {page.seconds:.2f} s"
        + (" &middot; <b>changed</b> since the recorded expectation" if page.changed else "")
        + "</p>"
    )
    if page.error is not None:
        parts.append(f"<h2>Error</h2>{_pre(page.error)}")
    if page.problems:
        items = "".join(f"<li>{esc(p)}</li>" for p in page.problems)
        parts.append(f"<h2>Problems</h2><ul>{items}</ul>")
    if page.source is not None:
        parts.append(f'<h2>Source</h2><pre class="src">{highlight_litmus(page.source)}</pre>')
    if page.states:
        items = "".join(f"<li><code>{esc(s)}</code></li>" for s in page.states)
        parts.append(f"<h2>States ({len(page.states)})</h2><ul>{items}</ul>")
    if page.flags:
        items = "".join(f"<li><b>{esc(n)}</b>: <code>{esc(d)}</code></li>" for n, d in page.flags)
        parts.append(f"<h2>Flags</h2><ul>{items}</ul>")
    if page.pictures or page.note:
        parts.append("<h2>Execution graphs</h2>")
        parts.extend(_picture(p) for p in page.pictures)
        if page.note:
            parts.append(f'<p class="note">{esc(page.note)}</p>')
    if page.explanation:
        parts.append(f"<h2>Why: the condition's outcome</h2>{_pre(page.explanation)}")
    if page.result_text:
        parts.append(f"<h2>Result</h2>{_pre(page.result_text)}")
    return _doc(page.name, "".join(parts))


def _row(index: int, page: TestPage) -> str:
    esc = html.escape
    classes = [c for c, on in (
        ("failed", page.failed), ("flagged", bool(page.flags)), ("changed", page.changed)
    ) if on]  # fmt: skip
    flags = ", ".join(n for n, _ in page.flags)
    link = page_name(index, page.name)
    return (
        f'<tr class="{" ".join(classes)}"><td><a href="{esc(link)}">{esc(page.name)}</a></td>'
        f"<td>{esc(page.verdict)}</td>"
        f'<td class="{esc(page.match)}">{esc(page.match)}</td>'
        f'<td class="num">{len(page.states)}</td><td class="flags">{esc(flags)}</td>'
        f'<td class="num" data-sort="{page.seconds:.6f}">{page.seconds:.2f}</td>'
        f"<td>{esc(page.engine)}</td></tr>"
    )


def write_suite_report(directory: str | Path, title: str, pages: Sequence[TestPage]) -> None:
    """`index.html` (the sortable, filterable table) and one page per test."""
    root = Path(directory)
    for i, page in enumerate(pages, 1):
        write_atomic(root / page_name(i, page.name), _test_page(page))
    failed = sum(p.failed for p in pages)
    flagged = sum(bool(p.flags) for p in pages)
    changed = sum(p.changed for p in pages)
    head = (
        f"<h1>{html.escape(title)}</h1><p>{len(pages)} tests: {failed} failed, "
        f"{flagged} flagged, {changed} changed since their expectation; showing "
        '<span id="shown"></span>.</p><p class="filters">'
        '<label><input type="checkbox" value="failed"> failed</label>'
        '<label><input type="checkbox" value="flagged"> flagged</label>'
        '<label><input type="checkbox" value="changed"> changed</label></p>'
    )
    rows = "".join(_row(i, p) for i, p in enumerate(pages, 1))
    table = (
        '<table id="tests"><thead><tr><th>test</th><th>verdict</th><th>expected</th>'
        "<th>states</th><th>flags</th><th>time (s)</th><th>engine</th></tr></thead>"
        f"<tbody>{rows}</tbody></table>"
    )
    write_atomic(root / "index.html", _doc(title, head + table, script=_TABLE_JS))


def _diff_page(page: DiffPage) -> str:
    esc = html.escape
    parts = [f'<p><a href="index.html">&larr; all changes</a></p><h1>{esc(page.name)}</h1>']
    parts.append(f"<p>{esc(page.path)}</p><h2>Differences</h2>")
    parts.append("<ul>" + "".join(f"<li>{esc(d)}</li>" for d in page.differences) + "</ul>")
    if page.separating:
        parts.append(f"<h2>Separating state</h2><p><code>{esc(page.separating)}</code></p>")
    if page.axiom:
        parts.append(f"<p>Responsible axiom: <b>{esc(page.axiom)}</b></p>")
    for label, pic in (("old model", page.old), ("new model", page.new)):
        if pic is not None:
            parts.append(f"<h2>Under the {label}</h2>{_picture(pic)}")
    if page.source is not None:
        parts.append(f'<h2>Source</h2><pre class="src">{highlight_litmus(page.source)}</pre>')
    return _doc(page.name, "".join(parts))


def write_diff_report(
    directory: str | Path, title: str, pages: Sequence[DiffPage], *, total: int
) -> None:
    """`index.html` listing the changed tests (of `total`), and one page per change."""
    root = Path(directory)
    rows = []
    for i, page in enumerate(pages, 1):
        write_atomic(root / page_name(i, page.name), _diff_page(page))
        link = html.escape(page_name(i, page.name))
        rows.append(
            f'<tr class="changed"><td><a href="{link}">{html.escape(page.name)}</a></td>'
            f"<td>{html.escape(page.separating)}</td><td>{html.escape(page.axiom)}</td>"
            f"<td>{html.escape('; '.join(page.differences))}</td></tr>"
        )
    body = (
        f"<h1>{html.escape(title)}</h1><p>{len(pages)} of {total} tests changed; showing "
        '<span id="shown"></span>.</p><table id="tests"><thead><tr><th>test</th>'
        "<th>separating state</th><th>axiom</th><th>differences</th></tr></thead>"
        f"<tbody>{''.join(rows)}</tbody></table>"
    )
    write_atomic(root / "index.html", _doc(title, body, script=_TABLE_JS))
