"""The Number formats tab: the bits of a typed number (fp32 to fp8), torch.finfo's table, and
what a scale does to a small value in a low-precision format (mpdemo.teach.formats)."""

from __future__ import annotations

import itertools
import math
from typing import Any

import gradio as gr
import pandas as pd

from ...teach import formats
from ..context import QUIET, TabContext, Value
from ..histogram import FORMAT_NAMES
from ..i18n import LOCALES, norm_lang, number, t
from ..text import esc
from .common import FORMAT_CHOICES, SCALE_K_DEFAULT, html_table
from .numerics import build_numerics

NF_K_MAX = 48  # number-format slider: enough for 1e-8 to overflow (at 2^43)
NF_K_MIN = -24  # ... and below 1: fp8's per-tensor scale shrinks large values into E4M3's range
# The sign / exponent / mantissa colours of formats.render_bits_html, for the legend.
LEGEND_STYLES = (
    "background:#fde2e1;color:#b42318",
    "background:#dcfce7;color:#166534",
    "background:#dbeafe;color:#1e40af",
)


def _num(x: float | None) -> str:
    """A number for a table cell, with '= 2^k' when it is an exact power of two."""
    if x is None:
        return "–"
    if not math.isfinite(x):
        return str(x)
    mant, exp = math.frexp(x)
    return f"{x:.7g}" + (f" = 2^{exp - 1}" if mant == 0.5 else "")


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
    return pd.DataFrame(data, columns=[t(key, lang) for _, key in NF_TABLE_COLUMNS])


def _cast_word(stored: float, lang: str) -> str:
    """What an out-of-range value became: infinity, NaN, or +-max (a saturating cast)."""
    if math.isnan(stored):
        return t("nf_cast_nan", lang)
    return t("nf_cast_inf" if math.isinf(stored) else "nf_cast_saturate", lang)


def _category_text(enc: dict, lang: str) -> str:
    text = t(f"nf_cat_{enc['category']}", lang)
    if enc.get("saturated"):
        text += f" · {t('nf_saturated', lang, max=_num(abs(enc['stored'])))}"
    elif enc.get("overflow"):
        key = "nf_overflowed_nan" if math.isnan(enc["stored"]) else "nf_overflowed"
        text += f" · {t(key, lang)}"
    elif enc.get("underflow"):
        text += f" · {t('nf_underflowed', lang)}"
    return text


def fp8_cast_note(lang: str) -> str:
    """What torch's cast does past E4M3's and E5M2's largest values, measured on this machine."""
    import torch

    # cast 4x past each range and look at the result
    words = {fmt: t(f"nf_cast_{formats.cast_overflow(fmt)}", lang) for fmt in ("e4m3", "e5m2")}
    return t("nf_fp8_cast", lang, torch=torch.__version__.split("+")[0], **words)


def _literal(value: object, lang: str) -> Any:
    """'0,1' typed on a page that writes decimals with a comma is 0.1; '0.1' works everywhere
    (the tables keep Python's notation: they show float literals, bit by bit)."""
    comma = LOCALES[norm_lang(lang)].style.decimal == ","
    if comma and isinstance(value, str) and "," in value and "." not in value:
        return value.replace(",", ".")
    return value


def formats_html(lang: str, value: object) -> str:
    """value in fp32, fp16, bf16, E4M3 and E5M2: coloured bits, stored value, errors, class."""
    value = _literal(value, lang)
    try:
        encs = formats.encode_all(value)
    except ValueError:
        return f'<p class="mp-error">{esc(t("nf_bad_input", lang))}</p>'
    columns = ("format", "bits", "stored", "abs_err", "rel_err", "class")
    headers = [esc(t(f"nf_col_{k}", lang)) for k in columns]
    rows = [
        [
            f"<b>{esc(FORMAT_NAMES[e['format']])}</b>",
            formats.render_bits_html(e),
            f"<code>{esc(repr(e['stored']))}</code>",
            esc(_err(e["abs_error"])),
            esc(_err(e["rel_error"])),
            esc(_category_text(e, lang)),
        ]
        for e in encs
    ]
    words = zip(LEGEND_STYLES, t("nf_legend", lang).split(" · "), strict=False)
    spans = [f'<span style="{style};padding:0 4px">{esc(word)}</span>' for style, word in words]
    legend = f'<p style="margin:4px 0">{" · ".join(spans)}</p>'
    note = f'<p class="mp-fp8-cast" style="margin-top:6px">{_md_inline(fp8_cast_note(lang))}</p>'
    return legend + html_table(headers, rows) + note


def _err(x: float | None) -> str:
    return "–" if x is None else "0" if x == 0 else f"{x:.3g}"


def _class_of(enc: dict) -> str:
    """zero | subnormal | normal | inf (any overflow: inf, NaN or saturated) | nan."""
    return "inf" if enc["overflow"] else enc["category"]


WINDOW_KEYS = {"zero": "nf_window_zero", "subnormal": "nf_window_sub",
               "normal": "nf_window_normal", "inf": "nf_window_inf"}  # fmt: skip


def _window(lang: str, x: float, fmt: str = "fp16") -> str:
    """The ranges of k where x*2^k flushes, is subnormal, normal, or overflows in fmt."""
    scaled = range(NF_K_MIN, NF_K_MAX + 1)
    cats = [(_class_of(formats.encode(x * 2.0**k, fmt)), k) for k in scaled]
    parts = []
    for cat, run in itertools.groupby(cats, key=lambda c: c[0]):
        ks = [k for _, k in run]
        a, b = ks[0], ks[-1]
        if cat in WINDOW_KEYS:  # flushes up to 2^b, overflows from 2^a
            k = b if cat == "zero" else a
            parts.append(t(WINDOW_KEYS[cat], lang, a=a, b=b, k=k, fmt=FORMAT_NAMES[fmt]))
    return t("nf_window", lang, x=f"{x:g}", kmin=NF_K_MIN, kmax=NF_K_MAX, parts="; ".join(parts))


