"""Graphviz text of one execution, laid out as herd7's `-graph columns`.

One column per work-item (po its vertical spine), nested in clusters for the sub-group,
work-group and NDRange it runs in; init writes in a row on top; rf, co, fr and the
synchronisation edges drawn across, each pair of events once with one label; the steps of a
violating cycle in bold red.
"""

from __future__ import annotations

import re
from collections.abc import Iterable, Mapping, Sequence

from pisa_mm.cat.eval import EvalResult
from pisa_mm.cat.syntax import Model
from pisa_mm.events.kinds import Kind, Order, Tag
from pisa_mm.events.model import Event, EventStructure
from pisa_mm.explicit.candidates import Candidate
from pisa_mm.records import record

__all__ = ["CYCLE_COLOR", "EDGE_COLORS", "Edge", "event_label", "execution_dot", "model_edges"]

Pairs = Iterable[tuple[int, int]]

# One colour per relation, herd-like; red is kept for the violated cycle.
EDGE_COLORS = {
    "po": "black",
    "rf": "forestgreen",
    "co": "blue",
    "fr": "darkorange",
    "sw": "purple",
    "aso": "gray40",
    "derived": "gray55",
    "flag": "darkgoldenrod",
}
CYCLE_COLOR = "red"

# Model definitions drawn by default (synchronises-with, by name: a presentation convention
# of the shipped models, like `explain.HB_PREFIX`), and the ones drawn only on request.
_SYNC_NAME = re.compile(r"sw(_[A-Za-z]+)?")
_DERIVED_NAME = re.compile(r"hb(_[A-Za-z]+)?")
# How the in-column orders pull on the layout; every other edge leaves it alone.
_LAYOUT = {"po": "weight=100", "aso": "weight=10"}
# Flag witnesses are drawn as their own edges (a race is not an order).
_FLAG_STYLE = 'style="dotted" penwidth=2 dir=none constraint=false'

# The order in which the names of one edge's relations are listed in its label.
_ORDER = ("po", "rf", "co", "fr", "sw", "aso", "derived")


@record
class Edge:
    """One drawn edge: every relation that holds between the pair, and whether it is a step
    of the violated cycle."""

    src: int
    dst: int
    labels: tuple[str, ...]
    family: str  # the key of EDGE_COLORS that styles it
    cycle: bool
    step: str = ""  # the violated axiom's own word for a cycle step (e.g. sw-path (in hb_G))


def _quote(text: str) -> str:
    return '"' + text.replace("\\", "\\\\").replace('"', '\\"').replace("\n", "\\n") + '"'


def event_label(es: EventStructure, cand: Candidate, eid: int) -> str:
    """`W rel.gpu @y=1`, `R na @x=0`, `F acq_rel.wg`, `ARRIVE`: what herd7 prints."""
    e = es.events[eid]
    kind = e.tag.value if e.tag in (Tag.ARRIVE, Tag.DEPART) else e.kind.value
    parts = [str(kind)]
    if e.kind in (Kind.READ, Kind.WRITE, Kind.FENCE) and e.tag is not Tag.INIT:
        order = "na" if e.order is Order.NA else e.order.value
        parts.append(order if e.scope is None else f"{order}.{e.scope.name.lower()}")
    if eid in cand.locs:
        value = cand.values.get(eid)
        parts.append(f"{cand.locs[eid]}={value}" if value is not None else str(cand.locs[eid]))
    return " ".join(parts)


def _tooltip(e: Event) -> str:
    text = e.text or ("initial value" if e.tag is Tag.INIT else e.kind.value)
    return f"line {e.span.line}: {text}" if e.span is not None else text


def _immediate(pairs: set[tuple[int, int]]) -> set[tuple[int, int]]:
    """The transitive reduction of a strict order."""
    succ: dict[int, set[int]] = {}
    for a, b in pairs:
        succ.setdefault(a, set()).add(b)
    return {(a, b) for a, b in pairs if not any(b in succ.get(m, ()) for m in succ.get(a, ()))}


def _immediate_fr(fr: set[tuple[int, int]], co: set[tuple[int, int]]) -> set[tuple[int, int]]:
    """fr to the co-first write only (later ones follow by co)."""
    return {(r, w) for r, w in fr if not any((r, v) in fr and (v, w) in co for _, v in fr)}


def model_edges(
    result: EvalResult, model: Model, es: EventStructure, *, derived: bool = False
) -> dict[str, frozenset[tuple[int, int]]]:
    """The model's relations worth drawing on an execution: its synchronises-with relations
    (sw_G, sw_S, which include barrier synchronisation) always, its happens-before relations
    (hb, hb_G, ...) with `derived`; aso comes from the event structure (`execution_dot`)."""
    out: dict[str, frozenset[tuple[int, int]]] = {}
    for name in sorted(model.types):
        wanted = _SYNC_NAME.fullmatch(name) or (derived and _DERIVED_NAME.fullmatch(name))
        if not wanted or model.definition(name) is None:
            continue
        try:
            out[name] = frozenset(result.rel_value(name))
        except TypeError:  # a set, not a relation
            continue
    return out


