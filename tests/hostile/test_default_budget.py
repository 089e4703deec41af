"""The default per-test timeout: a command run without --timeout still ends a runaway test
(a deep spin-loop unroll, a huge candidate space) as Unknown, says that the limit was the
default one and how to change it; `--timeout none` removes it."""

from __future__ import annotations

import argparse
import time
from pathlib import Path

import pytest

from pisa_mm.cli import main
from pisa_mm.runner import options
from pisa_mm.runner.budget import DEFAULT_TIMEOUT, Budget

ROOT = Path(__file__).resolve().parents[2]
MP = ROOT / "litmus" / "pisa" / "mp" / "MP+rel.gpu+acq.gpu.litmus"

# With unroll = 256 the candidate space of this spin loop is far beyond a second's work
# (it takes minutes): only a budget ends it.
SPIN = """PISA Spin
unroll = 256
{
  .global .32b @x = 0;
}
P0 @ wg 0 {
  .pred %p0;
loop:
  ld.global.32b %r0, [@x];
  ucmp.eq.32b %p0, %r0, 0;
  goto.cond %p0, loop;
}
P1 @ wg 1 {
  st.global.32b [@x], 1;
}
exists (P0:%r0 == 1)
"""

SHORT = 0.3  # the default limit in these tests, so that they take a moment
DEFAULT_SAID = f"timeout: over {SHORT:g} s, the default limit; --timeout S or --timeout none"


def _budget(*argv: str) -> Budget:
    parser = argparse.ArgumentParser()
    options.add_pool_arguments(parser)
    return options.budget_of(parser.parse_args(list(argv)))


def test_without_timeout_the_budget_is_the_default_limit() -> None:
    budget = _budget()
    assert budget.timeout == DEFAULT_TIMEOUT and budget.implicit and not budget.hard


def test_timeout_none_removes_the_limit_and_a_given_timeout_is_hard() -> None:
    assert _budget("--timeout", "none").timeout is None
    assert not _budget("--timeout", "NONE").hard
    given = _budget("--timeout", "3")
    assert given.timeout == 3.0 and given.hard and not given.implicit
    assert given.timeout_message() == "timeout: over 3 s"


@pytest.mark.parametrize("value", ["nan", "inf", "0", "-1", "never"])
def test_a_bad_timeout_is_a_usage_error_that_mentions_none(
    value: str, capsys: pytest.CaptureFixture[str]
) -> None:
    with pytest.raises(SystemExit) as exit_:
        _budget("--timeout", value)
    assert exit_.value.code == 2
    assert "--timeout" in capsys.readouterr().err


@pytest.fixture
def spin(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Path:
    monkeypatch.setattr(options, "DEFAULT_TIMEOUT", SHORT)
    path = tmp_path / "spin.litmus"
    path.write_text(SPIN)
    return path


@pytest.mark.parametrize("jobs", ["1", "2"])
def test_run_ends_a_runaway_test_at_the_default_limit(
    jobs: str, spin: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    start = time.monotonic()
    assert main(["run", "--jobs", jobs, "--no-time", str(MP), str(spin)]) == 4
    assert time.monotonic() - start < 60
    out = capsys.readouterr().out
    assert f"Unknown ({DEFAULT_SAID}" in out
    # the other test is not affected by the runaway one
    assert "Test MP+rel.gpu+acq.gpu Allowed" in out
    assert "2 tests, 1 ok, 0 failed, 1 unknown" in out


@pytest.mark.parametrize("command", ["query", "trace"])
def test_query_and_trace_end_a_runaway_test_at_the_default_limit(
    command: str, spin: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    # an outcome no execution reaches: only the whole candidate space shows that
    assert main([command, str(spin), "--outcome", "P0:%r0 == 2"]) == 4
    assert f"Unknown ({DEFAULT_SAID}" in capsys.readouterr().out


def test_crossval_reports_a_runaway_test_unknown_at_the_default_limit(
    spin: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    assert main(["crossval", str(spin)]) == 4
    assert "the default limit" in capsys.readouterr().out


def test_a_given_timeout_is_reported_without_the_default_hint(
    spin: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    assert main(["run", "--jobs", "1", "--timeout", "0.3", str(spin)]) == 4
    out = capsys.readouterr().out
    assert "Unknown (timeout: over 0.3 s)" in out and "default limit" not in out
