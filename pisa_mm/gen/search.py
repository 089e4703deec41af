"""The candidate tests of `diff --search`: gen's shapes and sweep, smallest first.

Candidates are gen's own tests (`sweep.iter_generated`: built, checked by the frontend,
equal-up-to-renaming ones dropped), in a fixed order. Size is the number of memory accesses
of the cycle (an iatom counts once; fences are edges, not accesses). For each size, in turn:
1. the shapes (and the user's cycles) of that size as they are;
2. the same with one event annotated differently from the sweep: its order (`rlx`, the
   release/acquire of its direction, `sc`), its scope (`wg`, `gpu`, `sys`) or the space of its
   location (`global`, `shared`): mixed orders, scopes and spaces, which a uniform sweep never
   makes (a release of one scope read by an acquire of another, a shared flag for global
   data);
3. the shapes one size smaller with a same-location access inserted after one of their
   events (`PosWW` after a write, `PosRR` after a read: a second write to a released
   location, a repeated read);
4. those with one event annotated differently, as in 2.
Within each step the order is gen's: the sources, then the sweep's points.
"""

from __future__ import annotations

from collections.abc import Iterator

from pisa_mm.errors import PisaMMError
from pisa_mm.gen.build import annot_word, edge_word
from pisa_mm.gen.cycle import parse_cycle
from pisa_mm.gen.edges import ORDER_WORDS, SCOPE_WORDS, Cycle, Dir, EventAnnot, LocSpace
from pisa_mm.gen.sweep import Generated, Source, Summary, Sweep, iter_generated
from pisa_mm.records import record

__all__ = ["STEPS", "Candidate", "candidates", "cycle_words"]

# What each step of a size level varies (the module docstring).
STEPS = (
    "as given",
    "one event annotated",
    "a same-location access inserted",
    "a same-location access inserted, one event annotated",
)


@record
class Candidate:
    """One test to try: its size, the step that made it (an index into STEPS), the cycle it
    came from (as `gen --cycle` takes it), and gen's test."""

    size: int
    step: int
    source: str
    generated: Generated


def cycle_words(cycle: Cycle) -> list[tuple[str, str]]:
    """Each event's annotation word ('' for none) and the edge leaving it."""
    return [(annot_word(a), edge_word(e)) for e, a in zip(cycle.edges, cycle.annots, strict=True)]


def _text(words: list[tuple[str, str]]) -> str:
    return " ".join(f"{a} {e}" if a else e for a, e in words)


def _annotations(cycle: Cycle, i: int) -> Iterator[EventAnnot]:
    """The annotations that set one category of event i that the cycle leaves open."""
    own = cycle.annots[i]
    d = cycle.edges[i].src
    if own.order is None:
        role = ORDER_WORDS["rel"] if d is Dir.W else ORDER_WORDS["acq"]
        for order in (ORDER_WORDS["rlx"], role, ORDER_WORDS["sc"]):
            yield EventAnnot(order=order)
    if own.scope is None:
        for word in ("wg", "gpu", "sys"):
            yield EventAnnot(scope=SCOPE_WORDS[word])
    if own.space is None:
        for space in (LocSpace.GLOBAL, LocSpace.SHARED):
            yield EventAnnot(space=space)


def _annotated(cycle: Cycle) -> Iterator[str]:
    """Cycle texts with one event's annotation changed (step 2)."""
    words = cycle_words(cycle)
    for i in range(len(cycle)):
        for extra in _annotations(cycle, i):
            word = annot_word(cycle.annots[i].merge(extra))
            yield _text([*words[:i], (word, words[i][1]), *words[i + 1 :]])


def _inserted(cycle: Cycle) -> Iterator[str]:
    """Cycle texts with a same-location access inserted after one event (step 3)."""
    words = cycle_words(cycle)
    for i in range(len(cycle)):
        d = cycle.edges[i].src
        assert d is not None
        pos = f"Pos{d.value}{d.value}"
        yield _text([*words[:i], (words[i][0], pos), ("", words[i][1]), *words[i + 1 :]])


def _sources(texts: Iterator[str]) -> list[Source]:
    """A varied cycle is labelled by its own text: its `source =` metadata regenerates it
    with `gen --cycle`."""
    out = []
    for text in texts:
        try:
            out.append(Source(text, parse_cycle(text)))
        except PisaMMError:  # e.g. an inserted Pos edge next to a Coi that no longer closes
            continue
    return out


def candidates(
    sources: list[Source], sweep: Sweep, max_size: int, summary: Summary
) -> Iterator[Candidate]:
    """Every candidate up to `max_size` accesses, in the module docstring's order; what gen
    drops (invalid PISA, duplicates of earlier candidates) is counted in `summary`."""
    seen: set[str] = set()
    sizes = sorted({len(s.cycle) for s in sources} | {len(s.cycle) + 1 for s in sources})
    for size in (s for s in sizes if s <= max_size):
        plain = [s for s in sources if len(s.cycle) == size]
        smaller = [s for s in sources if len(s.cycle) + 1 == size]
        inserted = [c for s in smaller for c in _sources(_inserted(s.cycle))]
        steps: list[list[Source]] = [
            plain,
            [c for s in plain for c in _sources(_annotated(s.cycle))],
            inserted,
            [c for s in inserted for c in _sources(_annotated(s.cycle))],
        ]
        for step, group in enumerate(steps):
            for source in group:
                try:
                    for g in iter_generated([source], sweep, summary, seen):
                        yield Candidate(size, step, source.cycle.text, g)
                except PisaMMError as exc:  # the varied cycle admits no test (two spaces)
                    code = exc.diagnostics[0].code if exc.diagnostics else None
                    summary.skipped[f"a varied cycle that gen refuses [{code}]"] += 1
