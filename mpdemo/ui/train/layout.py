"""The Train tab's layout: controls (controls.py's table) on the left; buttons, status, plots
(plots.py's table), table and downloads on the right."""

from __future__ import annotations

import contextlib
import itertools
from typing import Any

import gradio as gr
import pandas as pd

from ...colours import color_map
from ...config import Limits
from .. import zerogpu
from ..context import Component, TabContext, TrainShared
from ..i18n import DEFAULT_LANG, t
from . import classroom, controls, lessons
from . import recorded as recorded_ui
from .colours import LEGEND_CSS, LEGEND_JS
from .controls import CONTROLS
from .frames import REPEAT_COLUMNS, button
from .handlers import train
from .inputs import DEFAULTS, PLOT_HEIGHT, opening_scale_empty, precision_info
from .plots import PLOTS, step_axis
from .session import Session
from .session_table import column_widths, summary_table
from .wiring import _wire


def _controls_of(section: str, comps: dict[str, Component], lang: str, lim: Limits) -> None:
    """Build the controls of one section in table order; same `row` → one gr.Row."""
    specs = [c for c in CONTROLS if c.section == section]
    for row, group in itertools.groupby(specs, key=lambda c: c.row):
        with gr.Row() if row is not None else contextlib.nullcontext():
            for c in group:
                comps[c.name] = controls.build(c, lang, lim)


def _plot(spec: Any, lang: str, cmap: dict[str, str]) -> gr.LinePlot:
    # The title drawn by Vega, not as the block's label: that pushed the legend out of view.
    return gr.LinePlot(
        None,
        x="step",
        y="value",
        color="run",
        color_map=cmap,
        label=t(spec.title, lang),
        show_label=False,
        title=t(spec.title, lang),
        x_title=t("x_step", lang),
        y_title=t(spec.y_title, lang),
        color_title="",
        height=PLOT_HEIGHT,
        elem_id=spec.elem_id,
        min_width=280,
        y_axis_format=spec.y_format,
        x_axis_format="d",
        x_lim=step_axis(DEFAULTS["steps"]),
        colors_in_legend=[],
        visible=not (spec.scale and opening_scale_empty(lang)),
    )


def _results(ctx: TabContext, comps: dict[str, Component], lang0: str, lim: Limits) -> None:
    """The results column: view controls, legend, plots, tables, downloads, recorded runs, board."""
    cmap = color_map()
    with gr.Row(equal_height=True, elem_id="plot-view"):
        _controls_of("view", comps, lang0, lim)
    # Clickable: an entry hides or shows its run, × closes an opened file.
    comps["legend"] = gr.HTML(
        "", elem_id="run-legend", js_on_load=LEGEND_JS, css_template=LEGEND_CSS
    )
    for row in sorted({p.row for p in PLOTS}):
        with gr.Row():
            for spec in (p for p in PLOTS if p.row == row):
                if not spec.scale:
                    comps[spec.name] = _plot(spec, lang0, cmap)
                    continue
                with gr.Column(min_width=280):
                    comps[spec.name] = _plot(spec, lang0, cmap)
                    # In the plot's place when no run of the grid has a scaler.
                    empty = opening_scale_empty(lang0)
                    comps["scale_empty"] = gr.Markdown(
                        empty,
                        visible=bool(empty),
                        elem_id="scale-empty",
                        container=True,
                        padding=True,
                        min_height=PLOT_HEIGHT,
                    )
    # Below the plots, not a LinePlot caption: that is clipped by the block height.
    ctx.i18n(gr.Markdown(t("scale_caption", lang0), elem_id="scale-note"), value="scale_caption")
    # Each watched run's latest gradient histogram (gradwatch.py).
    comps["grad_watch"] = gr.HTML("", elem_id="grad-watch", visible=False)
    # The table opens on a class's nine columns; the rest are one tick away.
    comps["summary_all"] = ctx.i18n(
        gr.Checkbox(False, label=t("summary_all", lang0), elem_id="summary-all"),
        label="summary_all",
    )
    comps["summary"] = ctx.i18n(
        gr.DataFrame(
            summary_table([], lang0),  # headers only
            label=t("summary_label", lang0),
            elem_id="summary",
            interactive=False,
            wrap=True,
            pinned_columns=1,
            max_height=420,
            column_widths=column_widths(),
        ),
        label="summary_label",
    )
    # A repeated comparison: how far each run's figures moved (hidden until then).
    comps["repeats"] = ctx.i18n(
        gr.DataFrame(
            pd.DataFrame([], columns=[t(k, lang0) for k in REPEAT_COLUMNS]),
            label=t("repeats_label", lang0),
            elem_id="repeat-spread",
            interactive=False,
            wrap=True,
            visible=False,
        ),
        label="repeats_label",
    )

    def download(key: str, elem_id: str) -> gr.DownloadButton:
        """A download button, off until there is something to download."""
        return button(
            ctx, gr.DownloadButton, key, lang0, interactive=False, elem_id=elem_id, size="md"
        )

    with gr.Row(equal_height=True):
        for name in ("csv", "json"):
            comps[name] = download(f"{name}_btn", f"{name}-download")
        comps["script_run"] = ctx.i18n(
            gr.Dropdown(
                [], label=t("script_run_label", lang0), elem_id="script-run", interactive=True
            ),
            label="script_run_label",
        )
        comps["script_btn"] = download("script_btn", "script-download")
        # The same runs as a notebook (Session.notebook_file), off until a comparison has runs.
        comps["notebook_btn"] = download("nb_btn", "notebook-download")
    # Compare with a recorded run, open a runs file, Clear runs (recorded_ui.py).
    recorded_ui.build_row(ctx, comps, lang0)
    # The class board: publish this page's comparisons, or follow a teacher's code.
    classroom.build_board(ctx, comps, lang0)


