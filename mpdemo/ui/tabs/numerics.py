"""The Number formats tab's numerics sections: TF32, fp32 accumulation and fp8's scaling
recipes, computed with torch on this machine when asked (mpdemo.teach)."""

from __future__ import annotations

import math

import gradio as gr
import pandas as pd

from ...config import RunConfig
from ...teach import accumulate, formats, fp8_scaling, rounding
from ...teach.accumulate import MAX_N
from ..context import TabContext, Value
from ..histogram import FORMAT_NAMES
from ..i18n import number, t
from ..text import esc
from .common import SIDE_WORK, html_table

ACC_N_DEFAULT = 1000
ACC_VALUE_DEFAULT = "0.01"
ACC_NAMES = {("fp16", "fp16"): "fp16", ("bf16", "bf16"): "bf16", ("fp32", "fp16"): "fp32 ← fp16",
             ("fp32", "fp32"): "fp32"}  # fmt: skip
MICRO_BATCHES = 8
DEMO_RUN = RunConfig(train_slice="train[:256]", batch_size=16, device="cpu")  # a few real steps


def _cell(x: float | None, lang: str, spec: str = ".6g") -> str:
    if x is None:
        return "–"
    if not math.isfinite(x):
        return str(x)
    return number(x, lang, spec)


def _heads(lang: str, *names: str) -> list[str]:
    return [t(f"nx_th_{n}", lang) for n in names]


def _error(lang: str, err: Exception) -> str:
    return f'<p class="mp-error">{esc(t("nx_bad_input", lang, detail=str(err)))}</p>'


def tf32_html(lang: str, value: object) -> str:
    """The typed number in fp32 and in TF32 (emulated: fp32 rounded to 10 mantissa bits)."""
    import torch

    try:
        x, _ = formats.parse(value)
    except ValueError as err:
        return _error(lang, err)
    f32 = torch.tensor([x], dtype=torch.float32)
    tf = rounding.round_nearest(f32, "tf32").to(torch.float32)
    bits = format(int(tf.view(torch.int32).item()) & 0xFFFFFFFF, "032b")
    shown = f"{bits[0]} {bits[1:9]} {bits[9:19]}"  # sign, exponent, the 10 mantissa bits kept
    rows = []
    for name, v in (("fp32", float(f32.item())), ("TF32", float(tf.item()))):
        err = abs(v - x) if math.isfinite(v) and math.isfinite(x) else None
        rows.append([name, _cell(v, lang, ".9g"), _cell(err, lang, ".3g")])
    heads = _heads(lang, "format", "stored", "abs_error")
    return f"<p>{esc(t('nx_tf32_bits', lang))} <code>{shown}</code></p>" + html_table(heads, rows)


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
    heads = _heads(lang, "accumulator", "addend", "final", "exact", "abs_error", "stalled")
    rows, frames = [], []
    for r in results:
        name = ACC_NAMES[(r.accumulator, r.values_in)]
        stalled = (
            t("nx_stalled_at", lang, n=r.stalled_at, sum=_cell(r.stalled_sum, lang))
            if r.stalled_at is not None
            else t("nx_kept_growing", lang)
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
    return html_table(heads, rows), pd.concat(frames, ignore_index=True)


def micro_batch_html(lang: str) -> str:
    """The model's gradients of 8 micro-batches summed in fp16, bf16 and fp32 buffers."""
    grads = accumulate.model_micro_batch_grads(DEMO_RUN, MICRO_BATCHES)
    rows = [
        [
            esc(r["buffer"]),
            _cell(r["rel_error"], lang, ".3g"),
            _cell(r["storage_rel_error"], lang, ".3g"),
        ]
        for r in accumulate.micro_batch_accumulation(grads)
    ]
    heads = _heads(lang, "buffer", "rel_error", "worse")
    n = sum(g.numel() for g in grads[0].values())
    intro = t("nx_micro_done", lang, k=MICRO_BATCHES, model=DEMO_RUN.model, n=n)
    return f"<p>{esc(intro)}</p>" + html_table(heads, rows)


def fp8_recipes_html(lang: str) -> str:
    """Every recipe on a real activation and gradient of the default model, in E4M3 and E5M2."""
    rep = fp8_scaling.model_report(DEMO_RUN, steps=8)
    heads = _heads(
        lang, "tensor", "format", "recipe", "scales", "flushed", "saturated", "rel_error"
    )
    rows = [
        [
            esc(t("nx_tensor_" + r["tensor"], lang)),
            esc(FORMAT_NAMES[r["fmt"]]),
            esc(t("nx_recipe_" + r["recipe"], lang)),
            _cell(r["scales"], lang, ","),
            _cell(100 * r["flushed"], lang, ".3g") + " %",
            _cell(100 * r["saturated"], lang, ".3g") + " %",
            _cell(r["rel_error"], lang, ".3g"),
        ]
        for r in rep["results"]
    ]
    history = len(rep["tensors"]["gradient"]["amax_history"])
    intro = t("nx_fp8_done", lang, layer=rep["layer"], steps=rep["steps"], history=history)
    return f"<p>{esc(intro)}</p>" + html_table(heads, rows)


def build_numerics(ctx: TabContext, value: object) -> None:
    """TF32 (of the typed `value`), accumulation and fp8 recipes, inside the Number formats tab."""
    ctx.i18n(gr.Markdown(), value="nx_tf32_title")
    tf32 = gr.HTML("", elem_id="nf-tf32")
    ctx.i18n(gr.Markdown(), value="nx_acc_title")
    with gr.Row():
        acc_value = ctx.i18n(
            gr.Textbox(ACC_VALUE_DEFAULT, max_lines=1, max_length=64, elem_id="nf-acc-value"),
            label="nx_acc_value",
        )
        acc_n = ctx.i18n(
            gr.Number(ACC_N_DEFAULT, precision=0, minimum=1, maximum=MAX_N, elem_id="nf-acc-n"),
            label="nx_acc_n",
        )
    acc_table = gr.HTML("", elem_id="nf-acc-table")
    acc_plot = ctx.i18n(
        gr.LinePlot(None, x="N", y="Σ", color="bits", elem_id="nf-acc-plot", height=260),
        label="nx_acc_plot",
    )
    ctx.i18n(gr.Markdown(), value="nx_micro_title")
    micro_btn = ctx.i18n(gr.Button(elem_id="nf-micro-btn", size="sm"), value="nx_micro_btn")
    micro = gr.HTML("", elem_id="nf-micro")
    ctx.i18n(gr.Markdown(), value="nx_fp8_title")
    fp8_btn = ctx.i18n(gr.Button(elem_id="nf-fp8-btn", size="sm"), value="nx_fp8_btn")
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
