"""`query --svg/--png`, `run --graphs/--html/--max-graphs/--all-executions`, `diff --html`."""

from __future__ import annotations

import os
import re
import time
from pathlib import Path
from xml.etree import ElementTree

import pydot
import pytest
from report_inputs import MP, MP_RLX, ROOT, needs_dot

from pisa_mm.cli import main

FORBIDDEN = "P1:%r0 == 1 /\\ P1:%r1 == 0"


@needs_dot
def test_query_draws_svg_and_png(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    svg, png = tmp_path / "mp.svg", tmp_path / "mp.png"
    code = main(["query", str(MP), "--outcome", FORBIDDEN, "--svg", str(svg), "--png", str(png)])
    assert code == 1 and ": forbidden" in capsys.readouterr().out
    root = ElementTree.fromstring(svg.read_bytes())
    # the cycle's edges are drawn red in the SVG
    assert sum(1 for el in root.iter() if el.get("stroke") == "red") >= 4
    assert png.read_bytes().startswith(b"\x89PNG")


def test_query_without_graphviz_names_the_package_and_keeps_the_dot(
    tmp_path: Path, capsys: pytest.CaptureFixture[str], monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setenv("PATH", str(tmp_path / "empty"))
    svg = tmp_path / "mp.svg"
    code = main(["query", str(MP), "--outcome", FORBIDDEN, "--svg", str(svg)])
    assert code == 2
    err = capsys.readouterr().err
    assert "apt-get install graphviz" in err and "Traceback" not in err
    assert (tmp_path / "mp.dot").read_text().startswith("digraph")


def test_run_graphs_draws_one_picture_per_allowed_state(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    out = tmp_path / "graphs"
    assert main(["run", str(MP), "--graphs", str(out)]) == 0
    dots = sorted(out.glob("*.dot"))
    assert [p.name for p in dots] == ["MP+rel.gpu+acq.gpu.1.dot", "MP+rel.gpu+acq.gpu.2.dot"]
    titles = set()
    for p in dots:
        (g,) = pydot.graph_from_dot_data(p.read_text())
        titles.add(g.get("label"))
    # the two allowed final states of MP+rel+acq, one per picture
    assert len(titles) == 2 and all("P1:%r0=" in t for t in titles)
    if (out / "MP+rel.gpu+acq.gpu.1.svg").exists():
        ElementTree.fromstring((out / "MP+rel.gpu+acq.gpu.1.svg").read_bytes())


def test_max_graphs_stops_and_says_so(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    out = tmp_path / "graphs"
    assert main(["run", str(MP_RLX), "--graphs", str(out), "--max-graphs", "2"]) == 0
    assert len(list(out.glob("*.dot"))) == 2  # MP+rlx+rlx has four allowed states
    assert "stopped at --max-graphs 2" in capsys.readouterr().err


def test_all_executions_draws_every_allowed_execution(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    per_state, per_execution = tmp_path / "s", tmp_path / "e"
    # LB+data+po: 4 allowed executions (Positive + Negative), 3 distinct final states
    test = str(ROOT / "litmus/pisa/lb/LB+data+po.litmus")
    assert main(["run", test, "--engine", "explicit", "--graphs", str(per_state)]) == 0
    assert main(["run", test, "--engine", "explicit", "--graphs", str(per_execution),
                 "--all-executions"]) == 0  # fmt: skip
    assert len(list(per_state.glob("*.dot"))) == 3
    assert len(list(per_execution.glob("*.dot"))) == 4


def test_a_non_positive_max_graphs_is_rejected(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    assert main(["run", str(MP), "--graphs", str(tmp_path), "--max-graphs", "0"]) == 2
    assert "--max-graphs must be at least 1" in capsys.readouterr().err


def _no_network(text: str) -> None:
    """Nothing a browser would fetch: no external scripts, styles, images or links."""
    assert not re.search(r"<(script|link|img|iframe)[^>]*\s(src|href)=", text)
    assert not re.search(r"(src|href)=\"(https?:)?//", text)
    assert "@import" not in text


def test_run_html_is_a_self_contained_report(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    out = tmp_path / "report"
    bad = tmp_path / "bad.litmus"
    bad.write_text("PISA bad\n{ .global .32b @x = 0; }\nP0 @ wg 0 { frob; }\nexists (true)\n")
    code = main(["run", str(MP), str(MP_RLX), str(bad), "--html", str(out)])
    assert code == 2  # the bad file is bad input; the report is written all the same
    index = (out / "index.html").read_text()
    _no_network(index)
    assert index.count("<tr class=") == 3
    assert 'value="failed"' in index and 'value="flagged"' in index and 'value="changed"' in index
    assert re.search(r"<tr class=\"failed\"><td><a href=\"0003-bad.html\"", index)
    page = (out / "0001-MP+rel.gpu+acq.gpu.html").read_text()
    _no_network(page)
    assert '<pre class="src">' in page and "States (2)" in page
    assert "Minimal sets of axioms whose removal would allow it" in page  # the explanation
    assert page.count("<svg") == 3 or "Graphviz is not installed" in page
    error_page = (out / "0003-bad.html").read_text()
    assert "error:" in error_page and "bad.litmus:3" in error_page


def test_diff_html_shows_the_separating_state_and_both_graphs(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    out = tmp_path / "diff"
    test = ROOT / "litmus/pisa/scope/MP+rel.gpu+acq.wg+same-wg.litmus"
    assert main(["diff", "pisa", "pisa-samescope", str(test), "--html", str(out)]) == 0
    index = (out / "index.html").read_text()
    _no_network(index)
    assert "1 of 1 tests changed" in index
    page = (out / "0001-MP+rel.gpu+acq.wg+same-wg.html").read_text()
    assert "Separating state" in page and "P1:%r0=1; P1:%r1=0;" in page
    assert "Responsible axiom: <b>coherence</b>" in page
    assert "forbidden under pisa" in page and "allowed under pisa-samescope" in page


def test_a_raced_execution_draws_its_flag_witness(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    out = tmp_path / "graphs"
    test = ROOT / "litmus/pisa/mp/MP+weak.litmus"
    assert main(["run", str(test), "--graphs", str(out)]) == 0
    raced = 0
    for p in out.glob("*.dot"):
        (g,) = pydot.graph_from_dot_data(p.read_text())
        flagged = [e for e in g.get_edges() if e.get("label") == '"data-race"']
        if flagged:
            raced += 1
            # the race is between the weak write and the weak read of @x, undirected
            (edge,) = flagged
            assert edge.get("dir") == "none" and "data-race" in g.get("label")
    assert raced >= 1


@pytest.fixture
def slow_dot(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    """A Graphviz `dot` that never finishes drawing."""
    bin_dir = tmp_path / "bin"
    bin_dir.mkdir()
    dot = bin_dir / "dot"
    dot.write_text("#!/bin/sh\nexec sleep 60\n")
    dot.chmod(0o755)
    monkeypatch.setenv("PATH", f"{bin_dir}{os.pathsep}{os.environ['PATH']}")


def test_query_stops_dot_at_the_per_test_timeout(
    tmp_path: Path, capsys: pytest.CaptureFixture[str], slow_dot: None
) -> None:
    svg, dot = tmp_path / "mp.svg", tmp_path / "mp.dot"
    start = time.monotonic()
    argv = ["query", str(MP), "--outcome", FORBIDDEN, "--svg", str(svg), "--dot", str(dot)]
    assert main([*argv, "--timeout", "2"]) == 2
    assert time.monotonic() - start < 30
    err = capsys.readouterr().err
    assert "drawing the graph took more than 2 s (the per-test --timeout) [graphviz]" in err
    assert "Traceback" not in err and not svg.exists()
    assert dot.read_text().startswith("digraph")


def test_run_pictures_stop_dot_at_the_per_test_timeout_and_the_run_goes_on(
    tmp_path: Path, capsys: pytest.CaptureFixture[str], slow_dot: None
) -> None:
    graphs, html = tmp_path / "graphs", tmp_path / "html"
    argv = ["run", str(MP), "--graphs", str(graphs), "--html", str(html), "--timeout", "2"]
    assert main(argv) == 0
    captured = capsys.readouterr()
    assert "Test MP+rel.gpu+acq.gpu Allowed" in captured.out
    assert "error: MP+rel.gpu+acq.gpu: pictures not drawn: Graphviz's `dot` was stopped" in (
        captured.err
    )
    # the DOT files and the report's page (its result, the graphs as DOT) are still written
    assert sorted(p.name for p in graphs.glob("*.dot"))
    page = (html / "0001-MP+rel.gpu+acq.gpu.html").read_text()
    assert '<p class="note">MP+rel.gpu+acq.gpu: pictures not drawn' in page
    assert "under pisa (unroll 2): forbidden" in page  # the explanation is still there


def test_diff_html_stops_dot_at_the_per_test_timeout(
    tmp_path: Path, capsys: pytest.CaptureFixture[str], slow_dot: None
) -> None:
    out = tmp_path / "diff"
    test = ROOT / "litmus/pisa/scope/MP+rel.gpu+acq.wg+same-wg.litmus"
    argv = ["diff", "pisa", "pisa-samescope", str(test), "--html", str(out), "--timeout", "2"]
    assert main(argv) == 0
    assert "pictures not drawn" in capsys.readouterr().err
    assert "Separating state" in (out / "0001-MP+rel.gpu+acq.wg+same-wg.html").read_text()
