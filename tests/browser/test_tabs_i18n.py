"""Every tab in every language: no text of another language left on the page.

One page load per language (the browser's locale picks it through Accept-Language); what counts
as another language: tests/one_language.py. The presets' and the computed lab's texts in every
language: tests/test_one_language.py.
"""

from __future__ import annotations

import pytest
from browsing import BROWSER_MARKS, LOCALES, url  # noqa: F401 - a fixture
from one_language import left_over

from mpdemo.ui import i18n

pytestmark = BROWSER_MARKS

# The visible text under a selector, with code blocks, code spans, editors, links (the titles
# of cited papers and manuals, in their own language) and gradio's own progress line
# ("queue: 1/1 | 0.1s") hidden while it is read.
TEXT_JS = """sel => {
    const root = document.querySelector(sel);
    const style = document.createElement('style');
    style.textContent = ['.cm-editor', '.cm-gutters', 'pre', 'code', 'a',
        '[data-testid=status-tracker]'].map(x => `${sel} ${x}`).join(', ')
        + ' { display: none !important; }';
    document.head.appendChild(style);
    const text = root ? root.innerText : '';
    style.remove();
    return text;
}"""


def text_of(pg, sel: str) -> str:
    return pg.evaluate(TEXT_JS, sel)


def open_page(pages, url: str, code: str):
    """A first visit from a browser that asks for `code`; waits until the load event picked it."""
    pg = pages.open(url, width=1280, height=900, locale=LOCALES[code])
    pg.wait_for_selector("#start-btn", timeout=60_000)
    pg.wait_for_function(  # detect_language ran and the radio shows it
        """l => Array.from(document.querySelectorAll('#lang label'))
            .some(x => x.innerText.trim() === l && x.querySelector('input')?.checked)""",
        arg=i18n.LOCALES[code].name,
        timeout=30_000,
    )
    pg.wait_for_function(  # the load hooks filled in the row-count preview
        "() => (document.querySelector('#slice-preview')?.innerText || '').trim().length > 0",
        timeout=30_000,
    )
    heading = i18n.t("intro", code).strip().splitlines()[0].lstrip("# ")
    pg.wait_for_function(  # the relabelling (its own request, after the load event) arrived
        "h => (document.querySelector('#intro')?.innerText || '').includes(h)",
        arg=heading,
        timeout=30_000,
    )
    return pg


# The tab panels, read from the page (elem_id "x-tab" has its button "x-tab-button").
TABS_JS = """() => Array.from(document.querySelectorAll('button[role=tab][id$="-tab-button"]'))
    .map(b => b.id.slice(0, -'-button'.length))"""


def open_tab(pg, tab: str) -> None:
    pg.click(f"#{tab}-button")
    pg.wait_for_function(
        "id => (document.getElementById(id)?.innerText || '').trim().length > 0",
        arg=tab,
        timeout=15_000,
    )
    pg.wait_for_timeout(300)  # late renders (tables, the code editors) settle


def page_texts(pg, computed: bool) -> dict[str, str]:
    """Each tab's prose (its tab-bar label included), the presets' names and, where `computed`,
    a loaded preset and a computed Underflow lab (every language's texts for those are rendered
    by the tabs' own views in tests/test_one_language.py)."""
    out = {"header": text_of(pg, "#intro") + "\n" + text_of(pg, "#lang")}
    tabs = pg.evaluate(TABS_JS)
    assert {"train-tab", "formats-tab", "underflow-tab", "code-tab", "why-tab"} <= set(tabs)
    for tab in tabs:
        open_tab(pg, tab)
        if tab == "train-tab":  # the closed accordion hides the loss-scaling controls
            pg.locator("#advanced .label-wrap").first.click()
            pg.wait_for_selector("#loss-scaling", state="visible", timeout=10_000)
        out[tab] = pg.inner_text(f"#{tab}-button") + "\n" + text_of(pg, f"#{tab}")
    # The Why tab's presets: their names, and one's description and status through the page
    # (the wiring, in English); every preset's texts in every language:
    # test_every_preset_is_in_one_language.
    open_tab(pg, "why-tab")
    options = pg.locator("[data-testid=dropdown-option]")
    pg.click("#preset input")
    names = [options.nth(i).inner_text().strip() for i in range(options.count())]
    assert len(names) >= 2, names
    out["why-tab (preset names)"] = "\n".join(names)
    if not computed:
        return out
    before = text_of(pg, "#preset-desc")
    options.nth(0).click()
    pg.wait_for_function(
        f"b => ({TEXT_JS})('#preset-desc').trim() !== b.trim()", arg=before, timeout=15_000
    )
    out["why-tab (preset 1)"] = text_of(pg, "#preset-desc")
    # The pick's second event loads the preset and switches to Train (its own request, apart
    # from the description's): on a loaded machine it came after the Underflow tab was opened
    # below and hid its button (CI, 2-core EPYC). Its status is read once Train shows.
    pg.locator("#start-btn").wait_for(state="visible", timeout=30_000)
    out["train-tab (after preset 1)"] = text_of(pg, "#status")
    # The Underflow lab's results: one real backward pass on the default small model.
    open_tab(pg, "underflow-tab")
    before = pg.inner_text("#uf-status")
    pg.click("#uf-run")
    pg.wait_for_function(
        """b => (document.querySelector('#uf-reading')?.innerText || '').trim().length > 0
            && document.querySelector('#uf-status')?.innerText !== b""",
        arg=before,
        timeout=60_000,
    )
    pg.wait_for_timeout(300)
    out["underflow-tab (computed)"] = text_of(pg, "#underflow-tab")
    return out


@pytest.mark.parametrize("code", i18n.LANGS)
def test_every_tab_is_in_one_language(pages, url: str, code: str) -> None:
    pg = open_page(pages, url, code)
    assert pg.locator("#lang").get_by_label(i18n.LOCALES[code].name).is_checked()
    texts = page_texts(pg, computed=code == "en")

    for tab, key in [("train-tab", "tab_train"), ("formats-tab", "tab_formats"),
                     ("underflow-tab", "tab_underflow"), ("code-tab", "tab_code"),
                     ("why-tab", "tab_why")]:  # fmt: skip
        assert texts[tab].startswith(i18n.t(key, code)), (tab, texts[tab][:80])
    problems = {tab: left_over(text, code) for tab, text in texts.items()}
    problems = {tab: hits for tab, hits in problems.items() if hits}
    assert not problems, f"Another language on the {i18n.LOCALES[code].name} page:\n" + "\n".join(
        f"{tab}: {hit}" for tab, hits in problems.items() for hit in hits
    )
    if code == "en":  # the detector sees English where there is English
        for tab in ("train-tab", "formats-tab", "underflow-tab", "code-tab", "why-tab"):
            assert len(left_over(texts[tab], "es")) > 5, (tab, texts[tab][:300])
