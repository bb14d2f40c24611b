"""The Underflow lab tab: one real backward pass (mpdemo.teach.underflow), its gradients'
magnitudes against a low-precision format's range, and what a loss scale S saves or overflows."""

from __future__ import annotations

import functools
from collections.abc import Iterator

import gradio as gr
import pandas as pd

from ...catalog import DEFAULT_MODEL, MODELS
from ...config import Limits, RunConfig, coerce_field
from ...messages import MpdemoError
from ...state import on_reset
from ...teach.formats import LOW_PRECISION
from ...teach.magnitudes import (
    amax_scale,
    best_scale,
    binned_k_range,
    format_band,
    tf32_below_normal,
)
from ...teach.underflow import GradientLab, collect
from .. import system
from ..context import QUIET, TabContext, Value
from ..histogram import FORMAT_NAMES, histogram_svg
from ..histogram import pct as _pct
from ..i18n import DEFAULT_LANG, error_text, norm_lang, number, t
from ..text import esc
from ..train.controls import model_choices
from .common import FORMAT_CHOICES, SCALE_K_DEFAULT, SIDE_WORK

# S from 1 to 2^32: the best scale for tiny-bert's fp16 activation gradients was 2^26 (e4m3: 2^28).
UF_K_MAX = 32
CHART_LO, CHART_HI = -60, 32  # log2 axis of the histograms (|g*S|); beyond: the end bars


UF_TABLE_COLUMNS = ["uf_col_kind", "uf_col_nonzero", "uf_col_zero1", "uf_col_zeroS",
                    "uf_col_subS", "uf_col_overS"]  # fmt: skip


def underflow_table(lang: str, lab: GradientLab | None, k: int, fmt: str = "fp16") -> pd.DataFrame:
    """One row per kind of gradient: non-zero count and fmt's shares at S = 1 and S = 2^k."""
    cols = [t(c, lang) for c in UF_TABLE_COLUMNS]
    if lab is None:
        return pd.DataFrame([], columns=cols)
    rows = []
    for kind in ("activation", "weight"):
        s1, sk = lab.shares(kind, 1.0, fmt), lab.shares(kind, 2.0**k, fmt)
        shares = [
            s1["underflow_share"],
            *(sk[f"{x}_share"] for x in ("underflow", "subnormal", "overflow")),
        ]
        head = [t(f"uf_kind_{kind}", lang), number(lab.magnitudes[kind].nonzero, lang, ",")]
        rows.append(head + [_pct(x, lang) for x in shares])
    return pd.DataFrame(rows, columns=cols)


# The pass is a pure function of its settings and a class presses Compute together: the last
# few passes are kept (a few kB each, no tensors), so a repeated press shows one at once.
@functools.lru_cache(maxsize=8)
def _lab_for(cfg: RunConfig, limits: Limits | None) -> GradientLab:
    """The lab's pass for cfg: a kept one with the same settings, or a new one."""
    return collect(cfg, wait=False, limits=limits)


@on_reset
def forget_labs() -> None:
    """Compute every pass again (mpdemo.reset())."""
    _lab_for.cache_clear()


def underflow_compute(
    lang: str, model: str, batch_size: object, seed: object, limits: Limits | None = None
) -> GradientLab:
    """The lab's one backward pass; bad input is refused as the Train tab refuses it."""
    try:
        name = model or DEFAULT_MODEL
        cfg = RunConfig(
            model=name,
            batch_size=coerce_field("batch_size", batch_size, limits, name),
            seed=coerce_field("seed", seed, limits, name),
            steps=1,  # the first batch is the Train tab's first batch for the same settings
        ).validate(limits)
        return _lab_for(cfg, limits)
    except MpdemoError as err:
        raise gr.Error(
            esc(error_text(err, lang), quote=False), title="mpdemo", print_exception=False
        ) from None


