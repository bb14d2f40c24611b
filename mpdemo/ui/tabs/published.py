"""The published figures from other machines, beside the "Where it pays" sweep: a table headed
'published, not run here', each row with its link."""

from __future__ import annotations

from ...teach.published import PUBLISHED
from ..i18n import number, t
from ..text import esc
from ..train.session_table import speedup_cell
from .common import html_table

HEADS = ("pub_hardware", "pub_workload", "col_precision", "col_speedup", "pub_figures",
         "pub_source")  # fmt: skip


def published_html(lang: str) -> str:
    """The published figures as a table headed 'published, not run here', each with its link."""
    rows = []
    for p in PUBLISHED:
        figures = (
            f"{number(p.figure, lang, 'g')} / {number(p.baseline_figure, lang, 'g')} "
            f"{t('col_samples', lang) if p.unit == 'samples/s' else p.unit}"
            if p.unit
            else "–"
        )
        # "1.25× slower", never "0.80×": the summary table's cell, as every ratio on the page.
        speed = speedup_cell({"speedup_vs_fp32": p.speedup}, lang)
        cells = [p.hardware, p.workload, f"{p.precision} / {p.baseline}", speed, figures]
        link = (
            f'<a href="{esc(p.url)}" target="_blank" rel="noopener noreferrer">{esc(p.source)}</a>'
        )
        rows.append([*map(esc, cells), link])
    title, note = esc(t("published_title", lang)), esc(t("published_note", lang))
    table = html_table([esc(t(k, lang)) for k in HEADS], rows)
    return f'<div class="mp-published"><h3>{title}</h3><p>{note}</p>{table}</div>'
