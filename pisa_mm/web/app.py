"""The explorer's Starlette application: the page, the bundled tests, and bounded runs."""

from __future__ import annotations

import json
from collections.abc import AsyncIterator
from contextlib import asynccontextmanager
from pathlib import Path
from typing import Any

from starlette.applications import Starlette
from starlette.concurrency import run_in_threadpool
from starlette.requests import ClientDisconnect
from starlette.requests import Request as HttpRequest
from starlette.responses import FileResponse, JSONResponse, Response
from starlette.routing import Mount, Route
from starlette.staticfiles import StaticFiles

from pisa_mm.cat.loader import SHIPPED_MODELS
from pisa_mm.errors import PisaMMError, read_source
from pisa_mm.outcomes.expectations import DEFAULT_MODEL
from pisa_mm.records import record
from pisa_mm.runner.budget import Budget
from pisa_mm.runner.job import Status
from pisa_mm.runner.pool import Workers
from pisa_mm.web.explore import MAX_MODEL_BYTES, MAX_TEST_BYTES, TEST_FILE, Request, explore

__all__ = ["DEFAULT_SUITE", "ServeConfig", "create_app", "suite_tests"]

STATIC = Path(__file__).parent / "static"
# The repository's suite, present beside the package in a source checkout.
DEFAULT_SUITE = Path(__file__).resolve().parents[2] / "litmus"
# Room for the JSON around the two texts (escapes can double their size).
_MAX_BODY = 2 * (MAX_TEST_BYTES + MAX_MODEL_BYTES) + 4096


@record
class ServeConfig:
    """`budget` bounds each run (the runner's per-test budget, in a worker of the runner's
    pool); `concurrent` workers run at most that many at once, the others wait."""

    suite: Path | None
    budget: Budget
    concurrent: int = 2


def suite_tests(suite: Path | None) -> dict[str, Path]:
    """The bundled tests by their path relative to the suite (what the page lists): files
    inside its tree only, not what a link in it leads to elsewhere (`passwd.litmus ->
    /etc/passwd` would be served to any client)."""
    if suite is None or not suite.is_dir():
        return {}
    root = suite.resolve()
    return {
        str(p.relative_to(suite)): p
        for p in sorted(suite.rglob("*.litmus"))
        if p.is_file() and p.resolve().is_relative_to(root)
    }


def _error(message: str, status: int) -> JSONResponse:
    return JSONResponse(
        {"ok": False, "diagnostics": [{"severity": "error", "text": message, "line": None}]},
        status_code=status,
    )


