"""The lesson picker in a browser: at 1400 and 400 px in en/es/pt it and Train are on the first
screen, in the page's language; a click on a lesson runs it (steps shortened by
MPDEMO_LESSON_STEPS, the tests' knob). Screenshots go to $MPDEMO_SHOTS (default: a temp dir)."""

from __future__ import annotations

import os
import tempfile
from pathlib import Path

import pytest
from browsing import BROWSER_MARKS, url  # noqa: F401 - url is a fixture

from mpdemo.teach.lessons import LESSONS
from mpdemo.ui import i18n

pytestmark = BROWSER_MARKS
SHOTS = Path(os.environ.get("MPDEMO_SHOTS") or tempfile.mkdtemp(prefix="mpdemo-shots-"))
HEIGHT = 860  # a phone's or a projector's first screen


def open_page(browser, url: str, code: str, width: int):  # noqa: F811
    context = browser.new_context(viewport={"width": width, "height": HEIGHT})
    pg = context.new_page()
    pg.goto(f"{url}?lang={code}", wait_until="domcontentloaded")
    title = i18n.message("lesson_underflow_title", {}, code)
    pg.wait_for_function(
        "t => (document.querySelector('#lesson-picker')?.innerText || '').includes(t)",
        arg=title,
        timeout=60_000,
    )
    return context, pg


@pytest.mark.parametrize("width", [1400, 400])
@pytest.mark.parametrize("code", ["en", "es", "pt"])
def test_the_lessons_and_train_are_on_the_first_screen(browser, url, code, width) -> None:  # noqa: F811
    context, pg = open_page(browser, url, code, width)
    try:
        text = pg.inner_text("#lesson-picker")
        titles = [
            i18n.message(f"lesson_{x.key}_title", {}, code) for x in LESSONS.values() if x.on_page
        ]
        assert [text.index(x) for x in titles] == sorted(text.index(x) for x in titles)
        for sel in ("#lesson-picker", "#start-btn"):
            box = pg.locator(sel).bounding_box()
            assert box is not None and box["y"] + box["height"] <= HEIGHT, (sel, box)
        slide = i18n.message("lesson_still_trains_slide", {}, code)
        assert slide in pg.inner_text("#lesson-info")
        pg.screenshot(path=str(SHOTS / f"lessons-{code}-{width}.png"))
    finally:
        context.close()


def run_lesson(pg, key: str) -> str:
    """Click the lesson `key` (its English title) once the page's events are wired; its status
    once it says Done."""
    pg.wait_for_function(  # the load hooks answered: the page's events are wired up
        "() => (document.querySelector('#slice-preview')?.innerText || '').trim().length > 0",
        timeout=60_000,
    )
    title = i18n.message(f"lesson_{key}_title", {}, "en")
    pg.locator("#lesson-picker label", has_text=title).click()
    pg.wait_for_function(
        "() => (document.querySelector('#status')?.innerText || '').startsWith('Done')",
        timeout=480_000,  # a loaded 2-core machine: the calibration alone took 60 s
    )
    return pg.inner_text("#status")


def test_one_click_on_a_lesson_runs_it(browser, url, monkeypatch, tmp_path) -> None:  # noqa: F811
    # The lesson's own recording, where one ships, opens beside the live runs: a real one, the
    # lesson's runs recorded here by the lesson command into the shipped-recordings folder this
    # test points to. It ran on the CPU, so the counted devices take the CPU for this test
    # (on a page a GPU's recording only; tests/test_lessons.py checks a CPU one never counts).
    from mpdemo.cli.main import main
    from mpdemo.engine.machine import machine_info
    from mpdemo.teach import lesson_recordings as R

    monkeypatch.setenv("MPDEMO_LESSON_STEPS", "2")  # the recording: its path, not its curve
    name = R.file_name("underflow", machine_info(), "cpu")
    argv = ["lesson", "underflow", "--device", "cpu", "--json", str(tmp_path / name), "--quiet"]
    assert main(argv) == 0
    # The click's wiring, not the lesson's minute (bench/lessons.py times that): 12 steps a run.
    monkeypatch.setenv("MPDEMO_LESSON_STEPS", "12")
    monkeypatch.setenv("MPDEMO_REFERENCE_DIR", str(tmp_path))
    monkeypatch.setattr(R, "COUNTED_DEVICES", ("cpu",))
    rec = R.recording_for("underflow")
    assert rec is not None
    context, pg = open_page(browser, url, "en", 1400)
    try:
        status = run_lesson(pg, "underflow")
        assert "3 runs" in status, status
        legend = pg.inner_text("#run-legend")
        assert "torch · fp16 · S=1" in legend and "torch · fp32" in legend
        assert f"torch · fp16 · S=1 · {rec.tag}" in legend and name in legend, legend
        assert pg.locator("#scale-plot").is_visible()  # the scaled fp16 run draws its scale
        look = i18n.message("lesson_underflow_look", {}, "en")
        info = pg.inner_text("#lesson-info")
        assert look in info and f"recorded on {rec.machine_name}" in info, info
        pg.screenshot(path=str(SHOTS / "lesson-underflow-en-1400.png"), full_page=True)
    finally:
        context.close()


def test_the_master_weights_lesson_runs_its_three_recipes_on_the_page(
    browser,
    url,  # noqa: F811
    monkeypatch,
) -> None:
    # The tab's weights boxes carry the lesson: fp32 master, pure bf16, pure bf16 + SR.
    monkeypatch.setenv("MPDEMO_LESSON_STEPS", "3")
    context, pg = open_page(browser, url, "en", 1400)
    try:
        status = run_lesson(pg, "master_weights")
        assert "3 runs (3 completed)" in status, status
        # Each run's share of updates that rounded away, unfolded in the status.
        assert "Updates that rounded away" in status
        for label in ("torch · bf16: 0%", "torch · bf16 · bf16 weights: ", "bf16 weights+SR: "):
            assert label in status, status
        rows = pg.inner_text("#summary")
        assert "bf16 weights+SR" in rows
        pg.locator("#status").screenshot(path=str(SHOTS / "lesson-master-weights-status.png"))
    finally:
        context.close()
