"""The Train tab's handlers: train (the streamed frames), stop, arm, redraw, legend clicks; each
takes values by name and returns a frame keyed by output name (frames.keyed)."""

from __future__ import annotations

import inspect
import time
from collections.abc import Callable, Iterator
from typing import Any

import gradio as gr

from ...classroom.broadcast import Viewer, comparison_key
from ...messages import MpdemoError
from ...runs.runner import check_repeat, repeated
from ..context import STOP_WAIT_S
from ..i18n import DEFAULT_LANG, error_text, norm_lang, t
from ..text import esc, shown
from . import classroom, controls, lessons
from . import recorded as recorded_ui
from .frames import (
    AXIS_SETTLE_S,
    file_updates,
    keyed,
    plot_frames,
    plot_updates,
    remove_file,
    repeat_table,
    run_legend,
    scale_empty_text,
    toggle_run,
    x_props,
)
from .gradwatch import watch_update
from .inputs import DEFAULTS, YIELD_EVERY_S, check_inputs, ticked_scale_empty
from .plots import PLOTS, View
from .session import Session
from .session_table import column_widths, summary_table
from .status import runner_runs, status_text, stopped_text


def summary_update(session: Session | None, lang: str) -> Any:
    """The summary table with the widths of its columns: for a change of its column set."""
    all_columns = session is not None and session.all_columns
    table = session.table(lang) if session is not None else summary_table([], lang)
    return gr.update(value=table, column_widths=column_widths(all_columns))


def show_columns(session: Session | None, lang: str, all_columns: Any) -> dict[str, Any]:
    """The "All columns" box, kept in the session: every later frame draws those columns."""
    if session is None:
        return {}
    session.all_columns = bool(all_columns)
    return {"summary": summary_update(session, norm_lang(lang))}


def _frame(
    session: Session,
    lang: str,
    table_changed: bool,
    finished: bool = False,
    grads_changed: bool = False,
) -> dict[str, Any]:
    # The files first: a failed write is said in this frame's status.
    files = file_updates(session) if table_changed else {}
    out: dict[str, Any] = {"status": status_text(session, lang, finished=finished)}
    out.update(plot_frames(session))
    if grads_changed:  # a run sent a watched step: its histogram replaces the last one
        out["grad_watch"] = gr.update(**watch_update(session, lang))
    if table_changed:
        out["summary"] = session.table(lang)
        out["repeats"] = repeat_table(session, lang)
        out.update(files)
    if finished:
        out["legend"] = run_legend(session, lang)  # with a note on lines that coincide
        empty = scale_empty_text(lang, session.configs, True, session)
        if empty:
            out["scale"] = gr.update(visible=False)
            out["scale_empty"] = gr.update(value=empty, visible=True)
    return out


