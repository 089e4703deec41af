"""Parse a diy-style cycle (`PodWW Rfe rel.gpu PodRR Fre`) into a Cycle, with located errors."""

from __future__ import annotations

import re

from pisa_mm.errors import Diagnostic, PisaMMError, Severity, Span
from pisa_mm.events.kinds import Order, Scope
from pisa_mm.gen.edges import (
    COMMUNICATION,
    NO_ANNOT,
    ORDER_WORDS,
    SCOPE_WORDS,
    Cycle,
    DepKind,
    Dir,
    Edge,
    EdgeKind,
    EventAnnot,
    FenceSpace,
    FenceSpec,
    LocSpace,
    RmwKind,
)
from pisa_mm.records import replace

CYCLE_PATH = "<cycle>"
CODE = "gen-cycle"

_PO = re.compile(r"Po([sd])([RW])([RW])")
_FENCE = re.compile(r"Fence(?:([sd])(?:([RW])([RW]))?)?")
_DP = re.compile(r"Dp(Addr|Data|Ctrl)([sd])([RW])")
_COM = re.compile(r"(Rf|Fr|Co|Ws)([ei])")
_COM_KINDS = {"Rf": EdgeKind.RF, "Fr": EdgeKind.FR, "Co": EdgeKind.CO, "Ws": EdgeKind.CO}
_COM_DIRS = {EdgeKind.RF: (Dir.W, Dir.R), EdgeKind.FR: (Dir.R, Dir.W), EdgeKind.CO: (Dir.W, Dir.W)}
_FENCE_SPACES = {s.value: s for s in FenceSpace}

EDGE_HELP = (
    "expected an edge (PodWW, PosRR, Rfe, Rfi, Fre, Fri, Coe, Coi, FencedWR.sc.gpu, Fence.rel, "
    "DpAddrdR, DpDatadW, DpCtrldW) or an event annotation (rel.gpu, acq, sc.wg, xchg.rlx, shared)"
)


def _error(text: str, col: int, width: int, message: str) -> PisaMMError:
    span = Span(CYCLE_PATH, 1, col, 1, col + width)
    exc = PisaMMError(Diagnostic(Severity.ERROR, message, span, CODE))
    exc.sources = {CYCLE_PATH: text}  # type: ignore[attr-defined]
    return exc


def _tokens(text: str) -> list[tuple[str, int]]:
    """Whitespace-separated items with their 1-based columns (commas count as spaces)."""
    return [(m.group(), m.start() + 1) for m in re.finditer(r"[^\s,]+", text)]


def _parse_edge(word: str, col: int, text: str) -> Edge | None:
    base, *quals = word.split(".")
    span = Span(CYCLE_PATH, 1, col, 1, col + len(word))
    if m := _PO.fullmatch(base):
        if quals:
            raise _error(
                text,
                col,
                len(word),
                f"{base} takes no qualifiers; only Fence edges do "
                "(annotate an event with an item between edges, e.g. `PodWW rel.gpu`)",
            )
        return Edge(EdgeKind.PO, m[1] == "s", False, Dir(m[2]), Dir(m[3]), text=word, span=span)
    if m := _DP.fullmatch(base):
        if quals:
            raise _error(text, col, len(word), f"{base} takes no qualifiers; only Fence edges do")
        dep = DepKind(m[1])
        if dep is DepKind.DATA and m[3] != "W":
            raise _error(text, col, len(word), f"{base}: a data dependency ends at a write")
        return Edge(
            EdgeKind.DP, m[2] == "s", False, Dir.R, Dir(m[3]), dep=dep, text=word, span=span
        )
    if m := _COM.fullmatch(base):
        kind = _COM_KINDS[m[1]]
        src, dst = _COM_DIRS[kind]
        external = m[2] == "e"
        place = _placement_qual(base, quals, external, col, text)
        return Edge(kind, True, external, src, dst, text=word, span=span, place=place)
    if m := _FENCE.fullmatch(base):
        fence = _fence_quals(quals, word, col, text)
        fsrc = Dir(m[2]) if m[2] else None
        fdst = Dir(m[3]) if m[3] else None
        return Edge(
            EdgeKind.FENCE, m[1] == "s", False, fsrc, fdst, fence=fence, text=word, span=span
        )
    return None


