"""Large legitimate programs through the frontend (issue 14): a chain of 2,000 dependent
`iadd`s after a load runs and gives its two states, a thread of thousands of registers is
checked for reads before writes as a small one is, and the built structure keeps the
sharing of its value expressions (memory linear in the program, not in events x values).

Growth is asserted through counts, never through timings (bench/bench_frontend.py
`--scale` prints the times and peak memory per size)."""

from __future__ import annotations

import resource
import subprocess
import sys
from pathlib import Path

import pytest

from pisa_mm.cli import main as cli_main
from pisa_mm.errors import PisaMMError
from pisa_mm.events.build import build
from pisa_mm.events.model import Kind
from pisa_mm.litmus import parse_test
from pisa_mm.values.eval import postorder
from pisa_mm.values.expr import Expr, ReadValue

ROOT = Path(__file__).resolve().parents[2]
sys.path.insert(0, str(ROOT / "bench"))

from bench_frontend import iadd_chain, many_loads, many_registers  # noqa: E402

CLI = "import sys; from pisa_mm.cli import main; sys.exit(main(sys.argv[1:]))"
GIGABYTES_2 = 2 * 2**30


def _nodes(exprs: list[Expr]) -> int:
    """Distinct expression nodes (by identity) under `exprs`."""
    seen: set[int] = set()
    for e in exprs:
        seen.update(id(x) for x in postorder(e))
    return len(seen)


def test_a_chain_of_2000_iadds_after_a_load_runs(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    path = tmp_path / "chain.litmus"
    path.write_text(iadd_chain(2000))
    assert cli_main(["run", "-j", "1", "--no-time", str(path)]) == 0
    out = capsys.readouterr().out
    # P0 reads the init (0 + 2000) or P1's 5 (5 + 2000); why: coherence lets either
    # write be read, and the chain only adds
    assert "States 2" in out and "P0:%r0=2000;" in out and "P0:%r0=2005;" in out
    assert "Observation IaddChain Sometimes" in out


def test_the_structure_shares_value_nodes_across_events_and_paths() -> None:
    """The store's 2,000-deep value and P0's final register are one expression, not one
    copy per event and path: renumbering the events (init writes first) keeps sharing."""
    es = build(parse_test(iadd_chain(2000), "chain.litmus"))
    store = next(e for e in es.events if e.kind is Kind.WRITE and e.thread == 0)
    (path,) = es.threads[0].paths
    final = dict(path.final_regs)["r0"]
    assert store.value is final
    load = next(e for e in es.events if e.kind is Kind.READ and e.thread == 0)
    assert ReadValue(load.id, 32) in postorder(final)  # the ids are past the inits
    exprs: list[Expr] = [e.guard for e in es.events]
    exprs += [e.value for e in es.events if e.value is not None]
    exprs += [v for t in es.threads for p in t.paths for _, v in p.final_regs]
    assert _nodes(exprs) < 2 * 2000 + 50  # one add and one constant per iadd, at most


def test_thousands_of_registers_are_checked_for_reads_before_writes() -> None:
    n = 3000
    test = parse_test(many_registers(n), "regs.litmus")
    assert len(test.threads[0].body) == n
    # the last instruction reads a register no path writes: still found, and located
    text = many_registers(n).replace("  ld.global.32b %r2999, [@x];", "  iadd.32b %r1, %q0, 1;")
    with pytest.raises(PisaMMError) as info:
        parse_test(text, "regs.litmus")
    (d,) = info.value.diagnostics
    assert d.code == "uninit" and "%q0" in d.message and d.span is not None
    assert d.span.line == 6 + n - 1  # the header takes five lines


def _limit_memory() -> None:
    resource.setrlimit(resource.RLIMIT_AS, (GIGABYTES_2, GIGABYTES_2))


@pytest.mark.slow
def test_2000_loading_threads_and_a_4000_iadd_chain_within_the_budget(tmp_path: Path) -> None:
    """`parse` and `run --timeout 30` under a 2 GB address-space limit: an answer, or
    `Unknown (timeout)` from an engine (exit 4), never a crash, a hang or a blow-up."""
    cases = {"loads": many_loads(2000), "chain": iadd_chain(4000)}
    for name, text in cases.items():
        path = tmp_path / f"{name}.litmus"
        path.write_text(text)
        for argv in (["parse"], ["run", "-j", "1", "--no-time", "--timeout", "30"]):
            proc = subprocess.run(
                [sys.executable, "-c", CLI, *argv, str(path)],
                capture_output=True,
                text=True,
                timeout=120,
                preexec_fn=_limit_memory,
                cwd=ROOT,
            )
            assert "Traceback" not in proc.stderr and "internal error" not in proc.stderr
            if argv[0] == "parse" or name == "chain":
                assert proc.returncode == 0, proc.stderr[-2000:]
            else:
                assert proc.returncode in (0, 4), proc.stdout[-2000:] + proc.stderr[-2000:]
                assert "Observation ManyLoads Never" in proc.stdout or "Unknown (timeout" in (
                    proc.stdout
                )
