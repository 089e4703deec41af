"""Hostile sizes for the builder: huge loop bounds are refused before anything is unrolled,
and the issue's large tests (2,000 threads, 4,000 stores in one thread) parse, build and
print within bounded memory and time, in a child process with a 2 GB address-space limit."""

from __future__ import annotations

import json
import resource
import signal
import subprocess
import sys
from pathlib import Path

import pytest

from pisa_mm.cli import main as cli_main
from pisa_mm.errors import PisaMMError
from pisa_mm.events.build import build
from pisa_mm.litmus import parse_test
from pisa_mm.litmus.decode.declarations import MAX_UNROLL
from pisa_mm.runner.budget import Budget
from pisa_mm.runner.job import Record, Status
from pisa_mm.runner.pool import _died

ROOT = Path(__file__).resolve().parents[2]
sys.path.insert(0, str(ROOT / "bench"))

from bench_frontend import many_stores, many_threads  # noqa: E402

LOOP = """PISA Spin
{meta}{{
  .global .32b @x = 0;
}}
P0 @ wg 0 {{
  .pred %p0;
loop:
  ld.global.32b %r0, [@x];
  ucmp.eq.32b %p0, %r0, 0;
  goto.cond %p0, loop;
}}
P1 @ wg 1 {{
  st.global.32b [@x], 1;
}}
exists (P0:%r0 == 1)
"""

GIGABYTES_2 = 2 * 2**30
CLI = "import sys; from pisa_mm.cli import main; sys.exit(main(sys.argv[1:]))"


@pytest.mark.parametrize("bound", [str(MAX_UNROLL + 1), "1000000", "99999999"])
def test_huge_unroll_metadata_is_a_located_limit_error(bound: str) -> None:
    with pytest.raises(PisaMMError) as info:
        parse_test(LOOP.format(meta=f"unroll = {bound}\n"), "spin.litmus")
    (d,) = info.value.diagnostics
    assert d.code == "limit" and d.span is not None and d.span.line == 2
    assert str(MAX_UNROLL) in d.message


def test_the_largest_bound_is_accepted() -> None:
    test = parse_test(LOOP.format(meta=f"unroll = {MAX_UNROLL}\n"), "spin.litmus")
    assert test.unroll == MAX_UNROLL
    # the limit is the builder's too, for callers that pass a bound of their own
    with pytest.raises(PisaMMError) as info:
        build(test, unroll=MAX_UNROLL + 1)
    assert info.value.diagnostics[0].code == "limit"
    assert len(build(test, unroll=3).threads[0].paths) == 5  # 4 iterations and the cut


