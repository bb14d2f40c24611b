"""Live plots: the plot table, each run's colour, and step series → frames for gr.LinePlot.

Adding a plot is one `PlotSpec` in `PLOTS` (plus its title keys in the locale files).

Series ids never depend on the page's language: a run is its label ('torch · fp16 · S=1'), its
unsmoothed curve '<label> · raw' and its skipped-step ticks '<label> · skipped'. The legend
lists only the runs (`colors_in_legend`), so the other ids are never read by a person.

Gradio 6.31's LinePlot fixes its colour domain when the chart is (re)built, from the series in
the data it has then; a series that appears later draws no stroke. So every frame carries one
placeholder row (value NaN: no point drawn) for each series of the grid that has no data yet,
and the caller yields None once at the start of a grid so the chart is rebuilt with that domain.
The colour map covers every run any grid of the UI can make, with no two alike.
The frontend re-bins any frame of 1000 rows or more on its own (and mangles NaN rows when it
does), so each frame stays under that.

gradio 6.31's LinePlot has no tooltip number format (only `tooltip=` columns) and no tick
step: values are sent rounded to 4 significant digits so the hover reads "0.6931", and the
step axis gets a d3 "d" format and an x range of at least MIN_STEP_AXIS steps so Vega's ticks
fall on whole steps.
"""

from __future__ import annotations

import colorsys
import html
import math
from collections.abc import Iterable
from dataclasses import dataclass, field, replace
from typing import Any

import numpy as np
import pandas as pd

from ...registry import BACKENDS, PRECISIONS

MAX_POINTS_PER_LINE = 500
MAX_ROWS_PER_FRAME = 990  # the frontend's own down-sampling starts at 1000 rows
MAX_SKIP_MARKERS = 60  # per run; a collapsing scale skips every step, ticks would be a wall
MIN_STEP_AXIS = 10  # a step axis spans at least this many steps: Vega's ticks are then whole
SIG_DIGITS = 4  # what the hover shows
COLUMNS = ["step", "value", "run"]  # "step" holds seconds when the x axis is wall-clock
RAW = "raw"  # '<label> · raw': the unsmoothed curve behind the smoothed one
SKIPPED = "skipped"  # '<label> · skipped': red ticks at skipped steps on the scale plot
SKIP_COLOR = "#d62728"  # red: no run's colour family is red
UNSCALED = "S=1"  # RunConfig.label's suffix for a scaler-less run of a precision that has one

# Every line its own colour: a class matches eight runs to the legend only when no two lines
# are shades of one colour. Live runs take LIVE_PALETTE by label, backend-major (a grid of one
# backend gets the first, most distinct colours); recorded lines take RECORDED_PALETTE in
# loading order, so they never share a colour with a live run. No red: red marks skipped steps.
# The first nine are Tableau 10 without its red; the rest were picked to stay apart from them.
LIVE_PALETTE = [
    "#1f77b4",  # blue
    "#ff7f0e",  # orange
    "#2ca02c",  # green
    "#9467bd",  # purple
    "#8c564b",  # brown
    "#17becf",  # cyan
    "#e377c2",  # pink
    "#bcbd22",  # olive
    "#7f7f7f",  # grey
    "#393b79",  # navy
    "#637939",  # moss
    "#b15928",  # rust
    "#6a3d9a",  # violet
    "#005f5f",  # dark teal
    "#c49c94",  # rose beige
]
RECORDED_PALETTE = [
    "#e7298a",  # magenta
    "#111111",  # black
    "#e6ab02",  # mustard
    "#3a86ff",  # azure
    "#66c2a5",  # mint
    "#8856a7",  # grape
    "#a6761d",  # ochre
    "#fb9a99",  # salmon
    "#4d4d9f",  # indigo
    "#1b7837",  # forest
    "#f781bf",  # light pink
    "#80b1d3",  # sky
]
GOLDEN = 0.618033988749895  # beyond a palette: hues a golden angle apart never repeat


@dataclass(frozen=True)
class PlotSpec:
    """One live plot: where it sits, what it shows, and how its frame is made."""

    name: str  # the key of its output in train()'s frames
    elem_id: str
    title: str  # i18n key
    y_title: str  # i18n key
    metric: str  # a Series attribute
    row: int  # plots with the same row sit side by side
    smooth: bool = False  # EMA smoothing control applies, raw curve faint behind
    wall_clock: bool = True  # follows the x-axis control (steps or seconds)
    scale: bool = False  # the loss-scale plot: runs with a scaler, skipped-step ticks
    y_format: str | None = None


