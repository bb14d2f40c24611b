"""The live gradient watch in a browser: one click on the underflow lesson (which watches every
20 steps) fills #grad-watch while its runs train, at 1400 and 400 px. Screenshots go to
$MPDEMO_SHOTS (default: a temp dir)."""

from __future__ import annotations

import os
import tempfile
from pathlib import Path

from browsing import BROWSER_MARKS, url  # noqa: F401 - url is a fixture

from mpdemo.teach.lessons import LESSONS
from mpdemo.ui import i18n

pytestmark = BROWSER_MARKS
SHOTS = Path(os.environ.get("MPDEMO_SHOTS") or tempfile.mkdtemp(prefix="mpdemo-shots-"))

FIGURES = "document.querySelectorAll('#grad-watch figure.mp-gw-run')"


def test_the_underflow_lesson_shows_its_gradients_live(browser, url, monkeypatch) -> None:  # noqa: F811
    # Two watched steps a run (20 and 40): the first shows while the runs still train.
    monkeypatch.setenv("MPDEMO_LESSON_STEPS", "40")
    assert LESSONS["underflow"].settings()["watch_grads"] == 20
    context = browser.new_context(viewport={"width": 1400, "height": 900})
    pg = context.new_page()
    try:
        pg.goto(f"{url}?lang=en", wait_until="domcontentloaded")
        pg.wait_for_function(  # the load hooks answered: the page's events are wired up
            "() => (document.querySelector('#slice-preview')?.innerText || '').trim().length > 0",
            timeout=60_000,
        )
        assert not pg.locator("#grad-watch").is_visible()  # nothing watched yet
        title = i18n.message("lesson_underflow_title", {}, "en")
        pg.locator("#lesson-picker label", has_text=title).click()
        pg.wait_for_function(f"() => {FIGURES}.length > 0", timeout=480_000)
        status = pg.inner_text("#status")
        first = pg.locator("#grad-watch figure").first.get_attribute("data-step")
        assert not status.startswith("Done") and first == "20", (status, first)
        pg.wait_for_function(
            "() => (document.querySelector('#status')?.innerText || '').startsWith('Done')",
            timeout=480_000,
        )
        pg.wait_for_function(
            f"() => [...{FIGURES}].every(f => f.dataset.step === '40')", timeout=30_000
        )
        runs = [
            f.get_attribute("data-run") for f in pg.locator("#grad-watch figure.mp-gw-run").all()
        ]
        assert runs == ["torch · fp32", "torch · fp16", "torch · fp16 · S=1"]
        text = pg.inner_text("#grad-watch")
        assert "Worst layer" in text or "No layer" in text
        assert "step 40 · S = 1 · vs fp16" in text  # the unscaled run's title
        svg = pg.locator("#grad-watch svg").first
        assert svg.locator("rect.mp-bar").count() > 5
        box = svg.bounding_box()
        assert box is not None and box["width"] > 300
        pg.locator("#grad-watch").scroll_into_view_if_needed()
        pg.locator("#grad-watch").screenshot(path=str(SHOTS / "grads-1400.png"))
        pg.set_viewport_size({"width": 400, "height": 860})
        pg.wait_for_timeout(500)  # the grid reflows to one figure a row
        boxes = [f.bounding_box() for f in pg.locator("#grad-watch figure.mp-gw-run").all()]
        assert all(b is not None and b["x"] >= 0 and b["x"] + b["width"] <= 400 for b in boxes)
        assert boxes[0]["y"] < boxes[1]["y"]  # stacked, not squeezed side by side
        pg.locator("#grad-watch").scroll_into_view_if_needed()
        pg.locator("#grad-watch").screenshot(path=str(SHOTS / "grads-400.png"))
    finally:
        context.close()
