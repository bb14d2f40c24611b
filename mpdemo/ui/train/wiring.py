"""Every event of the Train tab: which handler answers which component, with which inputs."""

from __future__ import annotations

from collections.abc import Iterator
from typing import Any

import gradio as gr

from ...config import Limits
from .. import system
from ..context import QUIET, Component, Outputs, TabContext, Value
from ..i18n import t
from . import classroom, controls, lessons
from .controls import CONTROLS, dataset_choices, model_choices
from .frames import OUTPUTS, by_component, keyed, run_legend, scale_empty_text, x_props
from .gradwatch import watch_update
from .handlers import (
    arm,
    legend_click,
    notebook_update,
    redraw,
    scale_preview,
    script_for_run,
    show_columns,
    stop,
    summary_update,
    train_endpoint,
)
from .inputs import (
    fp8_box,
    machine_text,
    precision_info,
    precision_note,
    slice_preview,
    ticked_scale_empty,
)
from .plots import PLOTS, View
from .session import Session
from .status import idle_status


def lang_scale_empty(lang: str, sess: Session | None, ticked: tuple[Any, ...]) -> str:
    """The loss-scale plot's sentence in a new language: the grid's on screen, else the ticked one's."""
    if sess is not None and sess.configs:
        return scale_empty_text(lang, sess.configs, not sess.running, sess)
    return ticked_scale_empty(lang, *ticked)


