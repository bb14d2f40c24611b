"""Live plots: the plot table (one `PlotSpec` a plot), and each run's steps → gr.LinePlot frames.

gradio 6.31's LinePlot fixes its colour domain when built, so every frame carries a NaN
placeholder row for each series without data yet; it re-bins frames of 1000+ rows (mangling
NaN), so frames stay under that; it has no tooltip format, so values go rounded to 4 digits."""

from __future__ import annotations

import math
from collections.abc import Iterable, Sequence
from dataclasses import dataclass, field, replace

import numpy as np
import pandas as pd

from ...colours import RAW, series_id, skipped_label
from ...config import RunConfig
from ...events import StepEvent
from ...registry import PRECISIONS

MAX_POINTS_PER_LINE = 500
MAX_ROWS_PER_FRAME = 990  # the frontend's own down-sampling starts at 1000 rows
MAX_SKIP_MARKERS = 60  # per run; a collapsing scale skips every step, ticks would be a wall
MIN_STEP_AXIS = 10  # a step axis spans at least this many steps: Vega's ticks are then whole
SIG_DIGITS = 4  # what the hover shows
COLUMNS = ["step", "value", "run"]  # "step" holds seconds when the x axis is wall-clock


@dataclass(frozen=True)
class PlotSpec:
    """One live plot: where it sits, what it shows, and how its frame is made."""

    name: str  # the key of its output in train()'s frames; "<name>-plot" its elem_id
    y_title: str  # i18n key
    metric: str  # a Series attribute
    row: int  # plots with the same row sit side by side
    smooth: bool = False  # EMA smoothing control applies, raw curve faint behind
    wall_clock: bool = True  # follows the x-axis control (steps or seconds)
    scale: bool = False  # the loss-scale plot: runs with a scaler, skipped-step ticks
    y_format: str | None = None

    @property
    def elem_id(self) -> str:
        """The plot's elem_id: 'loss-plot'."""
        return f"{self.name}-plot"

    @property
    def title(self) -> str:
        """The i18n key of its title: 'loss_plot'."""
        return f"{self.name}_plot"


PLOTS: tuple[PlotSpec, ...] = (
    PlotSpec("loss", "y_loss", "loss", 0, smooth=True),
    # log2 of a power of two: "16", not "16.000000"
    PlotSpec("scale", "y_scale", "scale", 0, wall_clock=False, scale=True, y_format="~g"),
    # "~r": no grouping mark (Vega's "1,600" reads as 1.6 in Spanish; "~g" wrote "1.8e+3").
    PlotSpec("time", "y_ms", "step_ms", 1, y_format="~r"),
    PlotSpec("throughput", "y_samples", "samples_per_s", 1, y_format="~r"),
)


@dataclass(frozen=True, slots=True)
class StepPoint:
    """One step read back from a runs file: the StepEvent fields a Series draws (None: a gap)."""

    step: int
    elapsed_s: float | None
    loss: float | None
    loss_scale: float | None
    skipped: bool
    step_time_s: float
    samples_per_s: float | None


@dataclass(frozen=True, slots=True)
class PlotRun:
    """What the plots read of a recorded run, in place of the RunConfig a live run has."""

    label: str
    backend: str
    precision: str
    loss_scaling: bool
    steps: int


