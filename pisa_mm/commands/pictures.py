"""The pictures of `run` and `diff`: execution graphs (--graphs) and HTML reports (--html)."""

from __future__ import annotations

import argparse
import os
import re
import sys
from collections.abc import Sequence
from pathlib import Path
from typing import TYPE_CHECKING

from pisa_mm.cat.syntax import Model
from pisa_mm.errors import PisaMMError
from pisa_mm.events.model import EventStructure
from pisa_mm.litmus.program import LitmusTest
from pisa_mm.outcomes.condition import prop_text
from pisa_mm.outcomes.expectations import compare, expected_path, from_result, read_expectation
from pisa_mm.outcomes.model import TestResult
from pisa_mm.records import field, record
from pisa_mm.report.explain import render_query
from pisa_mm.report.graphs import (
    GraphSet,
    condition_question,
    execution_graphs,
    query_graph,
)
from pisa_mm.report.herd import render_result
from pisa_mm.report.html import DiffPage, Picture, TestPage, write_diff_report, write_suite_report
from pisa_mm.report.render import GRAPHVIZ_HINT, graphviz_available, render, svg_text
from pisa_mm.runner.files import write_atomic

if TYPE_CHECKING:
    from pisa_mm.report.diffexplain import Explanation
    from pisa_mm.runner.reporters import Summary, TestReport

__all__ = [
    "DiffPictures",
    "PicturesReport",
    "RunPictures",
    "reload_test",
]


def _safe(name: str) -> str:
    return re.sub(r"[^A-Za-z0-9_.+-]", "_", name)[:80]


def _svg(dot: str, timeout: float | None, draw: bool = True) -> str | None:
    """The SVG of `dot` (None without Graphviz, or not `draw`); `dot` is bounded by the
    per-test timeout."""
    return svg_text(dot, timeout) if draw else None


def _not_drawn(name: str, exc: PisaMMError) -> str:
    """Say on stderr that a test's pictures stopped (its result stands); the note."""
    note = f"{name}: pictures not drawn: {exc.render().removeprefix('error: ')}"
    print(f"error: {note}", file=sys.stderr)
    return note


def _question(
    test: LitmusTest, es: EventStructure, model: Model, timeout: float | None, draw: bool = True
) -> tuple[str, Picture | None]:
    """The `query` answer for the condition's outcome and its picture."""
    from pisa_mm.smt.query import query
    from pisa_mm.smt.solver import Budget

    prop = condition_question(test)
    try:
        q = query(test, es, model, prop, Budget(timeout=timeout))
    except PisaMMError as exc:
        return f"(no explanation: {exc.render()})", None
    text = render_query(es, prop_text(prop), model, q)
    dot = query_graph(es, model, test.name, prop_text(prop), q)
    if dot is None:
        return text, None
    picture = Picture(f"the condition's outcome: {q.answer.value}", _svg(dot, timeout, draw), dot)
    return text, picture


def _expected_verdict(test: LitmusTest, model: Model) -> str | None:
    meta = dict(test.metadata)
    value = meta.get(f"expect.{model.name}", meta.get("expect"))
    return value.strip() if value is not None else None


def _changed(path: str, model: Model, result: TestResult) -> bool:
    exp_file = expected_path(path, model.name)
    if not os.path.exists(exp_file):
        return False
    try:
        expected = read_expectation(exp_file)
    except PisaMMError:
        return True
    return bool(compare(expected, from_result(result), ("expected", result.engine)))


