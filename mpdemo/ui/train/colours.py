"""The runs' names and colours on the live plots, and the one legend every plot shares.

Series ids never depend on the page's language: a run is its label ('torch · fp16 · S=1'), its
unsmoothed curve '<label> · raw' and its skipped-step ticks '<label> · skipped'. The legend
lists only the runs (`colors_in_legend`), so the other ids are never read by a person.
The colour map covers every run any grid of the UI can make, with no two alike.
"""

from __future__ import annotations

import colorsys
import html
from collections.abc import Iterable
from dataclasses import dataclass

from ...registry import BACKENDS, PRECISIONS

RAW = "raw"  # '<label> · raw': the unsmoothed curve behind the smoothed one
SKIPPED = "skipped"  # '<label> · skipped': red ticks at skipped steps on the scale plot
SKIP_COLOR = "#d62728"  # red: no run's colour family is red
UNSCALED = "S=1"  # RunConfig.label's suffix for a scaler-less run of a precision that has one

# Every line its own colour: a class matches eight runs to the legend only when no two lines
# are shades of one colour. Live runs take LIVE_PALETTE by label, backend-major (a grid of one
# backend gets the first, most distinct colours); recorded lines take RECORDED_PALETTE in
# loading order, so they never share a colour with a live run. No red: red marks skipped steps.
# The first nine are Tableau 10 without its red; the rest were picked to stay apart from them.
LIVE_PALETTE = [
    "#1f77b4",  # blue
    "#ff7f0e",  # orange
    "#2ca02c",  # green
    "#9467bd",  # purple
    "#8c564b",  # brown
    "#17becf",  # cyan
    "#e377c2",  # pink
    "#bcbd22",  # olive
    "#7f7f7f",  # grey
    "#393b79",  # navy
    "#637939",  # moss
    "#b15928",  # rust
    "#6a3d9a",  # violet
    "#005f5f",  # dark teal
    "#c49c94",  # rose beige
]
RECORDED_PALETTE = [
    "#e7298a",  # magenta
    "#111111",  # black
    "#e6ab02",  # mustard
    "#3a86ff",  # azure
    "#66c2a5",  # mint
    "#8856a7",  # grape
    "#a6761d",  # ochre
    "#fb9a99",  # salmon
    "#4d4d9f",  # indigo
    "#1b7837",  # forest
    "#f781bf",  # light pink
    "#80b1d3",  # sky
]
GOLDEN = 0.618033988749895  # beyond a palette: hues a golden angle apart never repeat


def variants() -> list[tuple[str, bool]]:
    """(precision, scaled) for every run kind: each precision, then the unscaled ones."""
    out = [(p, True) for p in PRECISIONS]
    return out + [(p.name, False) for p in PRECISIONS.values() if p.needs_scaler]


def run_label(backend: str, precision: str, scaled: bool = True) -> str:
    """The label RunConfig gives such a run ('torch · fp16 · S=1')."""
    needs = PRECISIONS[precision].needs_scaler if precision in PRECISIONS else False
    return f"{backend} · {precision}" + ("" if scaled or not needs else f" · {UNSCALED}")


def all_labels() -> list[str]:
    """Every label a run of any grid the UI can start can have, in a fixed order."""
    return [run_label(b, p, s) for p, s in variants() for b in BACKENDS]


def series_id(label: str, kind: str) -> str:
    """A run's other series: '<label> · raw' or '<label> · skipped' (never translated)."""
    return f"{label} · {kind}"


def skipped_label(label: str) -> str:
    """The series that marks a run's skipped steps on the loss-scale plot."""
    return series_id(label, SKIPPED)


def _rgb(hex_colour: str) -> tuple[float, float, float]:
    h = hex_colour.lstrip("#")
    r, g, b = (int(h[i : i + 2], 16) / 255 for i in (0, 2, 4))
    return r, g, b


def _hex(rgb: Iterable[float]) -> str:
    return "#" + "".join(f"{round(min(max(c, 0.0), 1.0) * 255):02x}" for c in rgb)


def shade(base: str, i: int, n: int, step: float = 0.15) -> str:
    """The i-th of n shades of a colour: the colour itself, then darker, lighter, darker..."""
    h, light, s = colorsys.rgb_to_hls(*_rgb(base))
    k = (i + 1) // 2
    offset = 0.0 if i == 0 else (-k * step if i % 2 else k * step)
    return _hex(colorsys.hls_to_rgb(h, min(max(light + offset, 0.12), 0.85), s))


