"""The Train tab: controls → RunConfig grid → Runner → streamed plots, status, table, files."""

from __future__ import annotations

import time
from collections.abc import Iterator
from typing import Any

import gradio as gr
import pandas as pd

from ..catalog import DATASETS, DEFAULT_DATASET, DEFAULT_MODEL, MODELS, PRECISIONS
from ..config import Limits, RunConfig
from ..messages import ConfigError, MpdemoError
from ..registry import BACKENDS
from ..runner import Runner, grid
from . import system
from .i18n import DEFAULT_LANG, error_text, norm_lang, t
from .plots import color_map, line_frame, scale_frame
from .session import COLUMN_WIDTHS, Session

YIELD_EVERY_S = 0.2  # at most ~5 updates a second: smooth, and cheap for the browser
BACKEND_CHOICES = [(b.display, b.name) for b in BACKENDS.values()]
DEFAULTS: dict[str, Any] = {
    "model": DEFAULT_MODEL,
    "dataset": DEFAULT_DATASET,
    "train_slice": "train[:2000]",
    "eval_slice": "validation[:500]",
    "backends": ["torch"],
    "precisions": ["fp32", "bf16"],
    "device": "auto",
    "steps": 100,
    "batch_size": 32,
    "lr": 1e-3,
    "seed": 0,
    "loss_scaling": True,
    "init_scale": 65536.0,
    "growth_interval": 2000,
    "compare_scaling": False,
}
PLOT_HEIGHT = 300
SKIP_SUFFIXES = ("skipped", "omitido")


# --- choices and previews (torch-free) -------------------------------------------------------


def model_choices(lang: str, hub: bool | None) -> list[tuple[str, str]]:
    """Dropdown entries: 'name · description (~params)', Hub entries flagged when offline."""
    out = []
    for m in MODELS.values():
        text = f"{m.name} · {m.description} ({t('params_approx', lang, params=system.fmt_params(m.approx_params))})"
        if not m.builtin and hub is False:
            text += f" · {t('needs_internet', lang)}"
        out.append((text, m.name))
    return out


def dataset_choices(lang: str, hub: bool | None) -> list[tuple[str, str]]:
    """Dropdown entries for the catalog's datasets, Hub entries flagged when offline."""
    out = []
    for d in DATASETS.values():
        text = f"{d.name} · {d.description}"
        if not d.builtin and hub is False:
            text += f" · {t('needs_internet', lang)}"
        out.append((text, d.name))
    return out


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
    """The line under the precision boxes: on a CPU, fp16 is slow and bf16 is the fast path."""
    return t("precision_info_cpu" if system.trains_on_cpu(device) else "precision_info_gpu", lang)


def precision_note(lang: str, precisions: list[str] | None, device: str | None) -> Iterator[str]:
    """When fp16 is ticked for a CPU run, the measured fp16 slowdown (imports torch, cached)."""
    if "fp16" not in (precisions or []) or not system.trains_on_cpu(device):
        yield ""
        return
    yield t("fp16_probe_running", lang)
    from ..precision import cpu_fp16_slowdown  # torch: only now that fp16 was ticked

    ratio = cpu_fp16_slowdown()
    yield t("fp16_probe" if ratio > 1.5 else "fp16_probe_fast", lang, ratio=ratio)


# --- validation ------------------------------------------------------------------------------


def _whole(x: Any) -> Any:
    # Sliders and Numbers send floats; RunConfig.validate wants ints and reports anything else.
    if isinstance(x, float) and x.is_integer():
        return int(x)
    return x


def _number(x: Any) -> Any:
    return float(x) if isinstance(x, int) and not isinstance(x, bool) else x