PLOTS: tuple[PlotSpec, ...] = (
    PlotSpec("loss", "loss-plot", "loss_plot", "y_loss", "loss", 0, smooth=True),
    # log2 of a power of two: "16", not "16.000000"
    PlotSpec(
        "scale",
        "scale-plot",
        "scale_plot",
        "y_scale",
        "scale",
        0,
        wall_clock=False,
        scale=True,
        y_format="~g",
    ),  # fmt: skip
    # "~r" too: Vega's default grouped 1600 ms as "1,600", which reads as 1.6 in Spanish and
    # Portuguese (gradio 6.31 gives no way to set Vega's number locale).
    PlotSpec("time", "time-plot", "time_plot", "y_ms", "step_ms", 1, y_format="~r"),
    # "~r": 1000, 1500 with no grouping mark (Vega's default "1,000" reads as 1 in Spanish;
    # "~g" wrote "1.8e+3" once Vega set its precision from the tick step).
    PlotSpec(
        "throughput",
        "throughput-plot",
        "throughput_plot",
        "y_samples",
        "samples_per_s",
        1,
        y_format="~r",
    ),
)


# --- colours -------------------------------------------------------------------------------


def variants() -> list[tuple[str, bool]]:
    """(precision, scaled) for every run kind: each precision, then the unscaled ones."""
    out = [(p, True) for p in PRECISIONS]
    return out + [(p.name, False) for p in PRECISIONS.values() if p.needs_scaler]


def run_label(backend: str, precision: str, scaled: bool = True) -> str:
    """The label RunConfig gives such a run ('torch · fp16 · S=1')."""
    needs = PRECISIONS[precision].needs_scaler if precision in PRECISIONS else False
    return f"{backend} · {precision}" + ("" if scaled or not needs else f" · {UNSCALED}")


def all_labels() -> list[str]:
    """Every label a run of any grid the UI can start can have, in a fixed order."""
    return [run_label(b, p, s) for p, s in variants() for b in BACKENDS]


def series_id(label: str, kind: str) -> str:
    """A run's other series: '<label> · raw' or '<label> · skipped' (never translated)."""
    return f"{label} · {kind}"


def skipped_label(label: str) -> str:
    """The series that marks a run's skipped steps on the loss-scale plot."""
    return series_id(label, SKIPPED)


def _rgb(hex_colour: str) -> tuple[float, float, float]:
    h = hex_colour.lstrip("#")
    r, g, b = (int(h[i : i + 2], 16) / 255 for i in (0, 2, 4))
    return r, g, b


def _hex(rgb: Iterable[float]) -> str:
    return "#" + "".join(f"{round(min(max(c, 0.0), 1.0) * 255):02x}" for c in rgb)


def shade(base: str, i: int, n: int, step: float = 0.15) -> str:
    """The i-th of n shades of a colour: the colour itself, then darker, lighter, darker..."""
    h, light, s = colorsys.rgb_to_hls(*_rgb(base))
    k = (i + 1) // 2
    offset = 0.0 if i == 0 else (-k * step if i % 2 else k * step)
    return _hex(colorsys.hls_to_rgb(h, min(max(light + offset, 0.12), 0.85), s))


def faint(colour: str, amount: float = 0.62) -> str:
    """The colour mixed with white: the raw curve behind a smoothed one."""
    return _hex(c + (1.0 - c) * amount for c in _rgb(colour))


def extra_colour(i: int, offset: float = 0.0) -> str:
    """The i-th colour past a palette's end: golden-angle hues at two lightnesses."""
    hue = (offset + i * GOLDEN) % 1.0
    return _hex(colorsys.hls_to_rgb(hue, 0.38 if i % 2 else 0.5, 0.65))


def palette_colour(palette: list[str], i: int, offset: float) -> str:
    """The palette's i-th colour, or a generated one past its end."""
    return palette[i] if i < len(palette) else extra_colour(i - len(palette), offset)


def with_series(out: dict[str, str], label: str, colour: str) -> None:
    """A line's colour, its raw curve's (faint) and its skipped-step ticks' (red)."""
    out[label] = colour
    out[series_id(label, RAW)] = faint(colour)
    out[skipped_label(label)] = SKIP_COLOR


