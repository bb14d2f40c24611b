"""The one legend every plot of the Train tab shares; the runs' names and colours are
mpdemo.colours' (the notebook draws with the same rule)."""

from __future__ import annotations

import html
from collections.abc import Iterable
from dataclasses import dataclass

from ...colours import color_map, faint

# Each run after a grid's first is dashed, so a line under it shows through the gaps. gradio 6.31's
# LinePlot cannot dash a series, but draws each as <path stroke="colour">: dash_css styles those.
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
    """One legend for every plot (Vega's cut a 12-run grid off after five names): each run a button
    that hides or shows it (`data-run`), each opened file a remove button (`data-file`)."""
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


# The legend's clicks to the Train tab's handler (delegated: the HTML is replaced on each update).
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