def _placement_qual(
    base: str, quals: list[str], external: bool, col: int, text: str
) -> Scope | None:
    """`Rfe.wg`: the narrowest scope instance the edge's two threads share."""
    if not quals:
        return None
    at = col + len(base) + 1
    if not external:
        raise _error(
            text,
            at,
            len(quals[0]),
            f"{base} is internal (one thread): only an external edge takes a placement qualifier",
        )
    bad = next((q for q in quals if q not in SCOPE_WORDS), None)
    if len(quals) > 1 or bad is not None:
        bad = bad if bad is not None else quals[1]
        where = at + sum(len(q) + 1 for q in quals[: quals.index(bad)])
        raise _error(
            text,
            where,
            max(1, len(bad)),
            f"{base} takes one placement qualifier, "
            "the narrowest scope its two threads share (sg, wg, gpu or sys); orders, "
            "scopes and spaces belong to events (e.g. `Rfe acq.gpu`)",
        )
    return SCOPE_WORDS[quals[0]]


def _fence_quals(quals: list[str], word: str, col: int, text: str) -> FenceSpec:
    spec = FenceSpec()
    at = col + len(word.split(".")[0]) + 1
    for q in quals:
        if q in ORDER_WORDS and ORDER_WORDS[q] not in (Order.NA, Order.RLX):
            if spec.order is not None:
                raise _error(text, at, len(q), f"fence order given twice in {word}")
            spec = replace(spec, order=ORDER_WORDS[q])
        elif q in _FENCE_SPACES:
            if spec.space is not None:
                raise _error(text, at, len(q), f"fence space given twice in {word}")
            spec = replace(spec, space=_FENCE_SPACES[q])
        elif q in SCOPE_WORDS:
            if spec.scope is not None:
                raise _error(text, at, len(q), f"fence scope given twice in {word}")
            spec = replace(spec, scope=SCOPE_WORDS[q])
        else:
            raise _error(
                text,
                at,
                max(1, len(q)),
                f"unknown fence qualifier '{q}' in {word} "
                "(orders acq rel acq_rel sc; spaces global shared generic; "
                "scopes sg wg gpu sys)",
            )
        at += len(q) + 1
    return spec


def _parse_annot(word: str, col: int, text: str) -> EventAnnot:
    annot = EventAnnot(span=Span(CYCLE_PATH, 1, col, 1, col + len(word)))
    at = col
    for q in word.split("."):

        def dup(what: str, q: str = q, at: int = at) -> PisaMMError:
            return _error(text, at, max(1, len(q)), f"{what} given twice in annotation '{word}'")

        if q in ORDER_WORDS:
            if annot.order is not None:
                raise dup("order")
            annot = replace(annot, order=ORDER_WORDS[q])
        elif q in SCOPE_WORDS:
            if annot.scope is not None:
                raise dup("scope")
            annot = replace(annot, scope=SCOPE_WORDS[q])
        elif q in ("global", "shared"):
            if annot.space is not None:
                raise dup("space")
            annot = replace(annot, space=LocSpace(q))
        elif q == "generic":
            annot = replace(annot, generic=True)
        elif q in ("xchg", "add", "cas"):
            if annot.rmw is not None:
                raise dup("iatom operation")
            annot = replace(annot, rmw=RmwKind(q))
        else:
            raise _error(
                text,
                at,
                max(1, len(q)),
                f"unknown event annotation '{q}' in '{word}' "
                "(orders weak rlx acq rel acq_rel sc; scopes sg wg gpu sys; spaces "
                "global shared generic; iatom xchg add cas)",
            )
        at += len(q) + 1
    return annot