def check_inputs(
    model: str,
    dataset: str,
    train_slice: str,
    eval_slice: str,
    backends: list[str] | None,
    precisions: list[str] | None,
    device: str,
    steps: Any,
    batch_size: Any,
    lr: Any,
    seed: Any,
    loss_scaling: Any,
    init_scale: Any,
    growth_interval: Any,
    compare_scaling: Any = False,
    limits: Limits | None = None,
) -> list[RunConfig]:
    """The validated grid of RunConfigs, or MpdemoError; cheap checks first, preflight last."""
    lim = limits or Limits.from_env()
    if not backends:
        raise ConfigError("empty_choice", field="backend", allowed=", ".join(BACKENDS))
    if not precisions:
        raise ConfigError("empty_choice", field="precision", allowed=", ".join(PRECISIONS))
    base = RunConfig(
        model=(model or "").strip() if isinstance(model, str) else model,
        dataset=(dataset or "").strip() if isinstance(dataset, str) else dataset,
        train_slice=(train_slice or "").strip() if isinstance(train_slice, str) else train_slice,
        eval_slice=(eval_slice or "").strip() if isinstance(eval_slice, str) else eval_slice,
        device=device or "auto",
        steps=_whole(steps),
        batch_size=_whole(batch_size),
        lr=_number(lr),
        seed=_whole(seed),
        loss_scaling=bool(loss_scaling),
        init_scale=_number(init_scale),
        growth_interval=_whole(growth_interval),
    )
    configs = grid(base, backends, precisions, bool(compare_scaling))
    for cfg in configs:
        cfg.validate(lim)
    entry = MODELS.get(base.model)
    if entry is None or entry.task != "regression":  # amp-mlp ignores the data settings
        sizes = system.split_sizes(base.dataset)
        for spec in (base.train_slice, base.eval_slice):
            got = system.slice_rows(spec, sizes)  # torch-free: a typo errors at once
            if got is not None and got[0] == 0:
                raise ConfigError("empty_slice", value=spec, split=spec.split("[")[0], rows=got[1])
    from ..engine import preflight  # imports torch: fine once the cheap checks passed

    for cfg in configs:
        preflight(cfg, lim)
    return configs


# --- status line -----------------------------------------------------------------------------


def _duration(seconds: float, lang: str) -> str:
    m, s = system.fmt_duration(seconds)
    return t("time_min", lang, m=m, s=s) if m else t("time_s", lang, s=s)


