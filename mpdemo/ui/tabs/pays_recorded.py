"""Where it pays, as recorded on other machines: each shipped sweep (mpdemo/sweep/recorded.py)
with its own sentences ("on the H200") and points, under a heading that says it did not run here."""

from __future__ import annotations

from ...sweep.recorded import RecordedSweep, shipped_sweeps
from ..i18n import message, number, t
from ..text import esc
from ..train.session_table import speedup_cell
from .common import html_table

HEADS = ("sw_col_model", "col_params", "sw_col_batch", "col_precision", "col_step_ms",
         "col_speedup")  # fmt: skip


def sweep_html(rec: RecordedSweep, lang: str) -> str:
    """One recorded sweep: heading, what it is, its sentences per tokens a row, its points."""
    name = rec.machine.get("device_name") or rec.tag
    title = t("sweep_recorded_title", lang, machine=name, date=rec.date or "?")
    parts = [f"<h3>{esc(title)}</h3>", f"<p><small>{esc(rec.about)}</small></p>"]
    for seq, notes in rec.notes():
        parts.append(f"<p>{esc(t('sweep_recorded_note', lang, tokens=seq))}</p>")
        items = "".join(f"<li>{esc(message(n.key, n.args, lang))}</li>" for n in notes)
        parts.append(f"<ul>{items}</ul>")
    rows = []
    for p in sorted(rec.points, key=lambda p: (p.seq, p.batch_size, p.params)):
        for row in p.rows():
            rows.append(
                [
                    f"{row['model']} ({p.hidden}x{p.layers})",
                    f"{number(p.params / 1e6, lang, '.3g')} M",
                    f"{p.batch_size} × {p.seq}",
                    str(row["precision"]),
                    number(float(row["step_s"]) * 1000, lang, ".3g"),
                    speedup_cell(row, lang) or "1×",
                ]
            )
    heads = [esc(t(k, lang)) for k in HEADS]
    table = html_table(heads, [[esc(c) for c in r] for r in rows])
    # Folded: the sentences say it; the rows are there for whoever asks where they come from.
    parts.append(
        f"<details><summary>{esc(t('sweep_recorded_points', lang))}</summary>{table}</details>"
    )
    return f'<div class="mp-recorded-sweep">{"".join(parts)}</div>'


def recorded_html(lang: str) -> str:
    """Every shipped sweep's section, or '' where none ships."""
    return "".join(sweep_html(rec, lang) for rec in shipped_sweeps())