@dataclass
class Series:
    """One run's measurements, appended as step events arrive."""

    label: str
    step: list[int] = field(default_factory=list)
    elapsed: list[float] = field(default_factory=list)  # seconds since the run started
    loss: list[float] = field(default_factory=list)
    scale: list[float] = field(default_factory=list)  # log2(loss scale); NaN without a scaler
    skipped: list[bool] = field(default_factory=list)
    step_ms: list[float] = field(default_factory=list)
    samples_per_s: list[float] = field(default_factory=list)
    # (metric, smoothing, x, points, budget) → (xs, values): finished runs are not re-sampled
    _cache: dict[tuple[object, ...], tuple[list[float], list[float]]] = field(default_factory=dict)
    _ema: dict[tuple[str, float], tuple[list[float], float, int]] = field(default_factory=dict)

    def add(self, ev: StepEvent | StepPoint) -> None:
        """Append a StepEvent (or a step read back from a file)."""
        self.step.append(int(ev.step))
        self.elapsed.append(_finite_or_nan(ev.elapsed_s))
        self.loss.append(_finite_or_nan(ev.loss))
        s = _finite_or_nan(ev.loss_scale)
        self.scale.append(math.log2(s) if s > 0 else math.nan)
        self.skipped.append(bool(ev.skipped))
        self.step_ms.append(float(ev.step_time_s) * 1000.0)
        self.samples_per_s.append(_finite_or_nan(ev.samples_per_s))

    @property
    def has_scale(self) -> bool:
        """Whether any step reported a loss scale."""
        return any(not math.isnan(v) for v in self.scale)

    def smoothed(self, metric: str, weight: float) -> list[float]:
        """Debiased EMA of a metric (TensorBoard's), extended as steps arrive; NaN stays NaN."""
        vals = getattr(self, metric)
        out, last, count = self._ema.get((metric, weight), ([], 0.0, 0))
        for v in vals[len(out) :]:
            if math.isnan(v):
                out.append(math.nan)
                continue
            last = last * weight + (1.0 - weight) * v
            count += 1
            out.append(last / (1.0 - weight**count))
        self._ema = {k: e for k, e in self._ema.items() if k[0] != metric}
        self._ema[(metric, weight)] = (out, last, count)
        return out

    def sampled(
        self,
        metric: str,
        budget: int,
        smoothing: float = 0.0,
        x_axis: str = "step",
    ) -> tuple[list[float], list[float]]:
        """(xs, values) of a metric, maybe smoothed, down-sampled to the budget; cached."""
        key = (metric, smoothing, x_axis, len(self.step), budget)
        hit = self._cache.get(key)
        if hit is None:
            vals = self.smoothed(metric, smoothing) if smoothing > 0 else getattr(self, metric)
            idx = downsample(vals, budget)
            xs: list[float] = self.elapsed if x_axis == "time" else self.step
            hit = ([xs[i] for i in idx], [vals[i] for i in idx])
            self._cache = {k: v for k, v in self._cache.items() if k[:3] != key[:3]}
            self._cache[key] = hit
        return hit


def _finite_or_nan(x: object) -> float:
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


def rounded(values: list[float], digits: int = SIG_DIGITS) -> np.ndarray:
    """Values to `digits` significant digits (NaN stays NaN): what the hover shows."""
    v = np.asarray(values, dtype="float64")
    with np.errstate(divide="ignore", invalid="ignore"):
        mag = np.where(np.isfinite(v) & (v != 0), np.floor(np.log10(np.abs(v))), 0.0)
    factor = 10.0 ** (digits - 1 - mag)
    return np.round(v * factor) / factor


def _frame(xs: list[float], values: list[float], runs: list[str], float_x: bool) -> pd.DataFrame:
    x = pd.Series(xs, dtype="float64" if float_x else "int64")
    if float_x:
        x = x.round(3)
    return pd.DataFrame(
        {"step": x, "value": pd.Series(rounded(values)), "run": pd.Series(runs, dtype="str")},
        columns=COLUMNS,
    )


@dataclass(frozen=True)
class View:
    """How the plots are drawn: EMA weight (0 = off), the x axis, the runs hidden by the legend."""

    smoothing: float = 0.6
    x_axis: str = "step"
    hidden: frozenset[str] = frozenset()

    @classmethod
    def of(cls, smoothing: object, x_axis: object, hidden: Iterable[str] = ()) -> View:
        """From the controls' values, tolerating None and out-of-range input."""
        try:
            w = float(smoothing)
        except (TypeError, ValueError, OverflowError):  # OverflowError: an API caller's 10**400
            w = 0.0
        w = min(max(w if math.isfinite(w) else 0.0, 0.0), 0.99)
        return cls(round(w, 4), "time" if x_axis == "time" else "step", frozenset(hidden))

    def toggled(self, label: str) -> View:
        """The same view with `label` hidden if it was shown, shown if it was hidden."""
        return replace(self, hidden=self.hidden ^ {label})


