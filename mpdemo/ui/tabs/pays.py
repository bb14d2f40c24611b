"""The "Where it pays" tab: the size sweep on this machine (speed-up against parameters with
95 % intervals), its crossover sentence, the memory of one step per precision beside Accelerate's
rule, and published figures from other machines. The measuring is mpdemo.sweep's."""

from __future__ import annotations

import math
import threading
import time
from collections.abc import Iterator

import gradio as gr
import pandas as pd

from ... import engine
from ...classroom.broadcast import Viewer
from ...colours import faint
from ...config import Limits, RunConfig
from ...messages import ConfigError, MpdemoError
from ...runs.notes import duration_text
from ...sweep.events import SweepFinished, SweepMemory, SweepPoint
from ...sweep.notes import crossover_notes
from ...sweep.sizes import (
    SWEEP_PRECISIONS,
    Grid,
    default_grid,
    parse_batch_sizes,
    parse_sizes,
)
from ...sweep.spec import SweepPlan, SweepSpec
from ...teach.published import PUBLISHED
from ..context import STOP_WAIT_S, Outputs, TabContext, Value
from ..i18n import DEFAULT_LANG, error_text, message, norm_lang, number, t
from ..text import esc, shown
from ..train import classroom
from ..train.controls import device_kind
from ..train.session_table import speedup_cell
from ..visitor import client_here
from . import pays_line
from .common import html_table
from .pays_recorded import recorded_html

COMPARED = [p for p in SWEEP_PRECISIONS if p != "fp32"]  # fp32 is the baseline, always timed
BASELINE = "fp32 = 1"  # the plot's reference series: fp32's own speed
PART_KEYS = ("weights_bytes", "grads_bytes", "optimizer_bytes", "saved_activation_bytes")
# Tableau 10 without its red and grey (fp32's line is grey), one a precision x batch series.
SERIES_COLOURS = ["#1f77b4", "#ff7f0e", "#2ca02c", "#9467bd", "#8c564b", "#17becf", "#e377c2",
                  "#bcbd22"]  # fmt: skip
PART_COLOURS = ["#1f77b4", "#ff7f0e", "#9467bd", "#2ca02c", "#7f7f7f"]  # the rule's bar: grey


class SweepState:
    """One page's sweep: its stop Event and what it measured (in a gr.State, never global; not
    a dataclass, which gradio would copy field by field through asdict)."""

    def __init__(self) -> None:
        self.stop: threading.Event | None = None
        self.ended = threading.Event()  # set once the sweep's end event is in (or it broke)
        self.plan: SweepPlan | None = None
        self.points: list[SweepPoint] = []
        self.memory: SweepMemory | None = None
        self.end: SweepFinished | None = None
        self.error: str | None = None
        self.view: Viewer | None = None  # its place in the classroom's line (pays_line.join_line)
        self.began: float | None = None  # monotonic time its turn came
        self.last_at: float | None = None  # ... and its last point ended (the estimate learns)

    def __deepcopy__(self, _memo: dict[int, object]) -> SweepState:
        return SweepState()  # gr.State copies its default per page: a fresh page, a fresh sweep

    @property
    def running(self) -> bool:
        """A sweep was started and has not ended."""
        return self.stop is not None and self.end is None and not self.stop.is_set()


def series_name(precision: str, batch: int, part: str = "") -> str:
    """'bf16 · batch 32' and its interval's '… · 95 % low/high' (the same in every language)."""
    return f"{precision} · batch {batch}" + (f" · 95 % {part}" if part else "")


def colour_map(precisions: list[str], batches: list[int]) -> dict[str, str]:
    """Every series of a grid its colour, fixed before the first point (gradio locks its colour
    domain when a chart is rebuilt); the interval's marks a faint shade of the point's."""
    out = {BASELINE: "#4b5563"}
    combos = [(p, b) for p in precisions if p != "fp32" for b in batches]
    for i, (p, b) in enumerate(combos):
        colour = SERIES_COLOURS[i % len(SERIES_COLOURS)]
        out[series_name(p, b)] = colour
        out[series_name(p, b, "low")] = faint(colour, 0.45)
        out[series_name(p, b, "high")] = faint(colour, 0.45)
    return out


