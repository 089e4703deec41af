"""Why a test changed between two models: the separating state, its witness and the axiom."""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

from pisa_mm.cat.eval import Step
from pisa_mm.cat.syntax import Model
from pisa_mm.errors import PisaMMError
from pisa_mm.events.model import EventStructure
from pisa_mm.explicit.candidates import Candidate
from pisa_mm.litmus import parse_prop
from pisa_mm.litmus.program import LitmusTest
from pisa_mm.outcomes.model import State, TestResult
from pisa_mm.records import record
from pisa_mm.report.explain import (
    cycle_lines,
    describe_event,
    render_execution,
    violation_steps,
)
from pisa_mm.smt.query import Allowed, QueryResult, Violation, judge, query
from pisa_mm.smt.solver import Budget

__all__ = [
    "Explanation",
    "FlagChange",
    "StateChange",
    "explain_change",
    "explanation_json",
    "render_explanation",
    "same_model",
    "separating_state",
    "state_prop_text",
]

# The summary's key for a change that neither a state nor a flag separates (counts, cut).
NO_SEPARATION = "(no separating state or flag: counts or cut only)"


@record
class StateChange:
    """A final state allowed by one model and forbidden by the other. `answers` are the
    `query` answers for it under (old, new); `axioms` the first minimal set of the forbidding
    model's axioms whose removal allows it, each with its violating cycle in `cycles`."""

    state: State
    allowing: str
    forbidding: str
    answers: tuple[QueryResult, QueryResult]
    witness: Violation | None
    axioms: tuple[str, ...]
    violation: Violation | None
    cycles: tuple[tuple[str, tuple[Step, ...]], ...]
    note: str = ""


@record
class FlagChange:
    """A flag raised under one model only, with its witness pair of events."""

    name: str
    raised_by: str
    events: tuple[int, ...]
    description: str


@record
class Explanation:
    """Everything `diff` says about one changed test besides its list of differences."""

    name: str
    path: str
    differences: tuple[str, ...]
    state: StateChange | None
    flags: tuple[FlagChange, ...]
    note: str = ""

    @property
    def responsible(self) -> str:
        """The summary's key: the forbidding axioms, else the flags, else NO_SEPARATION."""
        if self.state is not None and self.state.axioms:
            return ", ".join(self.state.axioms)
        if self.state is not None:
            return f"(no axiom named: {self.state.note or 'see the test'})"
        if self.flags:
            return ", ".join(f"flag {f.name}" for f in self.flags)
        return NO_SEPARATION


def same_model(a: Model, b: Model) -> bool:
    """The same model: one name, or the same texts once loaded (includes resolved)."""
    return a.path == b.path or sorted(a.sources.values()) == sorted(b.sources.values())


def separating_state(old: TestResult, new: TestResult) -> State | None:
    """The first (sorted) final state allowed by one model only."""
    separating = sorted(set(old.states) ^ set(new.states))
    return separating[0] if separating else None


def state_prop_text(state: State) -> str:
    return " /\\ ".join(f"{k} == {v}" for k, v in state.values) or "true"


def explain_change(
    path: str,
    test: LitmusTest,
    es: EventStructure,
    models: tuple[Model, Model],
    results: tuple[TestResult, TestResult],
    differences: Sequence[str],
    timeout: float | None,
) -> Explanation:
    """Explain one changed test (its results under (old, new)); the queries share `timeout`
    each, the command's budget."""
    old, new = results
    flags = _flag_changes(models, results)
    state = separating_state(old, new)
    if state is None:
        return Explanation(test.name, path, tuple(differences), None, flags)
    try:
        prop = parse_prop(state_prop_text(state), test)
        answers = (
            query(test, es, models[0], prop, Budget(timeout=timeout)),
            query(test, es, models[1], prop, Budget(timeout=timeout)),
        )
    except PisaMMError as exc:  # the differences still stand; say why nothing more
        note = f"no explanation: {exc.render()}"
        return Explanation(test.name, path, tuple(differences), None, flags, note)
    k = 0 if state in old.states else 1
    change = _state_change(es, state, models, answers, k)
    return Explanation(test.name, path, tuple(differences), change, flags)


def _state_change(
    es: EventStructure,
    state: State,
    models: tuple[Model, Model],
    answers: tuple[QueryResult, QueryResult],
    k: int,
) -> StateChange:
    """The separating state, allowed under models[k]: the forbidding model's axioms that the
    allowing model's witness breaks (else the first minimal correction set of `query`)."""
    allowing, forbidding = models[k], models[1 - k]
    yes, no = answers[k], answers[1 - k]
    witness = yes.witness if yes.answer is Allowed.YES else None
    base = StateChange(state, allowing.name, forbidding.name, answers, witness, (), None, ())
    if no.answer is not Allowed.NO or no.why_not is None:
        note = f"under {forbidding.name} the query answers {no.answer.value}"
        return _with(base, note=note)
    if witness is not None:
        # the very execution the allowing model admits, judged by the forbidding one: the
        # axioms it breaks there are the ones the models disagree on
        judged = Violation(witness.candidate, judge(es, forbidding, witness.candidate))
        if judged.failed:
            return _violated(base, forbidding, judged.failed, judged)
    why = no.why_not
    if not why.violations:
        return _with(base, note="no candidate execution ends in this state")
    axioms = why.corrections[0] if why.corrections else why.violations[0].failed
    violation = next((v for v in why.violations if axioms[0] in v.failed), why.violations[0])
    return _violated(base, forbidding, axioms, violation)