def color_map() -> dict[str, str]:
    """A colour for every run any grid can make, its raw curve and its skipped-step ticks."""
    out: dict[str, str] = {}
    labels = [run_label(b, p, s) for b in BACKENDS for p, s in variants()]
    for i, label in enumerate(labels):
        with_series(out, label, palette_colour(LIVE_PALETTE, i, 0.11))
    return out


TRIAL = " · #"  # RunConfig.label's suffix for one repetition of a repeated comparison


def trial_of(label: str) -> tuple[str, int]:
    """('torch · bf16', 2) for 'torch · bf16 · #2'; (label, 0) for a run that was not repeated."""
    base, sep, k = label.rpartition(TRIAL)
    return (base, int(k)) if sep and k.isdigit() else (label, 0)


def live_colours(labels: list[str]) -> dict[str, str]:
    """The colours of a grid's lines; the repetitions of one run are shades of its colour
    (one figure's spread reads as one family), each still its own."""
    base = color_map()
    out: dict[str, str] = {}
    trials: dict[str, int] = {}
    for lab in labels:
        kind, k = trial_of(lab)
        if k:
            trials[kind] = max(trials.get(kind, 0), k)
    for lab in labels:
        kind, k = trial_of(lab)
        colour = base.get(kind, "#7f7f7f")
        if k:
            colour = shade(colour, k - 1, trials[kind], step=0.28 / max(trials[kind] - 1, 1))
        with_series(out, lab, colour)
    return out


@dataclass(frozen=True)
class LegendFile:
    """One opened runs file in the legend: its key (for Remove), its name, its lines."""

    key: str
    name: str
    labels: list[str]


def legend_html(
    labels: list[str],
    raw_note: str | None = None,
    colours: dict[str, str] | None = None,
    hidden: Iterable[str] = (),
    files: Iterable[LegendFile] = (),
    texts: dict[str, str] | None = None,
) -> str:
    """One legend for every plot: a swatch in each run's colour, wrapping over lines.

    Vega's own legend sits on one row under a plot and cut a 12-run grid off after five names,
    and gradio 6.31's LinePlot cannot hide a series from it, so the plots hide theirs
    (colors_in_legend=[]) and this one names every run once. Each entry is a button: a click
    hides or shows that run's lines (the Train tab's handler, via `data-run`); each opened file
    has a remove button (`data-file`). `texts`: the page's words for the buttons' names.
    """
    if not labels:
        return ""
    cmap = {**color_map(), **(colours or {})}  # colours: lines the registry does not name
    hide = set(hidden)
    words = {"show": "show", "hide": "hide", "remove": "remove", **(texts or {})}

    def swatch(colour: str, width: int = 3) -> str:
        return (
            f'<svg width="22" height="10" aria-hidden="true"><line x1="1" y1="5" x2="21" y2="5" '
            f'stroke="{colour}" stroke-width="{width}" stroke-linecap="round"/></svg>'
        )

    def run(label: str) -> str:
        off = label in hide
        colour = cmap.get(label, "#7f7f7f")
        name = html.escape(label)
        tip = html.escape(f"{words['show' if off else 'hide']}: {label}")
        return (
            f'<button type="button" class="mp-run{" mp-off" if off else ""}" '
            f'data-run="{name}" data-color="{colour}" aria-pressed="{str(not off).lower()}" '
            f'title="{tip}">{swatch(colour)}<span>{name}</span></button>'
        )

    in_files = {lab for f in files for lab in f.labels}
    items = [run(lab) for lab in labels if lab not in in_files]
    for f in files:
        group = "".join(run(lab) for lab in f.labels if lab in labels)
        name = html.escape(f.name)
        tip = html.escape(f"{words['remove']}: {f.name}")
        items.append(
            f'<span class="mp-file" data-name="{name}">{group}<button type="button" '
            f'class="mp-remove" data-file="{html.escape(f.key)}" title="{tip}" '
            f'aria-label="{tip}">× {name}</button></span>'
        )
    if raw_note:
        items.append(
            f'<span class="mp-note">{swatch(faint("#7f7f7f"), 2)}{html.escape(raw_note)}</span>'
        )
    return f'<div class="mp-legend">{"".join(items)}</div>'