def plot_frame(state: SweepState) -> pd.DataFrame:
    """Long frame (log10 params, speed-up, series): each point, its interval's ends, fp32 at 1;
    a series with no point yet has a NaN row, so it is in the colour domain from the start."""
    rows: list[tuple[float, float, str]] = []
    plan = state.plan
    if plan is None:
        return pd.DataFrame(rows, columns=["log10_params", "speedup", "series"])
    for p in state.points:
        x = round(math.log10(max(1, p.params)), 4)
        rows.append((x, 1.0, BASELINE))
        for precision in p.checks:
            c = p.check(precision)
            if c is None or c.speedup is None:
                continue
            rows.append((x, round(c.speedup, 4), series_name(precision, p.batch_size)))
            if c.interval:
                rows.append((x, round(c.low, 4), series_name(precision, p.batch_size, "low")))
                rows.append((x, round(c.high, 4), series_name(precision, p.batch_size, "high")))
    drawn = {name for _, _, name in rows}
    x0 = round(math.log10(max(1, plan.points[0].params)), 4) if plan.points else 0.0
    for name in colour_map(list(plan.precisions), list(plan.spec.batch_sizes)):
        if name not in drawn:  # a placeholder: in the colour domain before it has a point
            rows.append((x0, math.nan, name))
    return pd.DataFrame(rows, columns=["log10_params", "speedup", "series"])


TABLE_KEYS = ["sw_col_model", "col_params", "sw_col_batch", "col_precision", "col_step_ms",
              "col_speedup", "sw_col_interval", "sw_col_verdict", "col_samples", "sw_col_tflops",
              "sw_col_mfu"]  # fmt: skip


def points_table(state: SweepState, lang: str) -> pd.DataFrame:
    """One row per point and precision: the figures the plot and the sentence come from."""
    cols = [t(k, lang) for k in TABLE_KEYS]
    rows = []
    for p in state.points:
        for row in p.rows():
            iv = row["speedup_interval"]
            verdict = row["speed_verdict"]
            rows.append(
                [
                    f"{row['model']} ({p.hidden}x{p.layers})",
                    number(row["params"], lang, ","),
                    row["batch_size"],
                    row["precision"],
                    number(row["step_s"] * 1000, lang, ".3g"),
                    number(row["speedup_vs_fp32"], lang, ".2f"),
                    f"{number(iv[0], lang, '.2f')}–{number(iv[1], lang, '.2f')}" if iv else "–",
                    t(f"verdict_{verdict}", lang) if verdict else "–",
                    number(row["samples_per_s"], lang, ",.0f"),
                    number(row["tflops"], lang, ".3g"),
                    number(row["mfu"] * 100, lang, ".1f") + " %" if row["mfu"] is not None else "–",
                ]
            )
    return pd.DataFrame(rows, columns=cols)


def memory_frame(state: SweepState, lang: str) -> pd.DataFrame | None:
    """Stacked MiB per precision, measured, and beside each Accelerate's rule for it."""
    mem = state.memory
    if mem is None:
        return None
    rows = []
    for precision, a in mem.parts.items():
        for key in PART_KEYS:
            rows.append((precision, a[key] / 2**20, t(f"mem_part_{key}", lang)))
        est = (mem.estimate.get(precision) or {}).get("training")
        if est is not None:
            rule = f"{precision} · {t('mem_rule_bar', lang)}"
            rows.append((rule, est / 2**20, t("mem_rule_bar", lang)))
    return pd.DataFrame(rows, columns=["bar", "mib", "part"])


def memory_colours(lang: str) -> dict[str, str]:
    """The parts' colours under their names in `lang`."""
    names = [t(f"mem_part_{k}", lang) for k in PART_KEYS] + [t("mem_rule_bar", lang)]
    return dict(zip(names, PART_COLOURS, strict=True))


def memory_text(state: SweepState, lang: str) -> str:
    """What the bars are of, the sentences from their bytes, and the rule beside them."""
    mem = state.memory
    if mem is None:
        return ""
    head = t("mem_of", lang, model=mem.model, size=f"{mem.hidden}x{mem.layers}",
             params=number(mem.params, lang, ","), batch=mem.batch_size, seq=mem.seq)  # fmt: skip
    lines = [head, *(f"- {message(n['key'], n['args'], lang)}" for n in mem.notes)]
    peaks = {p: a["peak_mem_bytes"] for p, a in mem.parts.items() if a["peak_mem_bytes"]}
    if peaks:
        peak_text = ", ".join(f"{p} {number(v / 2**20, lang, ',.1f')}" for p, v in peaks.items())
        lines.append(t("mem_peak", lang, peaks=peak_text))
    lines.append(f"_{message('anatomy_rule', {}, lang)}_")
    return "\n".join(lines)


