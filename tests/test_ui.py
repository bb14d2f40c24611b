"""The Gradio app, driven in-process through gradio_client; plus its torch-free helpers."""

from __future__ import annotations

import json
import math
import re
import socket
import subprocess
import sys
import threading
import time
from pathlib import Path
from types import SimpleNamespace

import pytest

from mpdemo.ui import i18n, plots, system
from mpdemo.ui.session import Session, summary_table

ROOT = Path(__file__).resolve().parent.parent
FAST = {
    "train_slice": "train[:256]",
    "eval_slice": "validation[:64]",
    "batch_size": 16,
    "device": "cpu",
}


def free_port() -> int:
    """A TCP port nobody listens on right now."""
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


def runner_threads() -> list[threading.Thread]:
    """Worker threads started by mpdemo.runner.Runner that are still running."""
    return [th for th in threading.enumerate() if th.name == "mpdemo-runner" and th.is_alive()]


def wait_no_runner(timeout: float = 15.0) -> bool:
    """True once no mpdemo-runner thread is alive (within timeout seconds)."""
    deadline = time.monotonic() + timeout
    while time.monotonic() < deadline:
        if not runner_threads():
            return True
        time.sleep(0.1)
    return False


@pytest.fixture(scope="module")
def app_url() -> str:
    """The app, launched in this process on a free port (as app.py does, plus the port)."""
    from mpdemo.config import Limits
    from mpdemo.ui import build_app

    demo = build_app().queue(default_concurrency_limit=1, max_size=Limits.from_env().max_queue)
    port = free_port()
    demo.launch(prevent_thread_lock=True, server_name="127.0.0.1", server_port=port, quiet=True)
    yield f"http://127.0.0.1:{port}/"
    demo.close()


@pytest.fixture
def client(app_url: str):
    """A fresh gradio_client session (its own gr.State) per test."""
    from gradio_client import Client

    c = Client(app_url, verbose=False)
    yield c
    c.close()


# --- through the API ------------------------------------------------------------------------


def test_train_streams_one_line_per_run_and_fills_the_table(client) -> None:
    job = client.submit(api_name="/train", steps=8, precisions=["fp32", "bf16"], **FAST)
    result = job.result(timeout=180)
    outputs = job.outputs()
    assert len(outputs) >= 3, "the generator streamed several updates"
    status, loss, scale, step_ms, sps, scale_empty, summary, csv_file, json_file, _, _ = result
    assert "Done: 2 runs" in status
    assert plots.lines_in(loss) == {"torch · fp32": 8, "torch · bf16": 8}
    # Smoothed by default, with each run's raw curve behind it under a language-free id.
    assert plots.lines_in(loss, every_series=True) == {
        **plots.lines_in(loss),
        "torch · fp32 · raw": 8,
        "torch · bf16 · raw": 8,
    }
    assert set(plots.lines_in(step_ms)) == {"torch · fp32", "torch · bf16"}
    assert set(plots.lines_in(sps)) == {"torch · fp32", "torch · bf16"}
    # No fp16 run: the scale plot makes way for a sentence saying why it has no line.
    assert not isinstance(scale, dict) or "data" not in scale
    first = outputs[0]
    assert first[2]["visible"] is False and first[5]["visible"] is True
    assert "no run in this comparison has a loss scaler" in first[5]["value"]
    assert loss["datatypes"] == {"step": "quantitative", "value": "quantitative", "run": "nominal"}
    rows = summary["data"]
    assert [r[0] for r in rows] == ["torch · fp32", "torch · bf16"]
    assert all(r[1] == "completed" for r in rows)
    speedup = summary["headers"].index("vs fp32 (×)")
    assert rows[0][speedup] == 1.0 and rows[1][speedup] > 0
    # Downloads: the CLI's formats, every step of both runs.
    csv_path = csv_file["value"] if isinstance(csv_file, dict) else csv_file
    json_path = json_file["value"] if isinstance(json_file, dict) else json_file
    assert len(Path(csv_path).read_text(encoding="utf-8").strip().splitlines()) == 1 + 16
    runs = json.loads(Path(json_path).read_text(encoding="utf-8"))["runs"]
    assert [r["summary"]["label"] for r in runs] == ["torch · fp32", "torch · bf16"]
    # The first update offered a script for the first run; it is valid Python.
    script = outputs[0][10]
    script_path = script["value"] if isinstance(script, dict) else script
    if script_path:  # None only while mpdemo.codegen is missing
        compile(Path(script_path).read_text(encoding="utf-8"), script_path, "exec")
    assert wait_no_runner(10)


