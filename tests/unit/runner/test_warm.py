"""The warm-up the command's process does before the pool forks its workers
(runner/job.py `warm_process`): what the workers inherit, and that a failing or slow
warm-up is dropped instead of stopping the command."""

from __future__ import annotations

from pathlib import Path

import pytest
from fresh_process import run_script

from pisa_mm.runner import job as job_mod
from pisa_mm.runner.budget import Budget
from pisa_mm.runner.guard import interruptible
from pisa_mm.runner.job import EngineTask, Loaded, warm_process

WARMED = """
import json, sys
from pisa_mm.runner.budget import Budget
from pisa_mm.runner.job import EngineTask, warm_process
before = set(sys.modules)
warm_process(EngineTask(("pisa",), ("explicit",)), Budget(None, None))
print(json.dumps(sorted(set(sys.modules) - before)))
"""


def test_the_workers_inherit_the_engine_frontend_and_liveness_modules(tmp_path: Path) -> None:
    imported = set(run_script(WARMED, tmp_path / "cache"))
    for module in (
        "pisa_mm.litmus.parser",
        "pisa_mm.events.build",
        "pisa_mm.explicit.engine",
        "pisa_mm.liveness.check",
    ):
        assert module in imported


class _Failing:
    def warm(self) -> None:
        pass

    def __call__(self, loaded: Loaded) -> None:
        raise RuntimeError("a bug the first test will report")


class _Endless:
    def warm(self) -> None:
        pass

    def __call__(self, loaded: Loaded) -> None:
        while True:
            pass


# each under `interruptible`, as every command runs (cli.main): a signal an earlier test
# received is forgotten there


def test_a_failing_warm_up_is_dropped() -> None:
    with interruptible():
        warm_process(_Failing(), Budget(None, None))


def test_a_slow_warm_up_is_cut_at_its_limit(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr(job_mod, "WARM_LIMIT", 0.2)
    with interruptible():
        warm_process(_Endless(), Budget(None, None))
        warm_process(_Endless(), Budget(30.0, None))


def test_a_warm_up_runs_the_task_on_a_valid_test() -> None:
    seen: list[Loaded] = []

    class Watching(EngineTask):
        def __call__(self, loaded: Loaded) -> tuple[()]:
            seen.append(loaded)
            return ()

    with interruptible():
        warm_process(Watching(("pisa",), ("explicit",)), Budget(None, None))
    assert len(seen) == 1
    assert seen[0].error is None and seen[0].structure is not None
