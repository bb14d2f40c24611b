"""The Number formats tab's numerics sections (issue 29): TF32, fp32 accumulation and fp8's
scaling recipes, each computed with torch on this machine when asked.

Handlers are plain functions of (lang, *inputs) so tests call them directly; the figures come
from mpdemo.teach.accumulate, .rounding and .fp8_scaling (torch is imported there, lazily).
"""

from __future__ import annotations

import math

import gradio as gr
import pandas as pd

from ...config import RunConfig
from ...teach import accumulate, formats, fp8_scaling, rounding
from ...teach.accumulate import MAX_N
from ..context import TabContext, Value
from ..i18n import DEFAULT_LANG, number
from .common import SIDE_WORK, esc, tt

ACC_N_DEFAULT = 1000
ACC_VALUE_DEFAULT = "0.01"
ACC_NAMES = {("fp16", "fp16"): "fp16", ("bf16", "bf16"): "bf16", ("fp32", "fp16"): "fp32 ← fp16",
             ("fp32", "fp32"): "fp32"}  # fmt: skip
MICRO_BATCHES = 8


def _cell(x: float | None, lang: str, spec: str = ".6g") -> str:
    if x is None:
        return "–"
    if not math.isfinite(x):
        return str(x)
    return number(x, lang, spec)


def _table(headers: list[str], rows: list[list[str]]) -> str:
    """A small HTML table; cells are already escaped HTML."""
    cell = "padding:4px 10px;border-bottom:1px solid #d1d5db;text-align:left;vertical-align:top"
    head = "".join(f'<th style="{cell}">{h}</th>' for h in headers)
    body = "".join(
        "<tr>" + "".join(f'<td style="{cell}">{c}</td>' for c in r) + "</tr>" for r in rows
    )
    return (
        '<div style="overflow-x:auto"><table style="border-collapse:collapse;width:100%">'
        f"<tr>{head}</tr>{body}</table></div>"
    )


def _error(lang: str, err: Exception) -> str:
    return f'<p class="mp-error">{esc(tt("nx_bad_input", lang, detail=str(err)))}</p>'


# --- TF32 --------------------------------------------------------------------------------------


def tf32_html(lang: str, value: object) -> str:
    """The typed number in fp32 and in TF32 (emulated: fp32 rounded to 10 mantissa bits)."""
    import torch

    try:
        x, _ = formats.parse(value)
    except ValueError as err:
        return _error(lang, err)
    f32 = torch.tensor([x], dtype=torch.float32)
    t = rounding.round_tf32(f32)
    bits = format(int(t.view(torch.int32).item()) & 0xFFFFFFFF, "032b")
    shown = f"{bits[0]} {bits[1:9]} {bits[9:19]}"  # sign, exponent, the 10 mantissa bits kept
    rows = []
    for name, v in (("fp32", float(f32.item())), ("TF32", float(t.item()))):
        err = abs(v - x) if math.isfinite(v) and math.isfinite(x) else None
        rows.append([name, _cell(v, lang, ".9g"), _cell(err, lang, ".3g")])
    heads = [tt("nx_th_format", lang), tt("nx_th_stored", lang), tt("nx_th_abs_error", lang)]
    return f"<p>{esc(tt('nx_tf32_bits', lang))} <code>{shown}</code></p>" + _table(heads, rows)


# --- fp32 accumulation -------------------------------------------------------------------------


def _n(raw: object) -> int:
    try:
        n = int(float(raw))
    except (TypeError, ValueError):
        raise ValueError(f"N: 1 – {MAX_N}") from None
    if not 1 <= n <= MAX_N or float(raw) != n:
        raise ValueError(f"N: 1 – {MAX_N}")
    return n


def accumulate_view(lang: str, value: object, n: object) -> tuple[str, pd.DataFrame | None]:
    """The table of running sums in each accumulator, and the sums as a long frame for a plot."""
    try:
        results = accumulate.compare_sums(str(value).strip(), _n(n))
    except ValueError as err:
        return _error(lang, err), None
    heads = [
        tt("nx_th_accumulator", lang),
        tt("nx_th_addend", lang),
        tt("nx_th_final", lang),
        tt("nx_th_exact", lang),
        tt("nx_th_abs_error", lang),
        tt("nx_th_stalled", lang),
    ]
    rows, frames = [], []
    for r in results:
        name = ACC_NAMES[(r.accumulator, r.values_in)]
        stalled = (
            tt("nx_stalled_at", lang, n=r.stalled_at, sum=_cell(r.stalled_sum, lang))
            if r.stalled_at is not None
            else tt("nx_kept_growing", lang)
        )
        rows.append(
            [
                esc(name),
                _cell(r.addend, lang, ".8g"),
                _cell(r.final, lang, ".8g"),
                _cell(r.exact, lang, ".8g"),
                _cell(r.abs_error, lang, ".3g"),
                esc(stalled),
            ]
        )
        # Column names are the plot's axis and legend titles: the same in every language.
        frames.append(pd.DataFrame({"N": r.steps, "Σ": r.sums, "bits": name}))
    return _table(heads, rows), pd.concat(frames, ignore_index=True)


