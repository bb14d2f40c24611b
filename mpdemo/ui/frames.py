"""What the Train tab's outputs show, drawn from a visitor's `Session`, and how it reaches gradio.

A frame is a dict keyed by output name ("status", "loss", "legend", ...): the Train tab
(mpdemo/ui/train_tab.py) and its recorded runs (mpdemo/ui/recorded_ui.py) both build them from
the same session, with the plot frames, axes, colours and legend here. `keyed` is the one place
a frame becomes gradio's {component: value}.
"""

from __future__ import annotations

from collections.abc import Callable, Iterable, Mapping
from typing import Any

import gradio as gr
import pandas as pd

from ..config import RunConfig
from .i18n import t
from .plots import (
    PLOTS,
    RAW,
    SKIP_COLOR,
    View,
    color_map,
    faint,
    legend_html,
    plot_frame,
    reached_step,
    run_label,
    scaled_labels,
    series_id,
    skipped_label,
    step_axis,
)
from .session import Session, summary_table

# train()'s outputs, in the API's order. The plots come right after the status and the table
# and downloads stay last, where API callers (tests/test_classroom.py) unpack them.
OUTPUTS: tuple[str, ...] = (
    "status",
    *(p.name for p in PLOTS),
    "scale_empty",
    "legend",
    "stop_btn",
    "summary",
    "csv",
    "json",
    "script_run",
    "script_btn",
)

# gradio 6.31's LinePlot: an update that changes an axis prop (x_lim, x_title) and the value
# at once rebuilds the chart from the old data, and the new data never shows. So an axis change
# empties the plot first and the data follows in a later update (as at the start of a grid).
AXIS_SETTLE_S = 0.3

GREY = (0.23, 0.23, 0.23)  # recorded lines: the live run's colour, darkened toward this


# --- frames to components --------------------------------------------------------------------


def keyed(
    comps: Mapping[str, Any], frame: Mapping[str, Any], names: Iterable[str] | None = None
) -> dict[Any, Any]:
    """A frame ({name: value}) as gradio's {component: value}.

    With `names` (the event's outputs by name) every one of them is present, gr.skip() where
    the frame says nothing: gradio reads an empty dict as one value, not as "no updates".
    """
    if names is None:
        return {comps[k]: v for k, v in frame.items()}
    return {comps[n]: frame.get(n, gr.skip()) for n in names}


def by_component(
    comps: Mapping[str, Any],
    fn: Callable[..., Mapping[str, Any]],
    names: Iterable[str] | None = None,
) -> Callable[..., dict[Any, Any]]:
    """Wrap a handler returning a frame so it returns `keyed(comps, frame, names)`."""
    names = list(names) if names is not None else None

    def call(*args: Any) -> dict[Any, Any]:
        return keyed(comps, fn(*args), names)

    return call


# --- colours ---------------------------------------------------------------------------------


def _mix(hex_colour: str, amount: float) -> str:
    h = hex_colour.lstrip("#")
    rgb = [int(h[i : i + 2], 16) / 255 for i in (0, 2, 4)]
    out = [c + (g - c) * amount for c, g in zip(rgb, GREY, strict=True)]
    return "#" + "".join(f"{round(min(max(c, 0.0), 1.0) * 255):02x}" for c in out)


def recorded_colours(session: Session) -> dict[str, str]:
    """Each recorded line: the colour of the live run of its backend and precision, darkened
    (by a different amount for each further file, or a second run of the same kind in one)."""
    base = color_map()
    out: dict[str, str] = {}
    for k, rec in enumerate(session.recordings):
        seen: dict[str, int] = {}
        for lab, run in zip(rec.labels, rec.recording.runs, strict=True):
            summ, cfg = run["summary"], run.get("config") or {}
            kind = run_label(summ["backend"], summ["precision"], cfg.get("loss_scaling", True))
            j = seen[kind] = seen.get(kind, -1) + 1  # gpu_check.py: two models, same kinds
            colour = _mix(base.get(kind, "#7f7f7f"), 0.35 + 0.2 * ((k + j) % 3))
            out[lab] = colour
            out[series_id(lab, RAW)] = faint(colour)
            out[skipped_label(lab)] = SKIP_COLOR
    return out


def full_colour_map(session: Session) -> dict[str, str]:
    """The plots' colour map with the session's recorded lines added."""
    return {**color_map(), **recorded_colours(session)}


# --- what the plots show ---------------------------------------------------------------------


def empty_table(lang: str) -> pd.DataFrame:
    """The summary table before any run has finished (headers only)."""
    return summary_table([], lang)