def line_frame(
    series: dict[str, Series],
    labels: list[str],
    metric: str,
    view: View,
    smooth: bool = False,
) -> pd.DataFrame:
    """Long-format frame (step, value, run) of one metric: with `smooth`, each run's EMA and its
    raw curve ('<label> · raw', a placeholder when not smoothed, so the colours never move)."""
    # A hidden run keeps its placeholder: every colour stays, and showing it needs no rebuild.
    with_data = [
        lab for lab in labels if lab in series and series[lab].step and lab not in view.hidden
    ]
    empty = [lab for lab in labels if lab not in with_data]
    both = smooth and view.smoothing > 0
    lines = len(with_data) * (2 if both else 1)
    placeholders = len(empty) * (2 if smooth else 1) + (0 if both or not smooth else len(with_data))
    budget = _line_budget(lines, placeholders)
    xs: list[float] = []
    values: list[float] = []
    runs: list[str] = []

    def put(x: list[float], y: list[float], run: str) -> None:
        xs.extend(x)
        values.extend(y)
        runs.extend([run] * len(x))

    for lab in with_data:
        s = series[lab]
        if both:  # the raw curve first: drawn underneath
            put(*s.sampled(metric, budget, 0.0, view.x_axis), series_id(lab, RAW))
            put(*s.sampled(metric, budget, view.smoothing, view.x_axis), lab)
        else:
            put(*s.sampled(metric, budget, 0.0, view.x_axis), lab)
            if smooth:
                put([1], [math.nan], series_id(lab, RAW))
    for lab in empty:  # placeholders: the series is in the colour domain before it has data
        put([1], [math.nan], lab)
        if smooth:
            put([1], [math.nan], series_id(lab, RAW))
    return _frame(xs, values, runs, float_x=view.x_axis == "time")


def scale_frame(
    series: dict[str, Series], scaled_labels: list[str], hidden: Iterable[str] = ()
) -> pd.DataFrame | None:
    """log2(loss scale) per step for runs with a scaler, plus a tick at each skipped step: two
    points spanning the halving, then a NaN row that breaks the path (x nudged to keep order)."""
    if not scaled_labels:
        return None
    off = set(hidden)
    active = [
        lab for lab in scaled_labels if lab in series and series[lab].has_scale and lab not in off
    ]
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
        tick = skipped_label(lab)
        for i in marks[lab]:
            x, v = float(s.step[i]), s.scale[i]
            steps += [x, x + 1e-3, x + 2e-3]
            values += [v - 0.3, v + 1.3, math.nan]
            runs += [tick] * 3
    for lab in scaled_labels:  # placeholders: the series is in the colour domain
        holders = ([] if lab in active else [lab]) + (
            [] if marks.get(lab) else [skipped_label(lab)]
        )
        steps += [1.0] * len(holders)
        values += [math.nan] * len(holders)
        runs += holders
    return _frame(steps, values, runs, float_x=True)


def _line_budget(lines: int, other_rows: int) -> int:
    if lines <= 0:
        return MAX_POINTS_PER_LINE
    return max(10, min(MAX_POINTS_PER_LINE, (MAX_ROWS_PER_FRAME - other_rows) // lines))


def scaled_labels(configs: Iterable[RunConfig | PlotRun]) -> list[str]:
    """The grid's runs that train with a loss scaler (the registry says which precisions do)."""
    return [
        c.label
        for c in configs
        if c.precision in PRECISIONS and PRECISIONS[c.precision].needs_scaler and c.loss_scaling
    ]


def plot_frame(
    spec: PlotSpec, series: dict[str, Series], configs: Sequence[RunConfig | PlotRun], view: View
) -> pd.DataFrame | None:
    """The frame of one plot for this grid."""
    if spec.scale:
        return scale_frame(series, scaled_labels(configs), view.hidden)
    v = view if spec.wall_clock else View(view.smoothing, "step", view.hidden)
    return line_frame(series, [c.label for c in configs], spec.metric, v, smooth=spec.smooth)


def step_axis(steps: int) -> list[float]:
    """The x range of a step axis, at least MIN_STEP_AXIS steps (so Vega's ticks are whole)."""
    return [0, max(int(steps), MIN_STEP_AXIS)]
