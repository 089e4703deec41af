"""`run --baseline FILE`: a suite's recorded results, and the reporter that compares with them.

One JSON file holds a whole suite's answers under one model, engine and unroll bound (see
docs/cli.md "Baselines"). Tests are keyed by their path relative to the baseline's directory,
so a baseline works from any working directory. The comparison is `.expected` files' own
(`outcomes.expectations.compare`): a baseline is those files for a whole suite at once.
"""

from __future__ import annotations

import hashlib
import json
import os
from dataclasses import fields
from pathlib import Path
from typing import TYPE_CHECKING, Any

from pisa_mm.engines import EXACT_ENGINES
from pisa_mm.errors import PisaMMError, read_source
from pisa_mm.outcomes.expectations import Expectation, compare, from_result
from pisa_mm.records import record
from pisa_mm.runner.console import Console
from pisa_mm.runner.files import check_outputs, write_atomic
from pisa_mm.runner.reporters import Kind, Summary, TestReport

if TYPE_CHECKING:
    from pisa_mm.cat.syntax import Model
    from pisa_mm.outcomes.model import TestResult

__all__ = ["FORMAT", "VERSION", "Baseline", "BaselineReport", "model_hash", "read_baseline"]

FORMAT = "pisa-mm baseline"
VERSION = 1  # bump when a field changes meaning; older files are then refused, never misread

_SET_FIELDS = ("states", "flags")
_OPTIONAL_TEXT = ("liveness",)  # absent from baselines recorded before the Liveness line
_FIELD_TYPES: dict[str, type] = {
    "name": str,
    "quantifier": str,
    "verdict": str,
    "positive": int,
    "negative": int,
    "counts_executions": bool,
    "cut": int,
    "condition": str,
}


@record
class Baseline:
    """What a baseline file records."""

    model: str
    model_hash: str
    engine: str
    unroll: int | None  # None: each test's own bound (its `unroll =` metadata or the default)
    tests: dict[str, Expectation]


def model_hash(model: Model) -> str:
    """sha256 of the loaded text of the model and every file it includes, in load order."""
    digest = hashlib.sha256()
    for text in model.sources.values():
        data = text.encode("utf-8")
        digest.update(f"{len(data)}\n".encode())
        digest.update(data)
    return "sha256:" + digest.hexdigest()


def _expectation_to_json(e: Expectation) -> dict[str, Any]:
    out: dict[str, Any] = {}
    for f in fields(Expectation):
        value = getattr(e, f.name)
        out[f.name] = sorted(value) if f.name in _SET_FIELDS else value
    return out


def _expectation_from_json(path: str, key: str, raw: object) -> Expectation:
    def bad(what: str) -> PisaMMError:
        return _corrupt(path, f"test {key!r}: {what}")

    if not isinstance(raw, dict):
        raise bad("not an object")
    values: dict[str, Any] = {}
    for f in fields(Expectation):
        if f.name in _OPTIONAL_TEXT:  # the Liveness line: null without spin loops
            value = raw.get(f.name)
            if value is not None and not isinstance(value, str):
                raise bad(f"{f.name!r} is not str or null")
            values[f.name] = value
            continue
        if f.name not in raw:
            raise bad(f"missing {f.name!r}")
        value = raw[f.name]
        if f.name in _SET_FIELDS:
            if not isinstance(value, list) or not all(isinstance(v, str) for v in value):
                raise bad(f"{f.name!r} is not a list of strings")
            values[f.name] = frozenset(value)
            continue
        want = _FIELD_TYPES[f.name]
        # bool is an int in Python: a count must not be `true`, a flag not `1`
        if not isinstance(value, want) or (want is int and isinstance(value, bool)):
            raise bad(f"{f.name!r} is not {want.__name__}")
        values[f.name] = value
    return Expectation(**values)


def _corrupt(path: str, what: str) -> PisaMMError:
    return PisaMMError.at(None, f"corrupt baseline {path}: {what}", "baseline")


def read_baseline(path: str) -> Baseline:
    """Parse a baseline file; anything but a well-formed file of this version is an error."""
    try:
        raw = json.loads(read_source(path))
    except json.JSONDecodeError as exc:
        raise _corrupt(path, f"not JSON ({exc.msg} at line {exc.lineno})") from None
    except ValueError:  # a number past Python's 4,300 digits
        raise _corrupt(path, "a number of more than 4,300 digits") from None
    except RecursionError:
        raise _corrupt(path, "nested too deeply") from None
    if not isinstance(raw, dict) or raw.get("format") != FORMAT:
        raise _corrupt(path, f'not a pisa-mm baseline (no "format": "{FORMAT}")')
    version = raw.get("version")
    if type(version) is not int or version != VERSION:  # `true` and `1.0` equal 1 in Python
        raise PisaMMError.at(
            None,
            f"baseline {path} has format version {version!r}; this pisa-mm reads version "
            f"{VERSION}: record it again with --update-baseline",
            "baseline",
        )
    model, tests = raw.get("model"), raw.get("tests")
    if not (
        isinstance(model, dict)
        and isinstance(model.get("name"), str)
        and isinstance(model.get("hash"), str)
    ):
        raise _corrupt(path, '"model" must be {"name": ..., "hash": ...}')
    engine, unroll = raw.get("engine"), raw.get("unroll")
    if not isinstance(engine, str):
        raise _corrupt(path, '"engine" must be a string')
    if unroll is not None and (not isinstance(unroll, int) or isinstance(unroll, bool)):
        raise _corrupt(path, '"unroll" must be an integer or null')
    if not isinstance(tests, dict):
        raise _corrupt(path, '"tests" must be an object')
    return Baseline(
        model=model["name"],
        model_hash=model["hash"],
        engine=engine,
        unroll=unroll,
        tests={k: _expectation_from_json(path, k, v) for k, v in tests.items()},
    )