def train(
    values: dict[str, Any] | None = None,
    lang: str = DEFAULT_LANG,
    session: Session | None = None,
    mode: str | classroom.Follow = "train",
) -> Iterator[dict[str, Any]]:
    """Train the grid; stream status, plots, table and files by name. mode: "train" (join the same
    comparison another visitor runs), "own" (never shared) or a classroom.Follow (a board)."""
    lang = norm_lang(lang)
    session = session if session is not None else Session()
    v = {**DEFAULTS, **{k: x for k, x in (values or {}).items() if k in DEFAULTS}}
    # Runs hidden from the plots stay hidden (a recorded one, or a kind the new grid has too).
    session.view = View.of(v["smoothing"], v["x_axis"], session.view.hidden)
    session.armed = False
    if session.stop_requested:  # Stop was pressed while this click waited in the queue
        session.stop_requested = False
        yield {"status": t("status_stopped_plain", lang)}
        return
    try:
        # After this page's Stop a new comparison: joining the stopped one ended at once.
        if mode == "train" and stopped_text(runner_runs(session.runner), lang) is not None:
            mode = "own"
        board = mode.comparison if isinstance(mode, classroom.Follow) else None
        configs = board.configs if board else check_inputs(v)
        repeat = board.repeat if board else check_repeat(v.get("repeat"))
        old = session.runner  # this page's last comparison, trained or watched
        again = isinstance(old, Viewer) and old.comparison.key == comparison_key(configs, repeat)
        if mode == "train" and again:
            # Pressed again: train again, live (joining replayed it as "another visitor's").
            mode = "own"
        # The same comparison run lately on this server is watched; a new one waits in line.
        runner = classroom.runner_for(session, configs, repeat, mode)
    except MpdemoError as err:
        session.input_error = err
        text = error_text(err, lang)
        # The toast fades; the status keeps it until the next click (both show the input as text).
        yield {"status": t("status_not_started", lang, error=shown(text)), **settle(session)}
        raise gr.Error(esc(text, quote=False), title="mpdemo", print_exception=False) from None

    session.input_error = None
    session.begin(repeated(configs, repeat), runner)  # every repetition's line and row
    runner.start()
    try:
        yield {  # the plots emptied first: each rebuilds its colour domain (plots.py)
            "status": status_text(session, lang),
            **plot_updates(session, lang, True),
            # Hidden until a run of this grid sends its first watched step.
            "grad_watch": gr.update(value="", visible=False),
            "summary": summary_table([], lang, session.all_columns),  # headers only
            "repeats": repeat_table(session, lang),
            **recorded_ui.script_updates(session),
            # A board's follower sees the teacher's lesson and settings, not their own.
            **(lessons.followed(configs, repeat, lang) if board else {}),
        }
        last = time.monotonic()
        table_changed = grads_changed = False
        for ev in runner.events(timeout=YIELD_EVERY_S):
            if session.runner is not runner:  # a newer click took the session over
                return
            first_step = ev is not None and ev.kind == "step" and not _has_steps(session, ev.label)
            if ev is not None and session.apply(ev):
                table_changed = True
            grads_changed |= ev is not None and ev.kind == "grads"
            # A run's first step goes out at once, whatever the throttle.
            if first_step or time.monotonic() - last >= YIELD_EVERY_S:
                yield _frame(session, lang, table_changed, grads_changed=grads_changed)
                table_changed = grads_changed = False
                last = time.monotonic()
        # The last message is what /train returns to an API caller.
        yield {**_frame(session, lang, True, True, grads_changed=True), **settle(session)}
    finally:
        # Tab closed or job cancelled: gradio closes this generator; end the worker too.
        runner.stop()


def _has_steps(session: Session, label: str) -> bool:
    series = session.series.get(label)
    return series is not None and bool(series.step)


def stop(session: Session, lang: str) -> str:
    """Stop button: end the current run within a step (cancels= alone would not)."""
    lang = norm_lang(lang)
    runner = session.runner
    if (runner is None or not runner.alive) and not session.armed:
        return t("status_nothing_to_stop", lang)  # and the next click is not swallowed
    session.stop_requested = True
    if runner is None or not runner.alive:  # a click waits in the queue: it will not start
        return t("status_stopped_plain", lang)
    runner.stop()
    # Answer with the outcome, not only "stopping": the training's own stream may lag behind.
    if not runner.join(STOP_WAIT_S):
        return t("status_stopping", lang)
    return stopped_text(runner_runs(runner), lang) or t("status_stopped_plain", lang)


def arm(session: Session, lang: str) -> dict[str, Any]:
    """Runs on each Train click before the (possibly queued) training: forget an old Stop."""
    session.stop_requested = False
    session.armed = True
    out: dict[str, Any] = {"stop_btn": gr.update(interactive=True)}
    if session.running:  # else train() itself says what it does
        out["status"] = t("status_queued", norm_lang(lang))
    return out


def settle(session: Session) -> dict[str, Any]:
    """After a training or its input error: Stop is off unless another click waits (in train()'s
    last frame: a chained .then() did not run after a gr.Error)."""
    return {"stop_btn": gr.update(interactive=session.running or session.armed)}