def status_text(state: SweepState, lang: str) -> str:
    """Where the sweep is: planned, point k of n, done, stopped or failed."""
    if state.error is not None:
        return t("sweep_status_refused", lang, error=state.error)
    plan = state.plan
    if plan is None:
        return t("sweep_status_idle", lang)
    waiting = classroom.queued_text(state.view, lang)
    if waiting is not None:  # in line behind the comparisons (or sweeps) ahead of it
        return waiting
    if state.end is None and pays_line.left_line(state.view):
        return t("sweep_status_left", lang)
    total = len(plan.points)
    if state.end is not None:
        end = state.end
        if end.status == "completed":
            return t("sweep_status_done", lang, points=end.points, total=total,
                     time=duration_text(end.wall_s))  # fmt: skip
        if end.status == "stopped":
            return t("sweep_status_stopped", lang, points=end.points, total=total)
        err = end.error or {"key": "failed", "args": {"detail": "?"}}
        return t("sweep_status_failed", lang, points=end.points,
                 error=shown(message(err["key"], err["args"], lang)))  # fmt: skip
    left = pays_line.left_s(plan, state.points, state.last_at or state.began)  # learnt so far
    if not state.points:
        shown_s = plan.estimate_s if left is None else max(1.0, left)
        return t("sweep_status_planned", lang, total=total, time=duration_text(shown_s))
    last = state.points[-1]
    return t("sweep_status_point", lang, done=len(state.points), total=total,
             model=last.model, batch=last.batch_size,
             left=duration_text(max(1.0, left or 0.0)))  # fmt: skip


def crossover_text(state: SweepState, lang: str) -> str:
    """The crossover sentences from the points measured so far, in `lang`."""
    if not state.points:
        return ""
    notes = [n.to_dict() for n in crossover_notes(state.points, state.points[0].device)]
    if state.end is not None and state.end.notes:
        notes = state.end.notes  # the same sentences the end event carries
    return "\n".join(f"- {shown(message(n['key'], n['args'], lang))}" for n in notes)


def plot_titles(lang: str) -> dict[str, str]:
    """The speed-up plot's titles in `lang`."""
    return {k: t(f"sweep_plot_{k.split('_')[0]}", lang) for k in ("title", "x_title", "y_title")}


def frame(state: SweepState, lang: str) -> dict[str, Value]:
    """Every output by name, from the state."""
    return {
        "status": status_text(state, lang),
        "plot": plot_frame(state),
        "crossover": crossover_text(state, lang),
        "table": points_table(state, lang),
        "memory": memory_frame(state, lang),
        "memory_notes": memory_text(state, lang),
        "stop": gr.update(interactive=state.running),
    }


def page_grid() -> Grid:
    """The default grid for the device this page's sweep runs on (sweep/sizes.py)."""
    return default_grid(device_kind())


def check_sweep(
    sizes: object, batches: object, precisions: object, budget: object, limits: Limits | None = None
) -> SweepPlan:
    """The SweepPlan the inputs describe (keyed MpdemoError, one line, where they cannot run)."""
    from ...sweep.plan import plan_sweep  # torch: the plan probes the device

    lim = limits or Limits.from_env()
    try:
        seconds = float(budget)
    except (TypeError, ValueError):
        raise ConfigError("sweep_bad_budget", value=str(budget)[:64]) from None
    if not (0 < seconds <= 3600):  # NaN fails both comparisons
        raise ConfigError("sweep_bad_budget", value=seconds)
    # As sent (preprocess=False): one name, or a list of names; anything else is refused.
    precisions = [precisions] if isinstance(precisions, str) else precisions or []
    if not isinstance(precisions, (list, tuple)) or not set(precisions) <= set(SWEEP_PRECISIONS):
        raise ConfigError(
            "unknown_choice",
            field="precisions",
            allowed=", ".join(COMPARED),
            value=str(precisions)[:64],
        )
    chosen = [p for p in precisions if p in COMPARED]
    spec = SweepSpec(
        sizes=parse_sizes(str(sizes or "")),
        batch_sizes=parse_batch_sizes(str(batches or ""), lim),
        precisions=("fp32", *chosen),
        base=RunConfig(max_length=page_grid().max_length),  # CUDA's grid: 256 tokens a row
        budget_s=seconds,
    )
    return plan_sweep(spec, lim)


