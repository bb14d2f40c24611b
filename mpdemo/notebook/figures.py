"""The Train tab's three plots as matplotlib figures drawn from runs-JSON records, so a recording
read back draws the same; matplotlib (the notebook extra's) is imported only here.
"""

from __future__ import annotations

import io
import math
from collections.abc import Callable
from dataclasses import dataclass
from typing import TYPE_CHECKING

from ..colours import SKIP_COLOR, live_colours
from ..languages import DEFAULT_LANG, t

if TYPE_CHECKING:
    from matplotlib.figure import Figure

Run = dict[str, object]
SIZE = (7.0, 3.2)  # inches: one plot a row of a notebook
# The page's tick on the scale plot spans the halving: from just under the scale to above it.
TICK_BELOW, TICK_ABOVE = 0.3, 1.3


@dataclass(frozen=True)
class FigureSpec:
    """One plot: its name, the page's title and axis keys, and what it draws of a step."""

    name: str
    title: str  # locale keys, the page's own (mpdemo/ui/locales)
    y_title: str
    value: Callable[[dict[str, object]], float | None]


def _log2_scale(step: dict[str, object]) -> float | None:
    s = step.get("loss_scale")
    return math.log2(s) if isinstance(s, (int, float)) and s > 0 else None


def _ms(step: dict[str, object]) -> float | None:
    s = step.get("step_time_s")
    return s * 1000 if isinstance(s, (int, float)) else None


FIGURES: tuple[FigureSpec, ...] = (
    FigureSpec("loss", "loss_plot", "y_loss", lambda st: st.get("loss")),
    FigureSpec("scale", "scale_plot", "y_scale", _log2_scale),
    FigureSpec("time", "time_plot", "y_ms", _ms),
)


def label_of(run: Run) -> str:
    """A run's label as the page shows it (the summary's, else backend · precision)."""
    s, cfg = run.get("summary") or {}, run.get("config") or {}
    return str(
        s.get("label") or run.get("label") or f"{cfg.get('backend')} · {cfg.get('precision')}"
    )


def draw(runs: list[Run], spec: FigureSpec, lang: str = DEFAULT_LANG) -> Figure:
    """One plot of `runs` (finished or not) as a matplotlib Figure (no pyplot: no global state)."""
    from matplotlib.figure import Figure
    from matplotlib.ticker import MaxNLocator

    fig = Figure(figsize=SIZE, layout="constrained")
    ax = fig.add_subplot()
    ax.set_title(t(spec.title, lang))
    ax.set_xlabel(t("x_step", lang))
    ax.set_ylabel(t(spec.y_title, lang))
    ax.xaxis.set_major_locator(MaxNLocator(integer=True))  # whole steps, as the page's axis
    labels = [label_of(r) for r in runs]
    colours = live_colours(labels)
    drawn = 0
    for run, label in zip(runs, labels, strict=True):
        points = [
            (st["step"], spec.value(st), bool(st.get("skipped"))) for st in run.get("steps", [])
        ]
        points = [(x, y, k) for x, y, k in points if y is not None and math.isfinite(y)]
        if not points:
            continue
        drawn += 1
        ax.plot([p[0] for p in points], [p[1] for p in points], color=colours[label], label=label)
        skipped = [(x, y) for x, y, k in points if k]
        if spec.name == "scale" and skipped:
            ax.vlines(
                [x for x, _ in skipped],
                [y - TICK_BELOW for _, y in skipped],
                [y + TICK_ABOVE for _, y in skipped],
                color=SKIP_COLOR,
                label=f"{label}: {t('col_skipped', lang)}",
            )
    if drawn:
        ax.legend(fontsize="small", loc="best")
    elif spec.name == "scale":
        # The page's sentence for a comparison with no scaler, where its line would be.
        text = t("scale_empty_none", lang).replace("**", "")
        ax.text(0.5, 0.5, text, ha="center", va="center", wrap=True, transform=ax.transAxes)
    return fig


def figures(runs: list[Run], lang: str = DEFAULT_LANG) -> dict[str, Figure]:
    """The three plots by name: loss, scale, time."""
    return {spec.name: draw(runs, spec, lang) for spec in FIGURES}


def png(fig: Figure) -> bytes:
    """The figure as PNG bytes (what a notebook shows inline, whatever matplotlib's backend)."""
    buf = io.BytesIO()
    fig.savefig(buf, format="png", dpi=100)
    return buf.getvalue()