def build_train_tab(ctx: TabContext) -> None:
    """Controls on the left; buttons, status, view controls, plots, summary, downloads right."""
    lang0 = DEFAULT_LANG
    lim: Limits = ctx.limits
    zerogpu.setup()  # on a ZeroGPU Space: register the GPU function before launch
    comps: dict[str, Component] = {}
    with gr.Tab(t("tab_train", lang0), id="train", elem_id="train-tab") as tab:
        ctx.i18n(tab, label="tab_train")
        # Inside the Tab: a component directly under gr.Tabs would get a tab of its own.
        # Closed when gradio expires it (the tab closed, then its TTL).
        session = gr.State(Session(), delete_callback=Session.close)
        # The lessons, Train and the status first: at 400 px all on the first screen.
        lessons.build(ctx, comps, lang0)
        # Not equal_height: a status of several lines stretched the buttons to its height.
        with gr.Row(equal_height=False, elem_id="status-row"):
            comps["start_btn"] = button(
                ctx, gr.Button, "start_btn", lang0, variant="primary", scale=0, min_width=140
            )
            # Off while idle: there is nothing to stop until Train is pressed.
            comps["stop_btn"] = button(
                ctx,
                gr.Button,
                "stop_btn",
                lang0,
                variant="stop",
                scale=0,
                min_width=110,
                interactive=False,
            )
            # Run my own, always shown: its visibility would be one more output of /train, which
            # API callers unpack by position.
            comps["run_own"] = button(ctx, gr.Button, "run_own_btn", lang0, scale=0, min_width=140)
            # After the buttons: at 400 px a long status pushed Train below the first screen.
            comps["status"] = gr.Markdown(t("status_idle", lang0), elem_id="status", min_height=44)
        # On a narrow screen the results come before the controls (app.py's CSS).
        with gr.Row(equal_height=False, elem_id="train-main"):
            with gr.Column(scale=1, min_width=300, elem_id="train-controls"):
                _controls_of("data", comps, lang0, lim)
                comps["preview"] = gr.Markdown("", elem_id="slice-preview")
                _controls_of("grid", comps, lang0, lim)
                comps["precisions"].info = precision_info(lang0, DEFAULTS["device"])
                comps["precision_note"] = gr.Markdown("", elem_id="precision-note")
                # This machine's names and flags, so a class sees why the speeds differ.
                comps["machine"] = gr.Markdown("", elem_id="machine")
                _controls_of("run", comps, lang0, lim)
                with gr.Accordion(
                    t("advanced_label", lang0), open=False, elem_id="advanced"
                ) as advanced:
                    ctx.i18n(advanced, label="advanced_label")
                    _controls_of("advanced", comps, lang0, lim)
            with gr.Column(scale=3, elem_id="train-results"):
                _results(ctx, comps, lang0, lim)

    # What the other tabs read of this one (the Code tab shows the session's runs' code).
    ctx.train = TrainShared(
        controls={c.name: comps[c.name] for c in CONTROLS},
        status=comps["status"],
        session=session,
        summary=comps["summary"],
        script_run=comps["script_run"],
        lesson=comps["lesson"],
    )
    _wire(ctx, comps, session, lim)
    recorded_ui.wire(ctx, comps, session)
    classroom.wire(ctx, comps, session, train)