def test_stop_keeps_what_was_measured(client) -> None:
    job = client.submit(api_name="/train", steps=2000, precisions=["fp32", "bf16"], **FAST)
    deadline = time.monotonic() + 60
    while time.monotonic() < deadline:  # wait until steps are streaming
        outs = job.outputs()
        if outs and "step" in str(outs[-1][0]):
            break
        time.sleep(0.2)
    else:
        pytest.fail("no step arrived within 60 s")
    t0 = time.monotonic()
    client.predict(api_name="/stop")  # same client → same session → this session's runner
    status, loss, *_, summary, _csv, _json, _run, _script = job.result(timeout=60)
    assert time.monotonic() - t0 < 20
    assert "Stopped" in status
    assert [r[1] for r in summary["data"]] == ["stopped"]  # the grid's second run never started
    assert 0 < plots.lines_in(loss)["torch · fp32"] < 2000
    assert wait_no_runner(10)


def test_cancel_ends_the_worker_thread(client) -> None:
    job = client.submit(api_name="/train", steps=2000, precisions=["fp32"], **FAST)
    deadline = time.monotonic() + 60
    while time.monotonic() < deadline and not runner_threads():
        time.sleep(0.1)
    time.sleep(1.5)  # mid-run
    assert runner_threads(), "the worker should be running"
    job.cancel()
    assert wait_no_runner(15), "closing the generator must stop the worker (finally: runner.stop())"


def test_one_training_at_a_time_others_wait_in_the_queue(app_url: str) -> None:
    from gradio_client import Client
    from gradio_client.utils import Status

    first, second = Client(app_url, verbose=False), Client(app_url, verbose=False)
    try:
        running = first.submit(api_name="/train", steps=2000, precisions=["fp32"], **FAST)
        deadline = time.monotonic() + 60
        while time.monotonic() < deadline and not runner_threads():
            time.sleep(0.1)
        waiting = second.submit(api_name="/train", steps=4, precisions=["fp32"], **FAST)
        seen = None
        while time.monotonic() < deadline:
            seen = waiting.status()
            if seen.code == Status.IN_QUEUE:
                break
            time.sleep(0.1)
        assert seen is not None and seen.code == Status.IN_QUEUE, seen
        assert seen.rank is not None  # the page shows this position
        assert len(runner_threads()) == 1
        running.cancel()
        result = waiting.result(timeout=120)  # its turn comes once the first is gone
        assert "Done: 1 run (1 completed)" in result[0]
    finally:
        first.close()
        second.close()
    assert wait_no_runner(10)


@pytest.mark.parametrize(
    ("changes", "pattern"),
    [
        ({"train_slice": "train[:abc]"}, r"not a valid slice"),
        ({"eval_slice": "test[:10]"}, r"no split 'test'"),
        ({"backends": []}, r"choose at least one backend"),
        ({"precisions": []}, r"choose at least one precision"),
        ({"lr": -1.0}, r"lr must be"),
        ({"model": "no/such-model-here"}, r"Hub is not reachable|not found"),
        ({"steps": 0}, r"minimum|steps"),
    ],
)
def test_bad_input_errors_quickly(client, changes: dict, pattern: str) -> None:
    from gradio_client.exceptions import AppError

    args = {"steps": 4, **FAST, **changes}
    t0 = time.monotonic()
    with pytest.raises(AppError, match=pattern):
        client.predict(api_name="/train", **args)
    assert time.monotonic() - t0 < 10  # typically well under 1 s; generous for a loaded CI box
    assert not runner_threads()


