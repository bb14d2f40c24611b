"""The summary table under the plots: one row a run, its columns, its cells in the page's language."""

from __future__ import annotations

import math
from collections.abc import Mapping
from typing import TYPE_CHECKING, Any

import pandas as pd

from ...files.summary import oriented, scale_text, typical_step_s
from ..i18n import message, number, t

if TYPE_CHECKING:
    from pandas.io.formats.style import Styler


# (header key, summary key, shown before "All columns" is ticked), most telling first.
_COLUMNS: list[tuple[str, str, bool]] = [
    ("col_run", "label", True),
    ("col_status", "status", True),
    ("col_speedup", "speedup_vs_fp32", True),
    ("col_step_ms", "median_step_s", True),  # the typical step (the mean in older files)
    ("col_loss", "final_loss", True),
    ("col_eval", "eval", True),
    ("col_saved", "saved_activation_bytes", True),
    ("col_skipped", "skipped_steps", True),
    ("col_scale", "final_loss_scale", True),
    ("col_samples", "samples_per_s", False),
    ("col_warnings", "warnings", False),
    ("col_effective", "effective_dtype", False),
    ("col_peak", "peak_mem_bytes", False),
    ("col_backend", "backend", False),
    ("col_precision", "precision", False),
    ("col_requested", "requested_dtype", False),
    ("col_device", "device", False),
    ("col_params", "params", False),
    ("col_steps", "steps", False),
    ("col_tokens", "tokens_per_s", False),
]
# The one column that wraps; every other is "auto" (its longest cell: no number is broken).
WARNINGS_PX = 300
TEXT_COLUMNS = ("label", "effective_dtype", "backend", "precision", "requested_dtype", "device")


def summary_keys(all_columns: bool = False) -> list[str]:
    """The summary keys of the table's columns, in order: a class's nine, or every one."""
    return [key for _, key, compact in _COLUMNS if all_columns or compact]


def column_widths(all_columns: bool = False) -> list[str]:
    """gr.Dataframe column_widths for the table: "auto" (its longest cell) but the warnings."""
    return [f"{WARNINGS_PX}px" if k == "warnings" else "auto" for k in summary_keys(all_columns)]


def _num(v: Any, digits: int = 4) -> float | None:
    try:
        x = float(v)  # None too: TypeError
    except (TypeError, ValueError):
        return None
    return float(f"{x:.{digits}g}") if math.isfinite(x) else None


def warnings_text(summary: dict[str, Any], lang: str) -> str:
    """The run's warnings in `lang`, from warning_keys (English text as a fallback)."""
    keys = summary.get("warning_keys")
    if keys:
        return "\n".join(message(w.get("key", ""), w.get("args") or {}, lang) for w in keys)
    return "\n".join(summary.get("warnings") or [])


def speedup_cell(s: Mapping[str, Any], lang: str) -> str:
    """'1,52× [1,41–1,60] más rápido' in the locale, 'ran in fp32', or '': the CLI's cell, localized."""
    if s.get("speed_reason") == "ran_fp32":
        return message("same_maths", {}, lang)
    v = s.get("speedup_vs_fp32")
    if v is None:
        return ""
    if s.get("precision") == "fp32" or not v:
        return ""  # the baseline: 1× of itself says nothing
    # One notation everywhere: "N× faster" or "N× slower" with N >= 1 (0.54× read as "slower").
    ratio, iv, slower = oriented(v, s.get("speedup_interval"))
    text = f"{number(ratio, lang, '.2f')}×"
    if iv:
        text += f" [{number(iv[0], lang, '.2f')}–{number(iv[1], lang, '.2f')}]"
    text += f" {t('verdict_slower' if slower else 'verdict_faster', lang)}"
    verdict = s.get("speed_verdict")
    if verdict in ("same", "unsure"):  # the interval did not decide: say so beside the figure
        text += f" ({t(f'verdict_{verdict}', lang)})"
    return text


def shown_table(table: pd.DataFrame, lang: str) -> Styler:
    """The table with its numbers in `lang`'s digits, whole floats whole (a Styler: the cells stay
    numbers, and sort)."""
    numeric = [c for c in table.columns if pd.api.types.is_numeric_dtype(table[c])]
    whole = lambda v: int(v) if isinstance(v, float) and v.is_integer() and abs(v) < 1e15 else v  # noqa: E731
    return table.style.format(lambda v: number(whole(v), lang, ","), subset=numeric, na_rep="")


def summary_table(
    summaries: list[Mapping[str, Any]], lang: str, all_columns: bool = False
) -> pd.DataFrame:
    """One row per summary (every column, or the nine a class reads first); cells in `lang`."""
    # Classifiers report accuracy (and a loss); LMs only a loss: one "eval" column either way.
    by_accuracy = any(s.get("eval_accuracy") is not None for s in summaries) or not summaries
    keys = summary_keys(all_columns)
    rows = []
    for s in summaries:
        row: list[Any] = []
        for key in keys:
            v = s.get(key)
            if key == "status":
                row.append(t(f"st_{v}", lang) if v else "")
            elif key == "warnings":
                row.append(warnings_text(s, lang))
            elif key == "eval":
                row.append(_num(s.get("eval_accuracy" if by_accuracy else "eval_loss")))
            elif key == "median_step_s":
                step = typical_step_s(s)
                row.append(_num(step * 1000.0) if step is not None else None)
            elif key in ("peak_mem_bytes", "saved_activation_bytes"):
                row.append(_num(v / 2**20, 3) if v is not None else None)
            elif key == "speedup_vs_fp32":
                row.append(speedup_cell(s, lang))
            elif key == "final_loss_scale":
                row.append(scale_text(v) if v is not None else "")  # exact: 65536, 2^20, 0.5
            elif key in ("params", "steps", "skipped_steps"):
                row.append(int(v) if v is not None else None)
            elif key in TEXT_COLUMNS:
                row.append("" if v is None else str(v))
            else:
                row.append(_num(v))
        rows.append(row)
    headers = [
        t("col_eval_acc" if by_accuracy else "col_eval_loss", lang) if key == "eval" else t(k, lang)
        for k, key, compact in _COLUMNS
        if all_columns or compact
    ]
    return pd.DataFrame(rows, columns=headers)
