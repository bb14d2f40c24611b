"""What the Train tab's outputs show, drawn from a visitor's `Session`: frames (dicts keyed by
output name) of plots, axes, colours and legend; `keyed` is where one becomes gradio's."""

from __future__ import annotations

import html
import math
from collections.abc import Callable, Iterable, Mapping, Sequence
from typing import Any, TypeVar

import gradio as gr
import pandas as pd

from ...colours import RECORDED_PALETTE, live_colours, palette_colour, with_series
from ...config import RunConfig
from ...files.summary import repeat_groups, typical_step_s
from ..context import TabContext
from ..i18n import message, number, t
from .colours import LegendFile, dash_css, dashes_for, legend_html
from .controls import RUN_NAMES
from .plots import PLOTS, View, plot_frame, scaled_labels, step_axis
from .session import Session

B = TypeVar("B", gr.Button, gr.DownloadButton, gr.UploadButton)

# train()'s outputs, in the API's order (callers unpack them by position).
OUTPUTS: tuple[str, ...] = (
    "status",
    *(p.name for p in PLOTS),
    "scale_empty",
    "legend",
    "grad_watch",  # the watched gradients, with the plots
    "stop_btn",
    "summary",
    "repeats",
    "csv",
    "json",
    "script_run",
    "script_btn",
)
# What a board's follower is sent besides them: the teacher's lesson header and settings.
FOLLOWED: tuple[str, ...] = ("lesson", "lesson_info", *RUN_NAMES)

# gradio 6.31's LinePlot drops the data of an update that changes an axis too: the plot is
# emptied first and the data follows this long after.
AXIS_SETTLE_S = 0.3


def keyed(
    comps: Mapping[str, Any], frame: Mapping[str, Any], names: Iterable[str] | None = None
) -> dict[Any, Any]:
    """A frame ({name: value}) as gradio's {component: value}; with `names`, each of them is there
    (gr.skip() where the frame is silent: gradio reads {} as one value)."""
    if names is None:
        return {comps[k]: v for k, v in frame.items()}
    return {comps[n]: frame.get(n, gr.skip()) for n in names}


def button(ctx: TabContext, kind: type[B], key: str, lang: str, **props: Any) -> B:
    """A button of `kind` showing the locale key `key`, re-labelled when the language changes; its
    elem_id the key in kebab case unless given."""
    props.setdefault("elem_id", key.replace("_", "-"))
    return ctx.i18n(kind(t(key, lang), **props), **{"value" if kind is gr.Button else "label": key})


def by_component(
    comps: Mapping[str, Any],
    fn: Callable[..., Mapping[str, Any]],
    names: Sequence[str],
) -> Callable[..., dict[Any, Any]]:
    """Wrap a handler returning a frame so it returns `keyed(comps, frame, names)`."""

    def call(*args: Any) -> dict[Any, Any]:
        return keyed(comps, fn(*args), names)

    return call


def file_key(rec: Any) -> str:
    """How the legend names an opened file for its remove button (its digest, else its name)."""
    return str(rec.recording.digest or rec.recording.name)


def recorded_colours(session: Session) -> dict[str, str]:
    """Each recorded line its own colour, in loading order, from a palette no live run uses."""
    out: dict[str, str] = {}
    for i, lab in enumerate(session.recorded_labels()):
        with_series(out, lab, palette_colour(RECORDED_PALETTE, i, 0.47))
    return out


def full_colour_map(session: Session) -> dict[str, str]:
    """The plots' colour map: the session's live lines (repetitions too), then its recorded ones."""
    return {**live_colours(session.live_labels()), **recorded_colours(session)}


def file_updates(session: Session) -> dict[str, Any]:
    """The CSV and JSON downloads of the session's runs, written anew; off when the write failed
    (the status says why: no stale file is offered)."""
    files = session.write_files()
    if not files:
        off = gr.update(value=None, interactive=False)
        return {"csv": off, "json": off} if session.files_error else {}
    return {k: gr.update(value=files[k], interactive=True) for k in ("csv", "json")}