@record(frozen=False, slots=False)
class RunPictures:
    """What `run --graphs/--html` adds to a run: feed it every test, then `close` it."""

    model: Model
    graphs_dir: str | None
    html_dir: str | None
    all_executions: bool
    max_graphs: int
    derived: bool
    timeout: float | None
    pages: list[TestPage] = field(default_factory=list)
    warned: bool = False

    @classmethod
    def from_args(cls, args: argparse.Namespace, model: Model) -> RunPictures | None:
        if args.graphs is None and args.html is None:
            return None
        if args.max_graphs < 1:
            raise PisaMMError.at(
                None, f"--max-graphs must be at least 1, not {args.max_graphs}", "usage"
            )
        return cls(
            model,
            args.graphs,
            args.html,
            args.all_executions,
            args.max_graphs,
            args.derived,
            args.timeout,
        )

    def test_done(
        self,
        path: str,
        test: LitmusTest | None,
        es: EventStructure | None,
        results: Sequence[TestResult],
        problems: Sequence[str],
        error: str | None,
    ) -> None:
        """Draw one test's graphs and keep its report page."""
        if test is None or es is None or not results or error is not None:
            self._error_page(path, test, error or "no result")
            return
        try:
            graphs = execution_graphs(
                test,
                es,
                self.model,
                all_executions=self.all_executions,
                limit=self.max_graphs,
                derived=self.derived,
            )
        except PisaMMError as exc:  # what the enumerator cannot draw, the run still reports
            graphs = GraphSet((), False, self.max_graphs)
            note = f"{test.name}: no execution graphs: {exc.render()}"
            print(f"note: {note}", file=sys.stderr)
        else:
            note = ""
        if graphs.truncated:
            what = "executions" if self.all_executions else "final states"
            note = f"{test.name}: stopped at --max-graphs {graphs.limit}; more allowed {what} exist"
            print(f"note: {note}", file=sys.stderr)
        try:
            if self.graphs_dir is not None:
                self._write_graphs(test.name, graphs)
            if self.html_dir is not None:
                self._page(path, test, es, results, problems, graphs, note)
        except PisaMMError as exc:  # `dot` past the budget: the run goes on, its result stands
            note = _not_drawn(test.name, exc)
            if self.html_dir is not None:  # the page, with the graphs as DOT text only
                self._page(path, test, es, results, problems, graphs, note, draw=False)

    def _write_graphs(self, name: str, graphs: GraphSet) -> None:
        assert self.graphs_dir is not None
        root = Path(self.graphs_dir)
        for g in graphs.graphs:
            stem = f"{_safe(name)}.{g.index}" if len(graphs.graphs) > 1 else _safe(name)
            write_atomic(root / f"{stem}.dot", g.dot)
            if graphviz_available():
                write_atomic(root / f"{stem}.svg", render(g.dot, "svg", self.timeout))
            elif not self.warned:
                self.warned = True
                print(
                    f"warning: Graphviz's `dot` is not installed, so --graphs writes DOT files "
                    f"only: {GRAPHVIZ_HINT}",
                    file=sys.stderr,
                )

    def _page(
        self,
        path: str,
        test: LitmusTest,
        es: EventStructure,
        results: Sequence[TestResult],
        problems: Sequence[str],
        graphs: GraphSet,
        note: str,
        draw: bool = True,
    ) -> None:
        r = results[0]
        text, why = _question(test, es, self.model, self.timeout, draw)
        pictures = [why] if why is not None else []
        for g in graphs.graphs:
            svg = _svg(g.dot, self.timeout, draw)
            pictures.append(Picture(f"allowed: {g.title}", svg, g.dot))
        self.pages.append(
            TestPage(
                path=path,
                name=test.name,
                source=test.source,
                verdict=r.verdict.value,
                expected=_expected_verdict(test, self.model),
                changed=any(_changed(path, self.model, x) for x in results),
                states=tuple(str(s) for s in r.states),
                flags=tuple((f.name, f.description) for f in r.flags),
                seconds=sum(x.seconds for x in results),
                engine=", ".join(x.engine for x in results),
                problems=tuple(problems),
                result_text="\n".join(render_result(x) for x in results),
                explanation=text,
                pictures=tuple(pictures),
                note=note,
            )
        )

    def _error_page(self, path: str, test: LitmusTest | None, error: str) -> None:
        if self.html_dir is None:
            return
        self.pages.append(
            TestPage(
                path=path,
                name=test.name if test is not None else Path(path).stem,
                source=test.source if test is not None else _read(path),
                verdict="error",
                expected=None,
                changed=False,
                states=(),
                flags=(),
                seconds=0.0,
                engine="-",
                problems=(),
                result_text="",
                explanation="",
                pictures=(),
                error=error,
            )
        )

    def close(self) -> None:
        """Write the HTML report (the graphs are written as each test ends)."""
        if self.html_dir is not None:
            title = f"pisa-mm run under {self.model.name}"
            write_suite_report(self.html_dir, title, self.pages)
            print(f"HTML report: {Path(self.html_dir) / 'index.html'}", file=sys.stderr)


