"""The Train tab: controls → RunConfig grid → Runner → streamed plots, status, table, files.

The controls come from mpdemo/ui/train/controls.py (one table) and the plots from mpdemo/ui/train/plots.py
(one table); handlers take values by name and return frames, dicts keyed by output name
(mpdemo/ui/train/frames.py: what the plots show, and `keyed`, which maps a frame onto components).
Nothing here lists the controls or the plots again.
"""

from __future__ import annotations

import inspect
import os
import time
from collections.abc import Callable, Iterator
from typing import Any

import gradio as gr
import pandas as pd

from ...catalog import MODELS
from ...config import Limits, RunConfig, coerce_field
from ...messages import ConfigError, MpdemoError
from ...registry import BACKENDS, PRECISIONS
from ...runs.runner import grid, repeated
from .. import system, zerogpu
from ..i18n import DEFAULT_LANG, error_text, message, norm_lang, t
from ..text import esc, shown
from . import classroom, controls
from . import recorded as recorded_ui
from .controls import CONTROLS, dataset_choices, model_choices
from .frames import (
    AXIS_SETTLE_S,
    OUTPUTS,
    REPEAT_COLUMNS,
    by_component,
    empty_table,
    file_key,
    grid_start,
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
from .plots import LEGEND_CSS, LEGEND_JS, PLOTS, View, color_map, scaled_labels, step_axis
from .session import COLUMN_WIDTHS, Session

FIT_DEFAULT_S = 60.0  # the default comparison should take about a minute, whatever the machine


def _cores() -> int:
    """CPUs this process may use (a container's limit, where the OS says)."""
    try:
        return len(os.sched_getaffinity(0))
    except (AttributeError, OSError):  # macOS and Windows have no sched_getaffinity
        return os.cpu_count() or 1


# Plot updates per second. A browser drawing four charts five times a second on the same two
# cores as the training (a classroom laptop, this machine) slowed the default comparison from
# 5 s to 8.3 s after its plan, inflated its step times and threw the ETA off by -45 %; at one
# update a second it took 5 s, as estimated. With more cores the drawing has its own.
YIELD_EVERY_S = 0.2 if _cores() > 4 else 1.0
DEFAULTS: dict[str, Any] = controls.defaults()
PLOT_HEIGHT = 300


# --- choices and previews (torch-free) -------------------------------------------------------


def _one_slice(spec: str, sizes: dict[str, int] | None, lang: str) -> str:
    try:
        got = system.slice_rows(spec, sizes)
    except ConfigError:
        return t("slice_bad", lang, splits=", ".join(sizes) if sizes else "?")
    if got is None:
        return t("slice_unknown", lang)
    rows, total, clamped = got
    return t("slice_rows_clamped" if clamped else "slice_rows", lang, rows=rows, total=total)


def slice_preview(lang: str, model: str, dataset: str, train_slice: str, eval_slice: str) -> str:
    """'Train: 2,000 of 4,000 rows · Eval: 500 of 800 rows' (from the bundled files, no torch)."""
    entry = MODELS.get(model or "")
    if entry is not None and entry.task == "regression":
        return t("slice_none", lang)
    sizes = system.split_sizes(dataset or "")
    return " · ".join(
        [
            t("slice_preview_train", lang, text=_one_slice(train_slice, sizes, lang)),
            t("slice_preview_eval", lang, text=_one_slice(eval_slice, sizes, lang)),
        ]
    )


def precision_info(lang: str, device: str | None) -> str:
    """The line under the precision boxes: what each precision does; speeds are measured, not said."""
    return t("precision_info_cpu" if system.trains_on_cpu(device) else "precision_info_gpu", lang)


def precision_note(
    lang: str, precisions: list[str] | None, device: str | None, session: Any = None
) -> str:
    """What this page's last comparison measured for the ticked precisions (one it ran or
    joined: another visitor's private run is never read here)."""
    import sys

    if "mpdemo.runs.plan" not in sys.modules:  # nothing measured yet: no claim, and no torch
        return ""
    from ...engine.machine import machine_info
    from ...runs.plan import speed_note

    cal = session.calibration() if isinstance(session, Session) else None
    try:  # measured on another device than the one picked now: no claim about this one
        from ...engine.precision import resolve_device

        if cal is not None and cal.device != resolve_device(device or "auto").type:
            cal = None
    except Exception:  # noqa: BLE001 - a device that cannot resolve was never measured
        cal = None
    notes = [n for p in precisions or [] if cal and (n := speed_note(cal, machine_info(), p))]
    if cal is None or not notes:
        return ""
    # Which step was measured: the figures of a tiny-bert grid must not read as small-bert's.
    model, _dataset, batch, _length, _device = cal.key
    head = t("precision_note_measured", lang, model=shown(model), batch=batch)
    return head + "\n\n" + "\n\n".join(shown(message(n.key, n.args, lang)) for n in notes)


def fp8_box(lang: str) -> dict[str, Any]:
    """The fp8 box's state: enabled where this machine trains fp8, else disabled with the reason.

    The reason is the engine's refusal line (mpdemo/fp8.py, read from torch) in the page's
    language. Imports torch: called from a load event, not at build.
    """
    from ...engine import fp8
    from ...engine.precision import resolve_device

    device = resolve_device("auto")
    try:
        fp8.check(device)
    except MpdemoError as err:
        return {"interactive": False, "value": False, "info": error_text(err, lang)}
    name, (major, minor) = fp8.gpu(device) or ("?", (0, 0))
    version = ".".join(map(str, fp8.torchao_version() or ()))
    return {
        "interactive": True,
        "info": t("fp8_info_ok", lang, gpu=name, cc=f"{major}.{minor}", torchao=version),
    }


def with_fp8(values: dict[str, Any]) -> list[str]:
    """The ticked precisions, plus fp8 when its own box is ticked."""
    precisions = list(values.get("precisions") or [])
    if values.get("fp8") and "fp8" not in precisions:
        precisions.append("fp8")
    return precisions


def machine_text(lang: str) -> str:
    """The 'This machine' line: names and instruction-set flags (torch's, read once per process)."""
    from ...engine.machine import (
        machine_note,  # imports torch: called from a load event, not at build
    )

    note = machine_note()
    return message(note.key, note.args, lang)


# --- status line -----------------------------------------------------------------------------


def _duration(seconds: float, lang: str) -> str:
    m, s = system.fmt_duration(seconds)
    return t("time_min", lang, m=m, s=s) if m else t("time_s", lang, s=s)


def status_text(session: Session, lang: str, finished: bool = False) -> str:
    """'Run i of n: label, step k of N, about T left', or how the grid ended."""
    p = session.progress
    # A shared comparison says first whose figures these are; one in line, its place only.
    lines, only = classroom.status_lines(session, lang)
    if only and not finished:
        return "\n\n".join(lines)
    if finished:
        stopped = [r for r in session.runs if r["status"] == "stopped"]
        if stopped:
            s = stopped[-1]["summary"]
            lines.append(
                t(
                    "status_stopped",
                    lang,
                    label=shown(s.get("label", "")),
                    step=s.get("steps", 0),
                    steps=(stopped[-1]["config"] or {}).get("steps", "?"),
                )
            )
        elif session.stop_requested:
            lines.append(t("status_stopped_plain", lang))
        else:
            counts: dict[str, int] = {}
            for r in session.runs:
                counts[r["status"]] = counts.get(r["status"], 0) + 1
            detail = ", ".join(t(f"status_count_{k}", lang, count=n) for k, n in counts.items())
            lines.append(t("status_done", lang, count=len(session.runs), detail=detail or "0"))
    elif session.stop_requested:
        # Once the worker has reported the stopped run, say so (Stop's own reply already did).
        lines.append(stopped_text(session.runner, lang) or t("status_stopping", lang))
    elif p.get("phase") == "running" and p.get("steps"):
        i, n, step, steps = p["index"], p["total"], p.get("step", 0), p["steps"]
        left = _left(session)
        if left is not None:
            lines.append(
                t(
                    "status_running",
                    lang,
                    i=i + 1,
                    n=n,
                    label=shown(p["label"]),
                    step=step,
                    steps=steps,
                    left=_duration(left, lang),
                )
            )
        else:
            lines.append(t("status_preparing", lang, i=i + 1, n=n, label=shown(p["label"])))
    else:
        lines.append(
            t(
                "status_preparing",
                lang,
                i=p.get("index", 0) + 1,
                n=p.get("total", 1),
                label=shown(p.get("label", "")),
            )
        )
        left = _left(session)
        if session.plan is None:
            lines.append(shown(message("calibrating", {}, lang)))
        elif left is not None:
            lines.append(t("status_eta", lang, left=_duration(left, lang)))
    if finished and session.runs:
        # What the runs themselves measured (speed vs fp32, memory): the load on a shared
        # machine may have changed since the calibration, so its sentences give way to these.
        from ...runs.plan import memory_notes, run_speed_notes

        summaries = session.summaries()
        speed = run_speed_notes(summaries)
        compared = {n.args["precision"] for n in speed if "precision" in n.args}
        # A precision no run could be compared for (a grid without its fp32 run) keeps what the
        # calibration measured, rather than losing its only speed sentence at the end.
        ran = {s.get("precision") for s in summaries}
        plan_notes = session.plan.notes if session.plan is not None else []
        kept = [
            n
            for n in plan_notes
            if n["key"].startswith("speed_")
            and (n.get("args") or {}).get("precision") in ran - compared
        ]
        # Engine sentences about the runs (a loaded file's names among them): shown as text.
        lines += [shown(message(n["key"], n.get("args") or {}, lang)) for n in kept]
        lines += [shown(message(n.key, n.args, lang)) for n in [*speed, *memory_notes(summaries)]]
        # "Ran in fp32" (fp16 through Accelerate or the Trainer on a CPU) in the status itself,
        # not only in the table's warnings column.
        for s in summaries:
            if s.get("speed_reason") == "ran_fp32":
                for w in s.get("warning_keys") or []:
                    if w.get("key") == "fp16_not_applied":
                        text = message(w["key"], w.get("args") or {}, lang)
                        lines.append(shown(f"{s.get('label')}: {text}"))
    elif session.plan is not None:
        # What the calibration measured, said before the runs and while they go; once the runs
        # step at another pace than measured (the load changed), the expectation gives way to
        # the re-estimate and its reason: never "12 min left" beside "about 60 s in all".
        from ...runs.plan import eta_note

        revised = eta_note(session.estimate) if session.estimate is not None else None
        notes = [n for n in session.plan.notes if revised is None or n["key"] != "plan_expect"]
        notes += [revised.to_dict()] if revised is not None else []
        lines += [shown(message(n["key"], n.get("args") or {}, lang)) for n in notes]
        if p.get("kept_steps"):  # a preset's steps are its lesson: the time is said instead
            lines.append(t("status_kept_steps", lang, steps=p["kept_steps"]))
    for label, note in session.errors:
        err = error_text(_note_error(note), lang)
        lines.append(t("status_run_failed", lang, label=shown(label), error=shown(err)))
    if session.files_error:  # the downloads failed to write: the runs above are all here
        lines.append(t("status_files_failed", lang, error=shown(session.files_error)))
    return "\n\n".join(lines)


def _left(session: Session) -> float | None:
    """Seconds left for the whole grid: the calibrated estimate refined by measured speeds."""
    est = session.estimate
    if est is not None:
        return est.remaining_s()
    step_s, p = session.progress.get("step_s"), session.progress
    if step_s and p.get("steps"):  # no calibration (it failed): the current run's own speed
        return (p["steps"] - p.get("step", 0)) * step_s
    return None


def _note_error(note: dict[str, Any]) -> MpdemoError:
    return MpdemoError(note.get("key", "failed"), **(note.get("args") or {}))


# --- validation ------------------------------------------------------------------------------


def check_inputs(values: dict[str, Any], limits: Limits | None = None) -> list[RunConfig]:
    """The validated grid of RunConfigs from the controls' values (by name), or MpdemoError.

    Cheap checks first, preflight (imports torch) last. Out-of-range numbers are refused with
    the CLI's message, never clamped.
    """
    lim = limits or Limits.from_env()
    v = {**DEFAULTS, **values}
    # The page's boxes and an API caller's values, by the CLI's rule (mpdemo.config): text,
    # NaN, infinities and fractions in whole-number fields are refused, never rounded.
    model = coerce_field("model", v.get("model"), lim)
    for name in controls.NAMES:
        if name not in controls.UI_ONLY and name in v:
            v[name] = coerce_field(name, v[name], lim, model if isinstance(model, str) else None)
    for name, allowed in (("backends", BACKENDS), ("precisions", PRECISIONS)):
        got = v.get(name)  # an API caller may send 5 or [["x"]]: one line, not a traceback
        if got is not None and (
            not isinstance(got, (list, tuple)) or not all(isinstance(x, str) for x in got)
        ):
            raise ConfigError(
                "unknown_choice",
                field=name.removesuffix("s"),
                allowed=", ".join(allowed),
                value=got,
            )
    if not v["backends"]:
        raise ConfigError("empty_choice", field="backend", allowed=", ".join(BACKENDS))
    v["precisions"] = with_fp8(v)  # fp8: its own box (controls.py)
    if not v["precisions"]:
        raise ConfigError("empty_choice", field="precision", allowed=", ".join(PRECISIONS))
    base = RunConfig(**controls.config_fields(v))
    configs = grid(base, v["backends"], v["precisions"], bool(v["compare_scaling"]))
    for cfg in configs:
        cfg.validate(lim)
    entry = MODELS.get(base.model)
    if entry is None or entry.task != "regression":  # amp-mlp ignores the data settings
        sizes = system.split_sizes(base.dataset)
        for spec in (base.train_slice, base.eval_slice):
            got = system.slice_rows(spec, sizes)  # torch-free: a typo errors at once
            if got is not None and got[0] == 0:
                raise ConfigError("empty_slice", value=spec, split=spec.split("[")[0], rows=got[1])
    from ...engine.core import preflight  # imports torch: fine once the cheap checks passed

    for cfg in configs:
        preflight(cfg, lim)
    return configs


# --- the streamed outputs --------------------------------------------------------------------


def _file_updates(session: Session, table_changed: bool) -> dict[str, Any]:
    if not table_changed:
        return {}
    files = session.write_files()
    if not files and session.files_error:  # the status says why; no stale file is offered
        off = gr.update(value=None, interactive=False)
        return {"csv": off, "json": off}
    if not files:
        return {}
    return {
        "csv": gr.update(value=files["csv"], interactive=True),
        "json": gr.update(value=files["json"], interactive=True),
    }


def header_widths(headers: list[str], base: list[str] | None = None) -> list[str]:
    """Column widths (px) wide enough for each header's longest word in its language.

    The table wraps headers at spaces; a word wider than its column was broken mid-word
    ("pérdid a"), so each column is at least its longest word wide.
    """
    base = base or [*SUMMARY_WIDTHS, *COLUMN_WIDTHS[len(SUMMARY_WIDTHS) :]]
    out = []
    for i, h in enumerate(headers):
        px = int(str(base[i]).removesuffix("px")) if i < len(base) else 80
        longest = max((len(w) for w in str(h).split()), default=0)
        out.append(f"{max(px, round(CHAR_PX * longest) + HEADER_PAD_PX)}px")
    return out


# The first columns' widths (px), through the warnings: at 1400 px the results column is about
# 880 px wide and these fit in it (the warnings wrap in their own 210 px, not a letter a line).
SUMMARY_WIDTHS = ["116px", "74px", "90px", "70px", "54px", "60px", "58px", "58px", "60px",
                  "54px", "200px"]  # fmt: skip
# A header letter at the page's 13 px (app.py CSS; 'samples/s' is 71 px of text), and what
# sits around a header's text: the cell's and its wrap's padding (app.py CSS) and the gap before
# the hidden menu button (4 px), measured in chromium, plus 2 px to spare.
CHAR_PX, HEADER_PAD_PX = 8.0, 20


def _frame(
    session: Session, lang: str, table_changed: bool, finished: bool = False
) -> dict[str, Any]:
    # The files first: a failed write is said in this frame's status.
    files = _file_updates(session, table_changed)
    out: dict[str, Any] = {"status": status_text(session, lang, finished=finished)}
    out.update(plot_frames(session))
    if table_changed:
        out["summary"] = session.table(lang)
        out["repeats"] = repeat_table(session, lang)
        out.update(files)
    if finished:
        empty = scale_empty_text(lang, session.configs, True, session)
        if empty:
            out["scale"] = gr.update(visible=False)
            out["scale_empty"] = gr.update(value=empty, visible=True)
    return out


def train(
    values: dict[str, Any] | None = None,
    lang: str = DEFAULT_LANG,
    session: Session | None = None,
    steps_origin: str = "default",
    mode: Any = "train",
) -> Iterator[dict[str, Any]]:
    """Train the grid in a background thread; stream status, plots, table and files by name.

    steps_origin: who set the Steps box last ("default", "typed", "preset"; STEPS_ORIGINS):
    only the page's own default is fitted to the time budget.
    mode: "train" (watch the same comparison when another visitor runs it), "own" (Run my
    own: a new one, never shared) or a classroom.Follow (a teacher's board).
    """
    lang = norm_lang(lang)
    session = session if session is not None else Session()
    v = {**DEFAULTS, **{k: x for k, x in (values or {}).items() if k in DEFAULTS}}
    # Runs hidden from the plots stay hidden (a recorded one, or a kind the new grid has too).
    hidden = session.view.hidden if session.view is not None else ()
    session.view = View.of(v["smoothing"], v["x_axis"], hidden)
    session.armed = False
    if session.stop_requested:  # Stop was pressed while this click waited in the queue
        session.stop_requested = False
        yield {"status": t("status_stopped_plain", lang)}
        return
    try:
        board = classroom.picked(mode)  # following a board: the teacher's comparison
        configs = board.configs if board else check_inputs(v)
        repeat = board.repeat if board else check_repeat(v.get("repeat"))
        # The default comparison (steps as the page opened) is fitted to about a minute on this
        # machine. Steps a person typed, or a preset set (its lesson needs them), always stand:
        # then the status says how long they take instead.
        fit = FIT_DEFAULT_S if fits(steps_origin, v["steps"]) else None
        # The same comparison run (or lately run) on this server is watched, not trained again;
        # a new one waits its turn in the server's line (classroom.py, mpdemo/classroom/broadcast.py).
        runner = classroom.runner_for(session, configs, repeat, fit, mode)
    except MpdemoError as err:
        session.input_error = err
        text = error_text(err, lang)
        # The toast fades; the status keeps saying what failed until the next click. Both show
        # the visitor's own input as text (the toast renders HTML).
        yield {"status": t("status_not_started", lang, error=shown(text)), **settle(session)}
        raise gr.Error(esc(text, quote=False), title="mpdemo", print_exception=False) from None

    session.input_error = None
    session.begin(repeated(configs, repeat))  # every repetition's run has its line and row
    if steps_origin == "preset":
        session.progress["kept_steps"] = v["steps"]
    session.runner = runner
    runner.start()
    try:
        # Plots None first: each LinePlot rebuilds its colour domain from the next frame,
        # which carries a placeholder for every series of this grid (see plots.py).
        yield {
            "status": status_text(session, lang),
            **grid_start(session, lang),
            "summary": empty_table(lang),
            "repeats": repeat_table(session, lang),
            **recorded_ui.script_updates(session),
        }
        last = time.monotonic()
        table_changed = False
        for ev in runner.events(timeout=YIELD_EVERY_S):
            first_step = ev is not None and ev.kind == "step" and not _has_steps(session, ev.label)
            if ev is not None and session.apply(ev):
                table_changed = True
            if ev is not None and ev.kind == "plan" and ev.steps is not None:
                # Fewer steps per run than the plots were laid out for: lay them out again,
                # and write the script again (the first one had the steps asked for).
                yield {
                    "status": status_text(session, lang),
                    **grid_start(session, lang),
                    **recorded_ui.script_updates(session),
                }
                # The axis change empties the charts: the first point must not land in that
                # moment (gradio 6.31 draws the old data, then nothing), so let them settle.
                time.sleep(AXIS_SETTLE_S)
            # A run's first step goes out at once, whatever the throttle: the status and its
            # point on the loss plot arrive in the same message.
            if first_step or time.monotonic() - last >= YIELD_EVERY_S:
                yield _frame(session, lang, table_changed)
                table_changed = False
                last = time.monotonic()
        # The stream's last message is what /train returns to an API caller: the status, the
        # plots and the table.
        yield {**_frame(session, lang, True, finished=True), **settle(session)}
    finally:
        # Tab closed or job cancelled: gradio closes this generator; end the worker too.
        runner.stop()


STEPS_ORIGINS = ("default", "typed", "preset")  # who set the Steps box last


def _has_steps(session: Session, label: str) -> bool:
    series = session.series.get(label)
    return series is not None and bool(series.step)


def fits(steps_origin: str, steps: Any) -> bool:
    """Whether the grid is fitted to about a minute: only the steps the page opened with."""
    return steps_origin == "default" and steps == DEFAULTS["steps"]


def check_repeat(value: Any) -> int:
    """The Repeat box's value as a whole number of repetitions, or the keyed refusal."""
    c = controls.BY_NAME["repeat"]
    lo, hi = int(c.lo or 1), int(c.upper(Limits()) or 1)
    n = controls.whole(value)
    if isinstance(n, bool) or not isinstance(n, int) or not lo <= n <= hi:
        raise ConfigError(
            "bad_number",
            field="repeat",
            rule={"key": "rule_whole", "args": {"lo": lo, "hi": hi}},
            value=value,
        )
    return n


STOP_WAIT_S = 15.0  # how long Stop waits for the worker to finish its step


def stop(session: Session, lang: str) -> str:
    """Stop button: end the current run within a step (cancels= alone would not)."""
    lang = norm_lang(lang)
    runner = session.runner
    if (runner is None or not runner.alive) and not session.armed:
        # Nothing runs and no click waits: say so, and do not swallow the next click.
        return t("status_nothing_to_stop", lang)
    session.stop_requested = True
    if runner is None or not runner.alive:  # a click waits in the queue: it will not start
        return t("status_stopped_plain", lang)
    runner.stop()
    # Answer with the outcome, not only "stopping": the training's own stream may lag behind.
    if not runner.join(STOP_WAIT_S):
        return t("status_stopping", lang)
    return stopped_text(runner, lang) or t("status_stopped_plain", lang)


def stopped_text(runner: Any, lang: str) -> str | None:
    """'Stopped: label stopped at step k of N...' from the worker's own summaries, else None."""
    stopped = [s for s in (runner.summaries if runner else []) if s.get("status") == "stopped"]
    if not stopped:
        return None
    s = stopped[-1]
    steps = next((c.steps for c in runner.configs if c.label == s.get("label")), "?")
    label = shown(s.get("label", ""))
    return t("status_stopped", lang, label=label, step=s.get("steps", 0), steps=steps)


def arm(session: Session, lang: str) -> dict[str, Any]:
    """Runs on each Train click before the (possibly queued) training: forget an old Stop."""
    session.stop_requested = False
    session.armed = True
    out: dict[str, Any] = {"stop_btn": gr.update(interactive=True)}
    # While this session trains, a new click waits for it; otherwise keep the status as it is
    # (train() itself says what it does, or what was wrong with the input).
    if session.running:
        out["status"] = t("status_queued", norm_lang(lang))
    return out


def settle(session: Session) -> dict[str, Any]:
    """After a training (or its input error): Stop is off unless another click waits.

    Part of train()'s own last frame: a chained .then() did not run after a gr.Error here.
    """
    return {"stop_btn": gr.update(interactive=session.running or session.armed)}


def script_for_run(session: Session, label: str | None) -> Any:
    """The reproduction script of the chosen run, as a file for the download button."""
    path = session.script_file(label) if label else None
    return gr.update(value=path, interactive=path is not None)


def idle_status(session: Session | None, lang: str) -> str:
    """The status line of a session that is not training, in `lang`."""
    if session is not None and session.input_error is not None:
        return t("status_not_started", lang, error=shown(error_text(session.input_error, lang)))
    if session is not None and session.runs:
        return status_text(session, lang, finished=True)
    return t("status_idle", lang)


def redraw(
    session: Session | None, lang: str, smoothing: Any, x_axis: Any
) -> Iterator[dict[str, Any]]:
    """A view control changed: redraw the plots (a running training redraws on its own)."""
    if session is None:
        return
    hidden = session.view.hidden if session.view is not None else ()
    view = View.of(smoothing, x_axis, hidden)
    axis_changed = session.view is None or session.view.x_axis != view.x_axis
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
    """A click in the legend: {'run': label} hides or shows that run, {'remove': key} closes
    that opened file (its lines and rows go; the browser's store follows the table)."""
    if session is None:
        return
    if data.get("remove") is not None:
        name = next(
            (r.recording.name for r in session.recordings if file_key(r) == data["remove"]), None
        )
        if name is None or not remove_file(session, str(data["remove"])):
            return
        out = {
            **plot_updates(session, lang, rebuild=True),
            "summary": session.table(lang),
            "status": t("status_file_closed", lang, name=shown(name)),
        }
        yield out
        time.sleep(AXIS_SETTLE_S)  # colours and axes first, the data after (see frames.py)
        yield plot_frames(session)
        return
    if not toggle_run(session, str(data.get("run") or "")):
        return
    out = {"legend": run_legend(session, lang)}
    # While a training runs its own next frame draws the change; otherwise draw it here.
    if not session.running:
        out.update(plot_frames(session))
    yield out


def scale_preview(
    session: Session | None, lang: str, precisions: list[str] | None, scaling: Any, compare: Any
) -> dict[str, Any]:
    """Before any grid: the loss-scale plot's place says whether the ticked grid has a scaler."""
    if session is not None and session.configs:
        return {}  # a grid's plots are on screen: they stay until the next one
    probe = grid(RunConfig(loss_scaling=bool(scaling)), ["torch"], precisions or [], bool(compare))
    empty = "" if scaled_labels(probe) else t("scale_empty_none", lang)
    return {
        "scale": gr.update(visible=not empty),
        "scale_empty": gr.update(value=empty, visible=bool(empty)),
    }


# --- wiring helpers ----------------------------------------------------------------------------


def train_endpoint(comps: dict[str, Any]) -> Callable[..., Iterator[dict[Any, Any]]]:
    """train() as gradio calls it: one parameter per control (named, defaulted), then the
    language and the session; every frame keyed by component."""

    def handler(*args: Any) -> Iterator[dict[Any, Any]]:
        *vals, lang, session, origin = args
        values = dict(zip(controls.NAMES, vals, strict=True))
        for frame in train(values, lang, session, origin or "default"):
            yield keyed(comps, frame)

    kind = inspect.Parameter.POSITIONAL_OR_KEYWORD
    params = [inspect.Parameter(n, kind, default=DEFAULTS[n]) for n in controls.NAMES]
    params += [
        inspect.Parameter("lang", kind, default=DEFAULT_LANG),
        inspect.Parameter("session", kind, default=None),
        inspect.Parameter("steps_origin", kind, default="default"),
    ]
    handler.__signature__ = inspect.Signature(params)  # type: ignore[attr-defined]
    handler.__name__ = "train"
    handler.__doc__ = train.__doc__
    return handler


# --- layout ----------------------------------------------------------------------------------


def _close_session(session: Session | None) -> None:
    # gradio calls this when the session's state expires (tab closed + its TTL).
    if session is not None:
        session.close()


def _controls_of(section: str, comps: dict[str, Any], lang: str, lim: Limits) -> None:
    """Build the controls of one section in table order; same `row` → one gr.Row."""
    specs = [c for c in CONTROLS if c.section == section]
    i = 0
    while i < len(specs):
        row = specs[i].row
        group = [specs[i]]
        while row is not None and i + len(group) < len(specs) and specs[i + len(group)].row == row:
            group.append(specs[i + len(group)])
        if row is None:
            comps[specs[i].name] = controls.build(specs[i], lang, lim)
        else:
            with gr.Row():
                for c in group:
                    comps[c.name] = controls.build(c, lang, lim)
        i += len(group)


def _plot(spec: Any, lang: str, cmap: dict[str, str]) -> gr.LinePlot:
    # The title is drawn by Vega, not as the block label: gradio 6.31 sizes the chart to the
    # block's height and the label's extra height pushed the legend out of view.
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
        visible=not (spec.scale and _opening_scale_empty(lang)),
    )


