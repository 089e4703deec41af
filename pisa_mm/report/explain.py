"""Text of `query` answers: a witness execution, or why an outcome is forbidden."""

from __future__ import annotations

from collections.abc import Sequence

from pisa_mm.cat.eval import EvalResult, Step
from pisa_mm.cat.syntax import Model, names_in
from pisa_mm.errors import printable
from pisa_mm.events.kinds import Kind, Order, Tag
from pisa_mm.events.model import Event, EventStructure
from pisa_mm.explicit.candidates import Candidate
from pisa_mm.smt.query import Allowed, QueryResult, Violation

__all__ = [
    "cycle_lines",
    "describe_event",
    "hb_edges",
    "render_execution",
    "render_query",
    "violation_steps",
]

# Definitions whose edges a witness shows besides rf and co: the model's happens-before
# relations, found by name (a presentation convention of the shipped models, not an axiom).
HB_PREFIX = "hb"


def describe_event(es: EventStructure, eid: int, cand: Candidate | None = None) -> str:
    """`e5 P1 R rlx.sys @x=1  ld.global.relaxed.32b %r1, [@x]  (MP.litmus:12)`."""
    e = es.events[eid]
    who = "init" if e.thread is None else f"P{e.thread}"
    what = _kind(e)
    attrs = []
    if e.kind in (Kind.READ, Kind.WRITE, Kind.FENCE) and e.tag is not Tag.INIT:
        order = "na" if e.order is Order.NA else e.order.value
        attrs.append(order if e.scope is None else f"{order}.{e.scope.name.lower()}")
    if cand is not None and eid in cand.locs:
        value = cand.values.get(eid)
        attrs.append(f"{cand.locs[eid]}={value}" if value is not None else str(cand.locs[eid]))
    elif e.locs and len(e.locs) == 1:
        attrs.append(str(next(iter(e.locs))))
    text = e.text or ("init write" if e.tag is Tag.INIT else e.kind.value)
    where = f"  ({printable(e.span.file)}:{e.span.line})" if e.span is not None else ""
    line = f"e{eid} {who} {what} {' '.join(attrs)}  {text}{where}"
    return line.rstrip()


def _kind(e: Event) -> str:
    if e.tag in (Tag.ARRIVE, Tag.DEPART):
        return str(e.tag.value)
    return str(e.kind.value)


def hb_edges(
    result: EvalResult, model: Model, es: EventStructure
) -> dict[str, frozenset[tuple[int, int]]]:
    """The model's hb relations on an execution, without program order and init edges
    (those are implied): the edges that matter when reading a witness."""
    out: dict[str, frozenset[tuple[int, int]]] = {}
    po = result.rel_value("po")
    for name in sorted(model.types):  # every defined or built-in name
        if not name.startswith(HB_PREFIX) or model.definition(name) is None:
            continue
        try:
            pairs = result.rel_value(name)
        except TypeError:
            continue
        out[name] = frozenset(
            (a, b)
            for a, b in pairs
            if (a, b) not in po and es.events[a].thread is not None and a != b
        )
    return out


def violation_steps(result: EvalResult, model: Model, axiom: str) -> tuple[Step, ...]:
    """The cycle (or reflexive edge) that breaks `axiom`, with every edge of a defined
    relation expanded into the edges that make it (hb_G into po and sw_G, eco into rf, co
    and fr), two levels down at most."""
    w = result.witness(axiom)
    if w is None:
        return ()
    out: list[Step] = []
    for step in w.cycle:
        for inner in _expand(result, model, step, depth=EXPAND_DEPTH):
            label = inner.label if inner is step else f"{inner.label} (in {step.label})"
            out.append(Step(inner.src, inner.dst, label))
    return tuple(out)


# How many levels of definitions a violating edge is expanded through.
EXPAND_DEPTH = 2


def _expand(result: EvalResult, model: Model, step: Step, depth: int) -> list[Step]:
    definition = model.definition(step.label)
    if depth == 0 or definition is None:
        return [step]
    if all(model.definition(n) is None for n in names_in(definition.expr)):
        return [step]  # made of built-ins only (fr, po-loc): already a readable edge
    inner = result.explain(step.label, step.src, step.dst)
    if not inner or (len(inner) == 1 and inner[0].label == step.label):
        return [step]
    return [s for i in inner for s in _expand(result, model, i, depth - 1)]


def _rf_lines(es: EventStructure, cand: Candidate) -> list[str]:
    out = []
    for w, r in sorted(cand.rf, key=lambda p: (p[1], p[0])):
        src = "init" if es.events[w].thread is None else f"e{w}"
        out.append(f"    {src} -rf-> e{r}  ({cand.locs[r]}={cand.values.get(r)})")
    return out


