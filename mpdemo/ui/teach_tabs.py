"""The teaching tabs: Number formats, Underflow lab, Code and Why (with the teacher's presets).

Each `build_*_tab(ctx)` follows mpdemo.ui.app's tab protocol; `TEACH_TABS` lists them in order.
Handlers are plain functions of (lang, *inputs) so tests call them directly. Layout and wiring
only: the numbers come from mpdemo.formats, mpdemo.underflow and mpdemo.listing.
"""

from __future__ import annotations

import hashlib
import html
import math
from collections.abc import Callable
from dataclasses import dataclass
from typing import Any

import gradio as gr
import pandas as pd

from .. import formats
from ..catalog import DEFAULT_MODEL
from ..config import Limits, RunConfig
from ..messages import MpdemoError
from .i18n import DEFAULT_LANG, LOCALES, error_text, norm_lang, number
from .i18n import t as base_t

NF_K_MAX = 48  # number-format slider: enough for 1e-8 to overflow (at 2^43)
NF_K_MIN = -24  # ... and below 1: fp8's per-tensor scale shrinks large values into E4M3's range
# How the formats are named on the page: torch's fp8 dtypes as the fp8 papers name them.
FORMAT_NAMES = {"fp32": "fp32", "fp16": "fp16", "bf16": "bf16", "e4m3": "E4M3", "e5m2": "E5M2"}
SCALE_FORMATS = ("fp16", "bf16", "e4m3", "e5m2")  # formats.LOW_PRECISION, without torch
FORMAT_CHOICES = [(FORMAT_NAMES[f], f) for f in SCALE_FORMATS]
# Underflow-lab slider: S from 1 to 2^32. The issue asked for 2^24 (the paper's range), but the
# lab's own best scale for tiny-bert's fp16 activation gradients was 2^26 (e4m3: 2^28).
UF_K_MAX = 32
UF_K_DEFAULT = 16  # GradScaler's init_scale
CHART_LO, CHART_HI = -60, 32  # log2 axis of the histograms (|g*S|); beyond: the end bars

# Presets: RunConfig fields plus the Train tab's `backends`, `precisions` and `compare_scaling`
# (each fp16 run also unscaled: "fp16 without scaling vs the scaled run"). preset_configs()
# turns a preset into the exact list of RunConfigs the Train tab will run.
PRESET_EXTRA_KEYS = ("backends", "precisions", "compare_scaling")
PRESETS: dict[str, dict[str, Any]] = {
    "fp16_vs_fp32_gpu": {
        "model": "small-bert",
        "device": "cuda",
        "batch_size": 64,
        "steps": 100,
        "loss_scaling": True,
        "backends": ["torch"],
        "precisions": ["fp32", "fp16"],
    },
    "bf16_cpu": {
        "model": "small-bert",
        "device": "cpu",
        "batch_size": 32,
        "steps": 30,
        "backends": ["torch"],
        "precisions": ["fp32", "bf16"],
    },
    "underflow_no_scaling": {
        "model": "tiny-bert",
        "device": "auto",
        "steps": 100,
        "loss_scaling": True,
        "compare_scaling": True,  # fp16 scaled and unscaled, side by side
        "backends": ["torch"],
        "precisions": ["fp32", "fp16"],
    },
    "scale_moves": {
        "model": "tiny-bert",
        "device": "auto",
        "steps": 100,
        "loss_scaling": True,
        "init_scale": 65536.0,
        "growth_interval": 10,
        "backends": ["torch"],
        "precisions": ["fp16"],
    },
}

# Colours with explicit foreground and background so the figures read in light and dark mode.
BAND_COLORS = {"zero": "#fde2e1", "sub": "#fef3c7", "normal": "#dcfce7", "over": "#fecaca"}
BAR_COLORS = {"zero": "#b42318", "sub": "#b45309", "normal": "#166534", "over": "#7f1d1d"}
INK = "#1f2937"
# The sign / exponent / mantissa colours of formats.render_bits_html, for the legend.
LEGEND_STYLES = (
    "background:#fde2e1;color:#b42318",
    "background:#dcfce7;color:#166534",
    "background:#dbeafe;color:#1e40af",
)


def tt(key: str, lang: str | None, **args: Any) -> str:
    """A teaching string in lang: the same tables as t() (every locale file has every key)."""
    return base_t(key, lang, **args)


def _esc(text: Any) -> str:
    return html.escape(str(text), quote=True)


def _pct(x: float, lang: str) -> str:
    """A share as a percentage in lang's digits, small ones kept visible (0.004%, not 0.0%)."""
    if x == 0:
        return "0%"
    return number(x * 100, lang, ".2g" if x < 0.001 else ".1f") + "%"


def _num(x: float | None) -> str:
    """A number for a table cell, with '= 2^k' when it is an exact power of two."""
    if x is None:
        return "–"
    if not math.isfinite(x):
        return str(x)
    text = f"{x:.7g}"
    mant, exp = math.frexp(x)
    if mant == 0.5:
        text += f" = 2^{exp - 1}"
    return text


# --- Number formats ----------------------------------------------------------------------------

NF_TABLE_COLUMNS = [
    ("format", "nf_th_format"),
    ("bits", "nf_th_bits"),
    ("exponent_bits", "nf_th_exp_bits"),
    ("mantissa_bits", "nf_th_man_bits"),
    ("max", "nf_th_max"),
    ("min_normal", "nf_th_min_normal"),
    ("min_subnormal", "nf_th_min_subnormal"),
    ("eps", "nf_th_eps"),
]


def format_table_frame(lang: str) -> pd.DataFrame:
    """formats.format_table() (torch.finfo) with translated headers; numbers as text cells."""
    rows = formats.format_table()
    data = [
        [r[k] if isinstance(r[k], (str, int)) else _num(r[k]) for k, _ in NF_TABLE_COLUMNS]
        for r in rows
    ]
    return pd.DataFrame(data, columns=[tt(key, lang) for _, key in NF_TABLE_COLUMNS])


def _cast_word(stored: float, lang: str) -> str:
    """What an out-of-range value became: infinity, NaN, or +-max (a saturating cast)."""
    if math.isnan(stored):
        return tt("nf_cast_nan", lang)
    return tt("nf_cast_inf" if math.isinf(stored) else "nf_cast_saturate", lang)


