"""The DOT of an execution: columns in placement clusters, each edge once, the cycle red."""

from __future__ import annotations

from collections import Counter
from pathlib import Path
from xml.etree import ElementTree

import pydot
import pytest
from report_inputs import MP, needs_dot

from pisa_mm.cat.loader import load_model
from pisa_mm.errors import PisaMMError
from pisa_mm.events.build import build
from pisa_mm.litmus import load_test, parse_prop
from pisa_mm.report import render as render_mod
from pisa_mm.report.graphs import query_graph
from pisa_mm.report.render import render, write_picture
from pisa_mm.smt.query import Allowed, query

FORBIDDEN = "P1:%r0 == 1 /\\ P1:%r1 == 0"
ALLOWED = "P1:%r0 == 1 /\\ P1:%r1 == 1"


def _graph(outcome: str, *, derived: bool = False) -> tuple[pydot.Dot, Allowed]:
    test = load_test(str(MP))
    es = build(test, unroll=2)
    model = load_model("pisa")
    q = query(test, es, model, parse_prop(outcome, test))
    dot = query_graph(es, model, test.name, outcome, q, derived=derived)
    assert dot is not None
    (graph,) = pydot.graph_from_dot_data(dot)
    return graph, q.answer


def _clusters(g: pydot.Graph) -> dict[str, pydot.Subgraph]:
    out: dict[str, pydot.Subgraph] = {}
    for sub in g.get_subgraphs():
        out[sub.get_name()] = sub
        out.update(_clusters(sub))
    return out


def _nodes(g: pydot.Graph) -> dict[str, pydot.Node]:
    out = {n.get_name(): n for n in g.get_nodes() if n.get_name() not in ("node", "edge")}
    for sub in g.get_subgraphs():
        out.update(_nodes(sub))
    return out


def _attr(obj: pydot.Common, name: str) -> str:
    value = obj.get(name)
    return "" if value is None else str(value).strip('"')


def test_work_items_are_columns_nested_in_their_placement() -> None:
    g, _ = _graph(FORBIDDEN)
    clusters = _clusters(g)
    # P0 in work-group 0 and P1 in work-group 1, both in NDRange 0
    gpu = clusters["cluster_gpu0"]
    assert _attr(gpu, "label") == "NDRange 0"
    inner = {s.get_name() for s in gpu.get_subgraphs()}
    assert inner == {"cluster_gpu0wg0", "cluster_gpu0wg1"}
    assert "cluster_P0" in _clusters(clusters["cluster_gpu0wg0"])
    assert "cluster_P1" in _clusters(clusters["cluster_gpu0wg1"])
    p0 = {n.get_name() for n in clusters["cluster_P0"].get_nodes()}
    assert p0 == {"e2", "e3"}


def test_events_read_like_herd_with_the_source_line_as_tooltip() -> None:
    g, _ = _graph(FORBIDDEN)
    nodes = _nodes(g)
    assert _attr(nodes["e3"], "label") == "W rel.gpu @y=1"
    assert _attr(nodes["e7"], "label") == "R na @x=0"
    assert _attr(nodes["e3"], "tooltip") == "line 16: st.global.release.gpu.32b [@y], 1"


def test_each_pair_of_events_is_joined_by_one_edge_with_one_label() -> None:
    g, _ = _graph(FORBIDDEN)
    edges = [e for e in g.get_edges() if _attr(e, "style") != "invis"]
    pairs = Counter((e.get_source(), e.get_destination()) for e in edges)
    assert pairs and max(pairs.values()) == 1
    labels = {(e.get_source(), e.get_destination()): _attr(e, "label") for e in edges}
    assert labels[("e3", "e5")] == "rf, sw_G/S"  # rf and the synchronisation it makes
    assert labels[("e0", "e7")] == "rf"
    assert labels[("e7", "e2")] == "fr"


def test_the_violated_cycle_is_bold_red_and_nothing_else_is_red() -> None:
    g, answer = _graph(FORBIDDEN)
    assert answer is Allowed.NO
    red = {
        (e.get_source(), e.get_destination()) for e in g.get_edges() if _attr(e, "color") == "red"
    }
    # coherence: Wx -po-> Wy -rf/sw-> Ry -po-> Rx -fr-> Wx
    assert red == {("e2", "e3"), ("e3", "e5"), ("e5", "e7"), ("e7", "e2")}
    for e in g.get_edges():
        if (e.get_source(), e.get_destination()) in red:
            assert _attr(e, "penwidth") == "3"


def test_po_is_the_spine_and_cross_edges_do_not_constrain_the_columns() -> None:
    g, _ = _graph(ALLOWED)
    for e in g.get_edges():
        label = _attr(e, "label")
        if label == "po":
            assert _attr(e, "weight") == "100"
        elif label:
            assert _attr(e, "constraint") == "false"


def test_derived_edges_only_on_request() -> None:
    plain, answer = _graph(ALLOWED)
    assert answer is Allowed.YES
    assert not any("hb" in _attr(e, "label") for e in plain.get_edges())
    derived, _ = _graph(ALLOWED, derived=True)
    assert any("hb_G" in _attr(e, "label") for e in derived.get_edges())


@needs_dot
def test_graphviz_renders_svg_and_png() -> None:
    g, _ = _graph(FORBIDDEN)
    svg = render(g.to_string(), "svg")
    root = ElementTree.fromstring(svg)
    assert root.tag.endswith("svg")
    assert b"W rel.gpu @y=1" in svg
    assert render(g.to_string(), "png").startswith(b"\x89PNG\r\n\x1a\n")


def test_without_graphviz_the_error_names_the_package_and_the_dot_is_written(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setattr(render_mod.shutil, "which", lambda name: None)
    target = tmp_path / "mp.svg"
    with pytest.raises(PisaMMError) as info:
        write_picture(str(target), "digraph g { a -> b; }\n", "svg")
    text = info.value.render()
    assert "apt-get install graphviz" in text and str(tmp_path / "mp.dot") in text
    assert (tmp_path / "mp.dot").read_text().startswith("digraph")
    assert not target.exists()
