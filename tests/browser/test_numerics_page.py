"""The Number formats tab's numerics sections in the browser, at 1400 and 400 px wide."""

from __future__ import annotations

import os

from browsing import BROWSER_MARKS, url  # noqa: F401 - a fixture

pytestmark = BROWSER_MARKS
SHOTS = os.environ.get("MPDEMO_SHOTS")  # a folder: save screenshots there to look at


def test_tf32_and_accumulation_render_and_fit(url: str, pages) -> None:  # noqa: F811
    # One page, 1400 px then narrowed to a phone's 400 (the page's CSS follows the viewport).
    page = pages.open(url, width=1400, height=900, locale="es-ES")
    page.get_by_role("tab", name="Formatos numéricos").click()
    page.wait_for_selector("#nf-tf32 table", timeout=60_000)
    page.wait_for_selector("#nf-acc-table table", timeout=60_000)
    tf32 = page.inner_text("#nf-tf32")
    assert "0 01111011 1001100110" in tf32 and "TF32" in tf32
    acc = page.inner_text("#nf-acc-table")
    assert "acumulador" in acc and "9,953125" in acc  # fp16's sum of 0,01 a thousand times
    # Typing a new count recomputes the sums (100, then a thousand again at 400 px).
    for width, count, gone, back in ((1400, "100", "9,953125", None),
                                     (400, "1000", None, "9,953125")):  # fmt: skip
        page.set_viewport_size({"width": width, "height": 900})
        page.fill("#nf-acc-n input", count)
        page.keyboard.press("Enter")
        page.wait_for_function(
            "([g, b]) => { const t = document.querySelector('#nf-acc-table').innerText;"
            " return (g === null || !t.includes(g)) && (b === null || t.includes(b)); }",
            arg=[gone, back],
            timeout=60_000,
        )
        # Nothing wider than the window: the tables scroll inside their own box.
        overflow = page.evaluate("document.documentElement.scrollWidth - window.innerWidth")
        assert overflow <= 1, width
        if SHOTS:
            page.locator("#nf-acc-table").scroll_into_view_if_needed()
            page.screenshot(path=f"{SHOTS}/numerics-{width}.png", full_page=False)