def _family(name: str) -> str:
    if _SYNC_NAME.fullmatch(name):
        return "sw"
    return name if name in EDGE_COLORS else "derived"


def _edges(
    es: EventStructure,
    cand: Candidate,
    present: set[int],
    relations: Mapping[str, Pairs],
    cycle: Sequence[tuple[int, int, str]],
) -> list[Edge]:
    po_all = {(a, b) for a, b in es.po if a in present and b in present}
    co = set(cand.co_pairs())
    fr = {(r, w2) for w, r in cand.rf for w1, w2 in co if w1 == w}
    drawn: dict[tuple[int, int], list[str]] = {}
    base: list[tuple[str, set[tuple[int, int]]]] = [
        ("po", _immediate(po_all)),
        ("rf", set(cand.rf)),
        ("co", _immediate(co)),
        ("fr", _immediate_fr(fr, co)),
        ("aso", _immediate({p for p in es.aso if p[0] in present and p[1] in present}) - po_all),
    ]
    for name, pairs in base:
        for p in pairs:
            drawn.setdefault(p, []).append(name)
    for name, rel_pairs in sorted(relations.items()):
        pairs = {p for p in rel_pairs if p[0] in present and p[1] in present and p[0] != p[1]}
        if _family(name) == "derived":
            # a derived order is drawn by its immediate edges beyond program order
            pairs = _immediate(pairs) - po_all
        elif _family(name) == "sw":
            pairs -= po_all  # a work-item's own barrier arrive/depart: po says it already
        for p in pairs:
            drawn.setdefault(p, []).append(name)
    steps: dict[tuple[int, int], str] = {}
    for a, b, label in cycle:
        steps.setdefault((a, b), label)
        drawn.setdefault((a, b), [])
    out = []
    for (a, b), names in sorted(drawn.items()):
        names.sort(key=lambda n: (_ORDER.index(_family(n)), n))
        step = steps.get((a, b))
        labels = _merge_sync(names) if names else (step or "",)
        family = _family(names[0]) if names else "derived"
        out.append(Edge(a, b, labels, family, step is not None, step or ""))
    return out


def _merge_sync(names: list[str]) -> tuple[str, ...]:
    """`sw_G, sw_S` -> `sw_G/S`: one word for the synchronisation of several spaces. A
    model's space-less `sw` beside per-space ones (pisa's sw_X is sw restricted to the
    spaces X, plus barriers) says nothing more and is dropped."""
    sync = [n for n in names if _family(n) == "sw" and "_" in n]
    if sync:
        names = [n for n in names if _family(n) != "sw" or "_" in n]
    if len(sync) < 2:
        return tuple(names)
    merged = "sw_" + "/".join(n.split("_", 1)[1] for n in sync)
    out: list[str] = []
    for n in names:
        if n in sync:
            if merged not in out:
                out.append(merged)
        else:
            out.append(n)
    return tuple(out)


def _edge_line(edge: Edge) -> str:
    label = ", ".join(edge.labels)
    color = CYCLE_COLOR if edge.cycle else EDGE_COLORS[edge.family]
    attrs = [f"label={_quote(label)}", f'color="{color}"', f'fontcolor="{color}"']
    # po is the vertical spine of a column; cross edges must not move the columns
    # an asynchronous copy's aso places it below its issue point, more loosely than po
    attrs.append(_LAYOUT.get(edge.family, "constraint=false"))
    if edge.cycle:
        attrs.append('penwidth=3 style="bold"')
        attrs.append(f"tooltip={_quote('violated cycle: ' + edge.step)}")
    elif edge.family in ("aso", "derived"):
        attrs.append('style="dashed"')
    return f"  e{edge.src} -> e{edge.dst} [{' '.join(attrs)}];"


def _placement_keys(es: EventStructure, thread: int) -> list[tuple[str, str]]:
    """The nested clusters of a work-item, outermost first: (cluster id, label)."""
    p = es.threads[thread].placement
    if p.host:
        return [("host", "host")]
    out = []
    if p.gpu is not None:
        out.append((f"gpu{p.gpu}", f"NDRange {p.gpu}"))
    if p.wg is not None:
        out.append((f"{out[-1][0] if out else ''}wg{p.wg}", f"work-group {p.wg}"))
    if p.sg is not None:
        out.append((f"{out[-1][0] if out else ''}sg{p.sg}", f"sub-group {p.sg}"))
    return out


