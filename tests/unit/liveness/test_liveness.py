"""The liveness check on the progress suite entries, under each progress model."""

from __future__ import annotations

import pytest

from pisa_mm.litmus import load_test
from pisa_mm.liveness import Progress, check_liveness, spin_loops
from pisa_mm.outcomes.model import LivenessStatus
from pisa_mm.runner.job import cached_model, load_source

T, H = LivenessStatus.TERMINATES, LivenessStatus.MAY_HANG
DIR = "litmus/pisa/progress/"

# hand-derived in each test's `// why:` lines (PISA 1.1.1, Sorensen et al. CONCUR 2018)
CASES = {
    "SpinMP+subgroups": (T, T, T, H),
    "SpinMP+workgroups": (H, H, T, H),
    "SpinMP+lanes": (H, H, T, H),
    "Spin+nowrite": (H, H, H, H),
    "MP+barrier+spin": (T, T, T, T),
    "Lock+cas+lanes": (H, H, T, H),
    "Lock+cas+subgroups": (T, T, T, H),
}


@pytest.mark.parametrize("name", sorted(CASES))
def test_liveness_per_progress_model(name: str) -> None:
    loaded = load_source(DIR + name + ".litmus", None, unroll=None, strict=False)
    assert loaded.test is not None and loaded.structure is not None
    model = cached_model("pisa")
    got = []
    for p in (Progress.PISA, Progress.OBE, Progress.FAIR, Progress.UNFAIR):
        live = check_liveness(loaded.test, loaded.structure, model, p)
        assert live is not None
        got.append(live.status)
    assert tuple(got) == CASES[name]


def test_reason_names_the_spinner_line_and_rule() -> None:
    loaded = load_source(DIR + "SpinMP+workgroups.litmus", None, unroll=None, strict=False)
    assert loaded.test is not None and loaded.structure is not None
    live = check_liveness(loaded.test, loaded.structure, cached_model("pisa"), Progress.PISA)
    assert live is not None
    assert live.line.startswith("Liveness may hang: P1 spins at line 29 (goto.cond %p0, spin)")
    assert "another work-group" in live.detail and "PISA 1.1.1" in live.detail


def test_no_spin_loop_no_liveness() -> None:
    loaded = load_source(
        "litmus/pisa/barrier/SB+barrier+shared.litmus", None, unroll=None, strict=False
    )
    assert loaded.test is not None and loaded.structure is not None
    assert spin_loops(loaded.test) == ()
    assert (
        check_liveness(loaded.test, loaded.structure, cached_model("pisa"), Progress.PISA) is None
    )


def test_spin_loop_is_reported_at_its_back_edge() -> None:
    (loop,) = spin_loops(load_test(DIR + "SpinMP+subgroups.litmus"))
    assert (loop.thread, loop.line, loop.text) == (1, 26, "goto.cond %p0, spin")
