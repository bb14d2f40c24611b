"""Every tab in both languages: no English left on the Spanish page outside code and names."""

from __future__ import annotations

import re

import pytest
from browsing import ARGS, BROWSER_MARKS, CHROMIUM, url  # noqa: F401 - a fixture

TABS = ["train-tab", "formats-tab", "underflow-tab", "code-tab", "why-tab"]

pytestmark = BROWSER_MARKS

# Words that are English and never Spanish. Left out on purpose: words both languages share or
# that Spanish technical prose borrows (a, no, me, son, has, once, error, normal, final, total,
# backend(s), splits, overflow, underflow, subnormal, tensor, auto, vs).
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

# Names that stay as they are in Spanish (matched case-sensitively, removed before the check).
NAMES = [
    "Hugging Face",
    "PyTorch AMP",
    "PyTorch",
    "Accelerate",
    "Trainer",
    "GradScaler",
    "autocast",
    "Micikevicius et al.",
    "NVIDIA",
    "Volta",
    "Ampere",
    "Data Engineer",
]

# The visible text under a selector, with code blocks, code spans, editors and gradio's own
# progress line ("queue: 1/1 | 0.1s") hidden while it is read.
TEXT_JS = """sel => {
    const root = document.querySelector(sel);
    const style = document.createElement('style');
    style.textContent = ['.cm-editor', '.cm-gutters', 'pre', 'code',
        '[data-testid=status-tracker]'].map(x => `${sel} ${x}`).join(', ')
        + ' { display: none !important; }';
    document.head.appendChild(style);
    const text = root ? root.innerText : '';
    style.remove();
    return text;
}"""


def text_of(pg, sel: str) -> str:
    return pg.evaluate(TEXT_JS, sel)


# A token that is code, a number, a unit, an id or a format name rather than a word:
# anything with a digit, an underscore, a dot, a slash, brackets, = or a backtick.
CODE_LIKE = re.compile(r"\S*[\d_./\\\[\](){}=`<>:@#]\S*")


def english_words(text: str) -> list[str]:
    """Each English word left in `text`, with a little of its context."""
    for name in NAMES:
        text = text.replace(name, " ")
    hits = []
    for line in text.splitlines():
        prose = CODE_LIKE.sub(" ", line)
        for m in re.finditer(r"[A-Za-zÁÉÍÓÚÜÑáéíóúüñ]+(?:'[a-z]+)?", prose):
            if m.group(0).lower() in ENGLISH:
                a, b = max(m.start() - 60, 0), m.end() + 60
                hits.append(f"{m.group(0)!r} in {'...' * (a > 0)}{line[a:b].strip()!r}")
    return hits


@pytest.fixture(scope="module")
def browser():
    from playwright.sync_api import sync_playwright

    with sync_playwright() as pw:
        br = pw.chromium.launch(executable_path=CHROMIUM, args=ARGS)
        yield br
        br.close()


def open_page(browser, url: str, locale: str, lang_label: str):
    """A fresh page in `locale`; waits until the load event picked the language."""
    context = browser.new_context(viewport={"width": 1280, "height": 900}, locale=locale)
    pg = context.new_page()
    pg.goto(url, wait_until="domcontentloaded")
    pg.wait_for_selector("#start-btn", timeout=60_000)
    pg.wait_for_function(  # detect_language ran and the radio shows it
        """l => Array.from(document.querySelectorAll('#lang label'))
            .some(x => x.innerText.trim() === l && x.querySelector('input')?.checked)""",
        arg=lang_label,
        timeout=30_000,
    )
    pg.wait_for_function(  # the load hooks filled in the row-count preview
        "() => (document.querySelector('#slice-preview')?.innerText || '').trim().length > 0",
        timeout=30_000,
    )
    return context, pg


def open_tab(pg, tab: str) -> None:
    pg.click(f"#{tab}-button")
    pg.wait_for_function(
        "id => (document.getElementById(id)?.innerText || '').trim().length > 0",
        arg=tab,
        timeout=15_000,
    )
    pg.wait_for_timeout(300)  # late renders (tables, the code editors) settle


def tab_texts(pg) -> dict[str, str]:
    """tab → its panel's prose, the tab bar's label included."""
    out = {}
    for tab in TABS:
        open_tab(pg, tab)
        if tab == "train-tab":  # the closed accordion hides the loss-scaling controls
            pg.locator("#advanced .label-wrap").first.click()
            pg.wait_for_selector("#loss-scaling", state="visible", timeout=10_000)
        label = pg.inner_text(f"#{tab}-button")
        out[tab] = label + "\n" + text_of(pg, f"#{tab}")
    return out


def test_detector_finds_english() -> None:
    assert english_words("Press Train to start the comparison.")
    assert not english_words("Pulsa Entrenar para lanzar la comparación con PyTorch AMP.")
    assert not english_words("tras growth_interval pasos; fp16=True en torch.autocast(...)")


def test_spanish_page_has_no_english_left(browser, url: str) -> None:
    context, pg = open_page(browser, url, "es-ES", "Español")
    try:
        assert pg.locator("#lang").get_by_label("Español").is_checked()
        texts = tab_texts(pg)
        # The Why tab's presets: their names, and each one's description.
        open_tab(pg, "why-tab")
        options = pg.locator("[data-testid=dropdown-option]")
        pg.click("#preset input")
        names = [options.nth(i).inner_text().strip() for i in range(options.count())]
        assert len(names) >= 2, names
        texts["why-tab (preset names)"] = "\n".join(names)
        for i in range(len(names)):
            if i:
                pg.click("#preset input")
            before = text_of(pg, "#preset-desc")
            options.nth(i).click()
            pg.wait_for_function(
                f"b => ({TEXT_JS})('#preset-desc').trim() !== b.trim()",
                arg=before,
                timeout=15_000,
            )
            texts[f"why-tab (preset {i + 1})"] = text_of(pg, "#preset-desc")
        descriptions = [texts[f"why-tab (preset {i + 1})"] for i in range(len(names))]
        assert len(set(descriptions)) == len(names), descriptions  # each one was read
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
        texts["underflow-tab (computed)"] = text_of(pg, "#underflow-tab")
    finally:
        context.close()

    assert "Entrenar" in texts["train-tab"] and "Por qué" in texts["why-tab"]
    assert "Laboratorio de underflow" in texts["underflow-tab"]
    problems = {tab: english_words(text) for tab, text in texts.items()}
    problems = {tab: hits for tab, hits in problems.items() if hits}
    assert not problems, "English on the Spanish page:\n" + "\n".join(
        f"{tab}: {hit}" for tab, hits in problems.items() for hit in hits
    )


def test_english_page_is_english(browser, url: str) -> None:
    context, pg = open_page(browser, url, "en-US", "English")
    try:
        assert pg.locator("#lang").get_by_label("English").is_checked()
        texts = tab_texts(pg)
    finally:
        context.close()
    assert texts["train-tab"].startswith("Train") and "Advanced" in texts["train-tab"]
    assert texts["formats-tab"].startswith("Number formats")
    assert texts["underflow-tab"].startswith("Underflow lab")
    assert texts["code-tab"].startswith("Code")
    assert texts["why-tab"].startswith("Why")
    for tab, text in texts.items():  # the detector sees English where there is English
        assert len(english_words(text)) > 5, (tab, text[:300])
