"""The Train tab's live gradient watch: each watched run's latest GradHistograms event, its layers
summed (exact zeros apart, shares weighted by count), drawn as the Underflow lab draws one."""

from __future__ import annotations

from collections.abc import Iterable, Mapping, Sequence
from dataclasses import dataclass
from typing import Any, Protocol

from ...events import GradHistograms
from ...files.recorded import WATCH_FORMATS
from ...files.summary import scale_text
from ...runs.state import ComparisonState
from ...teach.rounding import log2_windows
from ..context import Frame
from ..histogram import FORMAT_NAMES, histogram_svg, pct
from ..i18n import number, t
from ..text import esc

SVG_SIZE = (560, 210)  # narrower than the lab's: two runs side by side in the results column


@dataclass(frozen=True)
class Watched:
    """One event's layers summed: counts per log2 bin from `lo`, and the shares of the non-zero."""

    counts: list[int]  # counts[i]: non-zero |g·S| in [2^(lo+i), 2^(lo+i+1)); the ends hold beyond
    lo: int
    nonzero: int
    zeros: int
    flushed: float
    subnormal: float
    overflow: float
    worst: tuple[str, float] | None  # the layer with the largest share flushed, and that share
    band: dict[str, float]  # log2 edges as mpdemo.teach.magnitudes.format_band names them


def band_of(ev: GradHistograms) -> dict[str, float]:
    """The event's format windows as the histogram's band edges (log2)."""
    w = ev.windows[ev.format]
    return {  # values below half the smallest subnormal flush: the band ends at the subnormal
        "min_subnormal_log2": w["zero_below_log2"] + 1,
        "min_normal_log2": w["subnormal_below_log2"],
        "max_log2": w["overflow_above_log2"],
    }


def summed(ev: GradHistograms) -> Watched:
    """Every layer's histogram added up, exact zeros apart, shares weighted by each layer's count."""
    edges = ev.layers[0]["bin_edges_log2"]
    counts = [0] * (len(edges) + 1)
    nonzero = zeros = flushed = sub = over = 0
    worst: tuple[str, float] | None = None
    for layer in ev.layers:
        for i, n in enumerate(layer["counts"]):
            counts[i] += n
        nz = layer["nonzero"]
        nonzero += nz
        zeros += layer["elements"] - nz
        # The layer's shares are of its non-zero values (overflow: of all its elements).
        flushed += round(layer["flushed"] * nz)
        sub += round(layer["subnormal"] * nz)
        over += round(layer["overflow"] * layer["elements"])
        if nz and (worst is None or layer["flushed"] > worst[1]):
            worst = (layer["name"], layer["flushed"])
    counts[0] -= zeros  # counts[0] is everything below 2^LO, the exact zeros included
    shares = [n / nonzero if nonzero else 0.0 for n in (flushed, sub, over)]
    return Watched(counts, edges[0] - 1, nonzero, zeros, *shares, worst, band_of(ev))


def run_figure(ev: GradHistograms, lang: str) -> str:
    """One run's figure: its latest histogram, titled, and its shares in a line under it."""
    w = summed(ev)
    fmt = FORMAT_NAMES.get(ev.format, ev.format)
    title = t(
        "gw_title", lang, label=ev.label, step=ev.step, scale=scale_text(ev.scale or 1.0), fmt=fmt
    )
    # The title as text, not in the SVG: at 400 px the figure shrinks to half its size.
    svg = histogram_svg(
        lang, w.counts, w.lo, w.nonzero, title, w.band, ev.format, SVG_SIZE, 10, draw_title=False
    )
    shares = {"flushed": w.flushed, "sub": w.subnormal, "over": w.overflow}
    shown = {k: pct(v, lang) for k, v in shares.items()}
    line = t("gw_line", lang, fmt=fmt, zeros=number(w.zeros, lang, ","), **shown)
    if w.worst is not None and w.worst[1] > 0:
        layer = f'<code style="font-size:0.9em">{esc(w.worst[0])}</code>'  # from the model
        line += " " + t("gw_worst", lang, layer=layer, share=pct(w.worst[1], lang))
    else:
        line += " " + t("gw_worst_none", lang)
    return (
        f'<figure class="mp-gw-run" data-run="{esc(ev.label)}" data-step="{ev.step}" '
        'style="margin:0;min-width:0">'
        f'<div class="mp-gw-title" style="font-weight:600;margin-bottom:2px">{esc(title)}</div>'
        f'{svg}<figcaption style="font-size:0.9em;overflow-wrap:anywhere;margin-top:4px">'
        f"{line}</figcaption></figure>"
    )


def watch_html(events: Mapping[str, GradHistograms], order: Iterable[str], lang: str) -> str:
    """Every watched run's latest figure in the grid's order; '' before any event came."""
    shown = [events[lab] for lab in order if lab in events and events[lab].layers]
    if not shown:
        return ""
    figures = "".join(run_figure(ev, lang) for ev in shown)
    intro = t("gw_intro", lang, box=esc(t("watch_grads_label", lang)))  # the box's own name
    return (
        '<div class="mp-gw">'
        f'<p style="margin:0 0 8px">{intro}</p>'
        '<div style="display:grid;gap:12px;'
        'grid-template-columns:repeat(auto-fit,minmax(min(100%,420px),1fr))">'
        f"{figures}</div></div>"
    )


def from_record(label: str, run: Mapping[str, object]) -> GradHistograms | None:
    """A run record's last watched step (its `grad_histograms`) as an event; None if not watched."""
    hist = run.get("grad_histograms") or []
    if not hist or not hist[-1].get("layers"):
        return None
    h = hist[-1]
    return GradHistograms(
        run_id=label,
        label=label,
        step=h["step"],
        scale=h.get("scale"),
        format=h["format"],
        layers=h["layers"],
        # A file keeps the format's name only: its windows are the ones the engine sends.
        windows=log2_windows(WATCH_FORMATS),
    )


class WatchedSession(Protocol):
    """What the watch reads of a page session (ui/train/session.Session)."""

    @property
    def state(self) -> ComparisonState: ...  # its grads: the live runs' latest, by label

    @property
    def recordings(self) -> Sequence[Any]: ...  # opened files: .labels, .recording.runs

    def plot_labels(self) -> list[str]: ...


def watched(session: WatchedSession) -> tuple[dict[str, GradHistograms], list[str]]:
    """Every histogram the page draws, by label, and their order: this training's, then the files'."""
    events = dict(session.state.grads)
    for rec in session.recordings:
        for label, run in zip(rec.labels, rec.recording.runs, strict=True):
            ev = from_record(label, run)
            if ev is not None:
                events[label] = ev
    return events, session.plot_labels()


def watch_update(session: WatchedSession, lang: str) -> Frame:
    """The gr.HTML's props for a session: shown with its figures once a run sent one."""
    html = watch_html(*watched(session), lang)
    return {"value": html, "visible": bool(html)}
