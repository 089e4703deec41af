"""Readable (plain or rich) and JSON views of an EventStructure, for `pisa-mm parse`."""

from __future__ import annotations

import io
from collections.abc import Iterable, Sequence
from typing import Any

from pisa_mm.events.kinds import Kind, Tag
from pisa_mm.events.model import Event, EventStructure, Location, Placement
from pisa_mm.events.relations import barrier_relations, incl_blocks, static_relations
from pisa_mm.values.expr import Expr
from pisa_mm.values.text import to_text

# The relations the table shows; po and aso print as their immediate edges (transitive
# reduction) because their closures are long and say nothing more.
SHOWN_RELATIONS = ("po", "rmw", "addr", "data", "ctrl", "aso", "bsync", "binst")
_REDUCED = frozenset({"po", "aso"})

EVENT_COLUMNS = (
    "id",
    "thread",
    "kind",
    "order",
    "scope",
    "space",
    "location",
    "value",
    "guard",
    "PISA line",
)


# Past this many characters a value's text is elided in its middle (values/text.py `elide`):
# a chain of dependent instructions may build a value whose full text is exponential.
MAX_EXPR_TEXT = 1000


class ExprText:
    """The texts of one structure's expressions, each node's computed once: the values of a
    thread's registers share most of their nodes."""

    __slots__ = ("memo",)

    def __init__(self) -> None:
        self.memo: dict[int, tuple[Expr, str]] = {}

    def __call__(self, expr: Expr | None) -> str:
        return "" if expr is None else to_text(expr, limit=MAX_EXPR_TEXT, memo=self.memo)


def placement_text(p: Placement) -> str:
    if p.host:
        return "host"
    return f"gpu {p.gpu}, wg {p.wg}, sg {p.sg}, lane {p.lane}"


def _kind_text(e: Event) -> str:
    base = e.kind.value
    if e.tag is Tag.PLAIN:
        return base
    return f"{base}:{e.tag.value}"


def _space_text(e: Event) -> str:
    spaces = sorted(s.value for s in e.spaces)
    text = "|".join(spaces)
    return f"generic->{text}" if e.generic else text


def _location_text(e: Event, text: ExprText) -> str:
    if e.kind not in (Kind.READ, Kind.WRITE):
        return ""
    locs = sorted(e.locs, key=str)
    if len(locs) == 1:
        return str(locs[0])
    return f"[{text(e.addr)}] in {{{', '.join(str(loc) for loc in locs)}}}"


def _value_text(e: Event, text: ExprText) -> str:
    if e.kind is Kind.READ:
        return f"v{e.id}"
    return text(e.value)


def _line_text(e: Event) -> str:
    if e.span is None:
        return e.text
    return f"{e.span.line}: {e.text}"


def event_row(e: Event, es: EventStructure, text: ExprText) -> tuple[str, ...]:
    thread = "init" if e.thread is None else es.threads[e.thread].name
    kind = _kind_text(e)
    if e.barrier_index is not None:
        kind += f"#{e.barrier_index}"
    if e.collective_index is not None:
        kind += f"#{e.collective_index}"
    return (
        str(e.id),
        thread,
        kind,
        e.order.value,
        "" if e.scope is None else e.scope.name,
        _space_text(e),
        _location_text(e, text),
        _value_text(e, text),
        "" if e.thread is None else text(e.guard),
        _line_text(e),
    )


def _reduce(pairs: Iterable[tuple[int, int]]) -> list[tuple[int, int]]:
    """The transitive reduction of a transitive acyclic relation."""
    pairs = set(pairs)
    succ: dict[int, set[int]] = {}
    for a, b in pairs:
        succ.setdefault(a, set()).add(b)
    out = []
    for a, b in pairs:
        if not any((c, b) in pairs for c in succ.get(a, ()) if c != b):
            out.append((a, b))
    return sorted(out)


