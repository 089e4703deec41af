"""Big, easy tests through the engines (issue 14): many stores of one work-item, many
loading work-items and many storing work-items are decided exactly, with the states a small
instance extrapolates to, by the explicit engine and by `auto` (which picks it on big
structures), and agree with smt where smt is quick. The big sizes are `slow`.

Growth is asserted through results, never through timings (bench/bench_scale_engine.py
prints the CPU time and peak memory per size)."""

from __future__ import annotations

import sys
from pathlib import Path

import pytest

from pisa_mm.cli import main as cli_main
from pisa_mm.engines import available_engines
from pisa_mm.events.build import build
from pisa_mm.explicit import auto
from pisa_mm.litmus import parse_test

ROOT = Path(__file__).resolve().parents[2]
sys.path.insert(0, str(ROOT / "bench"))

from bench_frontend import many_loads, many_stores, many_threads  # noqa: E402


def _run(tmp_path: Path, capsys: pytest.CaptureFixture[str], text: str, *args: str) -> str:
    path = tmp_path / "t.litmus"
    path.write_text(text)
    cli_main(["run", "-j", "1", "--no-time", *args, str(path)])
    return capsys.readouterr().out


def _stores_expected(n: int) -> tuple[str, ...]:
    # P1 reads the init (0) or any of P0's stores (i % 1000); why: no synchronisation
    # orders P1's load with P0's stores, so coherence lets it read any of them
    values = sorted({0} | {i % 1000 for i in range(n)})
    return (f"States {len(values)}", *(f"P1:%r0={v};" for v in values))


def _check_stores(out: str, n: int) -> None:
    for line in _stores_expected(n):
        assert line in out.splitlines()
    # the condition holds when P1 reads the init or the store of 0 (i = 0, 1000, ...)
    positive = 1 + len(range(0, n, 1000))
    assert f"Observation ManyStores Sometimes {positive} {n + 1 - positive}" in out
    assert "Flag data-race" in out  # P1's plain load races with P0's plain stores


def _check_loads(out: str) -> None:
    # every work-item reads the init write, the only write: P0:%r0 == 1 never holds
    assert "States 1" in out and "P0:%r0=0;" in out
    assert "Observation ManyLoads Never 0 1" in out


@pytest.mark.parametrize("engine", ["explicit", "auto"])
def test_200_stores_of_one_work_item(
    tmp_path: Path, capsys: pytest.CaptureFixture[str], engine: str
) -> None:
    _check_stores(_run(tmp_path, capsys, many_stores(200), "--engine", engine), 200)


@pytest.mark.parametrize("engine", ["explicit", "auto"])
def test_500_loading_work_items(
    tmp_path: Path, capsys: pytest.CaptureFixture[str], engine: str
) -> None:
    _check_loads(_run(tmp_path, capsys, many_loads(500), "--engine", engine))


def _check_threads(out: str) -> None:
    # why: nothing writes @x (each work-item stores to its own variable), so the only
    # candidate reads @x from its init and `@x == 0` holds in it
    assert "States 1" in out
    assert "Observation ManyThreads Always 1 0" in out


@pytest.mark.parametrize("engine", ["explicit", "auto"])
def test_300_storing_work_items(
    tmp_path: Path, capsys: pytest.CaptureFixture[str], engine: str
) -> None:
    _check_threads(_run(tmp_path, capsys, many_threads(300), "--engine", engine))


def test_forced_chain_with_a_coherence_choice(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    # P0 stores 100 times to @x, P1 once: the co search judges P0's forced chain once, not
    # write by write, and still tries P1's store at each of the 101 places of P0's order.
    # why: coherence (po-loc in co) forces P0's stores in program order and leaves P1's
    # free, so @x ends as P0's last store (99, P1 not last: 100 orders) or P1's (1 order)
    body = [f"  st.global.32b [@x], {i};" for i in range(100)]
    head = ["PISA ForcedChain", "{", "  .global .32b @x = 0;", "}", "P0 @ wg 0 {"]
    tail = ["}", "P1 @ wg 1 {", "  st.global.32b [@x], 7000;", "}", "exists (@x == 7000)", ""]
    text = "\n".join([*head, *body, *tail])
    out = _run(tmp_path, capsys, text, "--engine", "explicit").splitlines()
    assert "States 2" in out and "@x=99;" in out and "@x=7000;" in out
    assert "Observation ForcedChain Sometimes 1 100" in out


@pytest.mark.skipif("smt" not in available_engines(), reason="z3 not installed")
@pytest.mark.parametrize(("shape", "n"), [("stores", 12), ("loads", 40), ("threads", 40)])
def test_small_instances_agree_with_smt(
    tmp_path: Path, capsys: pytest.CaptureFixture[str], shape: str, n: int
) -> None:
    text = {"stores": many_stores, "loads": many_loads, "threads": many_threads}[shape](n)
    explicit = _run(tmp_path, capsys, text, "--engine", "explicit")
    smt = _run(tmp_path, capsys, text, "--engine", "smt")
    # the states and the verdict (smt counts witnesses by states, explicit by executions)
    assert explicit.split("Witnesses")[0] == smt.split("Witnesses")[0]
    if shape == "stores":
        _check_stores(explicit, n)
    elif shape == "loads":
        _check_loads(explicit)
    else:
        _check_threads(explicit)


def test_auto_picks_explicit_on_big_structures() -> None:
    test = parse_test(many_loads(auto.BIG_EVENTS), "loads.litmus")
    es = build(test)
    assert len(es.events) >= auto.BIG_EVENTS
    assert auto.pick(test, es) == "explicit"


@pytest.mark.slow
def test_2000_loading_work_items(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    _check_loads(_run(tmp_path, capsys, many_loads(2000)))


@pytest.mark.slow
def test_1000_stores_of_one_work_item(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    _check_stores(_run(tmp_path, capsys, many_stores(1000)), 1000)


@pytest.mark.slow
@pytest.mark.parametrize("n", [2000, 4000])
def test_storing_work_items(tmp_path: Path, capsys: pytest.CaptureFixture[str], n: int) -> None:
    _check_threads(_run(tmp_path, capsys, many_threads(n)))


@pytest.mark.parametrize("n", [1000, pytest.param(4000, marks=pytest.mark.slow)])
def test_stores_without_a_reader(
    tmp_path: Path, capsys: pytest.CaptureFixture[str], n: int
) -> None:
    # One work-item storing 0..n-1 to @x, no reader: one candidate, whose coherence order
    # the model forces write by write (explicit/forced.py answers the n-1 pairs at once).
    # why: coherence (po-loc in co) makes the last store co-last, so @x ends as n-1
    from bench_scale_engine import stores_only

    out = _run(tmp_path, capsys, stores_only(n)).splitlines()
    assert "States 1" in out and f"@x={n - 1};" in out
    assert "Observation StoresOnly Never 0 1" in out