def run_sweep_ui(
    lang: str,
    sizes: object,
    batches: object,
    precisions: object,
    budget: object,
    state: SweepState,
    limits: Limits | None = None,
    client: str = "",
) -> Iterator[dict[str, Value]]:
    """Run sweep: refuse bad input in the page's language, else wait its turn in the line (its
    place shown) and stream the points."""
    lang = norm_lang(lang)
    if state.running:  # a second click while one runs (another tab of the same page)
        yield frame(state, lang)
        return
    state.__dict__.update(SweepState().__dict__)
    try:
        plan = check_sweep(sizes, batches, precisions, budget, limits)
        stop = threading.Event()
        state.view = pays_line.join_line(plan, stop, client)
    except MpdemoError as err:
        text = error_text(err, lang)
        state.error = shown(text)
        yield {**frame(state, lang), "plot": None}
        raise gr.Error(esc(text, quote=False), title="mpdemo", print_exception=False) from None
    state.plan = plan
    state.stop = stop
    cmap = colour_map(list(plan.precisions), list(plan.spec.batch_sizes))
    # None first: the chart is rebuilt with this grid's colour domain, then the frames.
    yield {**frame(state, lang), "plot": gr.update(value=None, color_map=cmap)}
    yield frame(state, lang)
    try:
        for ev in state.view.events(timeout=1.0):
            if ev is None:  # a heartbeat: its place in line, or Stop pressed while it waited
                if not stop.is_set():
                    yield frame(state, lang)
                continue
            if ev.kind == "sweep_plan":  # its turn came: the clock of the estimate starts
                state.began = time.monotonic()
                continue
            if ev.kind == "point":
                state.points.append(ev)
                state.last_at = time.monotonic()
            elif ev.kind == "memory":
                state.memory = ev
            elif ev.kind == "sweep_end":
                state.end = ev
                state.ended.set()
            else:
                continue
            yield frame(state, lang)
    finally:
        # Tab closed or job cancelled: end the sweep too (out of the line if it still waited).
        stop.set()
        state.view.stop()
        state.ended.set()
    if state.end is None:  # it left the line before its turn: say so as its last word
        yield frame(state, lang)


def stop_sweep(state: SweepState | None, lang: str) -> str:
    """Stop: the sweep ends within the step in progress, its points stay. Answers with the
    outcome, not "stopping", which could cover the sweep's own last message."""
    lang = norm_lang(lang)
    if state is None or not state.running:
        return t("sweep_status_nothing", lang)
    assert state.stop is not None
    state.stop.set()
    if state.view is not None:  # never behind training: a waiting sweep just leaves the line
        state.view.stop()
    if not state.ended.wait(STOP_WAIT_S):
        return t("sweep_status_stopping", lang, points=len(state.points))
    return status_text(state, lang)


PUBLISHED_HEADS = ("pub_hardware", "pub_workload", "col_precision", "col_speedup", "pub_figures",
         "pub_source")  # fmt: skip


def published_html(lang: str) -> str:
    """The published figures as a table headed 'published, not run here', each with its link."""
    rows = []
    for p in PUBLISHED:
        figures = (
            f"{number(p.figure, lang, 'g')} / {number(p.baseline_figure, lang, 'g')} "
            f"{t('col_samples', lang) if p.unit == 'samples/s' else p.unit}"
            if p.unit
            else "–"
        )
        # "1.25× slower", never "0.80×": the summary table's cell, as every ratio on the page.
        speed = speedup_cell({"speedup_vs_fp32": p.speedup}, lang)
        cells = [p.hardware, p.workload, f"{p.precision} / {p.baseline}", speed, figures]
        link = (
            f'<a href="{esc(p.url)}" target="_blank" rel="noopener noreferrer">{esc(p.source)}</a>'
        )
        rows.append([*map(esc, cells), link])
    title, note = esc(t("published_title", lang)), esc(t("published_note", lang))
    table = html_table([esc(t(k, lang)) for k in PUBLISHED_HEADS], rows)
    return f'<div class="mp-published"><h3>{title}</h3><p>{note}</p>{table}</div>'