def remove_file(session: Session, key: str) -> str | None:
    """Close one opened runs file (its lines and rows go); its name, None when none was open."""
    gone = [r.recording.name for r in session.recordings if file_key(r) == key]
    session.recordings = [r for r in session.recordings if file_key(r) != key]
    return gone[0] if gone else None


def toggle_run(session: Session, label: str) -> bool:
    """Hide a run's lines, or show them again; True when the label is on the page."""
    if label not in session.plot_labels():
        return False
    session.view = session.view.toggled(label)
    return True


REPEAT_COLUMNS = ("rep_col_run", "rep_col_runs", "rep_col_step", "rep_col_speedup",
                  "rep_col_verdicts", "rep_col_loss")  # fmt: skip


def _span(values: list[float], lang: str, spec: str, unit: str = "") -> str:
    """'12,1–13,4' in the locale's digits (one value: itself); '' without values."""
    if not values:
        return ""
    lo, hi = min(values), max(values)
    ends = [lo] if lo == hi else [lo, hi]
    return "–".join(number(v, lang, spec) for v in ends) + unit


def repeat_rows(session: Session, lang: str) -> list[list[str]]:
    """One row a repeated run: the min–max of its figures in the summary table, across repetitions."""
    rows = []
    for group in repeat_groups(r["summary"] for r in session.runs):
        if len(group) < 2:
            continue
        s0 = group[0]
        steps = [step * 1000 for s in group if (step := typical_step_s(s))]
        ups = [s.speedup_vs_fp32 for s in group if s.speedup_vs_fp32 is not None]
        losses = [s.final_loss for s in group if s.final_loss is not None]
        verdicts = ", ".join(
            t(f"verdict_{s.speed_verdict}", lang) if s.speed_verdict else "–" for s in group
        )
        vs_fp32 = s0.precision != "fp32"
        rows.append(
            [
                s0.label.split(" · #")[0],
                str(len(group)),
                _span(steps, lang, ".1f"),
                _span(ups, lang, ".2f", "×") if vs_fp32 else "",
                verdicts if vs_fp32 else "",
                _span(losses, lang, ".4f"),
            ]
        )
    return rows


def repeat_table(session: Session, lang: str) -> Any:
    """The spread table under the summary: shown once some run is done twice."""
    rows = repeat_rows(session, lang)
    headers = [t(k, lang) for k in REPEAT_COLUMNS]
    return gr.update(value=pd.DataFrame(rows, columns=headers), visible=bool(rows))


def x_props(view: View, lang: str, total_steps: int) -> dict[str, Any]:
    """The x-axis settings of a plot: steps over the whole run (an axis change mid-run empties the
    chart), or seconds from 0 ([0, None]: None alone kept the step range)."""
    if view.x_axis == "time":
        return {"x_title": t("x_axis_time", lang), "x_lim": [0, None], "x_axis_format": "~r"}
    return {"x_title": t("x_step", lang), "x_lim": step_axis(total_steps), "x_axis_format": "d"}


def scale_empty_text(lang: str, configs: list[RunConfig], finished: bool, session: Session) -> str:
    """What the loss-scale plot's place says when it has nothing to draw, else ''."""
    if not scaled_labels(configs):
        return t("scale_empty_none", lang)
    if finished and not any(s.has_scale for s in session.series.values()):
        return t("scale_empty_unreported", lang)
    return ""


COINCIDE_REL = 0.01  # losses within 1 % at every shared step draw one line on the plot


def coinciding(series: dict[str, Any]) -> list[tuple[str, str]]:
    """Pairs of runs whose loss curves lie on each other (every shared step within 1 %)."""
    out, labels = [], [k for k, v in series.items() if len(v.step) >= 5]
    for i, a in enumerate(labels):
        for b in labels[i + 1 :]:
            la = dict(zip(series[a].step, series[a].loss, strict=False))
            shared = [
                (la[s], x) for s, x in zip(series[b].step, series[b].loss, strict=False) if s in la
            ]
            if len(shared) >= 5 and all(
                abs(x - y) <= COINCIDE_REL * max(abs(x), abs(y), 1e-12) for x, y in shared
            ):
                out.append((a, b))
    return out


