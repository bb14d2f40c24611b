"""Gradient magnitudes against a format's range, for the Underflow lab and the gradient watch:
counts per log2 bin over the format's zero / subnormal / normal / overflow bands, as SVG."""

from __future__ import annotations

from collections.abc import Sequence

from .i18n import LOCALES, norm_lang, t
from .text import esc

# How the formats are named on the page: torch's fp8 dtypes as the fp8 papers name them.
FORMAT_NAMES = {"fp32": "fp32", "fp16": "fp16", "bf16": "bf16", "e4m3": "E4M3", "e5m2": "E5M2"}

# Colours with explicit foreground and background so the figures read in light and dark mode.
BAND_COLORS = {"zero": "#fde2e1", "sub": "#fef3c7", "normal": "#dcfce7", "over": "#fecaca"}
BAR_COLORS = {"zero": "#b42318", "sub": "#b45309", "normal": "#166534", "over": "#7f1d1d"}
INK = "#1f2937"


def pct(x: float, lang: str) -> str:
    """A share as a percentage in lang's digits, small ones kept visible (0.004%, not 0.0%)."""
    return LOCALES[norm_lang(lang)].style.share(x)


def band_of_bin(b: int, band: dict[str, float]) -> str:
    """Where the values of log2 bin [b, b+1) land in the format (by the bin's lower edge)."""
    if b < band["min_subnormal_log2"]:
        return "zero"
    if b < band["min_normal_log2"]:
        return "sub"
    if b < band["max_log2"]:
        return "normal"
    return "over"


def histogram_svg(
    lang: str,
    counts: Sequence[int],
    lo: int,
    total: int,
    title: str,
    band: dict[str, float],
    fmt: str = "fp16",
    size: tuple[int, int] = (680, 250),
    tick_every: int = 8,
    draw_title: bool = True,
) -> str:
    """counts[i] values in log2 bin [lo+i, lo+i+1) as shares of `total`, over fmt's bands (log2
    edges in `band`, magnitudes.format_band's); the end bins hold what lies beyond the axis.
    draw_title False: the title only names the figure (the page writes it, unshrunk on a phone)."""
    hi = lo + len(counts)
    total = max(total, 1)
    peak = max(max(counts, default=0), 1) / total
    w, h = size
    left, right, top, bottom = 52, 12, 30 if draw_title else 8, 44
    pw, ph = w - left - right, h - top - bottom
    span = hi - lo

    def x_of(v: float) -> float:
        return left + (min(max(v, lo), hi) - lo) / span * pw

    def text(x: float, y: float, size: int, words: str, anchor: str = "middle", more: str = "",
             fill: str = INK) -> str:  # fmt: skip
        attrs = f'font-size="{size}" text-anchor="{anchor}" fill="{fill}" {more}'
        return f'<text x="{x:.1f}" y="{y:.1f}" {attrs}>{esc(words)}</text>'

    parts = [
        f'<svg xmlns="http://www.w3.org/2000/svg" viewBox="0 0 {w} {h}" role="img" '
        f'style="width:100%;max-width:{w}px;background:#ffffff;border-radius:6px" '
        'font-family="ui-sans-serif,system-ui,sans-serif" '
        f'aria-label="{esc(title)}">',
    ]
    if draw_title:
        parts.append(text(left, 18, 14, title, "start", 'font-weight="600"'))
    edges = [
        ("zero", lo, band["min_subnormal_log2"], "uf_band_zero"),
        ("sub", band["min_subnormal_log2"], band["min_normal_log2"], "uf_band_sub"),
        ("normal", band["min_normal_log2"], band["max_log2"], "uf_band_normal"),
        ("over", band["max_log2"], hi, "uf_band_over"),
    ]
    for name, b0, b1, key in edges:
        x0, x1 = x_of(b0), x_of(b1)
        parts.append(
            f'<rect class="mp-band" data-band="{name}" data-from="{b0:g}" data-to="{b1:g}" '
            f'x="{x0:.1f}" y="{top}" width="{x1 - x0:.1f}" height="{ph}" '
            f'fill="{BAND_COLORS[name]}"/>'
        )
        if x1 - x0 < 24:  # a band narrower than a word (bf16's subnormals): the colour says it
            continue
        word = t(key, lang, fmt=FORMAT_NAMES.get(fmt, fmt))
        half = len(word) * 2.8  # about half the word's width at font-size 10
        x, anchor = (x0 + x1) / 2, "middle"
        if x + half > left + pw:  # a narrow band at the edge: the word stays inside the figure
            x, anchor = x1 - 2, "end"
        elif x - half < left:
            x, anchor = x0 + 2, "start"
        parts.append(text(x, top + 12, 10, word, anchor, fill=BAR_COLORS[name]))
    bw = pw / span
    for i, n in enumerate(counts):
        if not n:
            continue
        b = lo + i
        share = n / total
        bh = max(share / peak * (ph - 16), 1.0)  # 1 px minimum: rare bins stay visible
        tip = t("uf_bar_tip", lang, lo=b, hi=b + 1, n=n, share=pct(share, lang))
        parts.append(
            f'<rect class="mp-bar" data-log2="{b}" data-count="{n}" x="{x_of(b) + 0.5:.1f}" '
            f'y="{top + ph - bh:.1f}" width="{max(bw - 1, 1):.1f}" height="{bh:.1f}" '
            f'fill="{BAR_COLORS[band_of_bin(b, band)]}"><title>{esc(tip)}</title></rect>'
        )
    for v in (band["min_subnormal_log2"], band["min_normal_log2"], band["max_log2"]):
        if lo < v < hi:
            parts.append(
                f'<line x1="{x_of(v):.1f}" x2="{x_of(v):.1f}" y1="{top}" y2="{top + ph}" '
                f'stroke="{INK}" stroke-dasharray="3,3" stroke-width="1"/>'
            )
    axis_y = top + ph
    parts.append(f'<line x1="{left}" x2="{left + pw}" y1="{axis_y}" y2="{axis_y}" stroke="{INK}"/>')
    first = -(-lo // tick_every) * tick_every  # the first multiple of tick_every on the axis
    parts += [text(x_of(v), axis_y + 14, 10, str(v)) for v in range(first, hi + 1, tick_every)]
    x_words = f"{t('uf_axis_x', lang)} · {t('uf_clamped', lang)}"
    mid = top + ph / 2
    rotated = f'transform="rotate(-90 14 {mid:.1f})"'
    parts += [
        text(left + pw / 2, h - 6, 11, x_words),
        text(14, mid, 11, t("uf_axis_y", lang), "middle", rotated),
        text(left - 4, top + 16, 10, pct(peak, lang), "end"),
        "</svg>",
    ]
    return "".join(parts)