def scale_html(lang: str, value: object, k: object, fmt: str = "fp16") -> str:
    """value × 2^k stored in fmt (fp16 by default): what survives, what is lost, what overflows."""
    fmt = fmt if fmt in formats.LOW_PRECISION else "fp16"
    value = _literal(value, lang)
    try:
        k = int(k)
        r = formats.scale_survival(value, 2.0**k)
        bf16 = formats.encode(value, "bf16")
    except (TypeError, ValueError):
        return f'<p class="mp-error">{esc(t("nf_bad_input", lang))}</p>'
    x, got, name = r["value"], r["formats"][fmt], FORMAT_NAMES[fmt]
    rel = got["rel_error"]  # in a sentence: the page's digits ("error relativo 0,000283")
    err = "–" if rel is None else "0" if rel == 0 else number(rel, lang, ".3g")
    cat = _class_of(got)
    if x == 0 or math.isinf(x):
        verdict = ""
    elif cat == "nan" or math.isnan(x):
        verdict = t("nf_v_nan", lang)
    elif cat == "inf":
        top = formats.layout(fmt).max
        verdict = t("nf_v_inf", lang, fmt=name, max=_num(top), what=_cast_word(got["stored"], lang))
        if fmt == "fp16":  # the format GradScaler guards
            verdict += " " + t("nf_v_inf_scaler", lang)
        elif fmt in ("e4m3", "e5m2"):
            verdict += " " + t("nf_v_inf_fp8", lang)
    else:
        key = {"zero": "nf_v_zero", "subnormal": "nf_v_subnormal"}
        verdict = t(key.get(cat, "nf_v_normal"), lang, err=err, fmt=name)
    rows = [
        (t("nf_sc_value", lang), f"{x:g}"),
        (t("nf_sc_scale", lang), f"2^{k} = {2.0**k:g}"),
        (t("nf_sc_scaled", lang), f"{r['scaled']:g}"),
        (
            t("nf_sc_fp16", lang, fmt=name),
            f"{got['stored']!r} ({t('nf_cat_' + got['category'], lang)})",
        ),
        (t("nf_sc_recovered", lang), f"{got['recovered']!r}"),
        (t("nf_sc_rel_err", lang), err),
        (t("nf_sc_bf16", lang), f"{bf16['stored']!r} ({t('nf_cat_' + bf16['category'], lang)})"),
    ]
    out = html_table(["", ""], [[esc(a), f"<code>{esc(b)}</code>"] for a, b in rows])
    md = _md_inline(verdict)
    window = _window(lang, x, fmt) if math.isfinite(x) and x != 0 else ""
    return (
        f'<p class="mp-verdict" data-category="{esc(cat)}" data-format="{esc(fmt)}">{md}</p>'
        + out
        + (f'<p style="margin-top:6px">{esc(window)}</p>' if window else "")
    )


def _md_inline(text: str) -> str:
    """Escape text, then turn **bold** into <b> and `code` into <code>: our strings' markup."""
    parts = esc(text).split("**")
    bold = "".join(f"<b>{p}</b>" if i % 2 else p for i, p in enumerate(parts))
    code = bold.split("`")
    return "".join(f"<code>{p}</code>" if i % 2 else p for i, p in enumerate(code))


def build_formats_tab(ctx: TabContext) -> None:
    """Number formats: bits of a typed number (fp32 to fp8), the finfo table, the scale slider."""
    with ctx.i18n(gr.Tab(id="formats", elem_id="formats-tab"), label="tab_formats"):
        ctx.i18n(gr.Markdown(), value="nf_intro")
        box = {"max_lines": 1, "max_length": formats.MAX_INPUT_LEN}
        value = ctx.i18n(
            gr.Textbox("0.1", **box, elem_id="nf-value"),
            label="nf_value_label",
            info="nf_value_info",
        )
        # Filled on page load: torch.finfo would cost the app's cold start a torch import.
        bits = gr.HTML("", elem_id="nf-bits")
        table = ctx.i18n(
            gr.DataFrame(None, interactive=False, elem_id="nf-table"), label="nf_table_label"
        )
        ctx.i18n(gr.Markdown(), value="nf_scale_title")
        with gr.Row():
            small = ctx.i18n(
                gr.Textbox("1e-8", **box, elem_id="nf-small", scale=1), label="nf_small_label"
            )
            k = ctx.i18n(
                gr.Slider(
                    NF_K_MIN, NF_K_MAX, value=SCALE_K_DEFAULT, step=1, elem_id="nf-scale", scale=2
                ),
                label="nf_scale_label",
                info="nf_scale_info",
            )
            fmt = ctx.i18n(
                gr.Radio(FORMAT_CHOICES, value="fp16", elem_id="nf-scale-format", scale=1),
                label="nf_scale_format_label",
            )
        survival = gr.HTML("", elem_id="nf-survival")
        build_numerics(ctx, value)  # TF32, fp32 accumulation, fp8 recipes (ui/tabs/numerics.py)

    lang = ctx.lang
    value.change(formats_html, [lang, value], [bits], **QUIET)
    for comp in (small, k, fmt):
        comp.change(scale_html, [lang, small, k, fmt], [survival], **QUIET)

    def on_lang(lang: str, v: str, s: str, kk: int, f: str) -> list[Value]:
        return [formats_html(lang, v), format_table_frame(lang), scale_html(lang, s, kk, f)]

    ctx.on_language(on_lang, [value, small, k, fmt], [bits, table, survival])
    ctx.on_load(on_lang, [value, small, k, fmt], [bits, table, survival])
