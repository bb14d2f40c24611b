"""The Train tab's live gradient watch (mpdemo/ui/train/gradwatch.py), drawn from real events."""

from __future__ import annotations

import json
import re
from pathlib import Path

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


def _watched_session(run_events) -> Session:
    """A session that trained the watched fp16 run (events fed as a runner feeds them)."""
    session = Session()
    session.begin([RunConfig(precision="fp16", watch_grads=1)])
    for ev in run_events:
        session.apply(ev)
    return session


@pytest.mark.parametrize("lang", ["en", "pt"])
def test_a_reload_brings_the_watch_back_as_the_training_left_it(run_events, lang) -> None:
    from mpdemo.ui.train.recorded import restore_runs

    session = _watched_session(run_events)
    live = gw.watch_update(session, lang)
    assert live["visible"] and 'data-step="2"' in live["value"]
    # What the browser keeps, through JSON as gr.BrowserState hands it back after a reload.
    value = json.loads(json.dumps(session.stored()))
    assert [h["step"] for h in value["runs"][0]["grad_histograms"]] == [2]  # the last one only
    fresh = Session()
    out = restore_runs(lang, value, fresh)
    assert out["grad_watch"]["visible"]
    assert out["grad_watch"]["value"] == live["value"]  # the same figure, digit for digit


def test_an_opened_runs_file_shows_each_runs_last_histogram(run_events) -> None:
    from mpdemo.ui.train.recorded import load_runs

    session = _watched_session(run_events)
    path = session.write_files()["json"]
    # The page's download keeps every watched step, as the CLI's --json does.
    (run,) = json.loads(Path(path).read_text())["runs"]
    assert [h["step"] for h in run["grad_histograms"]] == [1, 2]
    viewer = Session()
    first = next(load_runs(path, "en", viewer))
    html = first["grad_watch"]["value"]
    assert first["grad_watch"]["visible"] and 'data-step="2"' in html
    (label,) = viewer.recorded_labels()
    assert f'data-run="{label}"' in html
    (svg,) = re.findall(r"<svg.*?</svg>", html)
    (live_svg,) = re.findall(r"<svg.*?</svg>", gw.watch_update(session, "en")["value"])
    assert _bars(svg) == _bars(live_svg) and _bands(svg) == _bands(live_svg)


def test_a_file_whose_histogram_does_not_add_up_is_refused_whole(run_events, tmp_path) -> None:
    from mpdemo.files.recorded import RecordingError, read_runs

    session = _watched_session(run_events)
    doc = json.loads(Path(session.write_files()["json"]).read_text())
    doc["runs"][0]["grad_histograms"][-1]["layers"][0]["counts"][3] += 1  # one value too many
    bad = tmp_path / "bad.json"
    bad.write_text(json.dumps(doc))
    with pytest.raises(RecordingError) as err:
        read_runs(bad)
    assert "runs[0].grad_histograms[1].layers[0] has counts that do not add up" in str(err.value)


def test_a_full_store_lets_the_watch_go_before_any_run(run_events, monkeypatch) -> None:
    from mpdemo.ui.train import session_store

    session = _watched_session(run_events)
    whole = len(json.dumps(session.stored()))
    monkeypatch.setattr(session_store, "MAX_STORED_CHARS", whole - 1)
    value = json.loads(json.dumps(session.stored()))
    # The run itself is kept (its steps all there); only its histogram is left out.
    (run,) = value["runs"]
    assert "grad_histograms" not in run and len(run["steps"]) == 2
    fresh = Session()
    assert fresh.restore(value) == 1 and not gw.watch_update(fresh, "en")["visible"]