def relation_rows(es: EventStructure) -> list[tuple[str, str]]:
    """(relation name, its pairs as text) for each shown relation.

    Computed from the structure directly, not from `static_relations`: that one materialises
    the all-pairs relations (ext, int, same-*), quadratic in the events, which the table
    does not show; po comes from its tree's edges, never from its closure.
    """
    bsync, binst, _ = barrier_relations(es)
    rels: dict[str, Iterable[tuple[int, int]]] = {
        "po": es.po.edges(),
        "rmw": es.rmw,
        "addr": es.addr,
        "data": es.data,
        "ctrl": es.ctrl,
        "aso": _reduce(es.aso),
        "bsync": bsync,
        "binst": binst,
    }
    rows = []
    for name in SHOWN_RELATIONS:
        pairs = sorted(rels[name])
        label = f"{name} (immediate)" if name in _REDUCED else name
        rows.append((label, " ".join(f"{a}->{b}" for a, b in pairs) or "-"))
    return rows


def _table(header: Sequence[str], rows: Sequence[Sequence[str]], indent: str = "  ") -> list[str]:
    widths = [len(h) for h in header]
    for row in rows:
        widths = [max(w, len(c)) for w, c in zip(widths, row, strict=True)]
    lines = []
    for row in (header, *rows):
        cells = [c.ljust(w) for c, w in zip(row, widths, strict=True)]
        lines.append((indent + "  ".join(cells)).rstrip())
    return lines


def _path_rows(es: EventStructure, text: ExprText) -> list[tuple[str, ...]]:
    rows: list[tuple[str, ...]] = []
    for t in es.threads:
        for i, p in enumerate(t.paths):
            notes = [n for n, on in (("return", p.returned), ("CUT", p.cut)) if on]
            rows.append(
                (
                    f"{t.name}.{i}",
                    " ".join(str(e) for e in p.events),
                    text(p.guard),
                    " ".join(notes),
                )
            )
    return rows


def _register_rows(es: EventStructure, text: ExprText) -> list[tuple[str, ...]]:
    rows: list[tuple[str, ...]] = []
    for t in es.threads:
        for i, p in enumerate(t.paths):
            for name, value in p.final_regs:
                rows.append((f"{t.name}.{i}", f"%{name}", text(value)))
    return rows


def _thread_rows(es: EventStructure) -> list[tuple[str, ...]]:
    rows: list[tuple[str, ...]] = []
    for t in es.threads:
        cut = sum(1 for p in t.paths if p.cut)
        paths = f"{len(t.paths)} path{'s' if len(t.paths) != 1 else ''}"
        if cut:
            paths += f" ({cut} cut)"
        rows.append((t.name, placement_text(t.placement), paths))
    return rows


def _layout_rows(es: EventStructure) -> list[tuple[str, ...]]:
    return [
        (f"@{v.name}", v.space.value, f"{v.base:#x}", f"{v.width}b x {v.count}")
        for v in es.layout.variables
    ]


def render_plain(es: EventStructure) -> str:
    """The table as plain text (deterministic; golden tests compare it)."""
    text = ExprText()
    out = [f"Test {es.name} (unroll {es.unroll})", "Threads"]
    out += _table(("thread", "placement", "paths"), _thread_rows(es))
    out.append("Layout")
    out += _table(("variable", "space", "base", "elements"), _layout_rows(es))
    out.append("Init")
    out += [f"  {loc} = {value}" for loc, value in es.init]
    out.append("Events")
    out += _table(EVENT_COLUMNS, [event_row(e, es, text) for e in es.events])
    out.append("Paths")
    out += _table(("path", "events", "guard", "notes"), _path_rows(es, text))
    out.append("Final registers")
    out += _table(("path", "register", "value"), _register_rows(es, text))
    out.append("Relations")
    out += [f"  {name}: {pairs}" for name, pairs in relation_rows(es)]
    return "\n".join(out) + "\n"