def test_errors_are_translated(client) -> None:
    from gradio_client.exceptions import AppError

    with pytest.raises(AppError, match="no es una porción válida"):
        client.predict(api_name="/train", lang="es", train_slice="train[:abc]", steps=4)


# --- helpers (no server) --------------------------------------------------------------------


# Every language has every UI string and engine message: tests/test_locales.py.


def test_language_from_the_accept_language_header() -> None:
    assert i18n.lang_from_header("es-ES,es;q=0.9,en;q=0.8") == "es"
    assert i18n.lang_from_header("en-US,en;q=0.9,es;q=0.8") == "en"
    assert i18n.lang_from_header("fr-FR,es;q=0.5") == "es"
    assert i18n.lang_from_header("de") == "en"
    assert i18n.lang_from_header(None) == "en"


def test_warnings_render_in_the_page_language() -> None:
    summary = {
        "label": "torch · bf16",
        "status": "stopped",
        "warnings": ["stopped after 3 of 8 steps"],
        "warning_keys": [{"key": "stopped_by_user", "args": {"step": 3, "steps": 8}, "text": "x"}],
    }
    es = summary_table([summary], "es")
    assert es["avisos"][0] == "detenida tras 3 de 8 pasos"
    assert es["estado"][0] == "detenida"
    en = summary_table([summary], "en")
    assert en["warnings"][0] == "stopped after 3 of 8 steps"


def test_slice_rows_match_datasets_arithmetic() -> None:
    from datasets import ReadInstruction

    sizes = {"train": 4000, "validation": 800}
    for spec in [
        "train[:2000]",
        "train[:10%]",
        "validation[100:600]",
        "train[-5%:]",
        "train[:5000]",
        "validation",
        "train[33%:67%]",
        "train[-100:-50]",
    ]:
        (absolute,) = ReadInstruction.from_spec(spec).to_absolute(sizes)
        rows, total, _ = system.slice_rows(spec, sizes)
        assert rows == absolute.to - absolute.from_, spec
        assert total == sizes[spec.split("[")[0]]
    assert system.slice_rows("train[:5000]", sizes)[2] is True  # asked for more than there are
    for bad in ["train[:abc]", "train[1:2:3]", "train[:200%]", ""]:
        with pytest.raises(Exception, match="not a valid slice"):
            system.slice_rows(bad, sizes)


def test_building_the_app_imports_no_torch() -> None:
    code = (
        "import sys; from mpdemo.ui import build_app, system; build_app(); "
        "print(system.split_sizes('reviews')); "
        "print(sorted(m for m in ('torch', 'transformers', 'accelerate', 'datasets') "
        "if m in sys.modules))"
    )
    out = subprocess.run(
        [sys.executable, "-c", code],
        cwd=ROOT,
        capture_output=True,
        text=True,
        check=True,
        timeout=120,
    )
    sizes_line, modules_line = out.stdout.strip().splitlines()[-2:]
    assert modules_line == "[]"
    sizes = eval(sizes_line)  # noqa: S307 - our own print of a dict
    assert sizes["train"] > 0 and sizes["validation"] > 0  # row counts without torch


def test_downsample_keeps_ends_and_markers() -> None:
    y = [math.sin(i / 7) + (i % 13) * 0.01 for i in range(2000)]
    keep = [5, 777, 1234, 1999]
    idx = plots.downsample(y, 500, keep)
    assert len(idx) <= 500
    assert {0, 1999, *keep} <= set(idx.tolist())
    assert list(idx) == sorted(idx)
    assert len(plots.downsample(y[:100], 500)) == 100