def _opening_scale_empty(lang: str) -> str:
    cfgs = grid(RunConfig(), DEFAULTS["backends"], DEFAULTS["precisions"], False)
    return "" if scaled_labels(cfgs) else t("scale_empty_none", lang)


def build_train_tab(ctx: Any) -> None:
    """Controls on the left; buttons, status, view controls, plots, summary, downloads right."""
    lang0 = DEFAULT_LANG
    lim: Limits = ctx.limits
    cmap = color_map()
    zerogpu.setup()  # on a ZeroGPU Space: register the GPU function before launch
    comps: dict[str, Any] = {}
    with gr.Tab(t("tab_train", lang0), id="train", elem_id="train-tab") as tab:
        ctx.i18n(tab, label="tab_train")
        # Inside the Tab: a component directly under gr.Tabs would get a tab of its own.
        session = gr.State(Session(), delete_callback=_close_session)
        # Who set the Steps box last (STEPS_ORIGINS): typing it, or a preset, keeps its value.
        steps_origin = gr.State("default")
        with gr.Row(equal_height=False):
            with gr.Column(scale=1, min_width=300):
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
            with gr.Column(scale=3):
                # Not equal_height: a status of several lines stretched the buttons to its height.
                with gr.Row(equal_height=False, elem_id="status-row"):
                    comps["status"] = gr.Markdown(
                        t("status_idle", lang0), elem_id="status", min_height=44
                    )
                    comps["start_btn"] = ctx.i18n(
                        gr.Button(
                            t("start_btn", lang0),
                            variant="primary",
                            elem_id="start-btn",
                            scale=0,
                            min_width=140,
                        ),
                        value="start_btn",
                    )
                    # Off while idle: there is nothing to stop until Train is pressed.
                    comps["stop_btn"] = ctx.i18n(
                        gr.Button(
                            t("stop_btn", lang0),
                            variant="stop",
                            elem_id="stop-btn",
                            scale=0,
                            min_width=110,
                            interactive=False,
                        ),
                        value="stop_btn",
                    )
                    classroom.build_button(ctx, comps, lang0)  # Run my own
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
                                empty = _opening_scale_empty(lang0)
                                comps["scale_empty"] = gr.Markdown(
                                    empty,
                                    visible=bool(empty),
                                    elem_id="scale-empty",
                                    container=True,
                                    padding=True,
                                    min_height=PLOT_HEIGHT,
                                )
                # Below the plots, not a LinePlot caption: that is clipped by the block height.
                ctx.i18n(
                    gr.Markdown(t("scale_caption", lang0), elem_id="scale-note"),
                    value="scale_caption",
                )
                table0 = empty_table(lang0)
                comps["summary"] = ctx.i18n(
                    gr.DataFrame(
                        table0,
                        label=t("summary_label", lang0),
                        elem_id="summary",
                        interactive=False,
                        wrap=True,
                        pinned_columns=1,
                        max_height=420,
                        column_widths=header_widths(list(table0.columns)),
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
                with gr.Row(equal_height=True):
                    comps["csv"] = ctx.i18n(
                        gr.DownloadButton(
                            t("csv_btn", lang0),
                            interactive=False,
                            elem_id="csv-download",
                            size="md",
                        ),
                        label="csv_btn",
                    )
                    comps["json"] = ctx.i18n(
                        gr.DownloadButton(
                            t("json_btn", lang0),
                            interactive=False,
                            elem_id="json-download",
                            size="md",
                        ),
                        label="json_btn",
                    )
                    comps["script_run"] = ctx.i18n(
                        gr.Dropdown(
                            [],
                            label=t("script_run_label", lang0),
                            elem_id="script-run",
                            interactive=True,
                        ),
                        label="script_run_label",
                    )
                    comps["script_btn"] = ctx.i18n(
                        gr.DownloadButton(
                            t("script_btn", lang0),
                            interactive=False,
                            elem_id="script-download",
                            size="md",
                        ),
                        label="script_btn",
                    )
                # Compare with a recorded run, open a runs file, Clear runs (recorded_ui.py).
                recorded_ui.build_row(ctx, comps, lang0)
                # The class board: publish this page's comparisons, or follow a teacher's code.
                classroom.build_board(ctx, comps, lang0)

    ctx.shared["train_controls"] = {c.name: comps[c.name] for c in CONTROLS}
    ctx.shared["train_status"] = comps["status"]
    ctx.shared["train_session"] = session
    ctx.shared["train_steps_origin"] = steps_origin  # a preset's steps stand (app.py)
    # Their changes say the session's runs changed (the Code tab shows those runs' own code).
    ctx.shared["train_summary"] = comps["summary"]
    ctx.shared["train_script_run"] = comps["script_run"]
    _wire(ctx, comps, session, lim, steps_origin)
    recorded_ui.wire(ctx, comps, session)
    classroom.wire(ctx, comps, session, steps_origin, train, arm)


def _wire(
    ctx: Any, comps: dict[str, Any], session: gr.State, lim: Limits, steps_origin: gr.State
) -> None:
    """Every event of the Train tab."""
    lang = ctx.lang
    quiet: dict[str, Any] = {
        "concurrency_limit": None,
        "api_visibility": "undocumented",
        "show_progress": "hidden",
    }
    armed_out = ["status", "stop_btn"]
    armed = comps["start_btn"].click(
        by_component(comps, arm, armed_out),
        [session, lang],
        [comps[n] for n in armed_out],
        **quiet,
    )
    trained = armed.then(
        train_endpoint(comps),
        [*(comps[n] for n in controls.NAMES), lang, session, steps_origin],
        [comps[n] for n in OUTPUTS],
        api_name="train",
        # The values as sent: gradio's Number rounds 2.5 steps to 2 and fails on "abc" in
        # English; check_inputs refuses both by the CLI's rule, in the page's language.
        preprocess=False,
        # Many at once: the server's line (classroom.py) still trains one grid at a time, and
        # the pages that wait or watch a shared comparison stream meanwhile.
        concurrency_limit=classroom.concurrency(),
        concurrency_id=classroom.CONCURRENCY_ID,
        show_progress="minimal",
        show_progress_on=[comps["status"]],
    )
    # A number typed into Steps stands: the grid is no longer fitted to the time budget.
    comps["steps"].input(lambda: "typed", None, [steps_origin], **quiet)
    legend_names = [*(p.name for p in PLOTS), "legend", "summary", "status"]

    def on_legend(sess: Session, lg: str, evt: gr.EventData) -> Iterator[dict[Any, Any]]:
        for out in legend_click(sess, norm_lang(lg), getattr(evt, "_data", None) or {}):
            yield keyed(comps, out, legend_names)

    comps["legend"].click(on_legend, [session, lang], [comps[n] for n in legend_names], **quiet)
    comps["stop_btn"].click(
        stop,
        [session, lang],
        [comps["status"]],
        queue=False,  # never waits behind training, never counts against the queue's size
        api_name="stop",
        show_progress="hidden",
    )

    def preview_fn(lang: str, *args: Any) -> str:
        return slice_preview(norm_lang(lang), *args)

    preview_names = ("model", "dataset", "train_slice", "eval_slice")
    for name in preview_names:
        comps[name].change(
            preview_fn, [lang, *(comps[n] for n in preview_names)], [comps["preview"]], **quiet
        )

    def note_fn(lang: str, precs: list[str], dev: str, sess: Session) -> str:
        return precision_note(norm_lang(lang), precs, dev, sess)

    note_inputs = [lang, comps["precisions"], comps["device"], session]
    note_args = (note_inputs, [comps["precision_note"]])
    for name in ("precisions", "device"):
        comps[name].change(
            note_fn,
            *note_args,
            concurrency_limit=1,
            api_visibility="undocumented",
            show_progress="hidden",
        )
    # A Train click measures the step: say what it measured under the boxes, as they promise.
    trained.then(note_fn, *note_args, api_visibility="undocumented", show_progress="hidden")
    comps["device"].change(
        lambda lang, dev: gr.update(info=precision_info(norm_lang(lang), dev)),
        [lang, comps["device"]],
        [comps["precisions"]],
        **quiet,
    )
    comps["script_run"].input(
        script_for_run, [session, comps["script_run"]], [comps["script_btn"]], **quiet
    )

    plot_outputs = [comps[p.name] for p in PLOTS]
    view_inputs = [session, lang, *(comps[n] for n in controls.VIEW_NAMES)]
    view_names = [*(p.name for p in PLOTS), "legend"]
    view_outputs = [comps[n] for n in view_names]

    def on_view(sess: Session, lg: str, *vals: Any) -> Iterator[dict[Any, Any]]:
        for out in redraw(sess, norm_lang(lg), *vals):
            yield keyed(comps, out, view_names)

    for name in controls.VIEW_NAMES:
        comps[name].change(on_view, view_inputs, view_outputs, **quiet)
    grid_names = ("precisions", "loss_scaling", "compare_scaling")
    scale_names = ["scale", "scale_empty"]
    for name in grid_names:
        comps[name].change(
            by_component(
                comps, lambda s, lg, *vals: scale_preview(s, norm_lang(lg), *vals), scale_names
            ),
            [session, lang, *(comps[n] for n in grid_names)],
            [comps[n] for n in scale_names],
            **quiet,
        )

    labelled = [c for c in CONTROLS]

    def on_lang(lang: str, sess: Session, dev: str, *preview_args: Any) -> list[Any]:
        hub = system.hub_status()
        has_rows = sess is not None and (sess.runs or sess.recordings)  # recorded rows too
        table = sess.table(lang) if has_rows else empty_table(lang)
        out: list[Any] = []
        for c in labelled:
            props = controls.relabel(c, lang, lim, hub)
            if c.name == "precisions":
                props["info"] = precision_info(lang, dev)
            if c.name == "fp8":  # fp8: enabled or not, and why, on this machine
                props.update(fp8_box(lang))
            out.append(gr.update(**props))
        view = (sess.view if sess is not None else None) or View()
        total = max((c.steps for c in sess.configs), default=DEFAULTS["steps"]) if sess else 1
        for spec in PLOTS:
            # The label too: hidden (show_label=False) but still the plot's accessible name.
            props = {
                "label": t(spec.title, lang),
                "title": t(spec.title, lang),
                "y_title": t(spec.y_title, lang),
            }
            if spec.wall_clock:
                props["x_title"] = x_props(view, lang, total)["x_title"]
            else:
                props["x_title"] = t("x_step", lang)
            out.append(gr.update(**props))
        running = sess is not None and sess.running
        empty = (
            scale_empty_text(lang, sess.configs, not running, sess)
            if sess is not None and sess.configs
            else _opening_scale_empty(lang)
        )
        out += [
            slice_preview(lang, *preview_args),
            gr.update(value=table, column_widths=header_widths(list(table.columns))),
            gr.skip() if running else idle_status(sess, lang),
            gr.update(value=empty) if empty else gr.skip(),
            run_legend(sess, lang),
        ]
        return out

    lang_outputs = [
        *(comps[c.name] for c in labelled),
        *plot_outputs,
        comps["preview"],
        comps["summary"],
        comps["status"],
        comps["scale_empty"],
        comps["legend"],
    ]
    lang_inputs = [session, comps["device"], *(comps[n] for n in preview_names)]
    ctx.on_language(on_lang, lang_inputs, lang_outputs)

    # The measured speeds under the precisions, in the new language too.
    ctx.on_language(
        note_fn, [comps["precisions"], comps["device"], session], [comps["precision_note"]]
    )

    def on_load(lang: str, *preview_args: Any) -> list[Any]:
        hub = system.hub_status(wait=2.0)  # started at build time; usually answered by now
        return [
            gr.update(choices=model_choices(lang, hub)),
            gr.update(choices=dataset_choices(lang, hub)),
            gr.update(choices=system.device_choices()),
            slice_preview(lang, *preview_args),
        ]

    def machine_fn(lang: str) -> str:
        return machine_text(norm_lang(lang))

    # Separate from on_load: reading the flags imports torch, which must not hold up the menus.
    ctx.on_load(machine_fn, [], [comps["machine"]])
    ctx.on_load(lambda lang: gr.update(**fp8_box(norm_lang(lang))), [], [comps["fp8"]])
    ctx.on_language(machine_fn, [], [comps["machine"]])
    ctx.on_load(
        on_load,
        [comps[n] for n in preview_names],
        [comps["model"], comps["dataset"], comps["device"], comps["preview"]],
    )