def _category_text(enc: dict, lang: str) -> str:
    text = tt(f"nf_cat_{enc['category']}", lang)
    if enc.get("saturated"):
        text += f" · {tt('nf_saturated', lang, max=_num(abs(enc['stored'])))}"
    elif enc.get("overflow"):
        key = "nf_overflowed_nan" if math.isnan(enc["stored"]) else "nf_overflowed"
        text += f" · {tt(key, lang)}"
    elif enc.get("underflow"):
        text += f" · {tt('nf_underflowed', lang)}"
    return text


def fp8_cast_note(lang: str) -> str:
    """What torch's cast does past E4M3's and E5M2's largest values, measured on this machine."""
    import torch

    words = {}
    for fmt in ("e4m3", "e5m2"):
        how = formats.cast_overflow(fmt)  # cast 4x past the range and look at the result
        words[fmt] = tt(f"nf_cast_{how}", lang)
    return tt("nf_fp8_cast", lang, torch=torch.__version__.split("+")[0], **words)


def _table(headers: list[str], rows: list[list[str]]) -> str:
    """A small HTML table; cells are already escaped HTML."""
    cell = "padding:4px 10px;border-bottom:1px solid #d1d5db;text-align:left;vertical-align:top"
    head = "".join(f'<th style="{cell}">{h}</th>' for h in headers)
    body = "".join(
        "<tr>" + "".join(f'<td style="{cell}">{c}</td>' for c in r) + "</tr>" for r in rows
    )
    return f'<table style="border-collapse:collapse;width:100%"><tr>{head}</tr>{body}</table>'


def _literal(value: Any, lang: str) -> Any:
    """'0,1' typed on a page that writes decimals with a comma is 0.1; '0.1' works everywhere.

    The tables keep Python's notation (6.103516e-05): they show float literals, bit by bit.
    """
    comma = LOCALES[norm_lang(lang)].style.decimal == ","
    if comma and isinstance(value, str) and "," in value and "." not in value:
        return value.replace(",", ".")
    return value


def formats_html(lang: str, value: Any) -> str:
    """value in fp32, fp16, bf16, E4M3 and E5M2: coloured bits, stored value, errors, class."""
    value = _literal(value, lang)
    try:
        encs = formats.encode_all(value)
    except ValueError:
        return f'<p class="mp-error">{_esc(tt("nf_bad_input", lang))}</p>'
    headers = [
        _esc(tt(k, lang))
        for k in (
            "nf_col_format",
            "nf_col_bits",
            "nf_col_stored",
            "nf_col_abs_err",
            "nf_col_rel_err",
            "nf_col_class",
        )
    ]
    rows = [
        [
            f"<b>{_esc(FORMAT_NAMES[e['format']])}</b>",
            formats.render_bits_html(e),
            f"<code>{_esc(repr(e['stored']))}</code>",
            _esc(_err(e["abs_error"])),
            _esc(_err(e["rel_error"])),
            _esc(_category_text(e, lang)),
        ]
        for e in encs
    ]
    legend = (
        '<p style="margin:4px 0">'
        + " · ".join(
            f'<span style="{style};padding:0 4px">{_esc(word)}</span>'
            for style, word in zip(LEGEND_STYLES, tt("nf_legend", lang).split(" · "), strict=False)
        )
        + "</p>"
    )
    note = f'<p class="mp-fp8-cast" style="margin-top:6px">{_md_inline(fp8_cast_note(lang))}</p>'
    return legend + _table(headers, rows) + note


def _err(x: float | None) -> str:
    if x is None:
        return "–"
    return "0" if x == 0 else f"{x:.3g}"


def _class_of(enc: dict) -> str:
    """zero | subnormal | normal | inf (any overflow: inf, NaN or saturated) | nan."""
    return "inf" if enc["overflow"] else enc["category"]


def _window(lang: str, x: float, fmt: str = "fp16") -> str:
    """The ranges of k where x*2^k flushes, is subnormal, normal, or overflows in fmt."""
    runs: list[list[Any]] = []  # [category, first k, last k]
    for k in range(NF_K_MIN, NF_K_MAX + 1):
        cat = _class_of(formats.encode(x * 2.0**k, fmt))
        if runs and runs[-1][0] == cat:
            runs[-1][2] = k
        else:
            runs.append([cat, k, k])
    parts = []
    name = FORMAT_NAMES[fmt]
    for cat, a, b in runs:
        if cat == "zero":
            parts.append(tt("nf_window_zero", lang, k=b))
        elif cat == "subnormal":
            parts.append(tt("nf_window_sub", lang, a=a, b=b))
        elif cat == "normal":
            parts.append(tt("nf_window_normal", lang, a=a, b=b, fmt=name))
        elif cat == "inf":
            parts.append(tt("nf_window_inf", lang, k=a))
    return tt("nf_window", lang, x=f"{x:g}", kmin=NF_K_MIN, kmax=NF_K_MAX, parts="; ".join(parts))


