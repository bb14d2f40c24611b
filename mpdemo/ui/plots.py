"""Live plot data: per-run step series → long-format DataFrames for gr.LinePlot.

Gradio 6.31's LinePlot fixes its colour domain when the chart is (re)built, from the runs in
the data it has then; a run that appears later draws no stroke. So every frame carries one
placeholder row (value NaN: no point drawn) for each run of the grid that has no data yet, and
the caller yields None once at the start of a grid so the chart is rebuilt with that domain.
The colour map covers every possible label, so colours stay put across plots and trainings.
The frontend re-bins any frame of 1000 rows or more on its own (and mangles NaN rows when it
does), so each frame stays under that, which also keeps lines at most 500 points each.
"""

from __future__ import annotations

import math
from dataclasses import dataclass, field
from typing import Any

import numpy as np
import pandas as pd

from ..catalog import BACKENDS, PRECISIONS

MAX_POINTS_PER_LINE = 500
MAX_ROWS_PER_FRAME = 990  # the frontend's own down-sampling starts at 1000 rows
MAX_SKIP_MARKERS = 60  # per run; a collapsing scale skips every step, ticks would be a wall
SKIP_COLOR = "#d62728"
# Tableau-10 without its red, which marks skipped steps.
PALETTE = [
    "#1f77b4",
    "#ff7f0e",
    "#2ca02c",
    "#9467bd",
    "#8c564b",
    "#e377c2",
    "#7f7f7f",
    "#bcbd22",
    "#17becf",
]
COLUMNS = ["step", "value", "run"]


def all_labels() -> list[str]:
    """Every label a run can have ('torch · fp32' ...), in a fixed order."""
    labels = [f"{b} · {p}" for b in BACKENDS for p in PRECISIONS]
    return labels + [f"{b} · fp16 · S=1" for b in BACKENDS]  # fp16 without loss scaling


def skipped_label(label: str, suffix: str = "skipped") -> str:
    """The series that marks a run's skipped steps on the loss-scale plot."""
    return f"{label} · {suffix}"


def color_map(skip_suffixes: tuple[str, ...] = ("skipped",)) -> dict[str, str]:
    """A colour for every possible run label and skipped-step series (in every language)."""
    out = {label: PALETTE[i % len(PALETTE)] for i, label in enumerate(all_labels())}
    for label in all_labels():
        for suffix in skip_suffixes:
            out[skipped_label(label, suffix)] = SKIP_COLOR
    return out


@dataclass
class Series:
    """One run's measurements, appended as step events arrive."""

    label: str
    step: list[int] = field(default_factory=list)
    loss: list[float] = field(default_factory=list)
    scale: list[float] = field(default_factory=list)  # log2(loss scale); NaN without a scaler
    skipped: list[bool] = field(default_factory=list)
    step_ms: list[float] = field(default_factory=list)
    samples_per_s: list[float] = field(default_factory=list)
    # (metric, points, budget) → (steps, values): finished runs are not re-sampled every frame
    _cache: dict[tuple[str, int, int], tuple[list[Any], list[float]]] = field(
        default_factory=dict, repr=False
    )

    def sampled(
        self, metric: str, budget: int, skipped_keep: bool
    ) -> tuple[list[Any], list[float]]:
        """(steps, values) of one metric, down-sampled to the budget; cached per length."""
        key = (metric, len(self.step), budget)
        hit = self._cache.get(key)
        if hit is None:
            vals = getattr(self, metric)
            keep = [i for i, k in enumerate(self.skipped) if k] if skipped_keep else None
            idx = downsample(vals, budget, keep)
            hit = ([self.step[i] for i in idx], [vals[i] for i in idx])
            self._cache = {k: v for k, v in self._cache.items() if k[0] != metric}
            self._cache[key] = hit
        return hit

    def add(self, ev: Any) -> None:
        """Append a StepEvent."""
        self.step.append(int(ev.step))
        self.loss.append(_finite_or_nan(ev.loss))
        s = ev.loss_scale
        self.scale.append(
            math.log2(s) if s is not None and s > 0 and math.isfinite(s) else math.nan
        )
        self.skipped.append(bool(ev.skipped))
        self.step_ms.append(float(ev.step_time_s) * 1000.0)
        self.samples_per_s.append(_finite_or_nan(ev.samples_per_s))

    @property
    def has_scale(self) -> bool:
        """Whether any step reported a loss scale."""
        return any(not math.isnan(v) for v in self.scale)


def _finite_or_nan(x: Any) -> float:
    try:
        v = float(x)
    except (TypeError, ValueError):
        return math.nan
    return v if math.isfinite(v) else math.nan


