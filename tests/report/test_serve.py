"""The explorer's server without a browser: bounded runs, size limits, diagnostics, uploads."""

from __future__ import annotations

import time
from collections.abc import Iterator
from pathlib import Path

import pytest
from report_inputs import MP, ROOT
from starlette.testclient import TestClient

from pisa_mm.cli import main
from pisa_mm.runner.budget import Budget
from pisa_mm.runner.job import Status
from pisa_mm.runner.pool import GRACE, Workers
from pisa_mm.web.app import ServeConfig, create_app
from pisa_mm.web.explore import MAX_TEST_BYTES

BUDGET = Budget(timeout=60, max_memory=2048 << 20)


@pytest.fixture(scope="module")
def client() -> Iterator[TestClient]:
    # `with`: the app's lifespan starts its worker pool and stops it afterwards
    with TestClient(create_app(ServeConfig(ROOT / "litmus", BUDGET))) as c:
        yield c


def test_the_page_and_the_bundled_tests(client: TestClient) -> None:
    assert "pisa-mm explorer" in client.get("/").text
    assert client.get("/static/app.js").status_code == 200
    tests = client.get("/api/tests").json()
    assert tests["default"] == "pisa/mp/MP+rel.gpu+acq.gpu.litmus"
    text = client.get("/api/test", params={"name": tests["default"]}).json()["text"]
    assert text == MP.read_text()
    assert client.get("/api/models").json()["default"] == "pisa"


def test_only_listed_tests_are_read(client: TestClient) -> None:
    for name in ("../pyproject.toml", "/etc/passwd", "pisa/mp/../../../README.md"):
        resp = client.get("/api/test", params={"name": name})
        assert resp.status_code == 404 and "no bundled test" in resp.text


def test_a_run_answers_with_states_verdict_and_graphs(client: TestClient) -> None:
    r = client.post("/api/run", json={"test": MP.read_text(), "model": "pisa"}).json()
    assert r["ok"] and r["verdict"] == "No" and r["answer"] == "forbidden"
    assert r["states"] == ["P1:%r0=0; P1:%r1=0;", "P1:%r0=1; P1:%r1=1;"]
    assert "{coherence}" in r["explanation"]
    assert r["graphs"] and 'color="red"' in r["graphs"][0]["dot"]


def test_a_bad_test_gets_the_clis_located_diagnostic(
    client: TestClient, tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    text = MP.read_text().replace("ld.global.32b %r1", "ld.global.32q %r1")
    r = client.post("/api/run", json={"test": text}).json()
    assert not r["ok"]
    (d,) = r["diagnostics"]
    assert d["in_editor"] and d["line"] == 24 and "Traceback" not in d["text"]
    bad = tmp_path / "bad.litmus"
    bad.write_text(text)
    main(["run", str(bad)])
    cli = capsys.readouterr().err
    # the same message, caret and code as on the command line, only the file name differs
    assert d["text"].replace("<editor>", str(bad)) in cli


def test_an_uploaded_model_includes_only_shipped_models(client: TestClient) -> None:
    ok = client.post(
        "/api/run",
        json={"test": MP.read_text(), "model": "mine.cat", "model_text": 'include "pisa.cat"\n'},
    ).json()
    assert ok["ok"] and ok["model"] == "mine"
    for path in ("/etc/passwd", "../../pyproject.toml", "models/pisa.cat"):
        r = client.post(
            "/api/run",
            json={"test": MP.read_text(), "model": "x.cat", "model_text": f'include "{path}"\n'},
        ).json()
        assert not r["ok"]
        assert "may include only the shipped models" in r["diagnostics"][0]["text"]


def test_a_bad_model_gets_a_located_diagnostic(client: TestClient) -> None:
    r = client.post(
        "/api/run", json={"test": MP.read_text(), "model_text": "acyclic po |\n"}
    ).json()
    assert not r["ok"] and r["diagnostics"][0]["text"].startswith("<uploaded>.cat:")


def test_oversized_and_malformed_requests_get_clear_messages(client: TestClient) -> None:
    big = "// " + "x" * MAX_TEST_BYTES + "\n"
    resp = client.post("/api/run", json={"test": big})
    assert resp.status_code == 413
    assert f"at most {MAX_TEST_BYTES} bytes" in resp.json()["diagnostics"][0]["text"]
    assert client.post("/api/run", content=b"{not json").status_code == 400
    assert client.post("/api/run", json={"model": "pisa"}).status_code == 400
    resp = client.post("/api/run", json={"test": MP.read_text(), "model": "/etc/passwd"})
    assert "unknown model" in resp.json()["diagnostics"][0]["text"]


def test_a_run_past_its_time_is_stopped_and_reported() -> None:
    with TestClient(create_app(ServeConfig(ROOT / "litmus", Budget(timeout=0.001)))) as c:
        r = c.post("/api/run", json={"test": MP.read_text(), "model": "pisa"}).json()
    assert not r["ok"]
    assert "longer than 0.001 s and was stopped" in r["diagnostics"][0]["text"]


def test_the_servers_workers_stop_a_worker_stuck_in_native_code() -> None:
    # time.sleep ignores the in-worker deadline (it is in C): the pool kills the worker
    # GRACE seconds later and replaces it for the next run
    with Workers(1, context="forkserver") as workers:
        start = time.monotonic()
        record = workers.run("<t>", time.sleep, 30, Budget(timeout=1))
        assert record.status is Status.TIMEOUT and record.message == "timeout: over 1 s"
        assert time.monotonic() - start < 1 + GRACE + 10
        assert workers.run("<t>", abs, -3, Budget(timeout=5)).value == 3


def test_the_servers_workers_stop_a_run_past_its_memory() -> None:
    with Workers(1, context="forkserver") as workers:
        record = workers.run("<t>", bytearray, 8 << 30, Budget(timeout=60, max_memory=1 << 30))
    assert record.status is Status.MEMORY


def test_serve_listens_on_loopback_unless_told_otherwise(
    capsys: pytest.CaptureFixture[str],
) -> None:
    assert main(["serve", "--host", "0.0.0.0"]) == 2
    assert "--public" in capsys.readouterr().err


@pytest.mark.parametrize("value", ["nan", "inf", "0", "-1"])
def test_serve_rejects_absurd_timeouts_as_run_does(
    value: str, capsys: pytest.CaptureFixture[str]
) -> None:
    assert main(["serve", f"--timeout={value}"]) == 2
    err = capsys.readouterr().err
    assert "argument --timeout:" in err and "Traceback" not in err