def faint(colour: str, amount: float = 0.62) -> str:
    """The colour mixed with white: the raw curve behind a smoothed one."""
    return _hex(c + (1.0 - c) * amount for c in _rgb(colour))


def extra_colour(i: int, offset: float = 0.0) -> str:
    """The i-th colour past a palette's end: golden-angle hues at two lightnesses."""
    hue = (offset + i * GOLDEN) % 1.0
    return _hex(colorsys.hls_to_rgb(hue, 0.38 if i % 2 else 0.5, 0.65))


def palette_colour(palette: list[str], i: int, offset: float) -> str:
    """The palette's i-th colour, or a generated one past its end."""
    return palette[i] if i < len(palette) else extra_colour(i - len(palette), offset)


def with_series(out: dict[str, str], label: str, colour: str) -> None:
    """A line's colour, its raw curve's (faint) and its skipped-step ticks' (red)."""
    out[label] = colour
    out[series_id(label, RAW)] = faint(colour)
    out[skipped_label(label)] = SKIP_COLOR


def color_map() -> dict[str, str]:
    """A colour for every run any grid can make, its raw curve and its skipped-step ticks."""
    out: dict[str, str] = {}
    labels = [run_label(b, p, s) for b in BACKENDS for p, s in variants()]
    for i, label in enumerate(labels):
        with_series(out, label, palette_colour(LIVE_PALETTE, i, 0.11))
    return out


TRIAL = " · #"  # RunConfig.label's suffix for one repetition of a repeated comparison


def trial_of(label: str) -> tuple[str, int]:
    """('torch · bf16', 2) for 'torch · bf16 · #2'; (label, 0) for a run that was not repeated."""
    base, sep, k = label.rpartition(TRIAL)
    return (base, int(k)) if sep and k.isdigit() else (label, 0)


def live_colours(labels: list[str]) -> dict[str, str]:
    """The colours of a grid's lines; the repetitions of one run are shades of its colour
    (one figure's spread reads as one family), each still its own."""
    base = color_map()
    out: dict[str, str] = {}
    trials: dict[str, int] = {}
    for lab in labels:
        kind, k = trial_of(lab)
        if k:
            trials[kind] = max(trials.get(kind, 0), k)
    for lab in labels:
        kind, k = trial_of(lab)
        colour = base.get(kind, "#7f7f7f")
        if k:
            colour = shade(colour, k - 1, trials[kind], step=0.28 / max(trials[kind] - 1, 1))
        with_series(out, lab, colour)
    return out


# Lines on top of each other stay visible: each run after a grid's first is dashed, in its own
# pattern, so the line under it shows through the gaps ("where did fp32 go?"). gradio 6.31's
# LinePlot cannot dash a series (its Vega spec's strokeDash encoding is empty), but it draws
# SVG, each run a <path stroke="its colour">: the legend carries a rule a colour (dash_css).
DASHES = ("7 4", "2 3", "10 3 2 3", "4 2", "12 4", "1 4")


def dashes_for(labels: list[str]) -> dict[str, str]:
    """Each run's stroke-dasharray: the first solid (''), then the patterns in turn."""
    return {lab: "" if i == 0 else DASHES[(i - 1) % len(DASHES)] for i, lab in enumerate(labels)}


def dash_css(dashes: dict[str, str], colours: dict[str, str], plot_ids: Iterable[str]) -> str:
    """A <style> that dashes each run's line on the plots, found by its colour."""
    rules = []
    for lab, dash in dashes.items():
        colour = colours.get(lab)
        if dash and colour:
            sel = ", ".join(f'#{p} path[stroke="{colour}"]' for p in plot_ids)
            rules.append(f"{sel} {{ stroke-dasharray: {dash}; }}")
    return f"<style>{' '.join(rules)}</style>" if rules else ""


@dataclass(frozen=True)
class LegendFile:
    """One opened runs file in the legend: its key (for Remove), its name, its lines."""

    key: str
    name: str
    labels: list[str]