def _co_lines(es: EventStructure, cand: Candidate) -> list[str]:
    out = []
    for loc, order in sorted(cand.co.items(), key=lambda kv: str(kv[0])):
        if len(order) < 2:
            continue
        names = ["init" if es.events[w].thread is None else f"e{w}" for w in order]
        out.append(f"    {loc}: {' -co-> '.join(names)}")
    return out


def _events_block(es: EventStructure, cand: Candidate) -> list[str]:
    out = []
    threads: dict[int | None, list[int]] = {}
    for eid in sorted(cand.events):
        e = es.events[eid]
        if e.kind is Kind.EXIT or e.tag is Tag.INIT:
            continue
        threads.setdefault(e.thread, []).append(eid)
    for t, ids in sorted(threads.items(), key=lambda kv: -1 if kv[0] is None else kv[0]):
        out.append(f"  P{t}:" if t is not None else "  (no work-item):")
        out.extend(f"    {describe_event(es, i, cand)}" for i in ids)
    return out


def render_execution(es: EventStructure, cand: Candidate) -> list[str]:
    lines = ["  events:"]
    lines.extend("  " + line for line in _events_block(es, cand))
    lines.append("  rf:")
    lines.extend(_rf_lines(es, cand) or ["    (none)"])
    co = _co_lines(es, cand)
    if co:
        lines.append("  co:")
        lines.extend(co)
    return lines


def cycle_lines(es: EventStructure, cand: Candidate, steps: Sequence[Step]) -> list[str]:
    """A violating cycle, one event per line with the edge between."""
    out = []
    for s in steps:
        out.append(f"      {describe_event(es, s.src, cand)}")
        out.append(f"        --{s.label}-->")
    if steps:
        out.append(f"      {describe_event(es, steps[-1].dst, cand)}")
    return out


def render_query(es: EventStructure, outcome: str, model: Model, q: QueryResult) -> str:
    """The whole answer of `pisa-mm query`, ending with a newline."""
    head = f"Outcome {outcome} under {model.name} (unroll {q.unroll}): {q.answer.value}"
    lines = [head]
    match q.answer:
        case Allowed.YES:
            assert q.witness is not None
            lines.extend(_witness_lines(es, model, q.witness))
        case Allowed.NO:
            assert q.why_not is not None
            lines.extend(_refutation_lines(es, model, q))
        case Allowed.CUT:
            assert q.witness is not None
            lines.append(
                "No complete allowed execution ends in this state. An allowed execution cut by "
                f"the unroll bound ({q.unroll}) has these values when it is cut; it is not a "
                "final state, and a larger --unroll may show whether a complete one does."
            )
            lines.extend(_witness_lines(es, model, q.witness, heading="The cut execution:"))
        case Allowed.UNKNOWN:
            lines.append(
                "The solver gave up (timeout or resource limit): neither allowed nor "
                "forbidden is known. Try a larger --timeout."
            )
    if q.invalid is not None:
        lines.append(
            f"Flag invalid-address: an allowed execution reaches an invalid address, "
            f"{q.invalid.access}: undefined behaviour. The work-item stops there, and that "
            "execution has no final state (the answer above is about final states)."
        )
        lines.extend(_witness_lines(es, model, q.invalid.execution, heading="That execution:"))
    return "\n".join(lines) + "\n"


def _witness_lines(
    es: EventStructure,
    model: Model,
    w: Violation,
    heading: str = "An allowed execution with this outcome:",
) -> list[str]:
    cand = w.candidate
    lines = [heading]
    lines.extend(render_execution(es, cand))
    for name, pairs in hb_edges(w.result, model, es).items():
        if pairs:
            lines.append(f"  {name} (beyond po):")
            lines.extend(f"    e{a} -{name}-> e{b}" for a, b in sorted(pairs))
    if w.result.flags:
        lines.append(f"  flags raised: {', '.join(w.result.flags)}")
    return lines


def _refutation_lines(es: EventStructure, model: Model, q: QueryResult) -> list[str]:
    why = q.why_not
    assert why is not None
    lines: list[str] = []
    if not why.violations:
        lines.append("No candidate execution (whatever the model) ends in this state.")
        return lines
    if why.corrections:
        lines.append("Minimal sets of axioms whose removal would allow it:")
        lines.extend(f"  {{{', '.join(c)}}}" for c in why.corrections)
    more = " (first ones only)" if why.truncated else ""
    lines.append(f"Candidate executions with this outcome: {len(why.violations)}{more}")
    for k, v in enumerate(why.violations, 1):
        lines.append(f"Candidate {k}: violates {', '.join(v.failed)}")
        lines.extend(render_execution(es, v.candidate))
        for axiom in v.failed:
            steps = violation_steps(v.result, model, axiom)
            kind = "cycle" if len(steps) > 1 else "edge"
            lines.append(f"    {axiom}: the violating {kind}:")
            lines.extend(cycle_lines(es, v.candidate, steps))
    return lines
