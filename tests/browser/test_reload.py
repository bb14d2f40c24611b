"""Runs survive a reload in the browser that made them, Clear runs forgets them, and another
browser (context) never sees them; a shipped recording opens beside them."""

from __future__ import annotations

import pytest
from browsing import BROWSER_MARKS, LOCALES, url  # noqa: F401 - a fixture

pytestmark = BROWSER_MARKS

LOADED_JS = "() => (document.querySelector('#slice-preview')?.innerText || '').includes('rows')"
LINES_JS = """sel => Array.from(document.querySelectorAll(sel + ' g.mark-line path'))
    .filter(p => (p.getAttribute('d') || '').length > 10)
    .map(p => (p.getAttribute('aria-label') || '').split('run: ').pop())"""


def loaded(page):
    """`page` once its load events (language, previews, restore) have answered."""
    page.wait_for_selector("#start-btn", timeout=60_000)
    page.wait_for_function(LOADED_JS, timeout=30_000)
    return page


def open_page(context, url: str):
    """A new page in a browser context of the test's own (its listeners, its own storage)."""
    page = context.new_page()
    page.goto(url, wait_until="domcontentloaded")
    return loaded(page)


def pool_page(pages, url: str, locale: str = "en-US"):
    """The pool's page in `locale`'s browser context, opened in English on the app."""
    return loaded(pages.open(f"{url}?lang=en", width=1280, height=900, locale=locale))


def table_text(page) -> str:
    """The summary table's visible text."""
    return page.inner_text("#summary")


def wait_for(page, js: str, arg: str, timeout_s: float, what: str) -> None:
    """Wait for a page condition, failing with what the status line says."""
    from playwright.sync_api import TimeoutError as PlaywrightTimeout

    try:
        page.wait_for_function(js, arg=arg, timeout=timeout_s * 1000)
    except PlaywrightTimeout:
        pytest.fail(f"{what}; status: {page.inner_text('#status')!r}")


IN_TABLE = "t => (document.querySelector('#summary')?.innerText || '').includes(t)"
STORED_JS = "k => (localStorage.getItem(k) || '').length > 100"
IN_STATUS = "t => (document.querySelector('#status')?.innerText || '').includes(t)"


def set_value(page, elem_id: str, value: str) -> None:
    """Type into a Textbox, Number or Slider input and commit it."""
    box = page.locator(
        f"#{elem_id} input[type=number], #{elem_id} textarea, #{elem_id} input[type=text]"
    ).first
    box.fill(value)
    box.press("Tab")


def test_runs_come_back_after_a_reload_only_here_until_cleared(url: str, pages) -> None:  # noqa: F811
    page = pool_page(pages, url)
    set_value(page, "train-slice", "train[:64]")
    set_value(page, "eval-slice", "validation[:32]")
    set_value(page, "steps", "3")
    page.locator("#precisions").get_by_label("bf16", exact=True).uncheck()
    page.locator("#advanced").get_by_text("Advanced").click()  # open the accordion
    set_value(page, "watch-grads", "1")  # every step's gradients: the last one comes back
    page.click("#start-btn")
    wait_for(page, IN_STATUS, "Done", 120, "the tiny run never finished")
    assert "torch · fp32" in table_text(page)
    # The table's change saves the runs into this browser's storage (encrypted).
    wait_for(page, STORED_JS, "mpdemo-runs", 30, "the runs were not stored")

    page.reload(wait_until="domcontentloaded")
    page.wait_for_function(LOADED_JS, timeout=30_000)
    wait_for(page, IN_TABLE, "torch · fp32", 30, "the run did not come back")
    assert "are back" in page.inner_text("#status")
    wait_for(
        page,
        "t => Array.from(document.querySelectorAll('#loss-plot g.mark-line path'))"
        ".some(p => (p.getAttribute('aria-label') || '').endsWith(t))",
        "torch · fp32",
        30,
        "the restored run draws no loss line",
    )
    # The watched gradients come back too: the run's last step (3), as the training left it.
    wait_for(
        page,
        "t => Array.from(document.querySelectorAll('#grad-watch figure.mp-gw-run'))"
        ".some(f => f.dataset.run === t && f.dataset.step === '3')",
        "torch · fp32",
        30,
        "the watched gradients did not come back",
    )

    # A shipped recording opens beside the restored run, labelled with its machine.
    page.locator("#reference-runs input").click()
    page.get_by_role("option").filter(has_text="fp32 / bf16").first.click()
    wait_for(page, IN_STATUS, "Opened", 30, "the recording did not open")
    assert table_text(page).count("torch · fp32") == 2  # live, and recorded
    wait_for(  # the recorded lines draw, each with a stroke of its own
        page,
        "n => new Set(Array.from(document.querySelectorAll('#loss-plot g.mark-line path'))"
        ".filter(p => (p.getAttribute('d') || '').length > 10"
        " && !(p.getAttribute('aria-label') || '').endsWith(' · raw'))"
        ".map(p => p.getAttribute('stroke'))).size >= n",
        "3",
        30,
        "the recorded runs draw no line of their own colour",
    )

    # Another browser: the pool's page in a context of its own (storage and all).
    theirs = pool_page(pages, url, locale=LOCALES["pt"])
    theirs.wait_for_timeout(1500)  # time for a restore to show, if one wrongly came
    assert "torch · fp32" not in table_text(theirs)
    assert not theirs.evaluate(LINES_JS, "#loss-plot")

    page.click("#clear-runs")
    wait_for(page, IN_STATUS, "cleared", 30, "Clear runs did not answer")
    assert "torch · fp32" not in table_text(page)
    page.reload(wait_until="domcontentloaded")
    page.wait_for_function(LOADED_JS, timeout=30_000)
    page.wait_for_timeout(1500)
    assert "torch · fp32" not in table_text(page)
    assert "are back" not in page.inner_text("#status")
