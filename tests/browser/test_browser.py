"""The page in Debian's chromium: live lines with a stroke for every run, Stop, the screenshot."""

from __future__ import annotations

import time
from pathlib import Path

import pytest
from browsing import ARGS, BROWSER_MARKS, CHROMIUM, url  # noqa: F401 - a fixture

ROOT = Path(__file__).resolve().parents[2]
SCREENSHOT = ROOT / "assets" / "screenshot.png"

pytestmark = BROWSER_MARKS


@pytest.fixture(scope="module")
def page(url: str):
    """One 1280-px-wide page on the app, English, already loaded."""
    from playwright.sync_api import sync_playwright

    with sync_playwright() as pw:
        browser = pw.chromium.launch(executable_path=CHROMIUM, args=ARGS)
        context = browser.new_context(viewport={"width": 1280, "height": 900}, locale="en-US")
        pg = context.new_page()
        pg.goto(url, wait_until="domcontentloaded")
        pg.wait_for_selector("#start-btn", timeout=60_000)
        pg.wait_for_function(  # the load event filled in the row-count preview
            "() => (document.querySelector('#slice-preview')?.innerText || '').includes('rows')",
            timeout=30_000,
        )
        yield pg
        browser.close()


# Every path of the line layer, with its stroke and whether it draws anything.
LINES_JS = """sel => Array.from(document.querySelectorAll(sel + ' g.mark-line path')).map(p => ({
    stroke: p.getAttribute('stroke') || getComputedStyle(p).stroke,
    d: (p.getAttribute('d') || '').length,
    label: p.getAttribute('aria-label') || ''
}))"""


def drawn_lines(page, elem_id: str) -> dict[str, str]:
    """run label → stroke colour of every line in a plot that draws something."""
    out = {}
    for line in page.evaluate(LINES_JS, f"#{elem_id}"):
        run = line["label"].split("run: ")[-1] if "run: " in line["label"] else ""
        if line["d"] > 10 and line["stroke"] not in ("", "none", "transparent"):
            out[run] = line["stroke"]
    return out


def set_number(page, elem_id: str, value: str) -> None:
    """Type into a Slider's or Number's input and commit it."""
    box = page.locator(f"#{elem_id} input[type=number]").first
    box.fill(value)
    box.press("Enter")


def set_text(page, elem_id: str, value: str) -> None:
    """Type into a Textbox."""
    box = page.locator(f"#{elem_id} input, #{elem_id} textarea").first
    box.fill(value)
    box.press("Tab")


def tick(page, elem_id: str, wanted: set[str], choices: list[str]) -> None:
    """Make a CheckboxGroup's ticked boxes exactly `wanted`."""
    group = page.locator(f"#{elem_id}")
    for choice in choices:
        box = group.get_by_label(choice, exact=True)
        if (choice in wanted) != box.is_checked():
            box.click()


def wait_status(page, text: str, timeout_s: float) -> str:
    """Wait until the status line contains `text`; return it."""
    from playwright.sync_api import TimeoutError as PlaywrightTimeout

    try:
        page.wait_for_function(
            "t => (document.querySelector('#status')?.innerText || '').includes(t)",
            arg=text,
            timeout=timeout_s * 1000,
        )
    except PlaywrightTimeout:
        import threading

        workers = [th.name for th in threading.enumerate() if th.name.startswith("mpdemo")]
        pytest.fail(
            f"status never said {text!r}; it says {page.inner_text('#status')!r}; "
            f"mpdemo threads alive: {workers}"
        )
    return page.inner_text("#status")


def test_a_short_run_draws_every_line_and_makes_the_screenshot(page) -> None:
    set_text(page, "train-slice", "train[:512]")
    set_text(page, "eval-slice", "validation[:100]")
    set_number(page, "steps", "36")
    set_number(page, "batch-size", "16")
    tick(page, "precisions", {"fp32", "fp16", "bf16"}, ["fp32", "fp16", "bf16"])
    page.locator("#advanced").get_by_text("Advanced").click()  # open the accordion
    set_number(page, "growth-interval", "3")  # the scale grows and backs off within 36 steps
    page.click("#start-btn")
    wait_status(page, "Done: 3 runs", 150)
    page.wait_for_timeout(800)  # the last frame is drawn
    lines = drawn_lines(page, "loss-plot")
    assert set(lines) == {"torch · fp32", "torch · bf16", "torch · fp16"}
    assert len(set(lines.values())) == 3, f"each run has its own colour: {lines}"
    assert "torch · fp16" in drawn_lines(page, "scale-plot")
    assert set(drawn_lines(page, "time-plot")) == set(lines)
    rows = page.locator("#summary .virtual-row")  # gradio 6's table renders rows as divs
    assert rows.count() == 3
    page.locator("#advanced").get_by_text("Advanced").click()  # closed again for the picture
    page.wait_for_timeout(300)
    SCREENSHOT.parent.mkdir(exist_ok=True)
    page.screenshot(path=str(SCREENSHOT), full_page=True)
    assert SCREENSHOT.stat().st_size > 20_000


def test_stop_ends_the_run_and_says_stopped(page) -> None:
    set_number(page, "steps", "90")  # run 2 lasts long enough to be stopped
    tick(page, "precisions", {"fp32", "bf16"}, ["fp32", "fp16", "bf16"])
    page.click("#start-btn")
    deadline = time.monotonic() + 120
    lines: dict[str, str] = {}
    while time.monotonic() < deadline:  # the second run's line appears once it has steps
        lines = drawn_lines(page, "loss-plot")
        if len(lines) == 2:
            break
        page.wait_for_timeout(200)
    assert set(lines) == {"torch · fp32", "torch · bf16"}, lines
    assert all(lines.values())
    page.click("#stop-btn")
    wait_status(page, "Stopped", 60)
    page.wait_for_function(  # the training's last frame: both runs in the table, one stopped
        "() => document.querySelectorAll('#summary .virtual-row').length === 2"
        " && document.querySelector('#summary').innerText.includes('stopped')",
        timeout=30_000,
    )
    status = page.inner_text("#status")
    assert "Stopped" in status and "torch · bf16" in status


def test_language_switch_relabels_the_page(page) -> None:
    page.locator("#lang").get_by_label("Español").check()
    page.wait_for_function(
        "() => document.querySelector('#start-btn')?.innerText.includes('Entrenar')",
        timeout=15_000,
    )
    page.wait_for_function(  # the table re-renders in Spanish, warnings included
        "() => (document.querySelector('#summary')?.innerText || '').includes('detenida tras')",
        timeout=15_000,
    )
    assert "Pérdida" in page.inner_text("#loss-plot")
    page.locator("#lang").get_by_label("English").check()
    page.wait_for_function(
        "() => document.querySelector('#start-btn')?.innerText.includes('Train')",
        timeout=15_000,
    )