def _read(path: str) -> str | None:
    try:
        return Path(path).read_text(encoding="utf-8")
    except (OSError, UnicodeDecodeError):
        return None


@record(frozen=False, slots=False)
class DiffPictures:
    """What `diff --html` adds: a page per changed test, the index on `close`."""

    html_dir: str
    old: Model
    new: Model
    timeout: float | None = None  # the per-test --timeout, which bounds `dot` too
    pages: list[DiffPage] = field(default_factory=list)
    total: int = 0

    def test_done(self, test: LitmusTest, es: EventStructure, explanation: Explanation) -> None:
        """Keep the page of one changed test: the separating state's graph under each model
        (the `query` answers `diff` explained it with)."""
        x = explanation
        pics: list[Picture | None] = [None, None]
        state_text = axiom = ""
        if x.state is not None:
            state_text = str(x.state.state)
            axiom = ", ".join(x.state.axioms)
            try:
                for k, (model, q) in enumerate(
                    zip((self.old, self.new), x.state.answers, strict=True)
                ):
                    dot = query_graph(es, model, test.name, state_text, q)
                    if dot is not None:
                        caption = f"{state_text} {q.answer.value} under {model.name}"
                        pics[k] = Picture(caption, _svg(dot, self.timeout), dot)
            except PisaMMError as exc:  # `dot` past the budget: the page, without pictures
                _not_drawn(test.name, exc)
                pics = [None, None]
        elif x.note:
            print(f"note: {test.name}: no graphs: {x.note}", file=sys.stderr)
        self.pages.append(
            DiffPage(x.path, test.name, test.source, x.differences, state_text, axiom, *pics)
        )

    def close(self, total: int) -> None:
        title = f"pisa-mm diff: {self.old.name} -> {self.new.name}"
        write_diff_report(self.html_dir, title, self.pages, total=total)
        print(f"HTML report: {Path(self.html_dir) / 'index.html'}", file=sys.stderr)


def reload_test(
    path: str, args: argparse.Namespace
) -> tuple[LitmusTest | None, EventStructure | None]:
    """The test and its event structure, built again in this process: the workers that ran
    the engines return results only, and the pictures need the structure."""
    from pisa_mm.runner.job import load

    loaded = load(path, unroll=args.unroll, strict=args.strict)
    return loaded.test, loaded.structure


class PicturesReport:
    """`run --graphs/--html` as one of run's reporters (runner/reporters.py)."""

    def __init__(self, drawing: RunPictures, args: argparse.Namespace) -> None:
        self.drawing = drawing
        self.args = args

    @classmethod
    def from_args(cls, args: argparse.Namespace, model: Model) -> PicturesReport:
        drawing = RunPictures.from_args(args, model)
        assert drawing is not None
        return cls(drawing, args)

    def add(self, report: TestReport) -> None:
        if not report.results:
            self.drawing.test_done(report.path, None, None, [], [], report.message or "no result")
            return
        test, es = reload_test(report.path, self.args)
        self.drawing.test_done(report.path, test, es, report.results, report.problems, None)

    def finish(self, summary: Summary) -> None:
        self.drawing.close()