def scale_html(lang: str, value: Any, k: Any, fmt: str = "fp16") -> str:
    """value × 2^k stored in fmt (fp16 by default): what survives, what is lost, what overflows."""
    fmt = fmt if fmt in SCALE_FORMATS else "fp16"
    value = _literal(value, lang)
    try:
        k = int(k)
        r = formats.scale_survival(value, 2.0**k)
        bf16 = formats.encode(value, "bf16")
    except (TypeError, ValueError):
        return f'<p class="mp-error">{_esc(tt("nf_bad_input", lang))}</p>'
    x, got, name = r["value"], r["formats"][fmt], FORMAT_NAMES[fmt]
    rel = got["rel_error"]  # in a sentence: the page's digits ("error relativo 0,000283")
    err = "–" if rel is None else "0" if rel == 0 else number(rel, lang, ".3g")
    cat = "inf" if got["overflow"] else got["category"]
    if x == 0 or math.isinf(x):
        verdict = ""
    elif cat == "nan" or math.isnan(x):
        verdict = tt("nf_v_nan", lang)
    elif cat == "inf":
        top = formats.format_range(fmt)["max"]
        verdict = tt(
            "nf_v_inf", lang, fmt=name, max=_num(top), what=_cast_word(got["stored"], lang)
        )
        if fmt == "fp16":  # the format GradScaler guards
            verdict += " " + tt("nf_v_inf_scaler", lang)
        elif fmt in ("e4m3", "e5m2"):
            verdict += " " + tt("nf_v_inf_fp8", lang)
    else:
        key = {"zero": "nf_v_zero", "subnormal": "nf_v_subnormal"}
        verdict = tt(key.get(cat, "nf_v_normal"), lang, err=err, fmt=name)
    rows = [
        (tt("nf_sc_value", lang), f"{x:g}"),
        (tt("nf_sc_scale", lang), f"2^{k} = {2.0**k:g}"),
        (tt("nf_sc_scaled", lang), f"{r['scaled']:g}"),
        (
            tt("nf_sc_fp16", lang, fmt=name),
            f"{got['stored']!r} ({tt('nf_cat_' + got['category'], lang)})",
        ),
        (tt("nf_sc_recovered", lang), f"{got['recovered']!r}"),
        (tt("nf_sc_rel_err", lang), err),
        (tt("nf_sc_bf16", lang), f"{bf16['stored']!r} ({tt('nf_cat_' + bf16['category'], lang)})"),
    ]
    out = _table(["", ""], [[_esc(a), f"<code>{_esc(b)}</code>"] for a, b in rows])
    md = _md_inline(verdict)
    window = _window(lang, x, fmt) if math.isfinite(x) and x != 0 else ""
    return (
        f'<p class="mp-verdict" data-category="{_esc(cat)}" data-format="{_esc(fmt)}">{md}</p>'
        + out
        + (f'<p style="margin-top:6px">{_esc(window)}</p>' if window else "")
    )


def _md_inline(text: str) -> str:
    """Escape text, then turn **bold** into <b> and `code` into <code>: our strings' markup."""
    parts = _esc(text).split("**")
    bold = "".join(f"<b>{p}</b>" if i % 2 else p for i, p in enumerate(parts))
    code = bold.split("`")
    return "".join(f"<code>{p}</code>" if i % 2 else p for i, p in enumerate(code))


# --- Underflow lab -----------------------------------------------------------------------------


def _band_of_bin(b: int, band: dict[str, float]) -> str:
    """Where the values of log2 bin [b, b+1) land in the format (by the bin's lower edge)."""
    if b < band["min_subnormal_log2"]:
        return "zero"
    if b < band["min_normal_log2"]:
        return "sub"
    if b < band["max_log2"]:
        return "normal"
    return "over"


def histogram_svg(
    lang: str, mags: Any, k: int, title: str, band: dict[str, float], fmt: str = "fp16"
) -> str:
    """An SVG histogram of log2|g*2^k| with fmt's zero/subnormal/normal/overflow bands."""
    hist = mags.hist(shift=k, lo=CHART_LO, hi=CHART_HI)
    counts = hist["counts"]
    total = max(mags.nonzero, 1)
    peak = max(max(counts), 1) / total
    w, h, left, right, top, bottom = 680, 250, 52, 12, 30, 44
    pw, ph = w - left - right, h - top - bottom
    span = CHART_HI - CHART_LO

    def x_of(v: float) -> float:
        return left + (min(max(v, CHART_LO), CHART_HI) - CHART_LO) / span * pw

    parts = [
        f'<svg xmlns="http://www.w3.org/2000/svg" viewBox="0 0 {w} {h}" role="img" '
        f'style="width:100%;max-width:{w}px;background:#ffffff;border-radius:6px" '
        'font-family="ui-sans-serif,system-ui,sans-serif" '
        f'aria-label="{_esc(title)}">',
        f'<text x="{left}" y="18" font-size="14" font-weight="600" fill="{INK}">'
        f"{_esc(title)}</text>",
    ]
    edges = [
        ("zero", CHART_LO, band["min_subnormal_log2"], "uf_band_zero"),
        ("sub", band["min_subnormal_log2"], band["min_normal_log2"], "uf_band_sub"),
        ("normal", band["min_normal_log2"], band["max_log2"], "uf_band_normal"),
        ("over", band["max_log2"], CHART_HI, "uf_band_over"),
    ]
    for name, lo, hi, key in edges:
        x0, x1 = x_of(lo), x_of(hi)
        parts.append(
            f'<rect class="mp-band" data-band="{name}" x="{x0:.1f}" y="{top}" '
            f'width="{x1 - x0:.1f}" height="{ph}" fill="{BAND_COLORS[name]}"/>'
        )
        parts.append(
            f'<text x="{(x0 + x1) / 2:.1f}" y="{top + 12}" font-size="10" text-anchor="middle" '
            f'fill="{BAR_COLORS[name]}">{_esc(tt(key, lang, fmt=FORMAT_NAMES[fmt]))}</text>'
        )
    bw = pw / span
    for i, n in enumerate(counts):
        if not n:
            continue
        b = CHART_LO + i
        share = n / total
        bh = max(share / peak * (ph - 16), 1.0)  # 1 px minimum: rare bins stay visible
        tip = tt("uf_bar_tip", lang, lo=b, hi=b + 1, n=n, share=_pct(share, lang))
        parts.append(
            f'<rect class="mp-bar" data-log2="{b}" data-count="{n}" x="{x_of(b) + 0.5:.1f}" '
            f'y="{top + ph - bh:.1f}" width="{max(bw - 1, 1):.1f}" height="{bh:.1f}" '
            f'fill="{BAR_COLORS[_band_of_bin(b, band)]}"><title>{_esc(tip)}</title></rect>'
        )
    for v in (band["min_subnormal_log2"], band["min_normal_log2"], band["max_log2"]):
        parts.append(
            f'<line x1="{x_of(v):.1f}" x2="{x_of(v):.1f}" y1="{top}" y2="{top + ph}" '
            f'stroke="{INK}" stroke-dasharray="3,3" stroke-width="1"/>'
        )
    axis_y = top + ph
    parts.append(f'<line x1="{left}" x2="{left + pw}" y1="{axis_y}" y2="{axis_y}" stroke="{INK}"/>')
    for v in range(-56, CHART_HI + 1, 8):
        parts.append(
            f'<text x="{x_of(v):.1f}" y="{axis_y + 14}" font-size="10" text-anchor="middle" '
            f'fill="{INK}">{v}</text>'
        )
    parts.append(
        f'<text x="{left + pw / 2:.1f}" y="{h - 6}" font-size="11" text-anchor="middle" '
        f'fill="{INK}">{_esc(tt("uf_axis_x", lang))} · {_esc(tt("uf_clamped", lang))}</text>'
    )
    parts.append(
        f'<text x="14" y="{top + ph / 2:.1f}" font-size="11" text-anchor="middle" fill="{INK}" '
        f'transform="rotate(-90 14 {top + ph / 2:.1f})">{_esc(tt("uf_axis_y", lang))}</text>'
    )
    parts.append(
        f'<text x="{left - 4}" y="{top + 16}" font-size="10" text-anchor="end" fill="{INK}">'
        f"{_esc(_pct(peak, lang))}</text>"
    )
    parts.append("</svg>")
    return "".join(parts)


