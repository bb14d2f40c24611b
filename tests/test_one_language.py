"""Every preset, and the Underflow lab once computed, in one language: rendered by the tabs' own
views in every language (the browser test, tests/browser/test_tabs_i18n.py, reads every tab of
each language's page and computes the lab and loads a preset on the English one)."""

from __future__ import annotations

import re

import pytest
from one_language import HIDDEN_MD, left_over

from mpdemo.ui import i18n


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
    # by the Why tab's own functions: the English page's browser test clicks one too.
    from mpdemo.ui.tabs import why
    from mpdemo.ui.train.inputs import DEFAULTS

    for pid in why.PRESETS:
        for devices in (["cpu"], ["cpu", "cuda"]):
            _values, status = why.preset_load(code, pid, DEFAULTS, devices)
            texts = {"desc": why.preset_view(code, pid), "status": status}
            for where, text in texts.items():
                hits = left_over(HIDDEN_MD.sub(" ", text), code)
                assert not hits, (pid, where, hits)


SVG_TEXT = re.compile(r"<text[^>]*>([^<]*)</text>")


@pytest.mark.parametrize("code", i18n.LANGS)
def test_the_underflow_labs_results_are_in_one_language(tiny_lab, code: str) -> None:
    # What the lab shows once computed (status, the histograms' words, the table, the reading)
    # in every format, rendered by the tab's own view: the English page's browser test
    # computes it through the page too.
    from mpdemo.ui.tabs import underflow

    for fmt in underflow.LOW_PRECISION:
        status, act, wgt, table, reading = underflow.underflow_view(code, tiny_lab, 16, fmt)
        svg_words = "\n".join(SVG_TEXT.findall(act) + SVG_TEXT.findall(wgt))
        assert svg_words.strip(), fmt
        cells = "\n".join([*map(str, table.columns), *(str(v) for v in table.to_numpy().ravel())])
        texts = {"status": status, "charts": svg_words, "table": cells, "reading": reading}
        for where, text in texts.items():
            hits = left_over(HIDDEN_MD.sub(" ", text), code)
            assert not hits, (fmt, where, hits)
