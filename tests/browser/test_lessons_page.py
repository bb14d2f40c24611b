"""Two lessons on the page in a browser: the underflow lesson's click, its recording and its
watched gradients; the master-weights lesson's three recipes. Each then seen at 400 px in
en/es/pt and at 1400 in one (tests/browser/lesson_pages.py; screenshots where $MPDEMO_SHOTS is
set)."""

from __future__ import annotations

from browsing import BROWSER_MARKS, url  # noqa: F401 - url is a fixture
from lesson_pages import HEIGHT, open_page, seen_everywhere, seen_in, shoot, wait_wired

from mpdemo.teach.lessons import LESSONS
from mpdemo.ui import i18n

pytestmark = BROWSER_MARKS


def run_lesson(pg, key: str) -> str:
    """Click the lesson `key` (its English title) once the page's events are wired; its status
    once it says Done."""
    wait_wired(pg)
    title = i18n.message(f"lesson_{key}_title", {}, "en")
    pg.locator("#lesson-picker label", has_text=title).click()
    pg.wait_for_function(
        "() => (document.querySelector('#status')?.innerText || '').startsWith('Done')",
        timeout=480_000,  # a loaded 2-core machine: the calibration alone took 60 s
    )
    return pg.inner_text("#status")


def test_one_click_on_a_lesson_runs_it(pages, url, monkeypatch, tmp_path) -> None:  # noqa: F811
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
    # The click's wiring, not the lesson's minute (bench/lessons.py times that): 12 steps a
    # run, its gradients watched at steps 6 and 12 (the full lesson: 20 and 40 of 80).
    monkeypatch.setenv("MPDEMO_LESSON_STEPS", "12")
    monkeypatch.setenv("MPDEMO_REFERENCE_DIR", str(tmp_path))
    monkeypatch.setattr(R, "COUNTED_DEVICES", ("cpu",))
    rec = R.recording_for("underflow")
    assert rec is not None
    assert LESSONS["underflow"].settings()["watch_grads"] == 6
    pg = open_page(pages, url, "en", 1400)
    assert not pg.locator("#grad-watch").is_visible()  # nothing watched yet
    # What the page keeps, not a race: the watched steps drawn once it is done (check_grad_watch
    # reads each live run's last one; "one shows before Done" failed on a loaded machine).
    status = run_lesson(pg, "underflow")
    assert "3 runs" in status, status
    legend = pg.inner_text("#run-legend")
    assert "torch · fp16 · S=1" in legend and "torch · fp32" in legend
    assert f"torch · fp16 · S=1 · {rec.tag}" in legend and name in legend, legend
    assert pg.locator("#scale-plot").is_visible()  # the scaled fp16 run draws its scale
    look = i18n.message("lesson_underflow_look", {}, "en")
    info = pg.inner_text("#lesson-info")
    assert look in info and f"recorded on {rec.machine_name}" in info, info
    shoot(pg, "lesson-underflow-en-1400.png", full_page=True)
    seen_in(pg, LESSONS["underflow"], "en", switch=False)
    check_grad_watch(pg)  # then in Spanish and Portuguese


FIGURES = "document.querySelectorAll('#grad-watch figure.mp-gw-run')"


def check_grad_watch(pg) -> None:
    """The underflow lesson's watched gradients (#grad-watch) once it is done: each live run's
    last watched step, at 1400 px then at 400 (one figure a row), and in Spanish then Portuguese
    after a switch (the same figures, redrawn in the page's words)."""
    live = ["torch · fp32", "torch · fp16", "torch · fp16 · S=1"]
    pg.wait_for_function(  # the live runs' last watched step (the opened recording has its own)
        f"ls => ls.every(l => [...{FIGURES}].some(f => f.dataset.run === l"
        " && f.dataset.step === '12'))",
        arg=live,
        timeout=30_000,
    )
    runs = [f.get_attribute("data-run") for f in pg.locator("#grad-watch figure.mp-gw-run").all()]
    assert runs[:3] == live, runs
    text = pg.inner_text("#grad-watch")
    assert "Worst layer" in text or "No layer" in text
    assert "step 12 · S = 1 · vs fp16" in text  # the unscaled run's title
    svg = pg.locator("#grad-watch svg").first
    assert svg.locator("rect.mp-bar").count() > 5
    box = svg.bounding_box()
    assert box is not None and box["width"] > 300
    shoot(pg.locator("#grad-watch"), "grads-1400.png")
    pg.set_viewport_size({"width": 400, "height": HEIGHT})
    pg.wait_for_timeout(500)  # the grid reflows to one figure a row
    boxes = [f.bounding_box() for f in pg.locator("#grad-watch figure.mp-gw-run").all()]
    assert all(b is not None and b["x"] >= 0 and b["x"] + b["width"] <= 400 for b in boxes)
    assert boxes[0]["y"] < boxes[1]["y"]  # stacked, not squeezed side by side
    shoot(pg.locator("#grad-watch"), "grads-400.png")
    # A language switch redraws the same figures in the page's words and digits.
    figures = pg.locator("#grad-watch figure.mp-gw-run")
    steps = [f.get_attribute("data-step") for f in figures.all()]
    for code in ("es", "pt"):
        pg.locator("#lang").get_by_label(i18n.LOCALES[code].name).check()
        # The unscaled run's title, without its label (the run's name, in no language).
        title = i18n.t("gw_title", code, label="", step=12, scale="1", fmt="fp16")
        pg.wait_for_function(
            "t => (document.querySelector('#grad-watch')?.innerText || '').includes(t)",
            arg=title,
            timeout=30_000,
        )
        text = pg.inner_text("#grad-watch")
        assert i18n.t("gw_title", "en", label="", step=12, scale="1", fmt="fp16") not in text
        intro = i18n.t("gw_intro", code, box=i18n.t("watch_grads_label", code))
        assert intro.split("<i>")[0].strip() in text, (code, text[:200])
        worst = i18n.t("gw_worst", code, layer="", share="").split(":")[0]  # "Peor capa"
        assert worst in text or i18n.t("gw_worst_none", code) in text, (code, text)
        assert "Worst layer" not in text and "No layer" not in text
        assert [f.get_attribute("data-run") for f in figures.all()] == runs
        assert [f.get_attribute("data-step") for f in figures.all()] == steps
        svg_text = pg.locator("#grad-watch svg").first.text_content() or ""
        assert i18n.t("uf_clamped", code) in svg_text  # the histogram's own words too
        # The rest of the lesson in this language too (switched above), at 400 px.
        seen_in(pg, LESSONS["underflow"], code, switch=False)
    shoot(pg.locator("#grad-watch"), "grads-400-pt.png")


def test_the_master_weights_lesson_runs_its_three_recipes_on_the_page(
    pages,
    url,  # noqa: F811
    monkeypatch,
) -> None:
    # The tab's weights boxes carry the lesson: fp32 master, pure bf16, pure bf16 + SR.
    monkeypatch.setenv("MPDEMO_LESSON_STEPS", "3")
    pg = open_page(pages, url, "en", 1400)
    status = run_lesson(pg, "master_weights")
    assert "3 runs (3 completed)" in status, status
    # Each run's share of updates that rounded away, unfolded in the status.
    assert "Updates that rounded away" in status
    for label in ("torch · bf16: 0%", "torch · bf16 · bf16 weights: ", "bf16 weights+SR: "):
        assert label in status, status
    rows = pg.inner_text("#summary")
    assert "bf16 weights+SR" in rows
    shoot(pg.locator("#status"), "lesson-master-weights-status.png")
    seen_everywhere(pg, LESSONS["master-weights"], "en")