UF_TABLE_COLUMNS = ["uf_col_kind", "uf_col_nonzero", "uf_col_zero1", "uf_col_zeroS",
                    "uf_col_subS", "uf_col_overS"]  # fmt: skip


def underflow_table(lang: str, lab: Any, k: int, fmt: str = "fp16") -> pd.DataFrame:
    """One row per kind of gradient: non-zero count and fmt's shares at S = 1 and S = 2^k."""
    cols = [tt(c, lang) for c in UF_TABLE_COLUMNS]
    if lab is None:
        return pd.DataFrame([], columns=cols)
    rows = []
    for kind in ("activation", "weight"):
        s1, sk = lab.shares(kind, 1.0, fmt), lab.shares(kind, 2.0**k, fmt)
        rows.append(
            [
                tt(f"uf_kind_{kind}", lang),
                number(lab.magnitudes[kind].nonzero, lang, ","),
                _pct(s1["underflow_share"], lang),
                _pct(sk["underflow_share"], lang),
                _pct(sk["subnormal_share"], lang),
                _pct(sk["overflow_share"], lang),
            ]
        )
    return pd.DataFrame(rows, columns=cols)


def underflow_compute(
    lang: str, model: str, batch_size: Any, seed: Any, limits: Limits | None = None
) -> Any:
    """Run the lab's one backward pass (in the engine) and return its GradientLab."""
    from ..underflow import collect

    try:
        cfg = RunConfig(
            model=model or DEFAULT_MODEL,
            batch_size=int(batch_size),
            seed=int(seed),
            steps=1,  # the first batch is the Train tab's first batch for the same settings
        ).validate(limits)
        return collect(cfg, wait=False, limits=limits)
    except MpdemoError as err:
        raise gr.Error(error_text(err, lang), title="mpdemo", print_exception=False) from None
    except (TypeError, ValueError) as err:
        raise gr.Error(str(err), title="mpdemo", print_exception=False) from None


def underflow_view(
    lang: str, lab: Any, k: Any, fmt: str = "fp16"
) -> tuple[str, str, str, pd.DataFrame, str]:
    """Status, the two histograms, the shares table and a reading at S = 2^k, in format fmt."""
    from ..underflow import amax_scale, best_scale, binned_k_range, format_band

    fmt = fmt if fmt in SCALE_FORMATS else "fp16"
    k = int(k or 0)
    k = max(k, binned_k_range(fmt).start)  # bf16 shares fp32's range: S below 1 is not binned
    if lab is None:
        return tt("uf_status_idle", lang), "", "", underflow_table(lang, None, k, fmt), ""
    band, name = format_band(fmt), FORMAT_NAMES[fmt]
    status = tt(
        "uf_status",
        lang,
        model=lab.model,
        params=number(lab.params, lang, ","),
        batch=lab.batch_size,
        loss=number(lab.loss, lang, ".4f"),
        layers=lab.activation_layers,
    )
    charts = [
        histogram_svg(
            lang,
            lab.magnitudes[kind],
            k,
            f"{tt(f'uf_chart_{kind}', lang)} · {name} · S = 2^{k}",
            band,
            fmt,
        )
        for kind in ("activation", "weight")
    ]
    a1, ak = lab.shares("activation", 1.0, fmt), lab.shares("activation", 2.0**k, fmt)
    w1, wk = lab.shares("weight", 1.0, fmt), lab.shares("weight", 2.0**k, fmt)
    reading = tt(
        "uf_reading",
        lang,
        k=k,
        scale=number(2**k, lang, ","),
        fmt=name,
        az=_pct(ak["underflow_share"], lang),
        wz=_pct(wk["underflow_share"], lang),
        az1=_pct(a1["underflow_share"], lang),
        wz1=_pct(w1["underflow_share"], lang),
        ao=_pct(ak["overflow_share"], lang),
        wo=_pct(wk["overflow_share"], lang),
    )
    ma, mw = lab.magnitudes["activation"], lab.magnitudes["weight"]
    if ma.nonzero and mw.nonzero:
        ba, bw = best_scale(ma, fmt), best_scale(mw, fmt)
        reading += "\n\n" + tt(
            "uf_best",
            lang,
            fmt=name,
            ka=ba["log2"],
            kw=bw["log2"],
            na=_pct(ba["normal_share"], lang),
            nw=_pct(bw["normal_share"], lang),
        )
        if max(ba["log2"], bw["log2"]) > UF_K_MAX:  # say it rather than leave it unreachable
            k_best = max(ba["log2"], bw["log2"])
            reading += " " + tt("uf_best_beyond", lang, k=k_best, kmax=UF_K_MAX)
        ra, rw = amax_scale(ma, fmt), amax_scale(mw, fmt)
        if fmt in ("e4m3", "e5m2") and ra and rw:
            reading += "\n\n" + tt(
                "uf_amax",
                lang,
                fmt=name,
                ka=ra["log2"],
                kw=rw["log2"],
                za=_pct(ra["underflow_share"], lang),
                zw=_pct(rw["underflow_share"], lang),
                oa=_pct(ra["overflow_share"], lang),
                ow=_pct(rw["overflow_share"], lang),
            )
    paper = {"bf16": "uf_paper_bf16", "e4m3": "uf_paper_fp8", "e5m2": "uf_paper_fp8"}
    reading += "\n\n" + tt(paper.get(fmt, "uf_paper"), lang, fmt=name)
    return status, charts[0], charts[1], underflow_table(lang, lab, k, fmt), reading


# --- Code --------------------------------------------------------------------------------------