def render_rich(es: EventStructure, width: int = 160) -> str:
    """The same content as rich tables, with terminal colours."""
    text = ExprText()
    from rich.console import Console
    from rich.markup import escape
    from rich.table import Table

    buf = io.StringIO()
    console = Console(file=buf, width=width, force_terminal=True)
    console.print(f"[bold]Test {escape(es.name)}[/bold] (unroll {es.unroll})")
    sections: list[tuple[str, Sequence[str], Sequence[Sequence[str]]]] = [
        ("Threads", ("thread", "placement", "paths"), _thread_rows(es)),
        ("Layout", ("variable", "space", "base", "elements"), _layout_rows(es)),
        ("Init", ("location", "value"), [(str(loc), str(v)) for loc, v in es.init]),
        ("Events", EVENT_COLUMNS, [event_row(e, es, text) for e in es.events]),
        ("Paths", ("path", "events", "guard", "notes"), _path_rows(es, text)),
        ("Final registers", ("path", "register", "value"), _register_rows(es, text)),
        ("Relations", ("relation", "pairs"), relation_rows(es)),
    ]
    for title, header, rows in sections:
        table = Table(title=title, title_justify="left", show_lines=False)
        for h in header:
            table.add_column(h, overflow="fold")
        for row in rows:
            table.add_row(*(escape(cell) for cell in row))
        console.print(table)
    return buf.getvalue()


# ---------------------------------------------------------------- JSON


def _loc_dict(loc: Location) -> dict[str, Any]:
    return {
        "var": loc.var,
        "offset": loc.offset,
        "instance": loc.instance,
        "space": loc.space.value,
        "text": str(loc),
    }


def _event_dict(e: Event, text: ExprText) -> dict[str, Any]:
    return {
        "id": e.id,
        "thread": e.thread,
        "kind": e.kind.value,
        "tag": e.tag.value,
        "order": e.order.value,
        "scope": None if e.scope is None else e.scope.name,
        "spaces": sorted(s.value for s in e.spaces),
        "width": e.width,
        "addr": None if e.addr is None else text(e.addr),
        "locations": [_loc_dict(loc) for loc in sorted(e.locs, key=str)],
        "value": None if e.value is None else text(e.value),
        "guard": text(e.guard),
        "parent": e.parent,
        "generic": e.generic,
        "barrier_index": e.barrier_index,
        "collective_index": e.collective_index,
        "instr": e.instr,
        "line": None if e.span is None else e.span.line,
        "text": e.text,
    }


# In `parse --json`: the relations listed as full pair lists, and those given by their
# equivalence classes (docs/cli.md says how the others follow).
JSON_PAIR_RELATIONS = ("rmw", "addr", "data", "ctrl", "aso", "bsync", "binst", "bfewer")
JSON_CLASS_RELATIONS = ("int", "sinstr", "same-sg", "same-wg", "same-gpu")


def structure_to_dict(es: EventStructure) -> dict[str, Any]:
    """Everything in the structure, with expressions as text; relations in a form linear in
    the structure (pair lists, po's edges, classes, incl's blocks: see docs/cli.md)."""
    rels = static_relations(es)
    text = ExprText()
    return {
        "name": es.name,
        "unroll": es.unroll,
        "threads": [
            {
                "name": t.name,
                "placement": {
                    "host": t.placement.host,
                    "gpu": t.placement.gpu,
                    "wg": t.placement.wg,
                    "sg": t.placement.sg,
                    "lane": t.placement.lane,
                },
                "paths": [
                    {
                        "events": list(p.events),
                        "guard": text(p.guard),
                        "final_regs": {k: text(v) for k, v in p.final_regs},
                        "returned": p.returned,
                        "cut": p.cut,
                    }
                    for p in t.paths
                ],
            }
            for t in es.threads
        ],
        "layout": [
            {
                "name": v.name,
                "space": v.space.value,
                "base": v.base,
                "width": v.width,
                "count": v.count,
            }
            for v in es.layout.variables
        ],
        "init": [{"location": _loc_dict(loc), "value": v} for loc, v in es.init],
        "events": [_event_dict(e, text) for e in es.events],
        # Linear in the structure: the relations given as pairs in full, po as its tree's
        # edges, the equivalences as classes and incl as blocks (ext and id follow).
        "relations": {name: sorted(map(list, rels.pairs(name))) for name in JSON_PAIR_RELATIONS},
        "po_edges": [list(edge) for edge in es.po.edges()],
        "classes": {name: rels.classes(name) for name in JSON_CLASS_RELATIONS},
        "incl_blocks": [[a, b] for a, b in incl_blocks(es)],
    }


__all__ = [
    "EVENT_COLUMNS",
    "JSON_CLASS_RELATIONS",
    "JSON_PAIR_RELATIONS",
    "SHOWN_RELATIONS",
    "event_row",
    "render_plain",
    "render_rich",
    "structure_to_dict",
]
