"""One explorer request: run a pasted litmus test under a shipped or uploaded model."""

from __future__ import annotations

from pathlib import Path
from typing import Any

from pisa_mm.cat.loader import MODELS_DIR, SHIPPED_MODELS, load_model, load_model_source
from pisa_mm.cat.parser import parse
from pisa_mm.cat.syntax import IncludeStmt, Model
from pisa_mm.commands.run import test_unroll
from pisa_mm.engines import EngineOptions, default_engine, get_engine
from pisa_mm.errors import PisaMMError
from pisa_mm.events.build import build
from pisa_mm.litmus import parse_test
from pisa_mm.outcomes.condition import prop_text
from pisa_mm.records import record
from pisa_mm.report.explain import render_query
from pisa_mm.report.graphs import condition_question, execution_graphs, query_graph
from pisa_mm.report.herd import render_result
from pisa_mm.report.render import graphviz_available, svg_text
from pisa_mm.smt.query import query
from pisa_mm.smt.solver import Budget

__all__ = [
    "MAX_MODEL_BYTES",
    "MAX_TEST_BYTES",
    "TEST_FILE",
    "UPLOAD_FILE",
    "Request",
    "check_upload",
    "explore",
]

# The names the pasted texts get in diagnostics; never looked up on disk.
TEST_FILE = "<editor>"
UPLOAD_FILE = "<uploaded>.cat"
MAX_TEST_BYTES = 64 * 1024
MAX_MODEL_BYTES = 64 * 1024
# The execution graphs a response carries at most, besides the condition's own.
MAX_STATE_GRAPHS = 6


@record
class Request:
    """A litmus text, and a shipped model name or an uploaded model's text. The server's
    per-run budget bounds the work (web/app.py); `timeout`, its seconds, also bounds each
    Graphviz `dot` run, a process of its own."""

    test: str
    model: str
    model_text: str | None
    timeout: float | None = None


def _shippable_includes() -> frozenset[str]:
    return frozenset({p.name for p in MODELS_DIR.glob("*.cat")} | {"stdlib.cat"})


def check_upload(text: str) -> None:
    """An uploaded model may include the shipped models (by file name) and nothing else:
    the server never reads a file of its machine on a client's behalf."""
    allowed = _shippable_includes()
    try:
        top = parse(text, UPLOAD_FILE)
    except PisaMMError as exc:
        exc.sources = {UPLOAD_FILE: text}  # type: ignore[attr-defined]
        raise
    for stmt in top.statements:
        if isinstance(stmt, IncludeStmt) and stmt.path not in allowed:
            err = PisaMMError.at(
                stmt.span,
                f"an uploaded model may include only the shipped models "
                f"({', '.join(sorted(allowed))}), not '{stmt.path}'",
                "cat-include",
            )
            err.sources = {UPLOAD_FILE: text}  # type: ignore[attr-defined]
            raise err


def _model(req: Request) -> Model:
    if req.model_text is None:
        if req.model not in SHIPPED_MODELS:
            raise PisaMMError.at(None, f"unknown model '{req.model}'", "cat-model")
        return load_model(req.model)
    check_upload(req.model_text)
    name = Path(req.model).stem if req.model else "uploaded"
    return load_model_source(req.model_text, UPLOAD_FILE, name)


def _diagnostics(exc: PisaMMError) -> dict[str, Any]:
    sources: dict[str, str] = dict(getattr(exc, "sources", None) or {})
    out = []
    for d in exc.diagnostics:
        span = d.span
        out.append(
            {
                "severity": d.severity.value,
                "message": d.message,
                "code": d.code,
                "file": span.file if span else None,
                "line": span.line if span else None,
                "col": span.col if span else None,
                "in_editor": span is not None and span.file == TEST_FILE,
                "text": d.render(sources.get(span.file) if span else None),
            }
        )
    return {"ok": False, "diagnostics": out}


def explore(req: Request) -> dict[str, Any]:
    """The JSON answer to one request: the result, its explanation and graphs, or the
    located diagnostics of a bad test or model (never a traceback)."""
    try:
        return _explore(req)
    except PisaMMError as exc:
        return _diagnostics(exc)
    except RecursionError:
        return _diagnostics(PisaMMError.at(None, "input nested too deeply", "syntax"))


def _explore(req: Request) -> dict[str, Any]:
    model = _model(req)
    test = parse_test(req.test, TEST_FILE)
    es = build(test, unroll=test_unroll(test, None))
    engine = default_engine()
    options = EngineOptions(unroll=es.unroll)
    result = get_engine(engine)(test, es, model, options)
    prop = condition_question(test)
    q = query(test, es, model, prop, Budget())
    outcome = prop_text(prop)
    why = query_graph(es, model, test.name, outcome, q)
    graphs = execution_graphs(test, es, model, limit=MAX_STATE_GRAPHS)
    pictures = []
    if why is not None:
        pictures.append(
            {
                "caption": f"{outcome}: {q.answer.value}",
                "svg": svg_text(why, req.timeout),
                "dot": why,
            }
        )
    for g in graphs.graphs:
        pictures.append(
            {
                "caption": f"allowed: {g.title if g.state is None else g.state}",
                "svg": svg_text(g.dot, req.timeout),
                "dot": g.dot,
            }
        )
    return {
        "ok": True,
        "name": test.name,
        "model": model.name,
        "engine": engine,
        "verdict": result.verdict.value,
        "states": [str(s) for s in result.states],
        "flags": [{"name": f.name, "description": f.description} for f in result.flags],
        "result": render_result(result),
        "answer": q.answer.value,
        "explanation": render_query(es, outcome, model, q),
        "graphs": pictures,
        "graphs_truncated": graphs.truncated,
        "graphviz": graphviz_available(),
        "warnings": list(test.warnings),
    }