# Explicit foreground and background, so the highlights read in light and dark mode.
CODE_STYLES = {
    "changed": "background:#fef3c7;color:#713f12",
    "new": "background:#dcfce7;color:#14532d",
    "mpdemo": "background:#e5e7eb;color:#4b5563",
}
CODE_PRE = (
    "margin:0;padding:8px 0;background:#f9fafb;color:#1f2937;border:1px solid #e5e7eb;"
    "border-radius:6px;font-size:13px;line-height:1.45;overflow-x:auto"
)
CODE_SETTINGS = ("model", "dataset", "device", "steps", "batch_size", "lr", "seed",
                 "loss_scaling", "init_scale", "growth_interval")  # fmt: skip


def why_key(english: str) -> str:
    """The locale key of a listing's explanation: a digest of the source's English comment.

    The comment in the backend's source is the explanation; locale files hold translations
    under this key, so an edited comment has no stale translation (tests ask for new ones).
    """
    return "code_why_" + hashlib.sha1(english.encode("utf-8")).hexdigest()[:8]


def why_text(english: str, lang: str) -> str:
    """An explanation in `lang`; the source's own English where no translation exists."""
    key = why_key(english)
    text = tt(key, lang)
    return english if text == key else text


def pick_run(configs: list[RunConfig], current: str | None) -> RunConfig:
    """The grid's run the Code tab shows: the one picked, else the first in mixed precision."""
    for cfg in configs:
        if cfg.label == current:
            return cfg
    mixed = [c for c in configs if c.precision != "fp32"]
    return (mixed or configs)[0]


# A code-run value that names the Train tab's settings rather than a run: "form:torch · bf16".
FORM_PREFIX = "form:"


@dataclass(frozen=True)
class CodeEntry:
    """One choice of the Code tab's run picker: a run of this page, or the Train tab's settings."""

    value: str  # the radio's value: the run's label, or FORM_PREFIX + label
    cfg: RunConfig
    ran: bool  # a run of this page (its own config), not the Train tab's current settings


def page_runs(session: Any) -> list[RunConfig]:
    """The page's runs that started (finished, restored after a reload, or running), each with
    its own config as it ran; a run of the grid still waiting has not run (its steps may still
    be fitted to the time budget), so the Train tab's settings stand for it."""
    if session is None:
        return []
    started = [*getattr(session, "runs", []), *list(getattr(session, "current", {}).values())]
    out: dict[str, RunConfig] = {}
    for run in started:
        data = run.get("config") if isinstance(run, dict) else None
        if isinstance(data, dict):
            try:
                cfg = RunConfig.from_dict(data)
            except (TypeError, ValueError):  # a config this version cannot read: no code for it
                continue
            out.setdefault(cfg.label, cfg)
    return list(out.values())


def code_entries(runs: list[RunConfig], form: list[RunConfig]) -> list[CodeEntry]:
    """This page's runs (their own configs), then the Train tab's grid where it differs."""
    out = [CodeEntry(c.label, c, True) for c in runs]
    out += [CodeEntry(FORM_PREFIX + c.label, c, False) for c in form if c not in runs]
    return out


def choose_entry(
    entries: list[CodeEntry], current: str | None, prefer: str | None
) -> CodeEntry | None:
    """The entry to show: the picked one, or its counterpart on the side `prefer` names.

    prefer="form": the Train tab's settings just changed, show them; "run": the runs changed
    (a training, a reload, Clear runs), show the run; None: keep the pick as it is.
    """
    by_value = {e.value: e for e in entries}
    label = (current or "").removeprefix(FORM_PREFIX)
    order = {
        "form": [FORM_PREFIX + label, label],
        "run": [label, FORM_PREFIX + label],
    }.get(prefer or "", [current or "", label, FORM_PREFIX + label])
    for value in order:
        if value in by_value:
            return by_value[value]
    side = [e for e in entries if e.ran == (prefer != "form")] or entries
    if not side:
        return None
    cfg = pick_run([e.cfg for e in side], None)
    return next(e for e in side if e.cfg is cfg)


def listing_html(lst: Any, lang: str) -> str:
    """The loop as it runs, comments taken out: lines that differ from the course highlighted,
    numbered like the explanations below (mpdemo's own lines grey, lettered)."""
    numbers = {why: str(i) for i, why in enumerate(lst.changes(), start=1)}
    letters = {why: chr(ord("a") + i) for i, why in enumerate(lst.mpdemo_lines())}
    rows, last = [], None
    for ln in lst.lines:
        if ln.kind == "neutral" and not ln.code.strip() and ln.text.strip():
            continue  # a comment line: its words are in the list below
        mark = (numbers if ln.kind != "mpdemo" else letters).get(ln.why or "")
        style = CODE_STYLES.get(ln.kind, "")
        sup = ""
        if mark and (ln.why, ln.kind) != last:  # once per run of lines with one explanation
            sup = f'<sup style="font-weight:700;padding-left:6px">{mark}</sup>'
        last = (ln.why, ln.kind) if mark else None
        rows.append(
            f'<span class="mp-ln" data-kind="{ln.kind}" style="display:block;padding:0 10px;'
            f'{style}">{_esc(ln.code.rstrip()) or " "}{sup}</span>'
        )
    return (
        f'<div class="mp-listing" id="code-listing" data-backend="{lst.cfg.backend}" '
        f'data-precision="{lst.cfg.precision}" data-steps="{lst.cfg.steps}">'
        f'<pre style="{CODE_PRE}"><code>{"".join(rows)}</code></pre></div>'
    )


def changes_md(lst: Any, lang: str) -> str:
    """Why the loop differs from the course's, then what mpdemo's own lines do: both read from
    the comments in the backend's source (mpdemo.listing), in the order of the lines."""
    out = [f"#### {tt('code_changes_title', lang)}"]
    out += [f"{i}. {why_text(w, lang)}" for i, w in enumerate(lst.changes(), start=1)]
    out.append(f"#### {tt('code_mpdemo_title', lang)}")
    out += [
        f"- **{chr(ord('a') + i)}** · {why_text(w, lang)}" for i, w in enumerate(lst.mpdemo_lines())
    ]
    if lst.removed:  # course lines this loop has no counterpart for
        out.append(f"#### {tt('code_removed_title', lang)}")
        out += [f"- `{line.strip()}`" for line in lst.removed]
    return "\n".join(out)


