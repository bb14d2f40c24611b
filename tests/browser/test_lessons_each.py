"""Every other lesson on the Train tab in a browser: the page opened in a language (the lessons
and Train on its first screen at 1400 and 400 px), one click, the lesson trained (steps
shortened by MPDEMO_LESSON_STEPS, the tests' knob) at 400 px, then seen there in en/es/pt and
at 1400 in the last.
Screenshots where $MPDEMO_SHOTS names a folder."""

from __future__ import annotations

import pytest
from browsing import BROWSER_MARKS, url  # noqa: F401 - url is a fixture
from lesson_pages import check_first_screen, done_prefix, open_page, seen_everywhere, wait_wired

from mpdemo.teach.lessons import LESSONS
from mpdemo.ui import i18n

pytestmark = BROWSER_MARKS


# Every lesson on the page not run in test_lessons_page.py, each opened in one language and
# trained (5 steps a run: the wiring, not the lesson's minute) at 400 px, a phone's click: its
# status, legend and "look for" line there (its controls and plots in one column), then in the
# other two languages after a switch, the last at 1400 px too — every lesson seen in en, es and
# pt at 400 px and at both widths in one. The screenshots are for a person ($MPDEMO_SHOTS).
@pytest.mark.parametrize(
    ("name", "code", "runs"),
    [
        ("still-trains", "es", 2),
        ("loss-scaling", "pt", 1),
        ("backends", "en", 3),
        ("where-it-pays", "es", 0),
    ],  # fmt: skip
)
def test_each_lesson_runs_at_both_widths_in_every_language(
    pages,
    url,  # noqa: F811
    monkeypatch,
    name,
    code,
    runs,
) -> None:
    monkeypatch.setenv("MPDEMO_LESSON_STEPS", "5")
    lesson = LESSONS[name]
    pg = open_page(pages, url, code, 1400)
    wait_wired(pg)
    check_first_screen(pg, code)  # each language opened once in this test's parameters
    title = i18n.message(f"lesson_{lesson.key}_title", {}, code)
    pg.locator("#lesson-picker label", has_text=title).click()
    if lesson.sweep:  # the sweep runs on its own tab: the click opens it
        pg.locator("#sweep-btn").wait_for(state="visible", timeout=30_000)
    else:
        pg.wait_for_function(
            "p => (document.querySelector('#status')?.innerText || '').startsWith(p)",
            arg=done_prefix(code),
            timeout=300_000,
        )
        status = pg.inner_text("#status")
        count = i18n.t("status_done", code, count=runs, detail="").split("(")[0]
        assert status.startswith(count), status  # "Terminado: 2 ejecuciones"
        legend = pg.inner_text("#run-legend")
        assert all(c.label in legend for c in lesson.configs()), legend
        if name == "backends":  # one flag, three backends: one curve, and the legend says so
            together = " = ".join(c.label for c in lesson.configs())
            assert i18n.t("legend_coincide", code, groups=together) in legend, legend
    seen_everywhere(pg, lesson, code)