def _step(label: str, step: int, scale: float | None, skipped: bool = False) -> SimpleNamespace:
    return SimpleNamespace(
        kind="step",
        run_id=f"0:{label}",
        label=label,
        step=step,
        loss=1.0 / step,
        loss_scale=scale,
        skipped=skipped,
        step_time_s=0.01,
        samples_per_s=100.0,
        to_dict=dict,
    )


def test_frames_have_placeholders_stay_small_and_mark_skipped_steps() -> None:
    labels = ["torch · fp32", "torch · fp16", "accelerate · fp16"]
    series = {lab: plots.Series(lab) for lab in labels[:2]}
    scale = 2.0**16
    for i in range(1, 2001):
        skipped = i % 100 == 0
        scale = scale / 2 if skipped else scale * (2 if i % 40 == 0 else 1)
        series["torch · fp32"].add(_step("torch · fp32", i, None))
        series["torch · fp16"].add(_step("torch · fp16", i, scale, skipped))
    frame = plots.line_frame(series, labels, "loss")
    assert len(frame) < 1000  # the frontend re-bins frames of 1000+ rows
    assert frame["run"].tolist().count("accelerate · fp16") == 1  # placeholder, value NaN
    assert str(frame["step"].dtype) == "int64" and str(frame["value"].dtype) == "float64"
    counts = plots.lines_in(frame)
    assert set(counts) == {"torch · fp32", "torch · fp16"} and max(counts.values()) <= 500
    sframe = plots.scale_frame(series, ["torch · fp16", "accelerate · fp16"])
    assert len(sframe) < 1000
    ticks = sframe[sframe["run"] == "torch · fp16 · skipped"]
    assert ticks["value"].notna().sum() == 2 * 20  # 20 skipped steps, two points each
    main = sframe[sframe["run"] == "torch · fp16"]
    assert {100.0, 2000.0} <= set(main["step"])  # skipped steps stay on the line
    assert "accelerate · fp16 · skipped" in set(sframe["run"])  # in the colour domain already
    cmap = plots.color_map()
    assert all(run in cmap for run in sframe["run"].unique())


def test_session_is_fresh_per_browser_session() -> None:
    import copy

    s = Session()
    s.runner = object()
    s.history.append({"x": 1})
    fresh = copy.deepcopy(s)
    assert fresh.runner is None and fresh.history == []


def test_app_py_only_launches() -> None:
    text = (ROOT / "app.py").read_text(encoding="utf-8")
    assert "build_app()" in text and ".launch()" in text
    assert not re.search(r"^import (torch|transformers|accelerate|datasets)", text, re.M)


def test_a_failed_run_shows_in_the_table_and_status_and_keeps_earlier_downloads() -> None:
    from mpdemo.config import RunConfig
    from mpdemo.engine import failed_event
    from mpdemo.messages import ConfigError
    from mpdemo.ui.train_tab import status_text

    cfgs = [RunConfig(precision="fp32"), RunConfig(precision="bf16")]
    session = Session()
    session.begin(cfgs)
    ok = failed_event(cfgs[0], RuntimeError("boom"), 0)
    ok.status, ok.summary = "completed", {**ok.summary, "status": "completed", "warning_keys": []}
    session.apply(ok)
    first_files = session.write_files()
    session.begin(cfgs[1:])  # a later training whose run fails to prepare
    session.apply(failed_event(cfgs[1], ConfigError("load_failed", value="x", detail="gone"), 0))
    table = session.table("es")
    assert table["estado"].tolist() == ["falló"]
    assert "no se pudo cargar 'x': gone" in table["avisos"][0]
    assert "falló: no se pudo cargar" in status_text(session, "es", finished=True)
    files = session.write_files()
    runs = json.loads(Path(files["json"]).read_text(encoding="utf-8"))["runs"]
    assert [r["summary"]["status"] for r in runs] == ["completed", "failed"]  # both kept
    assert not Path(first_files["json"]).exists()  # replaced by the newer file, not lost
    session.close()
    assert not Path(files["json"]).exists()