def settings_md(cfg: RunConfig, device: str, lang: str, ran: bool = False) -> str:
    """The settings this listing was filled in with: a run's own, or the Train tab's."""
    shown = {**{k: getattr(cfg, k) for k in CODE_SETTINGS}, "device": device}
    items = " · ".join(f"`{k}={v}`" for k, v in shown.items())
    key = "code_settings_run" if ran else "code_settings"
    return tt(key, lang, run=f"`{cfg.label}`", settings=items)


def code_view(
    lang: str,
    values: dict[str, Any],
    current: str | None = None,
    limits: Limits | None = None,
    runs: list[RunConfig] | None = None,
    prefer: str | None = None,
) -> dict[str, Any]:
    """The Code tab: every output, by name ("picked" is the value to remember).

    `runs` are this page's runs (page_runs: finished, running, or back after a reload); each
    shows its own config, as the Train tab's "Python script" does. The Train tab's values (by
    control name) add its grid (check_inputs: what Train would refuse is refused here too)
    wherever it differs from the runs, titled as not run yet.
    """
    from .. import listing as L
    from .train_tab import check_inputs

    runs = list(runs or [])
    try:
        form, form_error = check_inputs(values, limits), None
    except MpdemoError as err:
        form, form_error = [], err
    entries = code_entries(runs, form)
    entry = choose_entry(entries, current, prefer)
    choices = [
        (e.cfg.label if e.ran else tt("code_run_form", lang, label=e.cfg.label), e.value)
        for e in entries
    ]
    if form_error is not None and (prefer == "form" or entry is None):
        entry = None  # the settings just typed are refused: say why, not an older run's code
    error = form_error
    if entry is not None:
        try:
            lst = L.listing(entry.cfg)
        except MpdemoError as err:  # e.g. a restored run's device is not on this machine
            entry, error = None, err
    if entry is None:
        bad = tt("code_bad_settings", lang, error=error_text(error, lang)) if error else ""
        return {
            "run": gr.update(choices=choices, value=None),
            "settings": bad,
            "listing": "",
            "course": "",
            "changes": "",
            "script": "# " + bad if bad else "",
            "picked": None,
        }
    return {
        "run": gr.update(choices=choices, value=entry.value),
        "settings": settings_md(entry.cfg, lst.device, lang, entry.ran),
        "listing": listing_html(lst, lang),
        "course": lst.course,
        "changes": changes_md(lst, lang),
        "script": L.script_of(lst),
        "picked": entry.value,
    }


# --- Why and presets ---------------------------------------------------------------------------


def preset_fields(preset_id: str) -> dict[str, Any]:
    """The RunConfig fields a preset sets (no backends/precisions/compare_scaling)."""
    return {k: v for k, v in PRESETS[preset_id].items() if k not in PRESET_EXTRA_KEYS}


def preset_configs(preset_id: str) -> list[RunConfig]:
    """Every run a preset asks for, in order: the Train tab's own grid of its settings."""
    from ..runner import grid

    p = PRESETS[preset_id]
    base = RunConfig(**preset_fields(preset_id))
    return grid(base, p["backends"], p["precisions"], p.get("compare_scaling", False))


def preset_values(preset_id: str | None, defaults: dict[str, Any]) -> dict[str, Any]:
    """The Train tab's control values a preset loads (the tab's defaults where it is silent)."""
    if not preset_id or preset_id not in PRESETS:
        return {}
    p = PRESETS[preset_id]
    return {name: p.get(name, default) for name, default in defaults.items()}


def _preset_settings(preset_id: str) -> str:
    return ", ".join(
        f"`{k}={', '.join(v) if isinstance(v, list) else v}`"
        for k, v in PRESETS[preset_id].items()
        if k != "compare_scaling"
    )


def preset_load(
    lang: str, preset_id: str | None, defaults: dict[str, Any], devices: list[str]
) -> tuple[dict[str, Any], str]:
    """(values for the Train tab's controls, the status line that says what was loaded).

    A preset asking for a device this machine lacks (the GPU preset on a laptop) loads with
    device=auto, and the status says so rather than loading silently.
    """
    values = preset_values(preset_id, defaults)
    if not values or preset_id is None:
        return {}, ""
    lines = [
        tt("status_preset", lang, name=tt(f"preset_{preset_id}", lang),
           settings=_preset_settings(preset_id))
    ]  # fmt: skip
    if values.get("device") not in devices:
        values["device"] = "auto"
        lines.append(tt("status_preset_no_gpu", lang))
    return values, "\n\n".join(lines)


def preset_choices(lang: str) -> list[tuple[str, str]]:
    """Dropdown entries (translated name, preset id)."""
    return [(tt(f"preset_{pid}", lang), pid) for pid in PRESETS]


def preset_view(lang: str, preset_id: str | None) -> str:
    """A preset's description, the settings it loads and the runs it makes."""
    if not preset_id or preset_id not in PRESETS:
        return tt("preset_none", lang)
    settings = _preset_settings(preset_id)
    runs = ", ".join(
        cfg.label + ("" if cfg.precision != "fp16" or cfg.loss_scaling else " (loss_scaling=off)")
        for cfg in preset_configs(preset_id)
    )
    return "\n\n".join(
        [
            tt(f"preset_{preset_id}_desc", lang),
            tt("preset_sets", lang, settings=settings),
            tt("preset_runs", lang, runs=runs),
        ]
    )


WHY_KEYS = ("why_autocast", "why_scale", "why_speed", "why_bf16", "why_fp8")


# --- builders ----------------------------------------------------------------------------------


def _share(ctx: Any, name: str, value: Any) -> None:
    """Expose a component to the lead's cross-tab wiring when the context offers a `shared` dict."""
    shared = getattr(ctx, "shared", None)
    if isinstance(shared, dict):
        shared[name] = value


def _model_choices(lang: str) -> list[tuple[str, str]]:
    """The Train tab's model list (same labels), falling back to bare names."""
    try:
        from . import system
        from .train_tab import model_choices

        return model_choices(lang, system.hub_status())
    except Exception:  # noqa: BLE001 - a cosmetic list; the names alone still work
        from ..catalog import MODELS

        return [(name, name) for name in MODELS]