def build_pays_tab(ctx: TabContext) -> None:
    """Where it pays: the size sweep, its crossover sentence, memory anatomy, published figures."""
    lang0 = DEFAULT_LANG
    limits = ctx.limits
    grid = page_grid()
    with ctx.i18n(gr.Tab(id="pays", elem_id="pays-tab"), label="tab_pays"):
        ctx.i18n(gr.Markdown(), value="pays_intro")
        with gr.Row(equal_height=True):
            sizes = gr.Textbox(grid.sizes, elem_id="sweep-sizes", scale=3)
            batches = gr.Textbox(grid.batch_sizes, elem_id="sweep-batches", scale=2)
            precisions = gr.CheckboxGroup(
                COMPARED, value=["bf16"], elem_id="sweep-precisions", scale=2
            )
            budget = gr.Number(grid.budget_s, minimum=1, maximum=3600, elem_id="sweep-budget",
                               scale=1, min_width=120)  # fmt: skip
            named = {"sizes": sizes, "batches": batches, "precisions": precisions, "budget": budget}
            for name, comp in named.items():
                ctx.i18n(comp, label=f"sweep_{name}_label", info=f"sweep_{name}_info")
        with gr.Row():
            run = ctx.i18n(gr.Button(variant="primary", elem_id="sweep-btn"), value="sweep_btn")
            stop = ctx.i18n(
                gr.Button(variant="stop", interactive=False, elem_id="sweep-stop-btn"),
                value="sweep_stop_btn",
            )
        status = gr.Markdown(t("sweep_status_idle", lang0), elem_id="sweep-status")
        plot = gr.ScatterPlot(
            None, x="log10_params", y="speedup", color="series", color_title="",
            x_axis_format=".1f", y_axis_format=".2f", height=380, show_label=False,
            elem_id="sweep-plot", **plot_titles(lang0),
        )  # fmt: skip
        crossover = gr.Markdown("", elem_id="sweep-crossover")
        # Beside this machine's sentence: what a GPU measured with the same code (shipped files).
        recorded0 = recorded_html(lang0)
        recorded = gr.HTML(recorded0, elem_id="sweep-recorded", visible=bool(recorded0))
        empty = pd.DataFrame([], columns=[t(k, lang0) for k in TABLE_KEYS])
        table = gr.DataFrame(empty, interactive=False, elem_id="sweep-table", show_label=False)
        memory = gr.BarPlot(
            None, x="bar", y="mib", color="part", color_map=memory_colours(lang0),
            title=t("memory_plot_title", lang0), x_title=" ", y_title="MiB", color_title="",
            height=320, show_label=False, elem_id="memory-plot",
        )  # fmt: skip
        memory_notes = gr.Markdown("", elem_id="memory-notes")
        published = gr.HTML(published_html(lang0), elem_id="published-table")
        state = gr.State(SweepState())  # inside the Tab: under gr.Tabs a State is a phantom tab
    comps = {"status": status, "plot": plot, "crossover": crossover, "table": table,
             "memory": memory, "memory_notes": memory_notes, "stop": stop}  # fmt: skip
    outputs = list(comps.values())

    def keyed(out: dict[str, Value]) -> Outputs:
        return {c: out.get(n, gr.skip()) for n, c in comps.items()}

    # Named parameters: an API caller's /sweep sees lang, sizes, ..., not param_1...
    def on_run(
        lang: str,
        sizes: object,
        batch_sizes: object,
        precisions: object,
        budget: object,
        st: SweepState,
    ) -> Iterator[Outputs]:
        client = client_here()  # the same per-address share as a comparison's
        for out in run_sweep_ui(lang, sizes, batch_sizes, precisions, budget, st, limits, client):
            yield keyed(out)

    lang = ctx.lang
    inputs = [lang, sizes, batches, precisions, budget, state]
    # It waits its turn in the classroom's line, with the comparisons' handlers; the values as
    # sent (check_sweep refuses "abc" in the page's language).
    line = {"concurrency_limit": classroom.max_viewers(), "concurrency_id": classroom.CONCURRENCY_ID,
            "preprocess": False, "show_progress": "minimal", "show_progress_on": [status]}  # fmt: skip
    run.click(on_run, inputs, outputs, api_name="sweep", **line)
    picker = ctx.train.lesson if ctx.train is not None else None
    if picker is not None:  # the Train tab's sweep lesson (it switches here) starts the sweep

        def on_lesson(name: object, *args: Value) -> Iterator[Outputs]:
            if pays_line.sweep_lesson(name):
                yield from on_run(*args)

        picker.input(on_lesson, [picker, *inputs], outputs, api_visibility="undocumented", **line)
    # Stop never waits behind training: off the queue, as the Train tab's Stop.
    stop.click(stop_sweep, [state, lang], [status], queue=False,
               api_visibility="undocumented", show_progress="hidden")  # fmt: skip

    def on_lang(lang: str, st: SweepState) -> Outputs:
        out = {**frame(st, lang), "plot": gr.update(**plot_titles(lang))}
        title = t("memory_plot_title", lang)
        out["memory"] = gr.update(value=out["memory"], color_map=memory_colours(lang), title=title)
        return {**keyed(out), published: published_html(lang), recorded: recorded_html(lang)}

    ctx.on_language(on_lang, [state], [*outputs, published, recorded])

    def on_load(lang: str) -> Value:
        # What autocast offers on this device, once the page is up (reading it imports torch).
        from ...sweep.plan import default_precisions

        offered = default_precisions(engine.resolve_device("auto"))
        return gr.update(value=[p for p in offered if p != "fp32"])

    ctx.on_load(on_load, [], [precisions])
