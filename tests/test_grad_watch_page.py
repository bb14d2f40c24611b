"""The Train tab's live gradient watch (mpdemo/ui/train/gradwatch.py), drawn from real events."""

from __future__ import annotations

import re

import pytest

from mpdemo import RunConfig
from mpdemo.events import GradHistograms
from mpdemo.ui.i18n import number, t
from mpdemo.ui.train import gradwatch as gw
from mpdemo.ui.train.session import Session
from tests.conftest import events_of


@pytest.fixture(scope="module")
def run_events() -> list:
    """A two-step fp16 run with its loss scaler, each step watched: real GradHistograms."""
    cfg = RunConfig(
        train_slice="train[:64]",
        eval_slice="validation[:16]",
        steps=2,
        batch_size=8,
        device="cpu",
        precision="fp16",
        watch_grads=1,
    )
    return events_of(cfg)


def _bars(svg: str) -> dict[int, int]:
    return {int(b): int(n) for b, n in re.findall(r'data-log2="(-?\d+)" data-count="(\d+)"', svg)}


def _bands(svg: str) -> dict[str, tuple[float, float]]:
    found = re.findall(r'data-band="(\w+)" data-from="([-\d.e]+)" data-to="([-\d.e]+)"', svg)
    return {name: (float(a), float(b)) for name, a, b in found}


@pytest.mark.parametrize("lang", ["en", "es", "pt"])
def test_the_watch_draws_every_layer_summed_against_fp16s_windows(run_events, lang) -> None:
    grads = [e for e in run_events if isinstance(e, GradHistograms)]
    assert [g.step for g in grads] == [1, 2]
    ev = grads[-1]
    html = gw.watch_html({ev.label: ev}, [ev.label], lang)
    (svg,) = re.findall(r"<svg.*?</svg>", html)
    bars = _bars(svg)
    elements = sum(layer["elements"] for layer in ev.layers)
    nonzero = sum(layer["nonzero"] for layer in ev.layers)
    # Every element of every layer is in a bar, but the exact zeros, which the line counts.
    assert sum(sum(layer["counts"]) for layer in ev.layers) == elements
    assert sum(bars.values()) == nonzero < elements
    assert number(elements - nonzero, lang, ",") in html  # "exact zeros, not drawn: 1,234"
    # Bin by bin: the layers' counts added up (the lowest bin without the zeros).
    for i, edge in enumerate(
        [ev.layers[0]["bin_edges_log2"][0] - 1, *ev.layers[0]["bin_edges_log2"]]
    ):
        want = sum(layer["counts"][i] for layer in ev.layers) - (
            elements - nonzero if i == 0 else 0
        )
        assert bars.get(edge, 0) == want, edge
    # fp16's windows, as the Underflow lab draws them: zero below 2^-24, subnormal below
    # 2^-14, overflow from 65520 (2^16 within rounding).
    bands = _bands(svg)
    assert bands["sub"] == (-24, -14)
    assert bands["normal"][0] == -14 and bands["over"][0] == pytest.approx(16, abs=0.01)
    # Titled with the run, its step and its scale (GradScaler's 2^16 on step 2).
    assert t("gw_title", lang, label=ev.label, step=2, scale="65536", fmt="fp16") in html
    assert ev.scale == 65536.0


def test_the_shares_are_summed_over_layers_by_count(run_events) -> None:
    ev = [e for e in run_events if isinstance(e, GradHistograms)][-1]
    w = gw.summed(ev)
    nz = sum(layer["nonzero"] for layer in ev.layers)
    flushed = sum(round(layer["flushed"] * layer["nonzero"]) for layer in ev.layers)
    assert w.flushed == flushed / nz
    worst = max(ev.layers, key=lambda layer: layer["flushed"])
    assert w.worst == (worst["name"], worst["flushed"])
    # An unscaled fp16 backward pass on a fake layer where half the values are below 2^-25:
    # the line says 50 % and names that layer.
    fake = GradHistograms(
        run_id="0:x",
        label="torch · fp16 · S=1",
        step=20,
        scale=1.0,
        format="fp16",
        layers=[
            {
                **ev.layers[0],
                "name": "a",
                "nonzero": 10,
                "elements": 10,
                "flushed": 0.5,
                "subnormal": 0.0,
                "overflow": 0.0,
            },
        ],  # fmt: skip
        windows=ev.windows,
    )
    line = gw.run_figure(fake, "en")
    assert "<b>50.0%</b>" in line and ">a</code>, 50.0% flushed" in line


def test_a_session_keeps_each_runs_latest_watched_step_and_shows_it(run_events) -> None:
    session = Session()
    cfg = RunConfig(precision="fp16", watch_grads=1)
    session.begin([cfg])
    assert gw.watch_update(session, "en") == {"value": "", "visible": False}
    for ev in run_events:
        session.apply(ev)
    update = gw.watch_update(session, "es")
    assert update["visible"] and 'data-step="2"' in update["value"]
    assert 'data-step="1"' not in update["value"]  # the latest step replaces the one before
    session.begin([cfg])  # a new comparison: hidden until its own runs send one
    assert not gw.watch_update(session, "en")["visible"]