def build_formats_tab(ctx: Any) -> None:
    """Number formats: bits of a typed number (fp32 to fp8), the finfo table, the scale slider."""
    lang0 = DEFAULT_LANG
    with ctx.i18n(
        gr.Tab(tt("tab_formats", lang0), id="formats", elem_id="formats-tab"), label="tab_formats"
    ):
        ctx.i18n(gr.Markdown(tt("nf_intro", lang0)), value="nf_intro")
        value = ctx.i18n(
            gr.Textbox(
                "0.1",
                label=tt("nf_value_label", lang0),
                info=tt("nf_value_info", lang0),
                max_lines=1,
                max_length=formats.MAX_INPUT_LEN,
                elem_id="nf-value",
            ),
            label="nf_value_label",
            info="nf_value_info",
        )
        # Filled on page load: torch.finfo would cost the app's cold start a torch import.
        bits = gr.HTML("", elem_id="nf-bits")
        table = ctx.i18n(
            gr.DataFrame(
                None,
                label=tt("nf_table_label", lang0),
                interactive=False,
                elem_id="nf-table",
            ),
            label="nf_table_label",
        )
        ctx.i18n(gr.Markdown(tt("nf_scale_title", lang0)), value="nf_scale_title")
        with gr.Row():
            small = ctx.i18n(
                gr.Textbox(
                    "1e-8",
                    label=tt("nf_small_label", lang0),
                    max_lines=1,
                    max_length=formats.MAX_INPUT_LEN,
                    elem_id="nf-small",
                    scale=1,
                ),
                label="nf_small_label",
            )
            k = ctx.i18n(
                gr.Slider(
                    NF_K_MIN,
                    NF_K_MAX,
                    value=UF_K_DEFAULT,
                    step=1,
                    label=tt("nf_scale_label", lang0),
                    info=tt("nf_scale_info", lang0),
                    elem_id="nf-scale",
                    scale=2,
                ),
                label="nf_scale_label",
                info="nf_scale_info",
            )
            fmt = ctx.i18n(
                gr.Radio(FORMAT_CHOICES, value="fp16", label=tt("nf_scale_format_label", lang0),
                         elem_id="nf-scale-format", scale=1),
                label="nf_scale_format_label",
            )  # fmt: skip
        survival = gr.HTML("", elem_id="nf-survival")

    lang = ctx.lang
    opts = {"concurrency_limit": None, "api_visibility": "undocumented", "show_progress": "hidden"}
    value.change(formats_html, [lang, value], [bits], **opts)
    for comp in (small, k, fmt):
        comp.change(scale_html, [lang, small, k, fmt], [survival], **opts)

    def on_lang(lang: str, v: str, s: str, kk: int, f: str) -> list[Any]:
        return [formats_html(lang, v), format_table_frame(lang), scale_html(lang, s, kk, f)]

    ctx.on_language(on_lang, [value, small, k, fmt], [bits, table, survival])
    ctx.on_load(on_lang, [value, small, k, fmt], [bits, table, survival])


def build_underflow_tab(ctx: Any) -> None:
    """Underflow lab: one real backward pass, gradient histograms against a format's range."""
    lang0 = DEFAULT_LANG
    limits = getattr(ctx, "limits", None)
    with ctx.i18n(
        gr.Tab(tt("tab_underflow", lang0), id="underflow", elem_id="underflow-tab"),
        label="tab_underflow",
    ):
        ctx.i18n(gr.Markdown(tt("uf_intro", lang0)), value="uf_intro")
        with gr.Row(equal_height=True):
            model = ctx.i18n(
                gr.Dropdown(
                    _model_choices(lang0),
                    value=DEFAULT_MODEL,
                    label=tt("uf_model_label", lang0),
                    elem_id="uf-model",
                    scale=3,
                ),
                label="uf_model_label",
            )
            batch = ctx.i18n(
                gr.Number(32, label=tt("uf_batch_label", lang0), precision=0, minimum=1,
                          elem_id="uf-batch", scale=1, min_width=100),
                label="uf_batch_label",
            )  # fmt: skip
            seed = ctx.i18n(
                gr.Number(0, label=tt("uf_seed_label", lang0), precision=0, minimum=0,
                          elem_id="uf-seed", scale=1, min_width=100),
                label="uf_seed_label",
            )  # fmt: skip
            run = ctx.i18n(
                gr.Button(tt("uf_run_btn", lang0), variant="primary", elem_id="uf-run", scale=1),
                value="uf_run_btn",
            )
        with gr.Row(equal_height=True):
            k = ctx.i18n(
                gr.Slider(0, UF_K_MAX, value=UF_K_DEFAULT, step=1,
                          label=tt("uf_scale_label", lang0), info=tt("uf_scale_info", lang0),
                          elem_id="uf-scale", scale=3),
                label="uf_scale_label",
                info="uf_scale_info",
            )  # fmt: skip
            fmt = ctx.i18n(
                gr.Radio(FORMAT_CHOICES, value="fp16", label=tt("uf_format_label", lang0),
                         info=tt("uf_format_info", lang0), elem_id="uf-format", scale=2),
                label="uf_format_label",
                info="uf_format_info",
            )  # fmt: skip
        status = gr.Markdown(tt("uf_status_idle", lang0), elem_id="uf-status")
        with gr.Row():
            act = gr.HTML("", elem_id="uf-activation")
            wgt = gr.HTML("", elem_id="uf-weight")
        table = ctx.i18n(
            gr.DataFrame(underflow_table(lang0, None, UF_K_DEFAULT),
                         label=tt("uf_table_label", lang0), interactive=False,
                         elem_id="uf-table"),
            label="uf_table_label",
        )  # fmt: skip
        reading = gr.Markdown("", elem_id="uf-reading")
        # Inside the Tab: a State created directly under gr.Tabs shows up as a phantom tab.
        lab = gr.State(None)
    outputs = [status, act, wgt, table, reading]
    _share(ctx, "underflow_controls", {"model": model, "batch_size": batch, "seed": seed})

    def compute(lang: str, m: str, b: Any, s: Any) -> Any:
        return underflow_compute(norm_lang(lang), m, b, s, limits)

    lang = ctx.lang
    run.click(compute, [lang, model, batch, seed], [lab], concurrency_limit=1,
              api_visibility="undocumented").then(
        underflow_view, [lang, lab, k, fmt], outputs, api_visibility="undocumented",
        show_progress="hidden")  # fmt: skip
    for comp in (k, fmt):
        comp.change(underflow_view, [lang, lab, k, fmt], outputs, concurrency_limit=None,
                    api_visibility="undocumented", show_progress="hidden")  # fmt: skip

    def on_lang(lang: str, lb: Any, kk: int, f: str) -> list[Any]:
        return [*underflow_view(lang, lb, kk, f), gr.update(choices=_model_choices(lang))]

    ctx.on_language(on_lang, [lab, k, fmt], [*outputs, model])


