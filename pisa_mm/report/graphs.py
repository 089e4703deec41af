"""Execution graphs of a test: one per allowed final state (or per allowed execution), and
the picture of a `query` answer (its witness, or a violating execution with its cycle)."""

from __future__ import annotations

from typing import TYPE_CHECKING

from pisa_mm.litmus.program import Not, Prop, Quantifier
from pisa_mm.records import record
from pisa_mm.report import DEFAULT_MAX_GRAPHS

if TYPE_CHECKING:
    from pisa_mm.cat.syntax import Model
    from pisa_mm.events.model import EventStructure
    from pisa_mm.litmus.program import LitmusTest
    from pisa_mm.outcomes.model import State
    from pisa_mm.smt.query import QueryResult

__all__ = [
    "DEFAULT_MAX_GRAPHS",
    "Graph",
    "GraphSet",
    "condition_question",
    "execution_graphs",
    "query_graph",
]


@record
class Graph:
    """One picture: `index` numbers it within its test (1-based), `state` is its final state
    (None for an execution that has none: cut, or ended at an invalid address)."""

    index: int
    state: State | None
    title: str
    dot: str


@record
class GraphSet:
    """The pictures of one test; `truncated` when the limit stopped the drawing."""

    graphs: tuple[Graph, ...]
    truncated: bool
    limit: int


def execution_graphs(
    test: LitmusTest,
    es: EventStructure,
    model: Model,
    *,
    all_executions: bool = False,
    limit: int = DEFAULT_MAX_GRAPHS,
    derived: bool = False,
) -> GraphSet:
    """The first allowed execution of each final state (every allowed execution with
    `all_executions`, those that end without a final state included: cut by the unroll
    bound or at an invalid address), at most `limit`, enumerated by the explicit engine's
    candidates. Executions the test's filter discards are not drawn."""
    seen: set[State | None] = set()
    graphs: list[Graph] = []
    # imported here: `run` reads DEFAULT_MAX_GRAPHS for its options without drawing (start-up)
    from pisa_mm.explicit.engine import executions, final_state
    from pisa_mm.report.dot import execution_dot, model_edges
    from pisa_mm.smt.query import judge

    for ex in executions(es, model):
        if not ex.allowed:
            continue
        state = final_state(test, es, ex.candidate)
        unfinished = ex.candidate.cut or ex.candidate.ended
        if state is None and not (all_executions and unfinished):
            continue
        if state in seen and not all_executions:
            continue
        if len(graphs) == limit:
            return GraphSet(tuple(graphs), True, limit)
        seen.add(state)
        result = judge(es, model, ex.candidate)
        title = f"{test.name} under {model.name}: {'' if state is None else state}".rstrip()
        if ex.flags:
            title += f" ({', '.join(f.name for f in ex.flags)})"
        if ex.candidate.cut:
            title += " (cut by the unroll bound: no final state)"
        elif ex.candidate.ended:
            title += " (ended at an invalid address: no final state)"
        dot = execution_dot(
            es,
            ex.candidate,
            title=title,
            relations=model_edges(result, model, es, derived=derived),
            flags=[(f.name, f.events) for f in ex.flags],
        )
        graphs.append(Graph(len(graphs) + 1, state, title, dot))
    return GraphSet(tuple(graphs), False, limit)


def condition_question(test: LitmusTest) -> Prop:
    """The outcome whose allowedness decides the condition: P for `exists P` and
    `~exists P`, not P for `forall P`."""
    prop = test.condition.prop
    return Not(prop) if test.condition.quantifier is Quantifier.FORALL else prop


def query_graph(
    es: EventStructure,
    model: Model,
    name: str,
    outcome: str,
    result: QueryResult,
    *,
    derived: bool = False,
) -> str | None:
    """The witness of an allowed outcome, or the first violating execution of a forbidden
    one with its cycle in red; None when there is nothing to draw (unknown, or no
    candidate execution has the outcome)."""
    from pisa_mm.report.dot import execution_dot, model_edges
    from pisa_mm.report.explain import violation_steps

    if result.witness is not None:
        w = result.witness
        return execution_dot(
            es,
            w.candidate,
            title=f"{name}: {outcome} allowed under {model.name}",
            relations=model_edges(w.result, model, es, derived=derived),
        )
    if result.why_not is not None and result.why_not.violations:
        v = result.why_not.violations[0]
        axiom = v.failed[0] if v.failed else None
        steps = violation_steps(v.result, model, axiom) if axiom else ()
        return execution_dot(
            es,
            v.candidate,
            title=f"{name}: {outcome} forbidden under {model.name} ({axiom})",
            relations=model_edges(v.result, model, es, derived=derived),
            cycle=[(s.src, s.dst, s.label) for s in steps],
        )
    return None