@pytest.mark.parametrize("command", ["parse", "run", "query", "trace", "crossval", "diff"])
def test_huge_unroll_option_is_refused_promptly(
    command: str, tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    path = tmp_path / "spin.litmus"
    path.write_text(LOOP.format(meta=""))
    extra = {"query": ["--outcome", "true"], "trace": ["--outcome", "true"]}
    models = ["pisa", "pisa-rc11"] if command == "diff" else []
    argv = [command, "--unroll", "1000000", *extra.get(command, []), *models, str(path)]
    assert cli_main(argv) == 2
    err = capsys.readouterr().err
    assert "beyond the supported maximum" in err and "Traceback" not in err
    assert "[limit]" in err or "[usage]" in err


def _limit_memory() -> None:
    resource.setrlimit(resource.RLIMIT_AS, (GIGABYTES_2, GIGABYTES_2))


def test_thousands_of_threads_and_stores_parse_in_bounded_memory(tmp_path: Path) -> None:
    threads = tmp_path / "threads.litmus"
    threads.write_text(many_threads(2000))
    stores = tmp_path / "stores.litmus"
    stores.write_text(many_stores(4000))
    cmd = [sys.executable, "-c", CLI, "parse", str(threads), str(stores)]
    proc = subprocess.run(
        cmd, capture_output=True, text=True, timeout=120, preexec_fn=_limit_memory, cwd=ROOT
    )
    assert proc.returncode == 0, proc.stderr[-2000:]
    assert "Traceback" not in proc.stderr
    # po printed as its immediate edges (P0: 4,000 stores and its exit; P1: a load and its
    # exit), not the 8 million pairs of its closure
    po_line = next(line for line in proc.stdout.splitlines()[::-1] if "po (immediate)" in line)
    assert po_line.count("->") == 4000 + 1


@pytest.mark.slow
@pytest.mark.parametrize(
    ("budget", "reason"), [(["--timeout", "3"], "timeout"), (["--max-memory", "100M"], "memory")]
)
def test_a_run_too_large_for_the_budget_ends_as_unknown(
    budget: list[str], reason: str, tmp_path: Path
) -> None:
    """4,000 stores to one location (4,001! coherence orders): the run ends as
    `Unknown (timeout)` / `Unknown (memory)` (exit 4), never a crash or a swap storm (the
    child also has a 2 GB address-space limit)."""
    path = tmp_path / "stores.litmus"
    path.write_text(many_stores(4000))
    cmd = [sys.executable, "-c", CLI, "run", "-j", "1", *budget, str(path)]
    proc = subprocess.run(
        cmd, capture_output=True, text=True, timeout=120, preexec_fn=_limit_memory, cwd=ROOT
    )
    assert "Traceback" not in proc.stderr and "internal error" not in proc.stderr
    assert proc.returncode == 4, proc.stdout[-2000:] + proc.stderr[-2000:]
    assert f"Unknown ({reason}" in proc.stdout


@pytest.mark.slow
def test_two_thousand_threads_run_within_the_budget(tmp_path: Path) -> None:
    """2,000 work-groups each storing to a variable of its own: one execution, and @x keeps
    its initial value (no thread writes it). It timed out at 3 s until the cat closure
    stopped re-closing alike rows (the init writes' ihb); now it has its answer within it."""
    path = tmp_path / "threads.litmus"
    path.write_text(many_threads(2000))
    cmd = [sys.executable, "-c", CLI, "run", "-j", "1", "--timeout", "3", str(path)]
    proc = subprocess.run(
        cmd, capture_output=True, text=True, timeout=120, preexec_fn=_limit_memory, cwd=ROOT
    )
    assert proc.returncode == 0, proc.stdout[-2000:] + proc.stderr[-2000:]
    assert "States 1\n@x=0;\n" in proc.stdout
    assert "Observation ManyThreads Always 1 0" in proc.stdout


@pytest.mark.parametrize("signum", [signal.SIGSEGV, signal.SIGBUS, signal.SIGABRT])
def test_a_worker_dying_natively_at_the_memory_limit_is_unknown_memory(signum: int) -> None:
    # under RLIMIT_AS, native code that cannot allocate dies by a signal, not MemoryError
    record: Record[None] = _died("t.litmus", -signum, Budget(max_memory=100 * 2**20))
    assert record.status is Status.MEMORY and "100 MiB" in record.message
    assert _died("t.litmus", -signum, Budget()).status is Status.CRASH
    assert _died("t.litmus", 1, Budget(max_memory=2**30)).status is Status.CRASH


def test_thousands_of_threads_and_stores_print_json_in_bounded_memory(tmp_path: Path) -> None:
    threads = tmp_path / "threads.litmus"
    threads.write_text(many_threads(2000))
    stores = tmp_path / "stores.litmus"
    stores.write_text(many_stores(4000))
    cmd = [sys.executable, "-c", CLI, "parse", "--json", str(threads), str(stores)]
    proc = subprocess.run(
        cmd, capture_output=True, text=True, timeout=120, preexec_fn=_limit_memory, cwd=ROOT
    )
    assert proc.returncode == 0, proc.stderr[-2000:]
    many, long = json.loads(proc.stdout)
    # linear forms: 2,000 thread classes instead of 36 million ext pairs, po as its edges
    assert len(many["classes"]["int"]) == 2000
    assert len(long["po_edges"]) == 4000 + 1  # P0: 4,000 stores and its exit; P1: 1 edge