def build_code_tab(ctx: Any) -> None:
    """Code: the loop mpdemo runs, against the course's listing, for a run or for the Train tab.

    The run picker lists this page's runs (the Train tab's session: each shows its own config)
    and the Train tab's grid where it differs from them; every run control's change shows its
    settings (ctx.shared's "train_controls"), and a new table of runs shows the run again.
    """
    lang0 = DEFAULT_LANG
    limits = getattr(ctx, "limits", None)
    shared = getattr(ctx, "shared", None) or {}
    train = shared.get("train_controls") or {}
    session = shared.get("train_session")  # gr.State(Session): this page's runs
    # Components whose change means the runs changed: a grid started or ended a run, a reload
    # restored runs, Clear runs.
    runs_changed = [c for c in (shared.get("train_summary"), shared.get("train_script_run")) if c]
    from .controls import RUN_NAMES

    names = [n for n in RUN_NAMES if n in train]
    with ctx.i18n(gr.Tab(tt("tab_code", lang0), id="code", elem_id="code-tab"), label="tab_code"):
        ctx.i18n(gr.Markdown(tt("code_intro", lang0)), value="code_intro")
        run = ctx.i18n(
            gr.Radio([], value=None, label=tt("code_run_label", lang0), elem_id="code-run"),
            label="code_run_label",
        )
        # Filled once the page has loaded: rendering imports torch, which the app's start
        # leaves for later.
        settings = gr.Markdown("", elem_id="code-settings")
        with gr.Row():
            with gr.Column(scale=3):
                ctx.i18n(gr.Markdown(tt("code_listing_title", lang0)), value="code_listing_title")
                listing = gr.HTML("", elem_id="code-listing-box")
            with gr.Column(scale=2):
                course = ctx.i18n(
                    gr.Code("", language="python", label=tt("code_course_label", lang0),
                            interactive=False, buttons=["copy"], elem_id="code-course"),
                    label="code_course_label",
                )  # fmt: skip
        changes = gr.Markdown("", elem_id="code-changes")
        script = ctx.i18n(
            gr.Code("", language="python", label=tt("code_ours_label", lang0),
                    interactive=False, buttons=["copy", "download"], elem_id="code-ours"),
            label="code_ours_label",
        )  # fmt: skip
        # The pick, kept on the server (inside the Tab: under gr.Tabs it would be a phantom
        # tab). Only the radio's own .input reads the radio: a Train-tab change (a preset sets
        # a dozen controls at once) fires one event per control, all sent with the radio's old
        # value, and gradio refuses a value the first answer took out of the choices.
        picked = gr.State(None)
    outputs = {"run": run, "settings": settings, "listing": listing, "course": course,
               "changes": changes, "script": script, "picked": picked}  # fmt: skip
    _share(ctx, "code_outputs", outputs)
    sessions = [session] if session is not None else []

    def render(lang: str, current: str | None, prefer: str | None, *rest: Any) -> list[Any]:
        sess, vals = (rest[0], rest[1:]) if sessions else (None, rest)
        runs = page_runs(sess)
        out = code_view(
            norm_lang(lang), dict(zip(names, vals, strict=True)), current, limits, runs, prefer
        )
        return [out[k] for k in outputs]

    def on_form(lang: str, current: str | None, *rest: Any) -> list[Any]:
        return render(lang, current, "form", *rest)

    def on_runs(lang: str, current: str | None, *rest: Any) -> list[Any]:
        return render(lang, current, "run", *rest)

    def on_pick(lang: str, current: str | None, *rest: Any) -> list[Any]:
        return render(lang, current, None, *rest)

    inputs = [picked, *sessions, *(train[n] for n in names)]
    out_list = list(outputs.values())
    quiet = {"concurrency_limit": None, "api_visibility": "undocumented", "show_progress": "hidden"}
    for name in names:
        train[name].change(on_form, [ctx.lang, *inputs], out_list, **quiet)
    for comp in runs_changed:
        comp.change(on_runs, [ctx.lang, *inputs], out_list, **quiet)
    run.input(on_pick, [ctx.lang, run, *inputs[1:]], out_list, **quiet)
    ctx.on_language(on_pick, inputs, out_list)
    ctx.on_load(on_pick, inputs, out_list)


def build_why_tab(ctx: Any) -> None:
    """Why: short explanations, and the teacher's Presets menu with a description."""
    lang0 = DEFAULT_LANG
    with ctx.i18n(gr.Tab(tt("tab_why", lang0), id="why", elem_id="why-tab"), label="tab_why"):
        ctx.i18n(gr.Markdown(tt("why_presets_title", lang0)), value="why_presets_title")
        with gr.Row(equal_height=True):
            preset = ctx.i18n(
                gr.Dropdown(preset_choices(lang0), value=None, label=tt("preset_label", lang0),
                            elem_id="preset", scale=1),
                label="preset_label",
            )  # fmt: skip
            desc = gr.Markdown(tt("preset_none", lang0), elem_id="preset-desc")
        for key in WHY_KEYS:
            ctx.i18n(gr.Markdown(tt(key, lang0), elem_id=key.replace("_", "-")), value=key)
    _share(ctx, "preset", preset)
    preset.change(preset_view, [ctx.lang, preset], [desc], concurrency_limit=None,
                  api_visibility="undocumented", show_progress="hidden")  # fmt: skip

    def on_lang(lang: str, p: str | None) -> list[Any]:
        return [gr.update(choices=preset_choices(lang), value=p), preset_view(lang, p)]

    ctx.on_language(on_lang, [preset], [preset, desc])


TEACH_TABS: list[Callable[[Any], None]] = [
    build_formats_tab,
    build_underflow_tab,
    build_code_tab,
    build_why_tab,
]
