"""The opening lesson on a phone in Debian's chromium (issue 48): the status and the loss plot
right after Train, the table's columns in the width, runs after the first dashed, the flat loss
scale said; Train again trains again (never "another visitor"); the Where-it-pays lesson starts
the sweep on its tab. Screenshots where $MPDEMO_SHOTS is set."""

from __future__ import annotations

from browsing import BROWSER_MARKS, shoot, url  # noqa: F401 - url is a fixture
from lesson_pages import HEIGHT, open_page, wait_wired

from mpdemo.ui import i18n

pytestmark = BROWSER_MARKS

DONE = "() => (document.querySelector('#status')?.innerText || '').startsWith('Done')"


def test_the_opening_lesson_on_a_phone_and_train_again(pages, url, monkeypatch) -> None:  # noqa: F811
    monkeypatch.setenv("MPDEMO_LESSON_STEPS", "6")  # the page's wiring, not the lesson's minute
    pg = open_page(pages, url, "en", 400)
    wait_wired(pg)
    title = i18n.message("lesson_still_trains_title", {}, "en")
    pg.locator("#lesson-picker label", has_text=title).click()
    pg.wait_for_function(DONE, timeout=480_000)
    # Right after Train: the status, then the plots; the controls come below the results.
    btn, loss = pg.locator("#start-btn").bounding_box(), pg.locator("#loss-plot").bounding_box()
    assert btn is not None and loss is not None
    assert loss["y"] - btn["y"] < HEIGHT, (btn, loss)  # within the first screen after Train
    assert pg.locator("#model").bounding_box()["y"] > loss["y"]
    # The page never scrolls sideways, and the table's class columns fit its box (504 px of
    # columns in 336 before the phone's narrower face and padding).
    assert pg.evaluate("() => document.documentElement.scrollWidth") <= 400
    pg.wait_for_function(
        "() => (document.querySelector('#summary')?.innerText || '').includes('fp16')"
    )
    table, box = pg.evaluate(
        "() => { const t = document.querySelector('#summary table');"
        " return [t.scrollWidth, (t.closest('.table-wrap') || t.parentElement).clientWidth]; }"
    )
    assert table <= box, (table, box)
    # fp16 is dashed over fp32 (the same colour rule on the plot's SVG and in the legend), and
    # the flat scale says why: 6 steps never reach GradScaler's 2000.
    legend = pg.inner_text("#run-legend")
    assert "2000" in legend and "Loss scaling at work" in legend, legend
    dashed = pg.evaluate(
        "() => [...document.querySelectorAll('#loss-plot path')]"
        ".filter(p => getComputedStyle(p).strokeDasharray !== 'none').length"
    )
    assert dashed >= 1
    shoot(pg, "first-screen-en-400.png")
    shoot(pg, "first-screen-en-400-full.png", full_page=True)
    # Train again: a new, live comparison of this page's own, not a replay "by another visitor".
    first = pg.inner_text("#status")
    pg.click("#start-btn")
    pg.wait_for_function(
        "f => { const s = document.querySelector('#status')?.innerText || '';"
        " return s.startsWith('Done') && s !== f; }",
        arg=first,
        timeout=480_000,
    )
    status = pg.inner_text("#status")
    assert "another visitor" not in status, status


def test_the_where_it_pays_lesson_starts_the_sweep(pages, url) -> None:  # noqa: F811
    pg = open_page(pages, url, "en", 1400)
    wait_wired(pg)
    pg.click("#pays-tab-button")
    for elem_id, value in (("sweep-sizes", "32x1"), ("sweep-batches", "8"), ("sweep-budget", "1")):
        box = pg.locator(f"#{elem_id} input, #{elem_id} textarea").first
        box.fill(value)
        box.press("Tab")
    pg.click("#train-tab-button")
    title = i18n.message("lesson_where_it_pays_title", {}, "en")
    pg.locator("#lesson-picker label", has_text=title).click()
    # One click: the Where it pays tab, and its sweep runs to its end there.
    pg.wait_for_function(
        "() => (document.querySelector('#sweep-status')?.innerText || '')"
        ".startsWith('Done: 1 of 1 points')",
        timeout=300_000,
    )
    assert pg.locator("#sweep-plot").is_visible()
