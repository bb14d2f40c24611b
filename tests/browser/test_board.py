"""The teacher's board in Debian's chromium: a student's page follows the teacher's comparison."""

from __future__ import annotations

import re

from browsing import BROWSER_MARKS, LOCALES, set_number, url  # noqa: F401 - a fixture

pytestmark = BROWSER_MARKS

# Each plot line's run (Vega's aria-label ends "run: <label>") with a drawn path.
RUNS_JS = """sel => Array.from(document.querySelectorAll(sel + ' g.mark-line path'))
    .filter(p => (p.getAttribute('d') || '').length > 10)
    .map(p => (p.getAttribute('aria-label') || '').split('run: ').pop())
    .filter(r => r && !r.endsWith(' · raw') && !r.endsWith(' · skipped'))"""


def wait_text(page, sel: str, text: str, timeout_s: float = 60) -> str:
    """Wait until an element's text contains `text`; return it."""
    page.wait_for_function(
        "([s, t]) => (document.querySelector(s)?.innerText || '').includes(t)",
        arg=[sel, text],
        timeout=timeout_s * 1000,
    )
    return page.inner_text(sel)


def open_page(pages, url: str, other: bool = False):  # noqa: F811 - the fixture's value
    """A page (its own gradio session), loaded, board opened: the pool's English one, or
    (`other`: a second visitor, who keeps nothing of the first) the pool's page in another
    browser context, asked for English by its link as a class's link would."""
    if other:
        page = pages.open(f"{url}?lang=en", width=1400, height=1000, locale=LOCALES["es"])
    else:
        page = pages.open(url, width=1400, height=1000, locale="en-US")
    page.wait_for_selector("#start-btn", timeout=60_000)
    page.locator("#board").get_by_text("Class board").first.click()
    page.wait_for_selector("#board-publish-btn", state="visible", timeout=30_000)
    return page


def test_a_student_follows_the_teachers_comparison_live(url: str, pages) -> None:  # noqa: F811
    teacher, student = open_page(pages, url), open_page(pages, url, other=True)
    teacher.click("#board-publish-btn")
    note = wait_text(teacher, "#board-note", "Your board:")
    code = re.search(r"Your board: ([A-Z]{4})", note).group(1)

    box = student.locator("#board-code-input textarea, #board-code-input input").first
    # A mistyped code first: said, and nothing trains (on the same page: a page load costs
    # seconds of chromium on 2 cores).
    box.fill("QQQQ" if code != "QQQQ" else "ZZZZ")
    student.click("#board-follow-btn")
    wrong = wait_text(student, "#status", "no board has this code")
    assert "Not started" in wrong or "no board" in wrong
    assert not student.locator("#stop-btn").is_enabled()
    box.fill(code.lower())  # typed as a student types it
    student.click("#board-follow-btn")
    wait_text(student, "#status", "waiting for the teacher")

    # The teacher trains a small comparison (typed steps: not fitted to a minute).
    slice_box = teacher.locator("#train-slice textarea, #train-slice input").first
    slice_box.fill("train[:256]")
    slice_box.press("Enter")
    eval_box = teacher.locator("#eval-slice textarea, #eval-slice input").first
    eval_box.fill("validation[:64]")  # the stream, not the evaluation
    eval_box.press("Enter")
    set_number(teacher, "steps", "16")  # the stream, not the lesson: seconds of fp32 and fp16
    # Eight rows a step: fp16's step took 0.34 s at the page's 32 rows on a 2-core EPYC
    # without AVX512-FP16 (9x fp32's), and two pages drew every frame of it.
    set_number(teacher, "batch-size", "8")
    teacher.click("#start-btn")

    live = wait_text(student, "#status", f"Board {code}", timeout_s=120)
    assert "streamed live" in live and "You train nothing" in live, live
    done = wait_text(student, "#status", "Done:", timeout_s=240)
    assert f"Board {code}" in done
    teacher_done = wait_text(teacher, "#status", "Done:", timeout_s=60)
    assert "another visitor" not in teacher_done and "Board" not in teacher_done
    # The student's plots draw the teacher's runs, each with a line.
    student.wait_for_function(f"() => ({RUNS_JS})('#loss-plot').length >= 2", timeout=30_000)
    runs = set(student.evaluate(RUNS_JS, "#loss-plot"))
    assert runs == set(teacher.evaluate(RUNS_JS, "#loss-plot")) and len(runs) >= 2
    rows = student.inner_text("#summary")
    assert all(r in rows for r in runs)