# The legend's clicks, sent to the Train tab's handler: which run to hide or show, or which
# opened file to remove (delegated: the legend's HTML is replaced on every update).
LEGEND_JS = """
element.addEventListener('click', (e) => {
  const rm = e.target.closest('[data-file]');
  if (rm) { trigger('click', {remove: rm.dataset.file}); return; }
  const run = e.target.closest('[data-run]');
  if (run) {
    run.classList.toggle('mp-off');  // at once; the server's legend follows
    trigger('click', {run: run.dataset.run});
  }
});
"""

LEGEND_CSS = """
.mp-legend { display: flex; flex-wrap: wrap; gap: 2px 6px; line-height: 1.6; }
.mp-legend button { font: inherit; color: inherit; background: none; border: 1px solid transparent;
  border-radius: 6px; padding: 0 6px; cursor: pointer; display: inline-flex; align-items: center;
  gap: 4px; white-space: nowrap; }
.mp-legend button:hover { border-color: var(--border-color-primary); }
.mp-legend .mp-off { opacity: 0.45; text-decoration: line-through; }
.mp-legend .mp-file { display: inline-flex; flex-wrap: wrap; align-items: center;
  border: 1px dashed var(--border-color-primary); border-radius: 8px; padding: 0 2px; }
.mp-legend .mp-remove { color: var(--body-text-color-subdued); }
.mp-legend .mp-note { display: inline-flex; align-items: center; gap: 4px; padding: 0 6px; }
"""


# --- series --------------------------------------------------------------------------------


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
    _cache: dict[tuple[Any, ...], tuple[list[Any], list[float]]] = field(
        default_factory=dict, repr=False
    )
    _ema: dict[tuple[str, float], tuple[list[float], float, int]] = field(
        default_factory=dict, repr=False
    )

    def add(self, ev: Any) -> None:
        """Append a StepEvent."""
        self.step.append(int(ev.step))
        self.elapsed.append(_finite_or_nan(getattr(ev, "elapsed_s", math.nan)))
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

    def smoothed(self, metric: str, weight: float) -> list[float]:
        """Debiased EMA of a metric (TensorBoard's), extended incrementally as steps arrive.

        A NaN (a diverged step) stays NaN and does not reset the average.
        """
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
        keep_skipped: bool = False,
    ) -> tuple[list[Any], list[float]]:
        """(xs, values) of a metric, maybe smoothed, down-sampled to the budget; cached."""
        key = (metric, smoothing, x_axis, len(self.step), budget)
        hit = self._cache.get(key)
        if hit is None:
            vals = self.smoothed(metric, smoothing) if smoothing > 0 else getattr(self, metric)
            keep = [i for i, k in enumerate(self.skipped) if k] if keep_skipped else None
            idx = downsample(vals, budget, keep)
            xs: list[Any] = self.elapsed if x_axis == "time" else self.step
            hit = ([xs[i] for i in idx], [vals[i] for i in idx])
            self._cache = {k: v for k, v in self._cache.items() if k[:3] != key[:3]}
            self._cache[key] = hit
        return hit


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


def rounded(values: list[float], digits: int = SIG_DIGITS) -> np.ndarray:
    """Values to `digits` significant digits (NaN stays NaN): what the hover shows."""
    v = np.asarray(values, dtype="float64")
    with np.errstate(divide="ignore", invalid="ignore"):
        mag = np.where(np.isfinite(v) & (v != 0), np.floor(np.log10(np.abs(v))), 0.0)
    factor = 10.0 ** (digits - 1 - mag)
    return np.round(v * factor) / factor


def _frame(xs: list[Any], values: list[float], runs: list[str], float_x: bool) -> pd.DataFrame:
    x = pd.Series(xs, dtype="float64" if float_x else "int64")
    if float_x:
        x = x.round(3)
    return pd.DataFrame(
        {"step": x, "value": pd.Series(rounded(values)), "run": pd.Series(runs, dtype="str")},
        columns=COLUMNS,
    )