def legend_html(
    labels: list[str],
    raw_note: str | None = None,
    colours: dict[str, str] | None = None,
    hidden: Iterable[str] = (),
    files: Iterable[LegendFile] = (),
    texts: dict[str, str] | None = None,
    dashes: dict[str, str] | None = None,
    notes: Iterable[str] = (),
) -> str:
    """One legend for every plot: a swatch in each run's colour, wrapping over lines.

    Vega's own legend sits on one row under a plot and cut a 12-run grid off after five names,
    and gradio 6.31's LinePlot cannot hide a series from it, so the plots hide theirs
    (colors_in_legend=[]) and this one names every run once. Each entry is a button: a click
    hides or shows that run's lines (the Train tab's handler, via `data-run`); each opened file
    has a remove button (`data-file`). `texts`: the page's words for the buttons' names.
    """
    if not labels:
        return ""
    cmap = {**color_map(), **(colours or {})}  # colours: lines the registry does not name
    hide = set(hidden)
    words = {"show": "show", "hide": "hide", "remove": "remove", **(texts or {})}

    dash = dashes or {}

    def swatch(colour: str, width: int = 3, pattern: str = "") -> str:
        dashed = f' stroke-dasharray="{pattern}"' if pattern else ""
        cap = "butt" if pattern else "round"
        return (
            f'<svg width="22" height="10" aria-hidden="true"><line x1="1" y1="5" x2="21" y2="5" '
            f'stroke="{colour}" stroke-width="{width}" stroke-linecap="{cap}"{dashed}/></svg>'
        )

    def run(label: str) -> str:
        off = label in hide
        colour = cmap.get(label, "#7f7f7f")
        name = html.escape(label)
        tip = html.escape(f"{words['show' if off else 'hide']}: {label}")
        return (
            f'<button type="button" class="mp-run{" mp-off" if off else ""}" '
            f'data-run="{name}" data-color="{colour}" aria-pressed="{str(not off).lower()}" '
            f'title="{tip}">{swatch(colour, 3, dash.get(label, ""))}<span>{name}</span></button>'
        )

    in_files = {lab for f in files for lab in f.labels}
    items = [run(lab) for lab in labels if lab not in in_files]
    for f in files:
        group = "".join(run(lab) for lab in f.labels if lab in labels)
        name = html.escape(f.name)
        tip = html.escape(f"{words['remove']}: {f.name}")
        items.append(
            f'<span class="mp-file" data-name="{name}">{group}<button type="button" '
            f'class="mp-remove" data-file="{html.escape(f.key)}" title="{tip}" '
            f'aria-label="{tip}">× {name}</button></span>'
        )
    if raw_note:
        items.append(
            f'<span class="mp-note">{swatch(faint("#7f7f7f"), 2)}{html.escape(raw_note)}</span>'
        )
    # Notes already in the page's words, with their own markup (the flat loss scale's).
    items += [f'<span class="mp-line">{n}</span>' for n in notes]
    return f'<div class="mp-legend">{"".join(items)}</div>'


# The legend's clicks, sent to the Train tab's handler: which run to hide or show, or which
# opened file to remove (delegated: the legend's HTML is replaced on every update).
LEGEND_JS = """
element.addEventListener('click', (e) => {
  const rm = e.target.closest('[data-file]');
  if (rm) { trigger('click', {remove: rm.dataset.file}); return; }
  const run = e.target.closest('[data-run]');
  if (run) {
    run.classList.toggle('mp-off');  // at once; the server's legend follows
    trigger('click', {run: run.dataset.run});
  }
});
"""

LEGEND_CSS = """
.mp-legend { display: flex; flex-wrap: wrap; gap: 2px 6px; line-height: 1.6; }
.mp-legend button { font: inherit; color: inherit; background: none; border: 1px solid transparent;
  border-radius: 6px; padding: 0 6px; cursor: pointer; display: inline-flex; align-items: center;
  gap: 4px; white-space: nowrap; }
.mp-legend button:hover { border-color: var(--border-color-primary); }
.mp-legend .mp-off { opacity: 0.45; text-decoration: line-through; }
.mp-legend .mp-file { display: inline-flex; flex-wrap: wrap; align-items: center;
  border: 1px dashed var(--border-color-primary); border-radius: 8px; padding: 0 2px; }
.mp-legend .mp-remove { color: var(--body-text-color-subdued); }
.mp-legend .mp-note { display: inline-flex; align-items: center; gap: 4px; padding: 0 6px; }
.mp-legend .mp-line { flex: 1 1 100%; padding: 0 6px; }
"""