def x_props(view: View, lang: str, total_steps: int, reached: int | None = None) -> dict[str, Any]:
    """The x-axis settings of a plot that follows the x-axis control.

    Steps: whole-number ticks ("d") on a range of at least 10 steps; while a grid runs
    (`reached` given) the range grows in round jumps up to the run's length (plots.step_axis).
    """
    if view.x_axis == "time":
        return {"x_title": t("x_axis_time", lang), "x_lim": None, "x_axis_format": None}
    lim = step_axis(total_steps) if reached is None else step_axis(reached, total_steps)
    return {"x_title": t("x_step", lang), "x_lim": lim, "x_axis_format": "d"}


def grow_axes(session: Session, out: dict[str, Any], axis: dict[str, Any]) -> bool:
    """When the run has grown past the step axis: widen it in `out` (plots emptied, see
    AXIS_SETTLE_S; the next frame brings the data back). True when it did."""
    view = session.view or View()
    # Recorded runs (complete already) keep the axis as long as the longest of them.
    total = max((c.steps for c in session.plot_configs()), default=1)
    lim = step_axis(reached_step(session.plot_series()), total)
    if lim == axis.get("lim"):
        return False
    axis["lim"] = lim  # a new x_lim rebuilds the chart: only a few times per run
    for spec in PLOTS:
        if spec.name in out and (not spec.wall_clock or view.x_axis == "step"):
            out[spec.name] = gr.update(value=None, x_lim=lim)
    return True


def scale_empty_text(lang: str, configs: list[RunConfig], finished: bool, session: Session) -> str:
    """What the loss-scale plot's place says when it has nothing to draw, else ''."""
    if not scaled_labels(configs):
        return t("scale_empty_none", lang)
    if finished and not any(s.has_scale for s in session.series.values()):
        return t("scale_empty_unreported", lang)
    return ""


def run_legend(session: Session | None, lang: str) -> str:
    """The legend of the grid on screen (every run once), with the raw-curve note if smoothed."""
    if session is None or not session.plot_labels():
        return ""
    view = session.view or View()
    note = t("legend_raw", lang) if view.smoothing > 0 else None
    return legend_html(session.plot_labels(), note, recorded_colours(session))


def plot_frames(session: Session) -> dict[str, Any]:
    """Every plot's frame from the session's series, drawn as the session's view says."""
    view = session.view or View()
    series, configs = session.plot_series(), session.plot_configs()  # live, then recorded
    return {p.name: plot_frame(p, series, configs, view) for p in PLOTS}


def grid_start(session: Session, lang: str) -> dict[str, Any]:
    """A new grid: each plot emptied (so it rebuilds its colour domain), legend and axes set."""
    configs = session.plot_configs()  # with the recorded runs: their steps stay on the axis
    view = session.view or View()
    total = max((c.steps for c in configs), default=1)
    out: dict[str, Any] = {}
    for spec in PLOTS:
        props: dict[str, Any] = {"value": None}
        reached = reached_step(session.plot_series())  # recorded runs may be on screen already
        props.update(x_props(view if spec.wall_clock else View(), lang, total, reached))
        if spec.scale:  # recorded runs with a scale keep the plot
            props["visible"] = bool(scaled_labels(configs))
        out[spec.name] = gr.update(**props)
    empty = scale_empty_text(lang, configs, False, session)
    out["scale_empty"] = gr.update(value=empty, visible=bool(empty))
    out["legend"] = run_legend(session, lang)
    return out


def plot_updates(session: Session, lang: str, rebuild: bool) -> dict[str, Any]:
    """Every plot drawn from the session (live and recorded lines), with the colours they need.

    `rebuild`: None instead of the frames; the caller yields this first so each chart rebuilds
    its colour domain, then the bare frames (`plot_frames`): the colours stay set.
    """
    cmap = full_colour_map(session)
    frames = plot_frames(session)
    configs = session.plot_configs()
    has_scale = bool(scaled_labels(configs))
    view = session.view or View()
    total = max((c.steps for c in configs), default=1)  # the longest run, live or recorded
    out: dict[str, Any] = {}
    for spec in PLOTS:
        props: dict[str, Any] = {"color_map": cmap, "value": None if rebuild else frames[spec.name]}
        props.update(x_props(view if spec.wall_clock else View(), lang, total))
        if spec.scale:
            props["visible"] = has_scale
        out[spec.name] = gr.update(**props)
    empty = "" if has_scale else scale_empty_text(lang, session.configs, True, session)
    out["scale_empty"] = gr.update(value=empty, visible=bool(empty))
    out["legend"] = run_legend(session, lang)
    return out