def script_for_run(session: Session, label: str | None) -> Any:
    """The reproduction script of the chosen run, as a file for the download button."""
    path = session.script_file(label) if label else None
    return gr.update(value=path, interactive=path is not None)


def notebook_update(session: Session | None, lang: str) -> Any:
    """The session's comparison as a notebook in the page's language, for its download button."""
    path = session.notebook_file(norm_lang(lang)) if session is not None else None
    return gr.update(value=path, interactive=path is not None)


def redraw(
    session: Session | None, lang: str, smoothing: Any, x_axis: Any
) -> Iterator[dict[str, Any]]:
    """A view control changed: redraw the plots (a running training redraws on its own)."""
    if session is None:
        return
    view = View.of(smoothing, x_axis, session.view.hidden)
    axis_changed = session.view.x_axis != view.x_axis
    session.view = view
    if not session.plot_labels():
        return
    total = max(c.steps for c in session.plot_configs())
    out: dict[str, Any] = {"legend": run_legend(session, lang)}
    if axis_changed:
        props = x_props(view, lang, total)
        for spec in PLOTS:
            if spec.wall_clock:
                out[spec.name] = gr.update(value=None, **props)
        yield out
        out = {}
        time.sleep(AXIS_SETTLE_S)
    # The training's generator owns the series while it runs and draws the next frame itself.
    if not session.running:
        yield {**out, **plot_frames(session)}
    elif out:
        yield out


def legend_click(
    session: Session | None, lang: str, data: dict[str, Any]
) -> Iterator[dict[str, Any]]:
    """A legend click: {'run': label} hides or shows that run, {'remove': key} closes that file."""
    if session is None:
        return
    if data.get("remove") is not None:
        name = remove_file(session, str(data["remove"]))
        if name is None:
            return
        yield {
            **plot_updates(session, lang, rebuild=True),
            "summary": session.table(lang),
            "status": t("status_file_closed", lang, name=shown(name)),
        }
        time.sleep(AXIS_SETTLE_S)  # colours and axes first, the data after (see frames.py)
        yield plot_frames(session)
        return
    if not toggle_run(session, str(data.get("run") or "")):
        return
    out = {"legend": run_legend(session, lang)}
    if not session.running:  # else the training's next frame draws it
        out.update(plot_frames(session))
    yield out


def scale_preview(
    session: Session | None, lang: str, precisions: list[str] | None, scaling: Any, compare: Any
) -> dict[str, Any]:
    """Before any grid: the loss-scale plot's place says whether the ticked grid has a scaler."""
    if session is not None and session.configs:
        return {}  # a grid's plots are on screen: they stay until the next one
    empty = ticked_scale_empty(lang, precisions, scaling, compare)
    return {
        "scale": gr.update(visible=not empty),
        "scale_empty": gr.update(value=empty, visible=bool(empty)),
    }


def train_endpoint(comps: dict[str, Any], mode: str = "train") -> Callable[..., Iterator[dict]]:
    """train() as gradio calls it: one parameter per control (named, defaulted: the API's
    names), then the language and the session; every frame keyed by component."""

    def handler(*args: Any) -> Iterator[dict[Any, Any]]:
        *vals, lang, session = args
        values = dict(zip(controls.NAMES, vals, strict=True))
        for frame in train(values, lang, session, mode):
            yield keyed(comps, frame)

    kind = inspect.Parameter.POSITIONAL_OR_KEYWORD
    named = [*((n, DEFAULTS[n]) for n in controls.NAMES), ("lang", DEFAULT_LANG), ("session", None)]
    params = [inspect.Parameter(n, kind, default=d) for n, d in named]
    handler.__signature__ = inspect.Signature(params)  # type: ignore[attr-defined]
    handler.__name__ = "train" if mode == "train" else f"train_{mode}"
    handler.__doc__ = train.__doc__
    return handler