def _violated(
    base: StateChange, forbidding: Model, axioms: tuple[str, ...], violation: Violation
) -> StateChange:
    cycles = tuple(
        (a, violation_steps(violation.result, forbidding, a))
        for a in axioms
        if a in violation.failed
    )
    return StateChange(
        base.state,
        base.allowing,
        base.forbidding,
        base.answers,
        base.witness,
        axioms,
        violation,
        cycles,
    )


def _with(change: StateChange, *, note: str) -> StateChange:
    return StateChange(
        change.state,
        change.allowing,
        change.forbidding,
        change.answers,
        change.witness,
        (),
        None,
        (),
        note,
    )


def _flag_changes(
    models: tuple[Model, Model], results: tuple[TestResult, TestResult]
) -> tuple[FlagChange, ...]:
    names = [{f.name for f in r.flags} for r in results]
    out: list[FlagChange] = []
    for k, (model, result) in enumerate(zip(models, results, strict=True)):
        for f in result.flags:
            if f.name not in names[1 - k]:
                out.append(FlagChange(f.name, model.name, f.events, f.description))
    return tuple(out)


def render_explanation(es: EventStructure, x: Explanation) -> list[str]:
    """The lines `diff` prints under a changed test's differences (indented by two)."""
    lines: list[str] = []
    if x.note:
        lines.append(f"  ({x.note})")
    s = x.state
    if s is not None:
        lines.append(f"  separating state: {s.state} allowed by {s.allowing}, "
                     f"forbidden by {s.forbidding}")  # fmt: skip
        if s.witness is not None:
            lines.append(f"  witness under {s.allowing}:")
            lines.extend("  " + line for line in render_execution(es, s.witness.candidate))
        else:
            # the allowing side's answer: not YES here (unknown under the budget, or cut)
            answer = next((q.answer for q in s.answers if q.answer is not Allowed.NO), Allowed.NO)
            lines.append(f"  (no witness under {s.allowing}: its query answers {answer.value})")
        if s.axioms and s.violation is not None:
            lines.append(f"  {s.forbidding} forbids it by {', '.join(s.axioms)}:")
            for axiom, steps in s.cycles:
                if not steps:  # an `empty` check's witness is its set, not a cycle
                    lines.append(f"    {axiom}: violated")
                    continue
                kind = "cycle" if len(steps) > 1 else "edge"
                lines.append(f"    {axiom}: the violating {kind}:")
                lines.extend(cycle_lines(es, s.violation.candidate, steps))
        elif s.note:
            lines.append(f"  ({s.note})")
    for f in x.flags:
        lines.append(f"  flag {f.name} raised under {f.raised_by} only: {f.description}")
        lines.extend(f"    {describe_event(es, e)}" for e in f.events)
    return lines


def explanation_json(es: EventStructure, x: Explanation) -> dict[str, Any]:
    """One changed test for `diff --json`."""
    out: dict[str, Any] = {
        "name": x.name,
        "path": x.path,
        "differences": list(x.differences),
        "responsible": x.responsible,
        "state": None,
        "flags": [
            {
                "name": f.name,
                "raised_by": f.raised_by,
                "events": [_event_json(es, e, None) for e in f.events],
                "description": f.description,
            }
            for f in x.flags
        ],
    }
    if x.note:
        out["note"] = x.note
    s = x.state
    if s is not None:
        out["state"] = {
            "values": dict(s.state.values),
            "text": str(s.state),
            "allowed_by": s.allowing,
            "forbidden_by": s.forbidding,
            "witness": _execution_json(es, s.witness.candidate) if s.witness else None,
            "axioms": list(s.axioms),
            "violation": _execution_json(es, s.violation.candidate) if s.violation else None,
            "cycles": {
                a: [{"src": st.src, "dst": st.dst, "label": st.label} for st in steps]
                for a, steps in s.cycles
            },
            "note": s.note or None,
        }
    return out


def _event_json(es: EventStructure, eid: int, cand: Candidate | None) -> dict[str, Any]:
    e = es.events[eid]
    out: dict[str, Any] = {
        "id": eid,
        "thread": e.thread,
        "kind": e.kind.value,
        "text": e.text,
        "line": e.span.line if e.span is not None else None,
        "description": describe_event(es, eid, cand),
    }
    if cand is not None and eid in cand.locs:
        out["location"] = str(cand.locs[eid])
        out["value"] = cand.values.get(eid)
    return out


def _execution_json(es: EventStructure, cand: Candidate) -> dict[str, Any]:
    return {
        "events": [_event_json(es, e, cand) for e in sorted(cand.events)],
        "rf": [[w, r] for w, r in sorted(cand.rf, key=lambda p: (p[1], p[0]))],
        "co": {
            str(loc): list(order)
            for loc, order in sorted(cand.co.items(), key=lambda kv: str(kv[0]))
        },
    }
