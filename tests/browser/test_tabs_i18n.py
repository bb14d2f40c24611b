"""Every tab in every language: no text of another language left on the page.

One page load per language (the browser's locale picks it through Accept-Language). What counts
as "another language" comes from the locale files themselves: a word that some other locale's
strings use and this locale's strings never do is a left-over. English also has a hand-made
list, for English that is not in any locale file (gradio's own words, catalog descriptions).
"""

from __future__ import annotations

import re
from functools import cache

import pytest
from browsing import BROWSER_MARKS, LOCALES, url  # noqa: F401 - a fixture

from mpdemo.ui import i18n

pytestmark = BROWSER_MARKS

# Words that are English and never Spanish or Portuguese. Left out on purpose: words the
# languages share or that Spanish and Portuguese technical prose borrows (a, no, me, son, has,
# once, error, normal, final, total, backend(s), splits, overflow, underflow, subnormal, tensor,
# auto, vs). Any word a locale file itself uses is allowed on that locale's page.
_ENGLISH_WORDS = """
    the and with of is are this that these those when which what where while from to for in on
    at by or an it its be been was were will can not only each every your you than then into
    there here also but if how why about after before between over under below above
    run runs running ran step steps loss losses scale scaled scaling train trains training
    trained click press pick type model models gradient gradients batch slice rows speed
    samples accuracy warnings skipped stopped ready done start stop peak status compute
    computing value values format formats number numbers range smallest largest
    means shows showing see try nothing changes changed because keeps needs stays becomes
"""
ENGLISH = frozenset(_ENGLISH_WORDS.split())

# Names that stay as they are in every language (matched case-sensitively, removed first).
NAMES = [
    "Hugging Face",
    "PyTorch AMP",
    "PyTorch",
    "Accelerate",
    "Trainer",
    "GradScaler",
    "autocast",
    "Micikevicius et al.",
    "FP8 Formats for Deep Learning",  # a paper's title
    "NVIDIA",
    "Transformer Engine",
    "Volta",
    "Ampere",
    "Data Engineer",
    "bert-large-uncased",  # model ids in the published figures' table
    "t5-base",
]

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

# A token that is code, a number, a unit, an id or a format name rather than a word:
# anything with a digit, an underscore, a dot, a slash, brackets, = or a backtick.
CODE_LIKE = re.compile(r"\S*[\d_./\\\[\](){}=`<>:@#]\S*")
# What the page hides before reading (see TEXT_JS), taken out of the templates the same way:
# Markdown links, code spans and fenced blocks.
HIDDEN_MD = re.compile(r"\[[^\]]*\]\([^)]*\)|```.*?```|`[^`]*`", re.S)
WORD = re.compile(r"[A-Za-zÀ-ÖØ-öø-ÿ]+(?:'[a-z]+)?")


def text_of(pg, sel: str) -> str:
    return pg.evaluate(TEXT_JS, sel)


def words(text: str) -> list[re.Match]:
    """The prose words of one line of text (names, code and numbers taken out)."""
    for name in NAMES:
        text = text.replace(name, " ")
    return list(WORD.finditer(CODE_LIKE.sub(" ", text)))


@cache
def vocabulary(code: str) -> frozenset[str]:
    """Every word (lower case) of a locale's UI strings and engine messages."""
    loc = i18n.LOCALES[code]
    out = set()
    for template in (*loc.strings.values(), *loc.messages.values()):
        for line in HIDDEN_MD.sub(" ", template).splitlines():
            out.update(m.group(0).lower() for m in words(line))
    return frozenset(out)


@cache
def foreign(code: str) -> frozenset[str]:
    """Words that mark text as another language than `code`'s."""
    others = set(ENGLISH) if code != "en" else set()
    for other in i18n.LANGS:
        if other != code:
            others |= vocabulary(other)
    return frozenset(others - vocabulary(code))


def left_over(text: str, code: str) -> list[str]:
    """Each word of another language in `text`, with a little of its context."""
    bad = foreign(code)
    hits = []
    for line in text.splitlines():
        for m in words(line):
            if m.group(0).lower() in bad:
                hits.append(f"{m.group(0)!r} in {line.strip()[:140]!r}")
    return hits


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
    a loaded preset and a computed Underflow lab (the other languages' texts for those are
    rendered by the tabs' own functions below: test_every_preset_is_in_one_language,
    test_the_underflow_labs_results_are_in_one_language)."""
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


def test_the_detector_finds_other_languages() -> None:
    assert left_over("Press Train to start the comparison.", "es")
    assert left_over("Pulsa Entrenar para lanzar la comparación.", "en")
    assert left_over("Pulsa Entrenar para lanzar la comparación.", "pt")
    assert left_over("Clique em Treinar para rodar a comparação.", "es")
    assert not left_over("Pulsa Entrenar para lanzar la comparación con PyTorch AMP.", "es")
    assert not left_over("tras growth_interval pasos; fp16=True en torch.autocast(...)", "es")
    assert not left_over("Clique em **Treinar** para rodar a comparação.", "pt")


@pytest.mark.parametrize("code", i18n.LANGS)
def test_every_preset_is_in_one_language(code: str) -> None:
    # What the page shows for each preset (its description; the status once loaded), rendered
    # by the Why tab's own functions: the browser test above clicks one preset per language.
    from mpdemo.ui.tabs import why
    from mpdemo.ui.train.inputs import DEFAULTS

    for pid in why.PRESETS:
        for devices in (["cpu"], ["cpu", "cuda"]):
            _values, status = why.preset_load(code, pid, DEFAULTS, devices)
            texts = {"desc": why.preset_view(code, pid), "status": status}
            for where, text in texts.items():
                hits = left_over(HIDDEN_MD.sub(" ", text), code)
                assert not hits, (pid, where, hits)


@pytest.fixture(scope="module")
def lab():
    """The Underflow lab's one backward pass on the default model, as its button computes it."""
    from mpdemo.ui.tabs import underflow

    return underflow.underflow_compute("en", "", 16, 0)


SVG_TEXT = re.compile(r"<text[^>]*>([^<]*)</text>")


@pytest.mark.parametrize("code", i18n.LANGS)
def test_the_underflow_labs_results_are_in_one_language(lab, code: str) -> None:
    # What the lab shows once computed (status, the histograms' words, the table, the reading)
    # in every format, rendered by the tab's own view: the English page computes it in the
    # browser test below.
    from mpdemo.ui.tabs import underflow

    for fmt in underflow.SCALE_FORMATS:
        status, act, wgt, table, reading = underflow.underflow_view(code, lab, 16, fmt)
        svg_words = "\n".join(SVG_TEXT.findall(act) + SVG_TEXT.findall(wgt))
        assert svg_words.strip(), fmt
        cells = "\n".join([*map(str, table.columns), *(str(v) for v in table.to_numpy().ravel())])
        texts = {"status": status, "charts": svg_words, "table": cells, "reading": reading}
        for where, text in texts.items():
            hits = left_over(HIDDEN_MD.sub(" ", text), code)
            assert not hits, (fmt, where, hits)


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