def micro_batch_html(lang: str) -> str:
    """The model's gradients of 8 micro-batches summed in fp16, bf16 and fp32 buffers."""
    cfg = RunConfig(train_slice="train[:256]", batch_size=16, device="cpu")
    grads = accumulate.model_micro_batch_grads(cfg, MICRO_BATCHES)
    rows = [
        [
            esc(r["buffer"]),
            _cell(r["rel_error"], lang, ".3g"),
            _cell(r["storage_rel_error"], lang, ".3g"),
        ]
        for r in accumulate.micro_batch_accumulation(grads)
    ]
    heads = [tt("nx_th_buffer", lang), tt("nx_th_rel_error", lang), tt("nx_th_worse", lang)]
    n = sum(g.numel() for g in grads[0].values())
    intro = tt("nx_micro_done", lang, k=MICRO_BATCHES, model=cfg.model, n=n)
    return f"<p>{esc(intro)}</p>" + _table(heads, rows)


# --- fp8 scaling recipes -----------------------------------------------------------------------


def fp8_recipes_html(lang: str) -> str:
    """Every recipe on a real activation and gradient of the default model, in E4M3 and E5M2."""
    cfg = RunConfig(train_slice="train[:256]", batch_size=16, device="cpu")
    rep = fp8_scaling.model_report(cfg, steps=8)
    heads = [
        tt("nx_th_tensor", lang),
        tt("nx_th_format", lang),
        tt("nx_th_recipe", lang),
        tt("nx_th_scales", lang),
        tt("nx_th_flushed", lang),
        tt("nx_th_saturated", lang),
        tt("nx_th_rel_error", lang),
    ]
    rows = [
        [
            esc(tt("nx_tensor_" + r["tensor"], lang)),
            esc(r["fmt"].upper()),
            esc(tt("nx_recipe_" + r["recipe"], lang)),
            _cell(r["scales"], lang, ","),
            _cell(100 * r["flushed"], lang, ".3g") + " %",
            _cell(100 * r["saturated"], lang, ".3g") + " %",
            _cell(r["rel_error"], lang, ".3g"),
        ]
        for r in rep["results"]
    ]
    intro = tt(
        "nx_fp8_done",
        lang,
        layer=rep["layer"],
        steps=rep["steps"],
        history=len(rep["tensors"]["gradient"]["amax_history"]),
    )
    return f"<p>{esc(intro)}</p>" + _table(heads, rows)


def build_numerics(ctx: TabContext, value: object) -> None:
    """TF32 (of the typed `value`), accumulation and fp8 recipes, inside the Number formats tab."""
    lang0 = DEFAULT_LANG
    ctx.i18n(gr.Markdown(tt("nx_tf32_title", lang0)), value="nx_tf32_title")
    tf32 = gr.HTML("", elem_id="nf-tf32")
    ctx.i18n(gr.Markdown(tt("nx_acc_title", lang0)), value="nx_acc_title")
    with gr.Row():
        acc_value = ctx.i18n(
            gr.Textbox(ACC_VALUE_DEFAULT, label=tt("nx_acc_value", lang0), max_lines=1,
                       max_length=64, elem_id="nf-acc-value"),
            label="nx_acc_value",
        )  # fmt: skip
        acc_n = ctx.i18n(
            gr.Number(ACC_N_DEFAULT, label=tt("nx_acc_n", lang0), precision=0, minimum=1,
                      maximum=20_000, elem_id="nf-acc-n"),
            label="nx_acc_n",
        )  # fmt: skip
    acc_table = gr.HTML("", elem_id="nf-acc-table")
    acc_plot = ctx.i18n(
        gr.LinePlot(None, x="N", y="Σ", color="bits", label=tt("nx_acc_plot", lang0),
                    elem_id="nf-acc-plot", height=260),
        label="nx_acc_plot",
    )  # fmt: skip
    ctx.i18n(gr.Markdown(tt("nx_micro_title", lang0)), value="nx_micro_title")
    micro_btn = ctx.i18n(
        gr.Button(tt("nx_micro_btn", lang0), elem_id="nf-micro-btn", size="sm"),
        value="nx_micro_btn",
    )
    micro = gr.HTML("", elem_id="nf-micro")
    ctx.i18n(gr.Markdown(tt("nx_fp8_title", lang0)), value="nx_fp8_title")
    fp8_btn = ctx.i18n(
        gr.Button(tt("nx_fp8_btn", lang0), elem_id="nf-fp8-btn", size="sm"), value="nx_fp8_btn"
    )
    fp8 = gr.HTML("", elem_id="nf-fp8")

    lang = ctx.lang
    opts = {**SIDE_WORK, "api_visibility": "undocumented", "show_progress": "hidden"}
    value.change(tf32_html, [lang, value], [tf32], **opts)
    for comp in (acc_value, acc_n):
        comp.change(accumulate_view, [lang, acc_value, acc_n], [acc_table, acc_plot], **opts)
    # Training a few steps of the model: in the same one-at-a-time line.
    heavy = {**SIDE_WORK, "api_visibility": "undocumented"}
    micro_btn.click(micro_batch_html, [lang], [micro], **heavy)
    fp8_btn.click(fp8_recipes_html, [lang], [fp8], **heavy)

    def on_lang(lang: str, v: str, av: str, an: object) -> list[Value]:
        table, frame = accumulate_view(lang, av, an)
        return [tf32_html(lang, v), table, frame]

    ctx.on_language(on_lang, [value, acc_value, acc_n], [tf32, acc_table, acc_plot])
    # alone: it imports torch (~1 s on a fresh server), which the other load hooks need not
    ctx.on_load(on_lang, [value, acc_value, acc_n], [tf32, acc_table, acc_plot], alone=True)
