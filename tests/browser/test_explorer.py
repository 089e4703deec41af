"""`pisa-mm serve` in a real browser: pick MP, run it, see the states and the graph, break
the test and see the located error; the HTML report opens from disk without a server."""

from __future__ import annotations

from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest
from browser_support import ROOT, chromium, needs_chromium, needs_dot, screenshot, serving

from pisa_mm.cli import main

pytestmark = [needs_chromium, needs_dot]

MP = "pisa/mp/MP+rel.gpu+acq.gpu.litmus"
TIMEOUT = 60


@pytest.fixture(scope="module")
def browser() -> Iterator[Any]:
    with chromium() as driver:
        yield driver


@pytest.fixture(scope="module")
def server() -> Iterator[str]:
    with serving() as url:
        yield url


def _wait(driver: Any, condition: Any) -> Any:
    from selenium.webdriver.support.ui import WebDriverWait

    return WebDriverWait(driver, TIMEOUT).until(condition)


def _open_mp(driver: Any, url: str) -> None:
    from selenium.webdriver.common.by import By
    from selenium.webdriver.support.ui import Select

    driver.get(url + "/")
    _wait(driver, lambda d: len(d.find_elements(By.CSS_SELECTOR, "#test-select option")) > 1)
    Select(driver.find_element(By.ID, "test-select")).select_by_value(MP)
    _wait(driver, lambda d: "PISA MP+rel.gpu+acq.gpu" in d.find_element(By.ID, "editor")
          .get_property("value"))  # fmt: skip


def _run(driver: Any) -> None:
    from selenium.webdriver.common.by import By

    driver.find_element(By.ID, "run").click()
    _wait(driver, lambda d: d.find_element(By.ID, "run").is_enabled()
          and "Running" not in d.find_element(By.ID, "status").text)  # fmt: skip


def test_run_mp_shows_states_verdict_and_the_red_cycle(browser: Any, server: str) -> None:
    from selenium.webdriver.common.by import By

    _open_mp(browser, server)
    _run(browser)
    status = browser.find_element(By.ID, "status").text
    assert "MP+rel.gpu+acq.gpu" in status and "No" in status and "forbidden" in status
    states = browser.find_element(By.ID, "states").text
    assert "States (2)" in states and "P1:%r0=1; P1:%r1=1;" in states
    svgs = browser.find_elements(By.CSS_SELECTOR, "#graphs svg")
    assert svgs, "no execution graph was drawn"
    # the forbidden execution comes first, its coherence cycle drawn in red
    red = svgs[0].find_elements(By.CSS_SELECTOR, 'path[stroke="red"]')
    assert len(red) >= 4
    assert "W rel.gpu @y=1" in svgs[0].text
    screenshot(browser, "explorer.png")


def test_a_broken_test_shows_the_located_error_in_the_editor(browser: Any, server: str) -> None:
    from selenium.webdriver.common.by import By

    _open_mp(browser, server)
    editor = browser.find_element(By.ID, "editor")
    broken = editor.get_property("value").replace("ld.global.32b %r1", "ld.global.32q %r1")
    browser.execute_script(
        "var e=arguments[0]; e.value=arguments[1]; e.dispatchEvent(new Event('input'));",
        editor,
        broken,
    )
    _run(browser)
    diag = browser.find_element(By.CSS_SELECTOR, "#diagnostics .diag")
    assert diag.text.startswith("<editor>:24:") and "error:" in diag.text
    marked = browser.find_elements(By.CSS_SELECTOR, "#gutter .err")
    assert [m.text for m in marked] == ["24"]
    assert browser.find_elements(By.CSS_SELECTOR, "#backdrop .err")
    assert "Traceback" not in browser.page_source
    screenshot(browser, "explorer-error.png")


def test_an_uploaded_model_may_not_read_the_servers_files(
    browser: Any, server: str, tmp_path: Path
) -> None:
    from selenium.webdriver.common.by import By

    model = tmp_path / "sneaky.cat"
    model.write_text('"sneaky"\ninclude "../../../../../etc/passwd"\n')
    _open_mp(browser, server)
    browser.find_element(By.ID, "model-file").send_keys(str(model))
    _wait(browser, lambda d: "sneaky.cat" in d.find_element(By.ID, "model-note").text)
    _run(browser)
    diag = browser.find_element(By.CSS_SELECTOR, "#diagnostics .diag").text
    assert "<uploaded>.cat:2:1" in diag and "may include only the shipped models" in diag
    assert "root:" not in browser.page_source


def test_the_html_report_opens_from_disk(
    browser: Any, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    from selenium.webdriver.common.by import By

    out = tmp_path / "report"
    monkeypatch.chdir(ROOT)  # the pages name the tests as given: relative to the checkout
    tests = [f"litmus/pisa/{d}" for d in ("mp", "sb", "race")]
    assert main(["run", *tests, "--html", str(out)]) == 0
    browser.get((out / "index.html").as_uri())
    rows = browser.find_elements(By.CSS_SELECTOR, "#tests tbody tr")
    assert len(rows) > 10
    flagged = browser.find_element(By.CSS_SELECTOR, 'input[value="flagged"]')
    flagged.click()
    shown = [r for r in rows if r.is_displayed()]
    assert shown and len(shown) < len(rows)
    assert all(r.find_element(By.CSS_SELECTOR, "td.flags").text for r in shown)
    flagged.click()
    # sort by name, descending on the second click
    header = browser.find_element(By.CSS_SELECTOR, "#tests th")
    header.click()
    header.click()
    names = [r.find_element(By.CSS_SELECTOR, "td").text for r in
             browser.find_elements(By.CSS_SELECTOR, "#tests tbody tr")]  # fmt: skip
    assert names == sorted(names, key=str.lower, reverse=True)
    header.click()
    screenshot(browser, "report.png")
    browser.find_element(By.LINK_TEXT, "MP+rel.gpu+acq.gpu").click()
    assert browser.find_elements(By.CSS_SELECTOR, ".graph svg")
    assert "Minimal sets of axioms" in browser.page_source
    screenshot(browser, "report-test.png")
