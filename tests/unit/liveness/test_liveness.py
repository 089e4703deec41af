"""The liveness check on the progress suite entries, under each progress model."""

from __future__ import annotations

from pathlib import Path

import pytest

from pisa_mm.litmus import load_test
from pisa_mm.liveness.check import check_liveness
from pisa_mm.liveness.loops import spin_loops
from pisa_mm.liveness.metadata import liveness_problems
from pisa_mm.liveness.progress import Progress
from pisa_mm.outcomes.model import LivenessStatus
from pisa_mm.runner.job import Loaded, cached_model, load_source

DIR = Path("litmus/pisa/progress")
PROGRESS_TESTS = sorted(DIR.glob("*.litmus"))


def _load(path: str | Path, unroll: int | None = None) -> Loaded:
    loaded = load_source(str(path), None, unroll=unroll, strict=False)
    assert loaded.test is not None and loaded.structure is not None
    return loaded


def _status(loaded: Loaded, progress: Progress) -> LivenessStatus:
    assert loaded.test is not None and loaded.structure is not None
    live = check_liveness(loaded.test, loaded.structure, cached_model("pisa"), progress)
    assert live is not None
    return live.status


@pytest.mark.parametrize("path", PROGRESS_TESTS, ids=lambda p: p.stem)
def test_metadata_states_every_progress_model(path: Path) -> None:
    meta = dict(load_test(str(path)).metadata)
    for p in Progress:
        assert meta.get(f"liveness.{p.value}") in ("terminates", "may hang"), p.value


@pytest.mark.parametrize("path", PROGRESS_TESTS, ids=lambda p: p.stem)
def test_liveness_per_progress_model(path: Path) -> None:
    """Every progress test under all four models gives its hand-derived `liveness.M`."""
    loaded = _load(path)
    assert loaded.test is not None
    meta = dict(loaded.test.metadata)
    got = {p.value: _status(loaded, p).value for p in Progress}
    want = {p.value: meta[f"liveness.{p.value}"] for p in Progress}
    assert got == want


def test_the_suite_covers_the_issue_cases() -> None:
    names = {p.stem for p in PROGRESS_TESTS}
    assert {
        "SpinMP+subgroups",
        "SpinMP+workgroups",
        "Spin+nowrite",
        "SpinMP+lanes",
        "Barrier+atomics+workgroups",
        "MP+barrier+spin",
        "Lock+cas+lanes",
        "Lock+cas+subgroups",
    } <= names


def test_below_the_bound_the_writer_needs_it_is_undecided() -> None:
    """P0 loops three times before its store: at --unroll 1 its loop cannot finish, so a
    model that must keep running P0 can neither say terminates nor may hang."""
    low = _load(DIR / "SpinMP+writer-loop.litmus", unroll=1)
    assert [_status(low, p) for p in Progress] == [
        LivenessStatus.UNDECIDED,
        LivenessStatus.UNDECIDED,
        LivenessStatus.UNDECIDED,
        LivenessStatus.MAY_HANG,  # unfair: P0 need not run at all, whatever the bound
    ]
    for unroll in (2, 3):
        enough = _load(DIR / "SpinMP+writer-loop.litmus", unroll=unroll)
        assert _status(enough, Progress.PISA) is LivenessStatus.TERMINATES
        assert _status(enough, Progress.FAIR) is LivenessStatus.TERMINATES


def test_undecided_names_the_loop_that_needs_more_iterations() -> None:
    low = _load(DIR / "SpinMP+writer-loop.litmus", unroll=1)
    assert low.test is not None and low.structure is not None
    live = check_liveness(low.test, low.structure, cached_model("pisa"), Progress.PISA)
    assert live is not None
    assert "P1 spins at line 38" in live.detail
    assert "P0, which must keep running, is still in its loop at line 29" in live.detail


def test_a_spinning_writer_that_must_run_is_not_undecided() -> None:
    """P0 spins itself before releasing P1: the executions where P0 is still spinning at
    the bound are covered by those with its stale iterations dropped."""
    for unroll in (1, 2):
        loaded = _load(DIR / "SpinMP+chain.litmus", unroll=unroll)
        assert _status(loaded, Progress.PISA) is LivenessStatus.TERMINATES


def test_a_writer_waiting_at_a_barrier_for_the_spinner_deadlocks() -> None:
    """P1 passed the barrier in the cut execution only because the bound cut P0 before it:
    P1 really waits there for ever, so its store never comes, under every model."""
    loaded = _load(DIR / "Spin+barrier+deadlock.litmus")
    assert loaded.test is not None and loaded.structure is not None
    live = check_liveness(loaded.test, loaded.structure, cached_model("pisa"), Progress.FAIR)
    assert live is not None and live.status is LivenessStatus.MAY_HANG
    assert "P1 waits at line 30 (barrier.workgroup) for a work-item that never gets" in live.detail


def test_reason_names_the_spinner_line_and_rule() -> None:
    loaded = _load(DIR / "SpinMP+workgroups.litmus")
    assert loaded.test is not None and loaded.structure is not None
    live = check_liveness(loaded.test, loaded.structure, cached_model("pisa"), Progress.PISA)
    assert live is not None
    assert live.line.startswith("Liveness may hang: P1 spins at line 29 (goto.cond %p0, spin)")
    assert "another work-group" in live.detail and "PISA 1.1.1" in live.detail


def test_no_spin_loop_no_liveness() -> None:
    loaded = _load("litmus/pisa/barrier/SB+barrier+shared.litmus")
    assert loaded.test is not None and loaded.structure is not None
    assert spin_loops(loaded.test) == ()
    assert (
        check_liveness(loaded.test, loaded.structure, cached_model("pisa"), Progress.PISA) is None
    )


def test_spin_loop_is_reported_at_its_back_edge() -> None:
    (loop,) = spin_loops(load_test(str(DIR / "SpinMP+subgroups.litmus")))
    assert (loop.thread, loop.line, loop.text) == (1, 28, "goto.cond %p0, spin")


COUNTER = """PISA Spin+counter
{
  .global .32b @f = 0;
  P0:%r1 = 0;
}

P0 @ wg 0, sg 0 {
  .pred %p0;
spin:
  ld.global.32b %r0, [@f];
  iadd.32b %r1, %r1, 1;
  ucmp.eq.32b %p0, %r0, %r1;
  goto.cond %p0, spin;
}
exists (P0:%r0 == 0)
"""


def test_a_loop_carrying_a_register_is_no_spin_loop() -> None:
    """Its iterations differ (a counter), so dropping stale ones is not harmless."""
    loaded = load_source("t.litmus", COUNTER, unroll=None, strict=False)
    assert loaded.test is not None
    assert spin_loops(loaded.test) == ()


def test_no_metadata_check_without_the_check() -> None:
    meta = (("liveness.pisa", "may hang"),)
    assert liveness_problems(meta, "none", []) is None
