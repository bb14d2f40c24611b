"""What the lesson pages' browser tests share: a page opened in a language, the first-screen
check, and a finished lesson seen at 400 px in every language and at 1400 in one.

Screenshots are taken only where $MPDEMO_SHOTS names a folder (a person looking at them):
a full page at 400 px is ~5,000 px of PNG, seconds of chromium each, and nothing asserts on
the pictures."""

from __future__ import annotations

from typing import Any

from browsing import shoot

from mpdemo.teach.lessons import LESSONS
from mpdemo.ui import i18n

HEIGHT = 860  # a phone's or a projector's first screen


def open_page(pages: Any, url: str, code: str, width: int) -> Any:
    """A page of the session's pool at `width`, opened in `code`, once the lesson picker shows."""
    pg = pages.open(f"{url}?lang={code}", width=width, height=HEIGHT)
    title = i18n.message("lesson_underflow_title", {}, code)
    pg.wait_for_function(
        "t => (document.querySelector('#lesson-picker')?.innerText || '').includes(t)",
        arg=title,
        timeout=60_000,
    )
    return pg


def wait_wired(pg: Any) -> None:
    """Until the page's load hooks answered (its events are wired up: a click now counts)."""
    pg.wait_for_function(
        "() => (document.querySelector('#slice-preview')?.innerText || '').trim().length > 0",
        timeout=60_000,
    )


def check_first_screen(pg, code: str) -> None:
    """The page as it opened in `code`: the lessons in the course's order, the first one's
    slide, and the picker and Train on the first screen at 1400 then 400 px (one page
    narrowed: a page load costs more than a reflow). The page stays at 400 px: a phone's
    click on the lesson, and seen_everywhere's width."""
    text = pg.inner_text("#lesson-picker")
    titles = [
        i18n.message(f"lesson_{x.key}_title", {}, code) for x in LESSONS.values() if x.on_page
    ]
    assert [text.index(x) for x in titles] == sorted(text.index(x) for x in titles)
    slide = i18n.message("lesson_still_trains_slide", {}, code)
    assert slide in pg.inner_text("#lesson-info")
    for width in (1400, 400):
        resize(pg, width)
        pg.evaluate("() => window.scrollTo(0, 0)")
        for sel in ("#lesson-picker", "#start-btn"):
            box = pg.locator(sel).bounding_box()
            assert box is not None and box["y"] + box["height"] <= HEIGHT, (width, sel, box)
        shoot(pg, f"lessons-{code}-{width}.png")


def resize(pg: Any, width: int) -> None:
    """The page at `width` px once its columns reflowed (nothing to do at that width already)."""
    if pg.viewport_size["width"] != width:
        pg.set_viewport_size({"width": width, "height": HEIGHT})
        pg.wait_for_timeout(300)  # the columns reflow


def done_prefix(code: str) -> str:
    """The status's first word once a comparison ended, in `code` ("Done", "Terminado", ...)."""
    return i18n.t("status_done", code, count=1, detail="x").split(":")[0]


def look_for(key: str, code: str) -> str:
    """The lesson's "what to look for" line in `code`, as the page shows it (no markdown)."""
    return i18n.message(f"lesson_{key}_look", {}, code).replace("*", "").replace("`", "")[:40]


SIDEWAYS_JS = "() => document.documentElement.scrollWidth"


def seen_in(
    pg: Any, lesson: Any, code: str, switch: bool = True, widths: tuple[int, ...] = ()
) -> None:
    """The finished lesson in `code` (after a switch to it, unless `switch` is False): its
    "look for" line and, for a comparison, the status in the page's words; at the page's
    width, then at each of `widths` (full-page screenshots of each, for a person to look at)."""
    if switch:
        pg.locator("#lang").get_by_label(i18n.LOCALES[code].name).check()
        pg.get_by_role("tab", name=i18n.t("tab_train", code)).click()
    pg.wait_for_function(
        "t => (document.querySelector('#lesson-info')?.innerText || '').includes(t)",
        arg=look_for(lesson.key, code),
        timeout=30_000,
    )
    if not lesson.sweep:  # the finished comparison's status, in the page's language
        pg.wait_for_function(
            "p => (document.querySelector('#status')?.innerText || '').startsWith(p)",
            arg=done_prefix(code),
            timeout=30_000,
        )
    for width in (pg.viewport_size["width"], *widths):
        resize(pg, width)
        # The page never scrolls sideways (the table scrolls inside its own box).
        assert pg.evaluate(SIDEWAYS_JS) <= width, (lesson.name, code, width)
        shoot(pg, f"lesson-{lesson.name}-{code}-{width}.png", full_page=True)


def seen_everywhere(pg: Any, lesson: Any, code: str) -> None:
    """The finished lesson seen at 400 px in `code`, then in the other two languages after a
    switch, the last one at 1400 px too: every language at a phone's width (where a long word
    would push the page sideways), both widths in one (two reflows, not six: each redraws the
    plots, a second of chromium on 2 cores)."""
    resize(pg, 400)
    others = [c for c in ("en", "es", "pt") if c != code]
    seen_in(pg, lesson, code, switch=False)
    seen_in(pg, lesson, others[0])
    seen_in(pg, lesson, others[1], widths=(1400,))