def render_baseline(baseline: Baseline) -> str:
    doc = {
        "format": FORMAT,
        "version": VERSION,
        "model": {"name": baseline.model, "hash": baseline.model_hash},
        "engine": baseline.engine,
        "unroll": baseline.unroll,
        "tests": {k: _expectation_to_json(v) for k, v in sorted(baseline.tests.items())},
    }
    return json.dumps(doc, indent=1, sort_keys=False) + "\n"


def _unroll_text(unroll: int | None) -> str:
    return "each test's own unroll bound" if unroll is None else f"unroll bound {unroll}"


class BaselineReport:
    """`--baseline FILE`: compare every answered test with the file (`update`: rewrite it).

    It must finish before the text reporter: the count of tests that differ goes into the
    summary line and the exit code (`Summary.baseline_changed`)."""

    def __init__(
        self,
        path: str,
        console: Console,
        model: Model,
        *,
        engines: tuple[str, ...],
        unroll: int | None,
        update: bool,
        inputs: list[str],
    ) -> None:
        self.path = path
        self.console = console
        self.update = update
        self.root = Path(os.path.abspath(path)).parent
        exact = [e for e in engines if e in EXACT_ENGINES]
        self.current = Baseline(
            model=model.name,
            model_hash=model_hash(model),
            engine=(exact or list(engines))[0],
            unroll=unroll,
            tests={},
        )
        if update:
            check_outputs([path], inputs)
            self.stored: Baseline | None = None
        elif not os.path.exists(path):
            raise PisaMMError.at(
                None, f"no baseline {path} (record one with --update-baseline)", "baseline"
            )
        else:
            self.stored = read_baseline(path)  # before any work: a corrupt file stops the run
        self.changed: list[str] = []
        self.changed_tests: set[str] = set()
        self.unanswered: list[str] = []
        self.seen: set[str] = set()

    def key(self, test_path: str) -> str:
        return Path(os.path.relpath(os.path.abspath(test_path), self.root)).as_posix()

    def _result(self, results: tuple[TestResult, ...], engine: str) -> TestResult | None:
        by_engine = {r.engine: r for r in results}
        return by_engine.get(engine) or next(
            (r for r in results if r.engine in EXACT_ENGINES), results[0] if results else None
        )

    def add(self, report: TestReport) -> None:
        key = self.key(report.path)
        self.seen.add(key)
        result = self._result(report.results, self.current.engine)
        if report.kind in (Kind.UNKNOWN, Kind.BAD_INPUT, Kind.INTERNAL) or result is None:
            # Unknown is never a pass, and never recorded as an answer
            self.unanswered.append(f"{key}: {report.kind.value}, not compared")
            return
        got = from_result(result)
        if self.update:
            self.current.tests[key] = got
            return
        assert self.stored is not None
        expected = self.stored.tests.get(key)
        if expected is None:
            self.changed_tests.add(key)
            self.changed.append(f"{key}: not in the baseline")
            return
        diffs = compare(expected, got, ("baseline", result.engine))
        if diffs:
            self.changed_tests.add(key)
        self.changed.extend(f"{key}: {d}" for d in diffs)

    def header(self) -> str:
        """What differs between the baseline's recording and this run, or "" when nothing."""
        old, new = self.stored, self.current
        assert old is not None
        notes = []
        if old.model != new.model:
            notes.append(f"recorded under model {old.model}, this run uses model {new.model}")
        elif old.model_hash != new.model_hash:
            notes.append(
                f"recorded under model {old.model} with a different text (hash "
                f"{old.model_hash[:19]}..., now {new.model_hash[:19]}...)"
            )
        if old.unroll != new.unroll:
            was, now = _unroll_text(old.unroll), _unroll_text(new.unroll)
            notes.append(f"recorded with {was}, this run uses {now}")
        if old.engine != new.engine:
            notes.append(f"recorded with engine {old.engine}, compared with {new.engine}")
        return f"baseline {self.path} {'; '.join(notes)}; comparing anyway" if notes else ""

    def finish(self, summary: Summary) -> None:
        if self.update:
            write_atomic(self.path, render_baseline(self.current))
            line = f"baseline {self.path}: recorded {len(self.current.tests)} tests"
            if self.unanswered:
                line += f"; {len(self.unanswered)} without an answer not recorded"
            self.console.err(line)
            for u in self.unanswered:
                self.console.err(f"  {u}")
            return
        assert self.stored is not None
        if head := self.header():
            self.console.err(head)
        for line in self.changed:
            self.console.err(f"  {line}")
        for u in self.unanswered:
            self.console.err(f"  {u}")
        tests_changed = len(self.changed_tests)
        compared = len(self.seen) - len(self.unanswered)
        if missing := sorted(set(self.stored.tests) - self.seen):
            self.console.err(f"  {len(missing)} tests of the baseline were not run")
        self.console.err(
            f"baseline {self.path}: {tests_changed} of {compared} compared tests differ"
        )
        summary.baseline_changed = tests_changed