def coinciding_groups(series: dict[str, Any]) -> list[list[str]]:
    """The runs whose lines lie on each other, grouped (a~b, b~c: one group), in the plots' order."""
    order = {label: i for i, label in enumerate(series)}
    groups: list[set[str]] = []
    for pair in coinciding(series):
        joined = [g for g in groups if g & set(pair)]
        groups = [g for g in groups if g not in joined] + [set(pair).union(*joined)]
    return sorted((sorted(g, key=order.__getitem__) for g in groups), key=lambda g: order[g[0]])


def run_legend(session: Session | None, lang: str) -> str:
    """The legend of the lines on screen, each opened file with its remove button, and its notes."""
    if session is None or not session.plot_labels():
        return ""
    view = session.view
    notes = [t("legend_raw", lang)] if view.smoothing > 0 else []
    groups = coinciding_groups(session.plot_series())
    if groups:  # a line under an identical one is said: "where did fp32 go?"
        notes.append(t("legend_coincide", lang, groups="; ".join(" = ".join(g) for g in groups)))
    note = " · ".join(notes) or None
    files = [LegendFile(file_key(r), r.recording.name, list(r.labels)) for r in session.recordings]
    texts = {k: t(f"legend_{k}", lang) for k in ("show", "hide", "remove")}
    labels, colours = session.plot_labels(), full_colour_map(session)
    dashes = dashes_for(labels)
    flat = scale_flat_text(lang, session.configs)
    html_ = legend_html(
        labels, note, colours, view.hidden, files, texts, dashes, [flat] if flat else []
    )
    return html_ + dash_css(dashes, colours, [p.elem_id for p in PLOTS])


def scale_flat_text(lang: str, configs: list[RunConfig]) -> str:
    """One line when no run's loss scale can grow (fewer steps than its growth interval), naming
    the lesson that shows it move; else ''."""
    scaled = [c for c in configs if c.label in scaled_labels(configs)]
    if not scaled or any(c.steps >= c.growth_interval for c in scaled):
        return ""
    c = max(scaled, key=lambda x: x.steps)
    lesson = html.escape(message("lesson_loss_scaling_title", {}, lang))  # the legend is HTML
    return t(
        "scale_flat", lang, scale=f"2^{round(math.log2(c.init_scale))}", interval=c.growth_interval,
        steps=c.steps, lesson=lesson,
    )  # fmt: skip


def plot_frames(session: Session) -> dict[str, Any]:
    """Every plot's frame from the session's series, drawn as the session's view says."""
    series, configs = session.plot_series(), session.plot_configs()  # live, then recorded
    return {p.name: plot_frame(p, series, configs, session.view) for p in PLOTS}


def plot_updates(session: Session, lang: str, rebuild: bool) -> dict[str, Any]:
    """Every plot's props from the session; `rebuild`: no data, so each chart rebuilds its colour
    domain (the caller sends `plot_frames` next)."""
    cmap = full_colour_map(session)  # repetitions ('· #2') are named only by this grid
    frames = {} if rebuild else plot_frames(session)
    configs = session.plot_configs()  # with the recorded runs: their steps stay on the axis
    has_scale = bool(scaled_labels(configs))
    total = max((c.steps for c in configs), default=1)  # the longest run, live or recorded
    out: dict[str, Any] = {}
    for spec in PLOTS:
        props: dict[str, Any] = {"color_map": cmap, "value": frames.get(spec.name)}
        props.update(x_props(session.view if spec.wall_clock else View(), lang, total))
        if spec.scale:
            props["visible"] = has_scale
        out[spec.name] = gr.update(**props)
    empty = "" if has_scale else t("scale_empty_none", lang)
    out["scale_empty"] = gr.update(value=empty, visible=bool(empty))
    out["legend"] = run_legend(session, lang)
    return out