def underflow_view(
    lang: str, lab: GradientLab | None, k: object, fmt: str = "fp16"
) -> tuple[str, str, str, pd.DataFrame, str]:
    """Status, the two histograms, the shares table and a reading at S = 2^k, in format fmt."""
    fmt = fmt if fmt in LOW_PRECISION else "fp16"
    k = int(k or 0)
    k = max(k, binned_k_range(fmt).start)  # bf16 shares fp32's range: S below 1 is not binned
    if lab is None:
        return t("uf_status_idle", lang), "", "", underflow_table(lang, None, k, fmt), ""
    band, name = format_band(fmt), FORMAT_NAMES[fmt]
    status = t("uf_status", lang, model=lab.model, params=number(lab.params, lang, ","),
               batch=lab.batch_size, loss=number(lab.loss, lang, ".4f"),
               layers=lab.activation_layers)  # fmt: skip
    charts = []
    for kind in ("activation", "weight"):  # log2|g*2^k| against fmt's bands
        mags = lab.magnitudes[kind]
        counts = mags.hist(shift=k, lo=CHART_LO, hi=CHART_HI)["counts"]
        title = f"{t(f'uf_chart_{kind}', lang)} · {name} · S = 2^{k}"
        charts.append(histogram_svg(lang, counts, CHART_LO, mags.nonzero, title, band, fmt))
    a1, ak = lab.shares("activation", 1.0, fmt), lab.shares("activation", 2.0**k, fmt)
    w1, wk = lab.shares("weight", 1.0, fmt), lab.shares("weight", 2.0**k, fmt)

    def pc(shares: dict[str, float], what: str) -> str:
        return _pct(shares[f"{what}_share"], lang)

    reading = t("uf_reading", lang, k=k, scale=number(2**k, lang, ","), fmt=name,
                az=pc(ak, "underflow"), wz=pc(wk, "underflow"), az1=pc(a1, "underflow"),
                wz1=pc(w1, "underflow"), ao=pc(ak, "overflow"), wo=pc(wk, "overflow"))  # fmt: skip
    ma, mw = lab.magnitudes["activation"], lab.magnitudes["weight"]
    if ma.nonzero and mw.nonzero:
        ba, bw = best_scale(ma, fmt), best_scale(mw, fmt)
        reading += "\n\n" + t("uf_best", lang, fmt=name, ka=ba["log2"], kw=bw["log2"],
                               na=pc(ba, "normal"), nw=pc(bw, "normal"))  # fmt: skip
        k_best = max(ba["log2"], bw["log2"])
        if k_best > UF_K_MAX:  # say it rather than leave it unreachable
            reading += " " + t("uf_best_beyond", lang, k=k_best, kmax=UF_K_MAX)
        ra, rw = amax_scale(ma, fmt), amax_scale(mw, fmt)
        if fmt in ("e4m3", "e5m2") and ra and rw:
            reading += "\n\n" + t("uf_amax", lang, fmt=name, ka=ra["log2"], kw=rw["log2"],
                                   za=pc(ra, "underflow"), zw=pc(rw, "underflow"),
                                   oa=pc(ra, "overflow"), ow=pc(rw, "overflow"))  # fmt: skip
        # TF32: fp32's range, computed from the same bins
        za, zw = _pct(tf32_below_normal(ma, k), lang), _pct(tf32_below_normal(mw, k), lang)
        reading += "\n\n" + t("uf_tf32", lang, k=k, za=za, zw=zw)
    paper = {"bf16": "uf_paper_bf16", "e4m3": "uf_paper_fp8", "e5m2": "uf_paper_fp8"}
    reading += "\n\n" + t(paper.get(fmt, "uf_paper"), lang, fmt=name)
    return status, charts[0], charts[1], underflow_table(lang, lab, k, fmt), reading


def _model_choices(lang: str) -> list[tuple[str, str]]:
    """The Train tab's model list (same labels), falling back to bare names."""
    try:
        return model_choices(lang, system.hub_status())
    except Exception:  # noqa: BLE001 - a cosmetic list; the names alone still work
        return [(name, name) for name in MODELS]


def build_underflow_tab(ctx: TabContext) -> None:
    """Underflow lab: one real backward pass, gradient histograms against a format's range."""
    with ctx.i18n(gr.Tab(id="underflow", elem_id="underflow-tab"), label="tab_underflow"):
        ctx.i18n(gr.Markdown(), value="uf_intro")
        with gr.Row(equal_height=True):
            model = ctx.i18n(
                gr.Dropdown(
                    _model_choices(DEFAULT_LANG), value=DEFAULT_MODEL, elem_id="uf-model", scale=3
                ),
                label="uf_model_label",
            )
            small = {"precision": 0, "scale": 1, "min_width": 100}
            batch = ctx.i18n(gr.Number(32, **small, elem_id="uf-batch"), label="uf_batch_label")
            seed = ctx.i18n(gr.Number(0, **small, elem_id="uf-seed"), label="uf_seed_label")
            run = ctx.i18n(
                gr.Button(variant="primary", elem_id="uf-run", scale=1), value="uf_run_btn"
            )
        with gr.Row(equal_height=True):
            k = ctx.i18n(
                gr.Slider(0, UF_K_MAX, value=SCALE_K_DEFAULT, step=1, elem_id="uf-scale", scale=3),
                label="uf_scale_label",
                info="uf_scale_info",
            )
            fmt = ctx.i18n(
                gr.Radio(FORMAT_CHOICES, value="fp16", elem_id="uf-format", scale=2),
                label="uf_format_label",
                info="uf_format_info",
            )
        status = gr.Markdown(t("uf_status_idle", DEFAULT_LANG), elem_id="uf-status")
        with gr.Row():
            act = gr.HTML("", elem_id="uf-activation")
            wgt = gr.HTML("", elem_id="uf-weight")
        empty = underflow_table(DEFAULT_LANG, None, SCALE_K_DEFAULT)
        table = ctx.i18n(
            gr.DataFrame(empty, interactive=False, elem_id="uf-table"), label="uf_table_label"
        )
        reading = gr.Markdown("", elem_id="uf-reading")
        lab = gr.State(None)  # inside the Tab: under gr.Tabs a State is a phantom tab
    outputs = [status, act, wgt, table, reading]

    def compute(lang: str, m: str, b: object, s: object) -> Iterator[tuple[Value, Value]]:
        lang = norm_lang(lang)
        try:
            yield underflow_compute(lang, m, b, s, ctx.limits), gr.skip()
        except gr.Error as err:
            # The toast fades: the status line keeps saying what to change, as on the Train tab.
            yield gr.skip(), t("uf_refused", lang, error=err.message)
            raise

    lang = ctx.lang
    # .success: after a refusal the view must not overwrite the status with the idle line.
    run.click(compute, [lang, model, batch, seed], [lab, status], **SIDE_WORK,
              api_visibility="undocumented", show_progress_on=[status]).success(
        underflow_view, [lang, lab, k, fmt], outputs, api_visibility="undocumented",
        show_progress="hidden")  # fmt: skip
    for comp in (k, fmt):
        comp.change(underflow_view, [lang, lab, k, fmt], outputs, **QUIET)

    def on_lang(lang: str, lb: GradientLab | None, kk: int, f: str) -> list[Value]:
        return [*underflow_view(lang, lb, kk, f), gr.update(choices=_model_choices(lang))]

    ctx.on_language(on_lang, [lab, k, fmt], [*outputs, model])
