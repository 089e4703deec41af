"""Graphviz text of one execution: events grouped by work-item, po/rf/co/fr/hb edges."""

from __future__ import annotations

from collections.abc import Iterable, Mapping

from pisa_mm.events.kinds import Kind, Tag
from pisa_mm.events.model import EventStructure
from pisa_mm.explicit.candidates import Candidate

__all__ = ["execution_dot"]

Pairs = Iterable[tuple[int, int]]

_STYLE = {
    "po": 'color="black"',
    "rf": 'color="red" fontcolor="red"',
    "co": 'color="blue" fontcolor="blue"',
    "fr": 'color="orange" fontcolor="orange"',
}
_HB_STYLE = 'color="darkgreen" fontcolor="darkgreen" style="dashed"'
_CYCLE_STYLE = 'color="purple" fontcolor="purple" penwidth="2.5"'


def _quote(text: str) -> str:
    return '"' + text.replace("\\", "\\\\").replace('"', '\\"').replace("\n", "\\n") + '"'


def _label(es: EventStructure, cand: Candidate, eid: int) -> str:
    e = es.events[eid]
    head = f"e{eid}: {e.tag.value if e.tag in (Tag.ARRIVE, Tag.DEPART) else e.kind.value}"
    if eid in cand.locs:
        head += f" {cand.locs[eid]}"
        if eid in cand.values:
            head += f"={cand.values[eid]}"
    text = e.text or ("init" if e.tag is Tag.INIT else "")
    if e.span is not None:
        text += f"  (line {e.span.line})"
    return f"{head}\n{text}" if text else head


def _immediate(pairs: set[tuple[int, int]]) -> set[tuple[int, int]]:
    """The transitive reduction of a strict order."""
    succ: dict[int, set[int]] = {}
    for a, b in pairs:
        succ.setdefault(a, set()).add(b)
    return {(a, b) for a, b in pairs if not any(b in succ.get(m, ()) for m in succ.get(a, ()))}


def execution_dot(
    es: EventStructure,
    cand: Candidate,
    *,
    title: str,
    extra: Mapping[str, Pairs] | None = None,
    cycle: Iterable[tuple[int, int, str]] = (),
) -> str:
    """A `digraph`: one cluster per work-item (init writes on their own), po as immediate
    program order, rf, co (immediate), fr (immediate), `extra` relations (hb edges), and
    the steps of a violating `cycle` drawn bold."""
    # EXIT markers carry no memory effect and would only clutter the picture
    happening = sorted(e for e in cand.events if es.events[e].kind is not Kind.EXIT)
    lines = [f"digraph {_quote(title)} {{", "  rankdir=TB;", "  node [shape=box fontsize=10];"]
    lines.append(f"  label={_quote(title)};")
    groups: dict[int | None, list[int]] = {}
    for eid in happening:
        groups.setdefault(es.events[eid].thread, []).append(eid)
    for thread, ids in sorted(groups.items(), key=lambda kv: -1 if kv[0] is None else kv[0]):
        name = "init" if thread is None else es.threads[thread].name
        lines.append(f"  subgraph cluster_{name} {{")
        lines.append(f"    label={_quote(name)};")
        for eid in ids:
            lines.append(f"    e{eid} [label={_quote(_label(es, cand, eid))}];")
        lines.append("  }")
    present = set(happening)
    po = {(a, b) for a, b in es.po if a in present and b in present}
    co = cand.co_pairs()
    fr = {(r, w2) for w, r in cand.rf for w1, w2 in co if w1 == w}
    edges: list[tuple[str, set[tuple[int, int]]]] = [
        ("po", _immediate(po)),
        ("rf", set(cand.rf)),
        ("co", _immediate(set(co))),
        ("fr", _immediate_fr(fr, co)),
    ]
    for label, pairs in edges:
        for a, b in sorted(pairs):
            lines.append(f"  e{a} -> e{b} [label={_quote(label)} {_STYLE[label]}];")
    for label, extra_pairs in sorted((extra or {}).items()):
        for a, b in sorted(set(extra_pairs)):
            if a in present and b in present:
                lines.append(f"  e{a} -> e{b} [label={_quote(label)} {_HB_STYLE}];")
    for a, b, label in cycle:
        lines.append(f"  e{a} -> e{b} [label={_quote(label)} {_CYCLE_STYLE}];")
    lines.append("}")
    return "\n".join(lines) + "\n"


def _immediate_fr(fr: set[tuple[int, int]], co: Iterable[tuple[int, int]]) -> set[tuple[int, int]]:
    """fr to the co-first write only (later ones follow by co)."""
    co_set = set(co)
    return {(r, w) for r, w in fr if not any((r, v) in fr and (v, w) in co_set for _, v in fr)}