def status_text(session: Session, lang: str, finished: bool = False) -> str:
    """'Run i of n: label, step k of N, about T left', or how the grid ended."""
    p = session.progress
    lines: list[str] = []
    if finished:
        stopped = [r for r in session.runs if r["status"] == "stopped"]
        if stopped:
            s = stopped[-1]["summary"]
            lines.append(
                t(
                    "status_stopped",
                    lang,
                    label=s.get("label", ""),
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
        step_s = p.get("step_s")
        if step_s:
            left = (steps - step) * step_s + (n - i - 1) * steps * step_s
            lines.append(
                t(
                    "status_running",
                    lang,
                    i=i + 1,
                    n=n,
                    label=p["label"],
                    step=step,
                    steps=steps,
                    left=_duration(left, lang),
                )
            )
        else:
            lines.append(t("status_preparing", lang, i=i + 1, n=n, label=p["label"]))
    else:
        lines.append(
            t(
                "status_preparing",
                lang,
                i=p.get("index", 0) + 1,
                n=p.get("total", 1),
                label=p.get("label", ""),
            )
        )
    for label, note in session.errors:
        err = error_text(_note_error(note), lang)
        lines.append(t("status_run_failed", lang, label=label, error=err))
    return "\n\n".join(lines)


def _note_error(note: dict[str, Any]) -> MpdemoError:
    return MpdemoError(note.get("key", "failed"), **(note.get("args") or {}))


# --- the streamed outputs --------------------------------------------------------------------


def _plots(
    session: Session,
) -> tuple[pd.DataFrame, pd.DataFrame | None, pd.DataFrame, pd.DataFrame]:
    labels = [c.label for c in session.configs]
    scaled = [c.label for c in session.configs if c.precision == "fp16"]
    return (
        line_frame(session.series, labels, "loss"),
        scale_frame(session.series, scaled, session.skip_suffix),
        line_frame(session.series, labels, "step_ms"),
        line_frame(session.series, labels, "samples_per_s"),
    )


def _file_updates(session: Session, table_changed: bool) -> list[Any]:
    if not table_changed:
        return [gr.skip(), gr.skip()]
    files = session.write_files()
    if not files:
        return [gr.skip(), gr.skip()]
    return [
        gr.update(value=files["csv"], interactive=True),
        gr.update(value=files["json"], interactive=True),
    ]


def empty_table(lang: str) -> pd.DataFrame:
    """The summary table before any run has finished (headers only)."""
    from .session import summary_table

    return summary_table([], lang)


def train(
    model: str = DEFAULTS["model"],
    dataset: str = DEFAULTS["dataset"],
    train_slice: str = DEFAULTS["train_slice"],
    eval_slice: str = DEFAULTS["eval_slice"],
    backends: list[str] | None = None,
    precisions: list[str] | None = None,
    device: str = DEFAULTS["device"],
    steps: float = DEFAULTS["steps"],
    batch_size: float = DEFAULTS["batch_size"],
    lr: float = DEFAULTS["lr"],
    seed: float = DEFAULTS["seed"],
    loss_scaling: bool = DEFAULTS["loss_scaling"],
    init_scale: float = DEFAULTS["init_scale"],
    growth_interval: float = DEFAULTS["growth_interval"],
    compare_scaling: bool = DEFAULTS["compare_scaling"],
    lang: str = DEFAULT_LANG,
    session: Session | None = None,
) -> Iterator[list[Any]]:
    """Train the grid in a background thread and stream plots, status, table and files."""
    lang = norm_lang(lang)
    session = session if session is not None else Session()
    backends = DEFAULTS["backends"] if backends is None else backends
    precisions = DEFAULTS["precisions"] if precisions is None else precisions
    if session.stop_requested:  # Stop was pressed while this click waited in the queue
        session.stop_requested = False
        yield [t("status_stopped_plain", lang), *[gr.skip()] * 9]
        return
    try:
        configs = check_inputs(
            model,
            dataset,
            train_slice,
            eval_slice,
            backends,
            precisions,
            device,
            steps,
            batch_size,
            lr,
            seed,
            loss_scaling,
            init_scale,
            growth_interval,
            compare_scaling,
        )
    except MpdemoError as err:
        raise gr.Error(error_text(err, lang), title="mpdemo", print_exception=False) from None

    runner = Runner(configs)
    session.begin(configs, t("skipped_suffix", lang))
    session.runner = runner
    runner.start()
    labels = [c.label for c in configs]
    try:
        script = session.script_file(labels[0])
        # None first: each LinePlot rebuilds its colour domain from the next frame, which
        # carries a placeholder for every run of this grid (see plots.py).
        yield [
            status_text(session, lang),
            None,
            None,
            None,
            None,
            empty_table(lang),
            gr.skip(),
            gr.skip(),
            gr.update(choices=labels, value=labels[0]),
            gr.update(value=script, interactive=script is not None),
        ]
        last = time.monotonic()
        table_changed = False
        for ev in runner.events(timeout=YIELD_EVERY_S):
            if ev is not None and session.apply(ev):
                table_changed = True
            if time.monotonic() - last >= YIELD_EVERY_S:
                yield _frame(session, lang, table_changed)
                table_changed = False
                last = time.monotonic()
        yield _frame(session, lang, True, finished=True)
    finally:
        # Tab closed or job cancelled: gradio closes this generator; end the worker too.
        runner.stop()


def _frame(session: Session, lang: str, table_changed: bool, finished: bool = False) -> list[Any]:
    loss, scale, step_ms, sps = _plots(session)
    return [
        status_text(session, lang, finished=finished),
        loss,
        scale,
        step_ms,
        sps,
        session.table(lang) if table_changed else gr.skip(),
        *_file_updates(session, table_changed),
        gr.skip(),
        gr.skip(),
    ]


STOP_WAIT_S = 15.0  # how long Stop waits for the worker to finish its step


def stop(session: Session, lang: str) -> str:
    """Stop button: end the current run within a step (cancels= alone would not)."""
    lang = norm_lang(lang)
    session.stop_requested = True
    runner = session.runner
    if runner is None or not runner.alive:
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
    return t("status_stopped", lang, label=s.get("label", ""), step=s.get("steps", 0), steps=steps)


def arm(session: Session, lang: str) -> Any:
    """Runs on each Train click before the (possibly queued) training: forget an old Stop."""
    session.stop_requested = False
    # While this session trains, a new click waits for it; otherwise keep the status as it is
    # (an input error shows as a toast and must not leave "checking..." behind).
    return t("status_queued", norm_lang(lang)) if session.running else gr.skip()


def script_for_run(session: Session, label: str | None) -> Any:
    """The reproduction script of the chosen run, as a file for the download button."""
    path = session.script_file(label) if label else None
    return gr.update(value=path, interactive=path is not None)


# --- layout ----------------------------------------------------------------------------------


def _close_session(session: Session | None) -> None:
    # gradio calls this when the session's state expires (tab closed + its TTL).
    if session is not None:
        session.close()


def build_train_tab(ctx: Any) -> None:
    """Controls on the left; buttons, status, live plots, summary and downloads on the right."""
    lang0 = DEFAULT_LANG
    lim: Limits = ctx.limits
    cmap = color_map(SKIP_SUFFIXES)
    with gr.Tab(t("tab_train", lang0), id="train", elem_id="train-tab") as tab:
        ctx.i18n(tab, label="tab_train")
        # Inside the Tab: a component directly under gr.Tabs would get a tab of its own.
        session = gr.State(Session(), delete_callback=_close_session)
        with gr.Row(equal_height=False):
            with gr.Column(scale=1, min_width=320):
                model = ctx.i18n(
                    gr.Dropdown(
                        choices=model_choices(lang0, None),
                        value=DEFAULTS["model"],
                        allow_custom_value=True,
                        label=t("model_label", lang0),
                        info=t("model_info", lang0),
                        elem_id="model",
                    ),
                    label="model_label",
                    info="model_info",
                )
                dataset = ctx.i18n(
                    gr.Dropdown(
                        choices=dataset_choices(lang0, None),
                        value=DEFAULTS["dataset"],
                        allow_custom_value=True,
                        label=t("dataset_label", lang0),
                        info=t("dataset_info", lang0),
                        elem_id="dataset",
                    ),
                    label="dataset_label",
                    info="dataset_info",
                )
                with gr.Row():
                    train_slice = ctx.i18n(
                        gr.Textbox(
                            DEFAULTS["train_slice"],
                            label=t("train_slice_label", lang0),
                            max_lines=1,
                            elem_id="train-slice",
                            min_width=120,
                        ),
                        label="train_slice_label",
                    )
                    eval_slice = ctx.i18n(
                        gr.Textbox(
                            DEFAULTS["eval_slice"],
                            label=t("eval_slice_label", lang0),
                            max_lines=1,
                            elem_id="eval-slice",
                            min_width=120,
                        ),
                        label="eval_slice_label",
                    )
                preview = gr.Markdown("", elem_id="slice-preview")
                backends = ctx.i18n(
                    gr.CheckboxGroup(
                        BACKEND_CHOICES,
                        value=DEFAULTS["backends"],
                        label=t("backends_label", lang0),
                        info=t("backends_info", lang0),
                        elem_id="backends",
                    ),
                    label="backends_label",
                    info="backends_info",
                )
                precisions = gr.CheckboxGroup(
                    list(PRECISIONS),
                    value=DEFAULTS["precisions"],
                    label=t("precisions_label", lang0),
                    info=precision_info(lang0, DEFAULTS["device"]),
                    elem_id="precisions",
                )
                precision_md = gr.Markdown("", elem_id="precision-note")
                device = ctx.i18n(
                    gr.Dropdown(
                        system.device_choices(),
                        value=DEFAULTS["device"],
                        label=t("device_label", lang0),
                        info=t("device_info", lang0),
                        elem_id="device",
                    ),
                    label="device_label",
                    info="device_info",
                )
                with gr.Row():
                    steps = ctx.i18n(
                        gr.Slider(
                            1,
                            lim.max_steps,
                            value=DEFAULTS["steps"],
                            step=1,
                            label=t("steps_label", lang0),
                            elem_id="steps",
                            min_width=140,
                        ),
                        label="steps_label",
                    )
                    batch_size = ctx.i18n(
                        gr.Slider(
                            1,
                            lim.max_batch_size,
                            value=DEFAULTS["batch_size"],
                            step=1,
                            label=t("batch_label", lang0),
                            elem_id="batch-size",
                            min_width=140,
                        ),
                        label="batch_label",
                    )
                with gr.Row():
                    lr = ctx.i18n(
                        gr.Number(
                            DEFAULTS["lr"], label=t("lr_label", lang0), elem_id="lr", min_width=100
                        ),
                        label="lr_label",
                    )
                    seed = ctx.i18n(
                        gr.Number(
                            DEFAULTS["seed"],
                            precision=0,
                            label=t("seed_label", lang0),
                            elem_id="seed",
                            min_width=100,
                        ),
                        label="seed_label",
                    )
                with gr.Accordion(
                    t("advanced_label", lang0), open=False, elem_id="advanced"
                ) as advanced:
                    ctx.i18n(advanced, label="advanced_label")
                    loss_scaling = ctx.i18n(
                        gr.Checkbox(
                            DEFAULTS["loss_scaling"],
                            label=t("loss_scaling_label", lang0),
                            info=t("loss_scaling_info", lang0),
                            elem_id="loss-scaling",
                        ),
                        label="loss_scaling_label",
                        info="loss_scaling_info",
                    )
                    init_scale = ctx.i18n(
                        gr.Number(
                            DEFAULTS["init_scale"],
                            label=t("init_scale_label", lang0),
                            elem_id="init-scale",
                        ),
                        label="init_scale_label",
                    )
                    growth_interval = ctx.i18n(
                        gr.Number(
                            DEFAULTS["growth_interval"],
                            precision=0,
                            label=t("growth_interval_label", lang0),
                            info=t("growth_interval_info", lang0),
                            elem_id="growth-interval",
                        ),
                        label="growth_interval_label",
                        info="growth_interval_info",
                    )
                    compare_scaling = ctx.i18n(
                        gr.Checkbox(
                            DEFAULTS["compare_scaling"],
                            label=t("compare_scaling_label", lang0),
                            info=t("compare_scaling_info", lang0),
                            elem_id="compare-scaling",
                        ),
                        label="compare_scaling_label",
                        info="compare_scaling_info",
                    )
            with gr.Column(scale=3):
                with gr.Row(equal_height=True):
                    status = gr.Markdown(t("status_idle", lang0), elem_id="status", min_height=44)
                    start_btn = ctx.i18n(
                        gr.Button(
                            t("start_btn", lang0),
                            variant="primary",
                            elem_id="start-btn",
                            scale=0,
                            min_width=140,
                        ),
                        value="start_btn",
                    )
                    stop_btn = ctx.i18n(
                        gr.Button(
                            t("stop_btn", lang0),
                            variant="stop",
                            elem_id="stop-btn",
                            scale=0,
                            min_width=110,
                        ),
                        value="stop_btn",
                    )
                plots = []
                rows = [
                    [("loss-plot", "loss_plot", "y_loss"), ("scale-plot", "scale_plot", "y_scale")],
                    [
                        ("time-plot", "time_plot", "y_ms"),
                        ("throughput-plot", "throughput_plot", "y_samples"),
                    ],
                ]
                for row in rows:
                    with gr.Row():
                        for elem_id, title_key, y_key in row:
                            props = {
                                "label": title_key,
                                "title": title_key,
                                "x_title": "x_step",
                                "y_title": y_key,
                            }
                            # The title is drawn by Vega, not as the block label: gradio 6.31
                            # sizes the chart to the block's height and the label's extra
                            # height pushed the legend out of view.
                            plot = gr.LinePlot(
                                None,
                                x="step",
                                y="value",
                                color="run",
                                color_map=cmap,
                                label=t(title_key, lang0),
                                show_label=False,
                                title=t(title_key, lang0),
                                x_title=t("x_step", lang0),
                                y_title=t(y_key, lang0),
                                color_title="",
                                height=PLOT_HEIGHT,
                                elem_id=elem_id,
                                min_width=280,
                                # log2 of a power of two: "16", not "16.000000"
                                y_axis_format="~g" if elem_id == "scale-plot" else None,
                            )
                            plots.append(ctx.i18n(plot, **props))
                # Below the plots, not a LinePlot caption: that is clipped by the block height.
                ctx.i18n(
                    gr.Markdown(t("scale_caption", lang0), elem_id="scale-note"),
                    value="scale_caption",
                )
                summary = ctx.i18n(
                    gr.DataFrame(
                        empty_table(lang0),
                        label=t("summary_label", lang0),
                        elem_id="summary",
                        interactive=False,
                        wrap=True,
                        pinned_columns=1,
                        max_height=420,
                        column_widths=COLUMN_WIDTHS,
                    ),
                    label="summary_label",
                )
                with gr.Row(equal_height=True):
                    csv_btn = ctx.i18n(
                        gr.DownloadButton(
                            t("csv_btn", lang0),
                            interactive=False,
                            elem_id="csv-download",
                            size="md",
                        ),
                        label="csv_btn",
                    )
                    json_btn = ctx.i18n(
                        gr.DownloadButton(
                            t("json_btn", lang0),
                            interactive=False,
                            elem_id="json-download",
                            size="md",
                        ),
                        label="json_btn",
                    )
                    script_run = ctx.i18n(
                        gr.Dropdown(
                            [],
                            label=t("script_run_label", lang0),
                            elem_id="script-run",
                            interactive=True,
                        ),
                        label="script_run_label",
                    )
                    script_btn = ctx.i18n(
                        gr.DownloadButton(
                            t("script_btn", lang0),
                            interactive=False,
                            elem_id="script-download",
                            size="md",
                        ),
                        label="script_btn",
                    )

    ctx.shared["train_tab"] = tab
    ctx.shared["train_controls"] = {
        "model": model,
        "dataset": dataset,
        "train_slice": train_slice,
        "eval_slice": eval_slice,
        "backends": backends,
        "precisions": precisions,
        "device": device,
        "steps": steps,
        "batch_size": batch_size,
        "lr": lr,
        "seed": seed,
        "loss_scaling": loss_scaling,
        "init_scale": init_scale,
        "growth_interval": growth_interval,
        "compare_scaling": compare_scaling,
    }
    lang = ctx.lang
    # Same order as train()'s parameters, which is the order of the dict above.
    inputs = [*ctx.shared["train_controls"].values(), lang, session]
    outputs = [status, *plots, summary, csv_btn, json_btn, script_run, script_btn]

    armed = start_btn.click(
        arm,
        [session, lang],
        [status],
        concurrency_limit=None,
        api_visibility="undocumented",
        show_progress="hidden",
    )
    armed.then(
        train,
        inputs,
        outputs,
        api_name="train",
        concurrency_limit=1,  # one training per process: timings must not share the cores
        show_progress="minimal",
        show_progress_on=[status],
    )
    stop_btn.click(
        stop,
        [session, lang],
        [status],
        concurrency_limit=None,
        api_name="stop",
        show_progress="hidden",
    )

    def preview_fn(lang: str, *args: Any) -> str:
        return slice_preview(norm_lang(lang), *args)

    preview_inputs = [lang, model, dataset, train_slice, eval_slice]
    for comp in (model, dataset, train_slice, eval_slice):
        comp.change(
            preview_fn,
            preview_inputs,
            [preview],
            concurrency_limit=None,
            api_visibility="undocumented",
            show_progress="hidden",
        )

    def note_fn(lang: str, precs: list[str], dev: str) -> Iterator[str]:
        yield from precision_note(norm_lang(lang), precs, dev)

    for comp in (precisions, device):
        comp.change(
            note_fn,
            [lang, precisions, device],
            [precision_md],
            concurrency_limit=1,
            api_visibility="undocumented",
            show_progress="hidden",
        )
    device.change(
        lambda lang, dev: gr.update(info=precision_info(norm_lang(lang), dev)),
        [lang, device],
        [precisions],
        concurrency_limit=None,
        api_visibility="undocumented",
        show_progress="hidden",
    )
    script_run.input(
        script_for_run,
        [session, script_run],
        [script_btn],
        concurrency_limit=None,
        api_visibility="undocumented",
        show_progress="hidden",
    )

    def on_lang(
        lang: str, sess: Session, precs: list[str], dev: str, *preview_args: Any
    ) -> list[Any]:
        hub = system.hub_status()
        table = sess.table(lang) if sess is not None and sess.runs else empty_table(lang)
        idle = sess is None or (not sess.running and not sess.runs)
        return [
            gr.update(choices=model_choices(lang, hub)),
            gr.update(choices=dataset_choices(lang, hub)),
            gr.update(label=t("precisions_label", lang), info=precision_info(lang, dev)),
            slice_preview(lang, *preview_args),
            table,
            t("status_idle", lang) if idle else gr.skip(),
        ]

    lang_outputs = [model, dataset, precisions, preview, summary, status]
    lang_inputs = [session, precisions, device, model, dataset, train_slice, eval_slice]
    ctx.on_language(on_lang, lang_inputs, lang_outputs)

    def on_load(lang: str, *preview_args: Any) -> list[Any]:
        hub = system.hub_status(wait=2.0)  # started at build time; usually answered by now
        return [
            gr.update(choices=model_choices(lang, hub)),
            gr.update(choices=dataset_choices(lang, hub)),
            gr.update(choices=system.device_choices()),
            slice_preview(lang, *preview_args),
        ]

    ctx.on_load(
        on_load, [model, dataset, train_slice, eval_slice], [model, dataset, device, preview]
    )
