"""The runs' series names and colours on every plot: every run any grid can make has its own."""

from __future__ import annotations

import colorsys
from collections.abc import Iterable

from .config import RunConfig
from .registry import BACKENDS, PRECISIONS

RAW = "raw"  # '<label> · raw': the unsmoothed curve behind the smoothed one
SKIPPED = "skipped"  # '<label> · skipped': red ticks at skipped steps on the scale plot
SKIP_COLOR = "#d62728"  # red: no run's colour family is red

# No two lines shades of one colour, so a class can match runs to the legend; no red (skipped).
LIVE_PALETTE = [
    # blue, orange, green, purple, brown, cyan, pink, olive (Tableau 10 without red)
    *("#1f77b4", "#ff7f0e", "#2ca02c", "#9467bd", "#8c564b", "#17becf", "#e377c2", "#bcbd22"),
    # grey, navy, moss, rust, violet, dark teal, rose beige
    *("#7f7f7f", "#393b79", "#637939", "#b15928", "#6a3d9a", "#005f5f", "#c49c94"),
]
RECORDED_PALETTE = [
    # magenta, black, mustard, azure, mint, grape
    *("#e7298a", "#111111", "#e6ab02", "#3a86ff", "#66c2a5", "#8856a7"),
    # ochre, salmon, indigo, forest, light pink, sky
    *("#a6761d", "#fb9a99", "#4d4d9f", "#1b7837", "#f781bf", "#80b1d3"),
]
GOLDEN = 0.618033988749895  # beyond a palette: hues a golden angle apart never repeat


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


def shade(base: str, i: int, step: float) -> str:
    """The i-th shade of a colour, `step` apart: itself, then darker, lighter, darker..."""
    h, light, s = colorsys.rgb_to_hls(*_rgb(base))
    k = (i + 1) // 2
    offset = 0.0 if i == 0 else (-k * step if i % 2 else k * step)
    return _hex(colorsys.hls_to_rgb(h, min(max(light + offset, 0.12), 0.85), s))


def faint(colour: str, amount: float = 0.62) -> str:
    """The colour mixed with white: the raw curve behind a smoothed one."""
    return _hex(c + (1.0 - c) * amount for c in _rgb(colour))


def palette_colour(palette: list[str], i: int, offset: float) -> str:
    """The palette's i-th colour; past its end, golden-angle hues at two lightnesses."""
    if i < len(palette):
        return palette[i]
    k = i - len(palette)
    return _hex(colorsys.hls_to_rgb((offset + k * GOLDEN) % 1.0, 0.38 if k % 2 else 0.5, 0.65))


def with_series(out: dict[str, str], label: str, colour: str) -> None:
    """A line's colour, its raw curve's (faint) and its skipped-step ticks' (red)."""
    out[label] = colour
    out[series_id(label, RAW)] = faint(colour)
    out[skipped_label(label)] = SKIP_COLOR


def color_map() -> dict[str, str]:
    """A colour for every run any grid can make, its raw curve and its skipped-step ticks."""
    out: dict[str, str] = {}
    # each precision, then fp16 without its scaler ('torch · fp16 · S=1')
    kinds = [(p, True) for p in PRECISIONS]
    kinds += [(p.name, False) for p in PRECISIONS.values() if p.needs_scaler]
    labels = [
        RunConfig(backend=b, precision=p, loss_scaling=s).label for b in BACKENDS for p, s in kinds
    ]
    for i, label in enumerate(labels):
        with_series(out, label, palette_colour(LIVE_PALETTE, i, 0.11))
    return out


TRIAL = " · #"  # RunConfig.label's suffix for one repetition of a repeated comparison


def trial_of(label: str) -> tuple[str, int]:
    """('torch · bf16', 2) for 'torch · bf16 · #2'; (label, 0) for a run that was not repeated."""
    base, sep, k = label.rpartition(TRIAL)
    return (base, int(k)) if sep and k.isdigit() else (label, 0)


def live_colours(labels: list[str]) -> dict[str, str]:
    """The colours of a grid's lines; the repetitions of one run are shades of its colour."""
    base = color_map()
    out: dict[str, str] = {}
    trials: dict[str, int] = {}
    for kind, k in map(trial_of, labels):
        trials[kind] = max(trials.get(kind, 0), k)
    for lab in labels:
        kind, k = trial_of(lab)
        colour = base.get(kind, "#7f7f7f")
        if k:
            colour = shade(colour, k - 1, step=0.28 / max(trials[kind] - 1, 1))
        with_series(out, lab, colour)
    return out