def _wire(ctx: TabContext, comps: dict[str, Component], session: gr.State, lim: Limits) -> None:
    """Every event of the Train tab."""
    lang = ctx.lang
    armed_out = ["status", "stop_btn"]
    arm_fn = by_component(comps, arm, armed_out)

    def trains(button: str, mode: str, api_name: str) -> Any:
        """`button` arms Stop, then streams train() in `mode` (handlers.train) as `api_name`."""
        armed = comps[button].click(arm_fn, [session, lang], [comps[n] for n in armed_out], **QUIET)
        return armed.then(
            train_endpoint(comps, mode),
            [*(comps[n] for n in controls.NAMES), lang, session],
            [comps[n] for n in OUTPUTS],
            api_name=api_name,
            # The values as sent: gradio's Number rounds 2.5 steps to 2 and fails on "abc" in English.
            preprocess=False,
            **classroom.streaming(comps),
        )

    trained = trains("start_btn", "train", "train")
    trains("run_own", "own", "train_own")  # Run my own: a comparison never shared unless published
    # The lesson picker: one click loads a lesson and trains it, through the same handlers.
    lessons.wire(ctx, comps, session, train_endpoint(comps), arm_fn)
    legend_names = [*(p.name for p in PLOTS), "legend", "summary", "status"]

    def on_legend(sess: Session, lg: str, evt: gr.EventData) -> Iterator[Outputs]:
        for out in legend_click(sess, lg, getattr(evt, "_data", None) or {}):
            yield keyed(comps, out, legend_names)

    comps["legend"].click(on_legend, [session, lang], [comps[n] for n in legend_names], **QUIET)
    comps["stop_btn"].click(
        stop,
        [session, lang],
        [comps["status"]],
        queue=False,  # never behind training, nor counted against the queue's size
        api_name="stop",
        show_progress="hidden",
    )

    preview_names = ("model", "dataset", "train_slice", "eval_slice")
    for name in preview_names:
        comps[name].change(
            slice_preview, [lang, *(comps[n] for n in preview_names)], [comps["preview"]], **QUIET
        )

    note_inputs = [lang, comps["precisions"], comps["device"], session]
    note_args = (note_inputs, [comps["precision_note"]])
    for name in ("precisions", "device"):
        comps[name].change(precision_note, *note_args, **{**QUIET, "concurrency_limit": 1})
    # What a Train click measured, under the boxes.
    trained.then(precision_note, *note_args, api_visibility="undocumented", show_progress="hidden")
    comps["device"].change(
        lambda lang, dev: gr.update(info=precision_info(lang, dev)),
        [lang, comps["device"]],
        [comps["precisions"]],
        **QUIET,
    )
    comps["summary_all"].change(
        by_component(comps, show_columns, ["summary"]),
        [session, lang, comps["summary_all"]],
        [comps["summary"]],
        **QUIET,
    )
    comps["script_run"].input(
        script_for_run, [session, comps["script_run"]], [comps["script_btn"]], **QUIET
    )
    # The same runs as a notebook: written again when the runs or the page's language change.
    for comp in (comps["summary"], comps["script_run"]):
        comp.change(notebook_update, [session, lang], [comps["notebook_btn"]], **QUIET)
    ctx.on_language(lambda lg, sess: notebook_update(sess, lg), [session], [comps["notebook_btn"]])

    view_inputs = [session, lang, *(comps[n] for n in controls.VIEW_NAMES)]
    view_names = [*(p.name for p in PLOTS), "legend"]
    view_outputs = [comps[n] for n in view_names]

    def on_view(sess: Session, lg: str, *vals: Value) -> Iterator[Outputs]:
        for out in redraw(sess, lg, *vals):
            yield keyed(comps, out, view_names)

    for name in controls.VIEW_NAMES:
        comps[name].change(on_view, view_inputs, view_outputs, **QUIET)
    grid_names = ("precisions", "loss_scaling", "compare_scaling")
    scale_names = ["scale", "scale_empty"]
    preview = by_component(comps, scale_preview, scale_names)
    for name in grid_names:
        grid_inputs = [session, lang, *(comps[n] for n in grid_names)]
        comps[name].change(preview, grid_inputs, [comps[n] for n in scale_names], **QUIET)

    def on_lang(lang: str, sess: Session, dev: str, *args: Value) -> list[Value]:
        ticked, preview_args = args[: len(grid_names)], args[len(grid_names) :]
        hub = system.hub_status()
        out: list[Value] = []
        for c in CONTROLS:
            props = controls.relabel(c, lang, lim, hub)
            if c.name == "precisions":
                props["info"] = precision_info(lang, dev)
            if c.name == "fp8":  # fp8: enabled or not, and why, on this machine
                props.update(fp8_box(lang))
            out.append(gr.update(**props))
        view = sess.view if sess is not None else View()
        for spec in PLOTS:  # the label too: hidden, but still the plot's accessible name
            x_title = x_props(view if spec.wall_clock else View(), lang, 1)["x_title"]
            title, y_title = t(spec.title, lang), t(spec.y_title, lang)
            out.append(gr.update(label=title, title=title, y_title=y_title, x_title=x_title))
        running = sess is not None and sess.running
        empty = lang_scale_empty(lang, sess, ticked)
        out += [
            slice_preview(lang, *preview_args),
            summary_update(sess, lang),  # recorded rows too, in the columns the box asked for
            gr.skip() if running else idle_status(sess, lang),
            gr.update(value=empty) if empty else gr.skip(),
            run_legend(sess, lang),
            (watch_update(sess, lang)["value"] or gr.skip()) if sess else gr.skip(),
        ]
        return out

    shown = ("preview", "summary", "status", "scale_empty", "legend", "grad_watch")
    lang_outputs = [
        comps[n] for n in (*(c.name for c in CONTROLS), *(p.name for p in PLOTS), *shown)
    ]
    lang_inputs = [session, *(comps[n] for n in ("device", *grid_names, *preview_names))]
    ctx.on_language(on_lang, lang_inputs, lang_outputs, alone=True)  # may import torch

    ctx.on_language(
        precision_note, [comps["precisions"], comps["device"], session], [comps["precision_note"]]
    )

    def on_load(lang: str, *preview_args: Value) -> list[Value]:
        hub = system.hub_status(wait=2.0)  # started at build time; usually answered by now
        return [
            gr.update(choices=model_choices(lang, hub)),
            gr.update(choices=dataset_choices(lang, hub)),
            gr.update(choices=system.device_choices()),
            slice_preview(lang, *preview_args),
        ]

    # Apart from on_load: reading the flags imports torch, which must not hold up the menus.
    ctx.on_load(machine_text, [], [comps["machine"]], alone=True)
    ctx.on_load(lambda lang: gr.update(**fp8_box(lang)), [], [comps["fp8"]], alone=True)
    ctx.on_language(machine_text, [], [comps["machine"]], alone=True)
    loaded = [comps[n] for n in ("model", "dataset", "device", "preview")]
    # Alone too: it waits up to 2 s for the Hub's answer.
    ctx.on_load(on_load, [comps[n] for n in preview_names], loaded, alone=True)