def downsample(values: list[float], budget: int, keep: list[int] | None = None) -> np.ndarray:
    """Indices of at most ~budget points: first, last, each bucket's min and max, and `keep`."""
    n = len(values)
    keep = sorted(set(keep or []))
    if n <= budget:
        return np.arange(n)
    y = np.asarray(values, dtype=float)
    room = max(budget - 2 - len(keep), 2)
    buckets = max(room // 2, 1)
    edges = np.linspace(0, n, buckets + 1).astype(int)
    picked: list[int] = [0, n - 1, *keep]
    for a, b in zip(edges[:-1], edges[1:], strict=True):
        if b <= a:
            continue
        seg = y[a:b]
        if np.all(np.isnan(seg)):
            picked.append(a)  # keep NaN points: they are where a diverged line breaks
            continue
        picked.append(a + int(np.nanargmin(seg)))
        picked.append(a + int(np.nanargmax(seg)))
    return np.unique(np.asarray(picked, dtype=int))


def _frame(
    steps: list[Any], values: list[float], runs: list[str], float_steps: bool
) -> pd.DataFrame:
    return pd.DataFrame(
        {
            "step": pd.Series(steps, dtype="float64" if float_steps else "int64"),
            "value": pd.Series(values, dtype="float64"),
            "run": pd.Series(runs, dtype="str"),
        },
        columns=COLUMNS,
    )


def line_frame(
    series: dict[str, Series], labels: list[str], metric: str, skipped_keep: bool = False
) -> pd.DataFrame:
    """Long-format frame (step:int, value:float, run:str) of one metric for the grid's runs."""
    with_data = [lab for lab in labels if lab in series and series[lab].step]
    empty = [lab for lab in labels if lab not in with_data]
    budget = _line_budget(len(with_data), len(empty))
    steps: list[int] = []
    values: list[float] = []
    runs: list[str] = []
    for lab in with_data:
        xs, ys = series[lab].sampled(metric, budget, skipped_keep)
        steps += xs
        values += ys
        runs += [lab] * len(xs)
    for lab in empty:  # placeholders: the run is in the colour domain before it has data
        steps.append(1)
        values.append(math.nan)
        runs.append(lab)
    return _frame(steps, values, runs, float_steps=False)


def scale_frame(
    series: dict[str, Series], scaled_labels: list[str], suffix: str = "skipped"
) -> pd.DataFrame | None:
    """log2(loss scale) per step for runs with a scaler, plus red ticks at skipped steps.

    A tick is two points (scale - 0.3 → scale + 1.3, spanning the halving) followed by a NaN
    row, which breaks the path so consecutive ticks are not joined (Vega-Lite's default for
    invalid values on line marks). Its x is nudged by 1e-3 so the line's x-sort keeps order.
    """
    if not scaled_labels:
        return None
    active = [lab for lab in scaled_labels if lab in series and series[lab].has_scale]
    marks: dict[str, list[int]] = {}
    for lab in active:
        s = series[lab]
        idx = [i for i, k in enumerate(s.skipped) if k and not math.isnan(s.scale[i])]
        if len(idx) > MAX_SKIP_MARKERS:  # keep the first and last and an even spread
            pick = np.unique(np.linspace(0, len(idx) - 1, MAX_SKIP_MARKERS).astype(int))
            idx = [idx[i] for i in pick]
        marks[lab] = idx
    empty = [lab for lab in scaled_labels if lab not in active]
    n_placeholders = len(empty) + sum(1 for lab in scaled_labels if not marks.get(lab))
    mark_rows = 3 * sum(len(v) for v in marks.values())
    budget = _line_budget(len(active), n_placeholders + mark_rows)
    steps: list[float] = []
    values: list[float] = []
    runs: list[str] = []
    for lab in active:
        s = series[lab]
        idx = downsample(s.scale, budget, marks[lab])
        steps += [float(s.step[i]) for i in idx]
        values += [s.scale[i] for i in idx]
        runs += [lab] * len(idx)
        tick = skipped_label(lab, suffix)
        for i in marks[lab]:
            x, v = float(s.step[i]), s.scale[i]
            steps += [x, x + 1e-3, x + 2e-3]
            values += [v - 0.3, v + 1.3, math.nan]
            runs += [tick] * 3
    for lab in scaled_labels:
        if lab not in active:
            steps.append(1.0)
            values.append(math.nan)
            runs.append(lab)
        if not marks.get(lab):
            steps.append(1.0)
            values.append(math.nan)
            runs.append(skipped_label(lab, suffix))
    return _frame(steps, values, runs, float_steps=True)


def _line_budget(lines: int, other_rows: int) -> int:
    if lines <= 0:
        return MAX_POINTS_PER_LINE
    return max(10, min(MAX_POINTS_PER_LINE, (MAX_ROWS_PER_FRAME - other_rows) // lines))


def lines_in(frame: dict[str, Any] | pd.DataFrame | None) -> dict[str, int]:
    """Points with a finite value per run in a frame or in a LinePlot's serialized value."""
    if frame is None:
        return {}
    if isinstance(frame, pd.DataFrame):
        df = frame
    else:
        df = pd.DataFrame(frame["data"], columns=frame["columns"])
    df = df[pd.to_numeric(df["value"], errors="coerce").notna()]
    return {str(k): int(v) for k, v in df.groupby("run").size().items()}
