"""The review page in a real browser: headless Chromium (Debian's chromium + chromedriver)
driven by selenium. DOM assertions on the matrix and the ledger, the client-side filter, no
console error, a screenshot written as a test artifact. Without the browser the test skips,
except under CI=true (.ci/chromium.sh installs it), where it fails."""

from __future__ import annotations

import os
import shutil
from pathlib import Path

import pytest

from tests.factories import missing_prerequisite
from tests.report.test_page import build

CHROMIUM = os.environ.get("STACKCHECK_TEST_CHROMIUM", "/usr/bin/chromium")
CHROMEDRIVER = os.environ.get("STACKCHECK_TEST_CHROMEDRIVER", "/usr/bin/chromedriver")
FLAGS = (
    "--headless",
    "--no-sandbox",
    "--disable-gpu",
    "--disable-background-networking",
    "--disable-component-update",
    "--disable-sync",
    "--no-first-run",
    "--disable-dev-shm-usage",
    "--window-size=1280,1600",
)


@pytest.fixture(scope="module")
def browser(tmp_path_factory):
    try:
        from selenium import webdriver
        from selenium.webdriver.chrome.service import Service
    except ImportError:
        missing_prerequisite("selenium is not installed (pip install 'stackcheck[report]')")
    for path in (CHROMIUM, CHROMEDRIVER):
        if not (Path(path).is_file() and os.access(path, os.X_OK)):
            missing_prerequisite(f"{path} is missing (source .ci/chromium.sh to install chromium)")
    options = webdriver.ChromeOptions()
    options.binary_location = CHROMIUM
    for flag in FLAGS:
        options.add_argument(flag)
    options.add_argument(f"--user-data-dir={tmp_path_factory.mktemp('chromium-profile')}")
    options.set_capability("goog:loggingPrefs", {"browser": "ALL"})
    # an explicit driver path: selenium-manager never runs, so nothing is downloaded
    driver = webdriver.Chrome(service=Service(executable_path=CHROMEDRIVER), options=options)
    try:
        yield driver
    finally:
        driver.quit()


def test_page_in_chromium(browser, built, tmp_path, cli_main, request):
    from selenium.webdriver.common.by import By

    code, _, _ = build(cli_main, tmp_path / "site", built)
    assert code == 0
    browser.get((tmp_path / "site" / "index.html").as_uri())
    assert browser.title == "stackcheck review"

    # the matrix: two profiles, three environments, each verdict a link to its checks
    matrix = browser.find_element(By.ID, "matrix-table")
    heads = [th.text for th in matrix.find_elements(By.CSS_SELECTOR, "thead th")]
    assert heads == [
        "profile",
        "1x NVIDIA H100 80GB HBM3 · Python 3.12.11 · torch 2.8.0+cu128",
        "cpu-laptop",
        "node-7",
    ]
    body = matrix.find_elements(By.CSS_SELECTOR, "tbody tr")
    assert [[c.text for c in r.find_elements(By.CSS_SELECTOR, "th, td")] for r in body] == [
        ["LAB-BROKEN", "blocked", "blocked", "not judged"],
        ["LAB-GPU", "ok", "ok", "blocked"],
    ]
    link = body[1].find_elements(By.CSS_SELECTOR, "td a")[2]
    assert link.get_attribute("aria-label") == "LAB-GPU on node-7: blocked, details"
    link.click()
    assert browser.execute_script("return location.hash") == "#cell-4"
    detail = browser.find_element(By.ID, "cell-4")
    fix = detail.find_element(By.CSS_SELECTOR, "tbody tr td:last-child").text
    assert fix == "pip install --index-url https://<redacted>@pypi.example.org/simple transformers"

    # the ledger: three topics, eight records, levels and marks as the ledger says
    topics = [h.text for h in browser.find_elements(By.CSS_SELECTOR, "article.topic h3")]
    assert topics == ["bench/qwen2.5-0.5b-throughput", "inference/qwen2.5-0.5b-latency", "smoke/broken-env"]
    records = browser.find_elements(By.CSS_SELECTOR, 'tr[data-row="record"]')
    assert len(records) == 9
    levels = [r.find_element(By.CSS_SELECTOR, "td[data-level]").text for r in records]
    assert levels == ["measured"] * 7 + ["smoke", "smoke"]
    charts = browser.find_elements(By.CSS_SELECTOR, "svg.chart")
    assert len(charts) == 5  # two metrics (line + latest bars each) and the rules' coverage
    assert all(c.size["width"] > 300 for c in charts)

    # the filter: "vllm" keeps the vllm records and hides the rest; clearing it shows all again
    box = browser.find_element(By.ID, "filter")
    box.send_keys("vllm-run")
    shown = [r for r in records if r.is_displayed()]
    assert [r.find_elements(By.TAG_NAME, "td")[2].text for r in shown] == ["vllm-run1", "vllm-run2"]
    every = browser.find_elements(By.CSS_SELECTOR, "[data-row]")
    matched = [e.get_attribute("data-row") for e in every if e.is_displayed()]
    assert matched == ["record", "record", "diff", "chart"]  # the diff and chart name the runs too
    assert browser.find_element(By.ID, "filter-status").text == f"4 of {len(every)} rows match"
    assert not body[0].is_displayed()
    box.clear()
    box.send_keys(" ")  # input event; an all-space query shows everything
    assert all(r.is_displayed() for r in records)
    assert browser.find_element(By.ID, "filter-status").text == f"{len(every)} rows"

    # print: the filter box is hidden and rows the filter hid are printed all the same
    box.send_keys("vllm-run")
    browser.execute_cdp_cmd("Emulation.setEmulatedMedia", {"media": "print"})
    assert not browser.find_element(By.ID, "filter-box").is_displayed()
    assert all(r.is_displayed() for r in records)
    browser.execute_cdp_cmd("Emulation.setEmulatedMedia", {"media": ""})
    assert not records[0].is_displayed()
    box.clear()
    box.send_keys(" ")

    # no console errors (a CSP violation or a script error would be one)
    errors = [e for e in browser.get_log("browser") if e["level"] in ("SEVERE", "ERROR")]
    assert errors == []

    shot = tmp_path / "report.png"
    browser.set_window_size(1280, 2000)
    browser.execute_script("window.scrollTo(0, 0)")
    assert browser.save_screenshot(str(shot))
    assert shot.read_bytes()[:8] == b"\x89PNG\r\n\x1a\n"
    keep = os.environ.get("STACKCHECK_TEST_ARTIFACTS")
    if keep:  # CI keeps the screenshot as an artifact
        Path(keep).mkdir(parents=True, exist_ok=True)
        shutil.copy(shot, Path(keep) / "report.png")
