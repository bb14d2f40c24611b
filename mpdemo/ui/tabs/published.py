"""The published figures from other machines, beside the "Where it pays" sweep: a table headed
'published, not run here', each row with its link."""

from __future__ import annotations

import html

from ...files.summary import oriented
from ...teach.published import PUBLISHED
from ..i18n import number, t


def published_html(lang: str) -> str:
    """The published figures as a table headed 'published, not run here', each with its link."""
    head = "".join(
        f"<th>{html.escape(t(k, lang))}</th>"
        for k in ("pub_hardware", "pub_workload", "col_precision", "col_speedup", "pub_figures",
                  "pub_source")
    )  # fmt: skip
    body = []
    for p in PUBLISHED:
        figures = (
            f"{number(p.figure, lang, 'g')} / {number(p.baseline_figure, lang, 'g')} "
            f"{t('col_samples', lang) if p.unit == 'samples/s' else p.unit}"
            if p.unit
            else "–"
        )
        # "1.25× slower", never "0.80×": N >= 1 in words, as every ratio on the page.
        ratio, _iv, slower = oriented(p.speedup)
        speed = f"{number(ratio, lang, '.2f')}× {t('verdict_slower' if slower else 'verdict_faster', lang)}"
        cells = [p.hardware, p.workload, f"{p.precision} / {p.baseline}", speed, figures]
        link = (
            f'<a href="{html.escape(p.url, quote=True)}" target="_blank" rel="noopener noreferrer">'
            f"{html.escape(p.source)}</a>"
        )
        body.append(
            "<tr>" + "".join(f"<td>{html.escape(c)}</td>" for c in cells) + f"<td>{link}</td></tr>"
        )
    title = html.escape(t("published_title", lang))
    note = html.escape(t("published_note", lang))
    return (
        f'<div class="mp-published"><h3>{title}</h3><p>{note}</p>'
        f"<table><thead><tr>{head}</tr></thead><tbody>{''.join(body)}</tbody></table></div>"
    )
