"""The "Where it pays" tab in Debian's chromium: points stream onto the plot with their colours,
Stop keeps them, the memory bars and the published table are drawn, a refusal is in the page's
language."""

from __future__ import annotations

from browsing import BROWSER_MARKS, url  # noqa: F401 - a fixture

pytestmark = BROWSER_MARKS

# Every mark of the scatter layer with its fill (Vega draws each point as a path in g.mark-symbol).
MARKS_JS = """sel => Array.from(document.querySelectorAll(sel + ' g.mark-symbol path')).map(p => ({
    fill: p.getAttribute('fill') || '',
    stroke: p.getAttribute('stroke') || '',
    label: p.getAttribute('aria-label') || ''
}))"""


def open_tab(pages, url: str, locale: str):  # noqa: F811
    pg = pages.open(url, width=1280, height=900, locale=locale)
    pg.wait_for_selector("#start-btn", timeout=60_000)
    pg.click("#pays-tab-button")
    pg.wait_for_selector("#sweep-btn", state="visible", timeout=15_000)
    return pg


def fill(pg, elem_id: str, value: str) -> None:
    box = pg.locator(f"#{elem_id} input, #{elem_id} textarea").first
    box.fill(value)
    box.press("Tab")


def wait_text(pg, sel: str, text: str, timeout_s: float) -> str:
    pg.wait_for_function(
        "([s, t]) => (document.querySelector(s)?.innerText || '').includes(t)",
        arg=[sel, text],
        timeout=timeout_s * 1000,
    )
    return pg.inner_text(sel)


def test_a_sweep_streams_its_points_and_draws_memory_and_published(pages, url: str) -> None:  # noqa: F811
    pg = open_tab(pages, url, "en-US")
    assert pg.locator("#sweep-stop-btn").is_disabled()
    links = pg.locator("#published-table a")
    assert links.count() == 6 and "Published, not run here" in pg.inner_text("#published-table")
    # The H200's shipped sweep, under a heading that says where it ran, its sentences "on the H200".
    recorded = pg.inner_text("#sweep-recorded")
    assert "Recorded on NVIDIA H200 (2026-12-04), not on this machine" in recorded
    assert "at batch 32, bf16 pays on the H200 from about 26.2 M parameters" in recorded
    fill(pg, "sweep-sizes", "32x1,64x1")
    fill(pg, "sweep-batches", "8")
    box = pg.locator("#sweep-budget input[type=number]").first
    box.fill("2")
    box.press("Tab")
    pg.click("#sweep-btn")
    status = wait_text(pg, "#sweep-status", "Done: 2 of 2 points", 180)
    assert "Done" in status
    # Every point drawn has its series' colour (the colour domain was set before the first
    # point): fp32's reference, bf16's points and their intervals' ends, at both sizes.
    marks = pg.evaluate(MARKS_JS, "#sweep-plot")
    blank = ("", "none", "transparent")
    colours = [m["fill"] if m["fill"] not in blank else m["stroke"] for m in marks if m["label"]]
    colours = [c for c in colours if c not in blank]
    assert len(colours) >= 2 * 4, marks
    assert len(set(colours)) >= 3, colours
    assert "bf16" in pg.inner_text("#sweep-crossover")
    wait_text(pg, "#memory-notes", "Memory of one step", 60)
    bars = pg.locator("#memory-plot g.mark-rect path")
    assert bars.count() >= 8  # 4 parts x 2 precisions, and the rule's bars
    # Its axes are titled in words, never with the frame's column name (issue 27: "bar").
    titles = pg.eval_on_selector_all(
        "#memory-plot g.role-axis-title text", "els => els.map(e => e.textContent)"
    )
    assert "MiB" in titles and not {"bar", "mib", "part"} & {x.strip() for x in titles}
    assert pg.locator("#sweep-stop-btn").is_disabled()


def test_stop_keeps_the_points_and_a_refusal_is_in_spanish(pages, url: str) -> None:  # noqa: F811
    pg = open_tab(pages, url, "es-ES")
    # The page has turned Spanish (its language event re-sets the tab's status: a click before
    # it on a loaded machine saw its refusal replaced by the idle line).
    wait_text(pg, "#sweep-btn", "Ejecutar barrido", 60)
    wait_text(pg, "#sweep-status", "Pulsa Ejecutar barrido", 60)
    wait_text(pg, "#sweep-recorded", "Grabado en NVIDIA H200", 30)
    assert "bf16 compensa en la H200 a partir de unos 26,2 M" in pg.inner_text("#sweep-recorded")
    fill(pg, "sweep-sizes", "64y2")
    pg.click("#sweep-btn")
    status = wait_text(pg, "#sweep-status", "No empezó", 60)
    assert "ancho x capas" in status
    toast = pg.locator("[data-testid=toast-body]").first
    toast.wait_for(timeout=15_000)
    assert "ancho x capas" in toast.inner_text()
    fill(pg, "sweep-sizes", "32x1,64x1,64x2,128x2")
    fill(pg, "sweep-batches", "8")
    # 2 s a point rather than the default 30 s budget's 7.5: Stop comes after the first point
    # and 3 points (6 s or more) are still ahead of it.
    box = pg.locator("#sweep-budget input[type=number]").first
    box.fill("8")
    box.press("Tab")
    pg.click("#sweep-btn")
    wait_text(pg, "#sweep-status", "Medidos 1 de 4", 180)
    pg.click("#sweep-stop-btn")
    status = wait_text(pg, "#sweep-status", "Detenido: se conservan", 120)
    assert "de 4 puntos" in status
    # The point measured before Stop stays: in the table and in the sentence under the plot.
    wait_text(pg, "#sweep-table", "bert-32x1", 30)
    assert "32x1" in pg.inner_text("#sweep-crossover")