def _thread_block(
    es: EventStructure, cand: Candidate, thread: int, ids: list[int], indent: str
) -> list[str]:
    t = es.threads[thread]
    p = t.placement
    name = t.name if p.lane is None else f"{t.name} (lane {p.lane})"
    lines = [f"{indent}subgraph cluster_{t.name} {{", f"{indent}  label={_quote(name)};"]
    lines.append(f'{indent}  style="rounded" color="gray30";')
    for eid in ids:
        e = es.events[eid]
        lines.append(
            f"{indent}  e{eid} [label={_quote(event_label(es, cand, eid))} "
            f"tooltip={_quote(_tooltip(e))}];"
        )
    lines.append(f"{indent}}}")
    return lines


def _clusters(es: EventStructure, cand: Candidate, groups: dict[int, list[int]]) -> list[str]:
    """Work-item columns nested in their placement clusters, in thread order."""
    tree: dict[tuple[tuple[str, str], ...], list[int]] = {}
    for thread in sorted(groups):
        tree.setdefault(tuple(_placement_keys(es, thread)), []).append(thread)
    lines: list[str] = []
    opened: list[tuple[str, str]] = []
    for path, threads in tree.items():
        common = 0
        while common < min(len(opened), len(path)) and opened[common] == path[common]:
            common += 1
        while len(opened) > common:
            opened.pop()
            lines.append("  " * (len(opened) + 1) + "}")
        for key, label in path[common:]:
            indent = "  " * (len(opened) + 1)
            lines.append(f"{indent}subgraph cluster_{key} {{")
            lines.append(f'{indent}  label={_quote(label)}; style="dashed" color="gray60";')
            opened.append((key, label))
        for thread in threads:
            lines.extend(_thread_block(es, cand, thread, groups[thread], "  " * (len(opened) + 1)))
    while opened:
        opened.pop()
        lines.append("  " * (len(opened) + 1) + "}")
    return lines


def execution_dot(
    es: EventStructure,
    cand: Candidate,
    *,
    title: str,
    relations: Mapping[str, Pairs] | None = None,
    cycle: Iterable[tuple[int, int, str]] = (),
    flags: Iterable[tuple[str, tuple[int, ...]]] = (),
) -> str:
    """A `digraph` of `cand`: `relations` are the model's edges to draw besides po, rf, co,
    fr and aso (see `model_edges`); `cycle` the (src, dst, label) steps of a violation;
    `flags` the (name, witness pair) of each raised flag, drawn as a dotted line."""
    # EXIT markers carry no memory effect and would only clutter the picture
    happening = sorted(e for e in cand.events if es.events[e].kind is not Kind.EXIT)
    present = set(happening)
    lines = [
        f"digraph {_quote(title)} {{",
        "  rankdir=TB; newrank=true; nodesep=0.6; ranksep=0.45;",
        f'  label={_quote(title)}; labelloc="t"; fontname="Helvetica";',
        '  node [shape=box style="rounded" fontsize=11 fontname="Helvetica" margin="0.12,0.05"];',
        '  edge [fontsize=10 fontname="Helvetica"];',
    ]
    inits = [e for e in happening if es.events[e].thread is None]
    groups: dict[int, list[int]] = {}
    for eid in happening:
        thread = es.events[eid].thread
        if thread is not None:
            groups.setdefault(thread, []).append(eid)
    if inits:
        lines.append('  subgraph cluster_init { label="init"; style="dotted"; rank=same;')
        for eid in inits:
            e = es.events[eid]
            lines.append(
                f"    e{eid} [label={_quote(event_label(es, cand, eid))} "
                f'tooltip={_quote(_tooltip(e))} fontsize=9 color="gray50"];'
            )
        lines.append("  }")
        # init on top: invisible edges to every event that nothing in its column precedes
        ordered = {b for a, b in (*es.po, *es.aso) if a in present}
        for ids in groups.values():
            for eid in ids:
                if eid not in ordered:
                    lines.append(f"  e{inits[0]} -> e{eid} [style=invis weight=1];")
    lines.extend(_clusters(es, cand, groups))
    edges = _edges(es, cand, present, relations or {}, tuple(cycle))
    lines.extend(_edge_line(edge) for edge in edges)
    color = EDGE_COLORS["flag"]
    for name, pair in flags:
        if len(pair) == 2 and all(i in present for i in pair):
            lines.append(
                f"  e{pair[0]} -> e{pair[1]} [label={_quote(name)} color={_quote(color)} "
                f"fontcolor={_quote(color)} {_FLAG_STYLE}];"
            )
    lines.append("}")
    return "\n".join(lines) + "\n"