def create_app(config: ServeConfig) -> Starlette:
    tests = suite_tests(config.suite)
    workers: list[Workers] = []

    @asynccontextmanager
    async def lifespan(_: Starlette) -> AsyncIterator[None]:
        # forkserver: workers fork from a clean single-threaded process (the server has
        # threads), with the engines already imported there
        pool = Workers(config.concurrent, context="forkserver", preload=["pisa_mm.web.explore"])
        workers.append(pool)
        try:
            yield
        finally:
            pool.close()

    async def index(_: HttpRequest) -> Response:
        return FileResponse(STATIC / "index.html", media_type="text/html")

    async def list_tests(_: HttpRequest) -> Response:
        default = next((n for n in tests if n.endswith("MP+rel.gpu+acq.gpu.litmus")), None)
        return JSONResponse({"tests": list(tests), "default": default})

    async def one_test(request: HttpRequest) -> Response:
        name = request.query_params.get("name", "")
        path = tests.get(name)  # only a listed test: never a path the client made up
        if path is None:
            return _error(f"no bundled test named {name!r}", 404)
        try:  # a regular UTF-8 file of a test's size (not one replaced by a FIFO since)
            text = read_source(str(path), MAX_TEST_BYTES)
        except PisaMMError as exc:
            return _error(
                f"the bundled test {name!r} cannot be read: {exc.diagnostics[0].message}", 422
            )
        return JSONResponse({"name": name, "text": text})

    async def models(_: HttpRequest) -> Response:
        return JSONResponse({"models": list(SHIPPED_MODELS), "default": DEFAULT_MODEL})

    async def run(request: HttpRequest) -> Response:
        too_big = _error(f"the request is over {_MAX_BODY} bytes; the explorer "
                         f"accepts at most {_MAX_BODY}", 413)  # fmt: skip
        # a body announced over the limit is refused before it is sent (else the server
        # waits for all of it); the length is the server's checked header, but a huge
        # one is not handed to int()
        announced = request.headers.get("content-length", "")
        if len(announced) > 9 or (announced.isdigit() and int(announced) > _MAX_BODY):
            return too_big
        # read up to the limit only: `request.body()` would hold a body of any size first
        body = b""
        try:
            async for chunk in request.stream():
                body += chunk
                if len(body) > _MAX_BODY:
                    return too_big
        except ClientDisconnect:  # gone before the whole body came: no one to answer
            return Response(status_code=400)
        try:
            data = json.loads(body)
        # ValueError: also a number past 4,300 digits; RecursionError: deep nesting
        except (ValueError, RecursionError):
            return _error("the request is not JSON", 400)
        req = _request(data, config)
        if isinstance(req, JSONResponse):
            return req
        return JSONResponse(await run_in_threadpool(_bounded, req, config, workers[0]))

    return Starlette(
        lifespan=lifespan,
        routes=[
            Route("/", index),
            Route("/api/tests", list_tests),
            Route("/api/test", one_test),
            Route("/api/models", models),
            Route("/api/run", run, methods=["POST"]),
            Mount("/static", StaticFiles(directory=STATIC), name="static"),
        ],
    )


def _request(data: Any, config: ServeConfig) -> Request | JSONResponse:
    if not isinstance(data, dict) or not isinstance(data.get("test"), str):
        return _error("the request needs the test's text as `test`", 400)
    model = data.get("model", DEFAULT_MODEL)
    model_text = data.get("model_text")
    if not isinstance(model, str) or not (model_text is None or isinstance(model_text, str)):
        return _error("`model` must be a name and `model_text` a text", 400)
    texts = [data["test"]] if model_text is None else [data["test"], model_text]
    if any(_has_surrogates(text) for text in texts):  # `\ud800` in JSON: no UTF-8 text
        return _error("the test and the model must be UTF-8 text (a lone surrogate)", 400)
    test_size = len(data["test"].encode("utf-8"))
    if test_size > MAX_TEST_BYTES:
        return _error(f"the test is {test_size} bytes; the explorer accepts tests of at most "
                      f"{MAX_TEST_BYTES} bytes", 413)  # fmt: skip
    if model_text is not None and len(model_text.encode("utf-8")) > MAX_MODEL_BYTES:
        return _error(f"the model is {len(model_text.encode('utf-8'))} bytes; the explorer "
                      f"accepts models of at most {MAX_MODEL_BYTES} bytes", 413)  # fmt: skip
    return Request(data["test"], model, model_text, config.budget.timeout)


def _has_surrogates(text: str) -> bool:
    try:
        text.encode("utf-8")
    except UnicodeEncodeError:
        return True
    return False


def _bounded(req: Request, config: ServeConfig, workers: Workers) -> Any:
    record = workers.run(TEST_FILE, explore, req, config.budget)
    if record.status is Status.DONE:
        return record.value
    seconds, mib = config.budget.timeout, (config.budget.max_memory or 0) >> 20
    message = {
        Status.TIMEOUT: f"the run took longer than {seconds:g} s and was stopped "
        "(the server's --timeout)",
        Status.MEMORY: f"the run needed more than {mib} MiB and was stopped "
        "(the server's --memory)",
    }.get(
        record.status,
        f"the run stopped without an answer: it ran out of memory ({mib} MiB, the "
        "server's --memory) or hit an internal error of pisa-mm",
    )
    return {"ok": False, "diagnostics": [{"severity": "error", "text": message, "line": None}]}