@dataclass(frozen=True)
class View:
    """How the plots are drawn: EMA weight for smoothed plots (0 = off), the x axis, and the
    runs hidden from the plots (a click on their legend entry)."""

    smoothing: float = 0.6
    x_axis: str = "step"
    hidden: frozenset[str] = frozenset()

    @classmethod
    def of(cls, smoothing: Any, x_axis: Any, hidden: Iterable[str] = ()) -> View:
        """From the controls' values, tolerating None and out-of-range input."""
        try:
            w = float(smoothing)
        except (TypeError, ValueError):
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
    view: View | None = None,
    smooth: bool = False,
) -> pd.DataFrame:
    """Long-format frame (step, value, run) of one metric for the grid's runs.

    With `smooth` and a smoothing weight, each run is its EMA plus its raw curve as
    '<label> · raw'; without, the raw series is only a placeholder (so the colour domain, and
    with it every colour, stays the same when smoothing is switched on or off mid-run).
    """
    view = view or View(smoothing=0.0)
    # A hidden run keeps its placeholder: it stays in the colour domain, so every other line
    # keeps its colour and showing it again needs no rebuild of the chart.
    with_data = [
        lab for lab in labels if lab in series and series[lab].step and lab not in view.hidden
    ]
    empty = [lab for lab in labels if lab not in with_data]
    both = smooth and view.smoothing > 0
    lines = len(with_data) * (2 if both else 1)
    placeholders = len(empty) * (2 if smooth else 1) + (0 if both or not smooth else len(with_data))
    budget = _line_budget(lines, placeholders)
    xs: list[Any] = []
    values: list[float] = []
    runs: list[str] = []

    def put(x: list[Any], y: list[float], run: str) -> None:
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
    """log2(loss scale) per step for runs with a scaler, plus red ticks at skipped steps.

    A tick is two points (scale - 0.3 → scale + 1.3, spanning the halving) followed by a NaN
    row, which breaks the path so consecutive ticks are not joined (Vega-Lite's default for
    invalid values on line marks). Its x is nudged by 1e-3 so the line's x-sort keeps order.
    """
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
    for lab in scaled_labels:
        if lab not in active:
            steps.append(1.0)
            values.append(math.nan)
            runs.append(lab)
        if not marks.get(lab):
            steps.append(1.0)
            values.append(math.nan)
            runs.append(skipped_label(lab))
    return _frame(steps, values, runs, float_x=True)


def _line_budget(lines: int, other_rows: int) -> int:
    if lines <= 0:
        return MAX_POINTS_PER_LINE
    return max(10, min(MAX_POINTS_PER_LINE, (MAX_ROWS_PER_FRAME - other_rows) // lines))


def scaled_labels(configs: list[Any]) -> list[str]:
    """The grid's runs that train with a loss scaler (the registry says which precisions do)."""
    return [
        c.label
        for c in configs
        if c.precision in PRECISIONS and PRECISIONS[c.precision].needs_scaler and c.loss_scaling
    ]


def plot_frame(
    spec: PlotSpec, series: dict[str, Series], configs: list[Any], view: View
) -> pd.DataFrame | None:
    """The frame of one plot for this grid."""
    if spec.scale:
        return scale_frame(series, scaled_labels(configs), view.hidden)
    v = view if spec.wall_clock else View(view.smoothing, "step", view.hidden)
    return line_frame(series, [c.label for c in configs], spec.metric, v, smooth=spec.smooth)


NICE_SPANS = (10, 20, 50, 100, 200, 500, 1000, 2000, 5000, 10000, 20000, 50000, 100000)


def step_axis(reached: int, total: int | None = None) -> list[float]:
    """The x range of a step axis, at least MIN_STEP_AXIS steps (so Vega's ticks are whole).

    With `total` (a run in progress): the next round span past the step reached, at most the
    run's length, so the axis grows in a few jumps instead of squeezing a 2000-step run's first
    steps into its left edge. Without: exactly what was reached.
    """
    reached = max(int(reached), MIN_STEP_AXIS)
    if total is None:
        return [0, reached]
    nice = next((n for n in NICE_SPANS if n >= reached), reached)
    return [0, min(nice, max(int(total), MIN_STEP_AXIS))]


def lines_in(
    frame: dict[str, Any] | pd.DataFrame | None, every_series: bool = False
) -> dict[str, int]:
    """Points with a finite value per run in a frame or in a LinePlot's serialized value.

    Only the runs' own lines unless `every_series` (raw curves and skipped-step ticks too).
    """
    if frame is None:
        return {}
    if isinstance(frame, pd.DataFrame):
        df = frame
    else:
        df = pd.DataFrame(frame["data"], columns=frame["columns"])
    df = df[pd.to_numeric(df["value"], errors="coerce").notna()]
    counts = {str(k): int(v) for k, v in df.groupby("run").size().items()}
    if every_series:
        return counts
    derived = (f" · {RAW}", f" · {SKIPPED}")
    return {k: v for k, v in counts.items() if not k.endswith(derived)}