def parse_cycle(text: str) -> Cycle:
    """Parse and check a cycle; every problem is a PisaMMError at `<cycle>:1:COL`.

    Newlines and tabs count as spaces: the cycle is one line (it is also a metadata value).
    """
    text = " ".join(text.split("\n")).replace("\t", " ").replace("\r", " ")
    if len(text) > 2000:
        raise _error(text, 1, 1, "cycle description longer than 2000 characters")
    edges: list[Edge] = []
    pending: list[tuple[EventAnnot, int, int]] = []  # annotations waiting for their event
    annots: dict[int, tuple[EventAnnot, int, int]] = {}
    for word, col in _tokens(text):
        if word[0].islower():
            pending.append((_parse_annot(word, col, text), col, len(word)))
            continue
        edge = _parse_edge(word, col, text)
        if edge is None:
            raise _error(text, col, len(word), f"unknown edge '{word}': {EDGE_HELP}")
        for item in pending:
            _attach(annots, len(edges), item, text)
        pending = []
        edges.append(edge)
        if len(edges) > 16:
            raise _error(text, col, len(word), "a cycle has at most 16 edges")
    if not edges:
        raise _error(text, 1, max(1, len(text)), "empty cycle: " + EDGE_HELP)
    for item in pending:  # trailing annotations decorate event 0: the cycle wraps around
        _attach(annots, 0, item, text)
    cycle = Cycle(
        tuple(edges),
        tuple(annots[i][0] if i in annots else NO_ANNOT for i in range(len(edges))),
        text,
    )
    try:
        return check_cycle(cycle)
    except PisaMMError as exc:
        exc.sources = {CYCLE_PATH: text}  # type: ignore[attr-defined]
        raise


def _attach(
    annots: dict[int, tuple[EventAnnot, int, int]],
    event: int,
    item: tuple[EventAnnot, int, int],
    text: str,
) -> None:
    annot, col, width = item
    if event not in annots:
        annots[event] = item
        return
    old = annots[event][0]
    for name in ("order", "scope", "space", "rmw"):
        if getattr(old, name) is not None and getattr(annot, name) is not None:
            raise _error(text, col, width, f"this event's {name} is already annotated")
    annots[event] = (old.merge(annot), annots[event][1], annots[event][2])


def check_cycle(cycle: Cycle) -> Cycle:
    """Infer the event kinds the edges leave open and check that the cycle closes consistently."""
    text = cycle.text
    n = len(cycle.edges)
    edges = list(cycle.edges)
    for i in range(n):
        prev, nxt = edges[i - 1], edges[i]
        a, b = prev.dst, nxt.src
        if a is not None and b is not None and a is not b:
            raise _at(
                text,
                nxt,
                f"{nxt.text} starts at a {_word(b)} but {prev.text} before it ends at a {_word(a)}",
            )
        if a is None and b is None:
            raise _at(
                text,
                nxt,
                f"cannot tell whether the event between {prev.text} and "
                f"{nxt.text} is a read or a write: give the fence its directions "
                "(e.g. FencedWR)",
            )
    dirs: list[Dir] = []
    for i in range(n):
        d = edges[i - 1].dst or edges[i].src
        assert d is not None
        dirs.append(d)
    edges = [e.with_dirs(dirs[i], dirs[(i + 1) % n]) for i, e in enumerate(edges)]
    external = [e for e in edges if e.external]
    if len(external) == 1:
        raise _at(
            text,
            external[0],
            f"{external[0].text} must join two different threads, but "
            "it is the cycle's only external edge: it returns to the thread it leaves "
            "(use the internal form, or add another external edge)",
        )
    if not any(e.kind in COMMUNICATION for e in edges):
        raise _at(
            text,
            edges[0],
            "a cycle needs at least one communication edge (Rf, Fr or "
            "Co): program order alone never returns to its start",
        )
    diff = [e for e in edges if not e.same_loc]
    if len(diff) == 1:
        raise _at(
            text,
            diff[0],
            f"{diff[0].text} must join two different locations, but it "
            "is the cycle's only different-location edge: it returns to the location it "
            "leaves (use the same-location form)",
        )
    for i, annot in enumerate(cycle.annots):
        if annot.rmw in (RmwKind.XCHG, RmwKind.ADD) and dirs[i] is Dir.R:
            assert annot.span is not None
            raise PisaMMError(
                Diagnostic(
                    Severity.ERROR,
                    f"iatom.{annot.rmw.value} replaces a "
                    "write, but this event is a read (only `cas` can stand for a read: "
                    "a cas that always fails)",
                    annot.span,
                    CODE,
                )
            )
    return Cycle(tuple(edges), cycle.annots, text)


def _word(d: Dir) -> str:
    return "read" if d is Dir.R else "write"


def _at(text: str, edge: Edge, message: str) -> PisaMMError:
    assert edge.span is not None
    return _error(text, edge.span.col, len(edge.text), message)
