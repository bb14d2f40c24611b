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

from mpdemo import colours as mp_colours
from mpdemo.ui import i18n, system
from mpdemo.ui.train import plots
from mpdemo.ui.train.session import Session
from mpdemo.ui.train.session_table import summary_table
from tests.conftest import lines_in

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
    """Worker threads started by mpdemo.runs.runner.Runner that are still running."""
    return [th for th in threading.enumerate() if th.name == "mpdemo-runner" and th.is_alive()]


def wait_no_runner(timeout: float = 15.0) -> bool:
    """True once no mpdemo-runner thread is alive (within timeout seconds)."""
    deadline = time.monotonic() + timeout
    while time.monotonic() < deadline:
        if not runner_threads():
            return True
        time.sleep(0.1)
    return False


@pytest.fixture
def client(app_url: str):
    """A fresh gradio_client session (its own gr.State) per test."""
    from gradio_client import Client

    c = Client(app_url, verbose=False)
    yield c
    c.close()


# --- through the API ------------------------------------------------------------------------


def test_train_returns_the_final_status_and_table_to_an_api_caller(client) -> None:
    # The stream's last message once carried only the plots (its axis had grown): predict()
    # answered {'__type__': 'update'} for the status and the table.
    result = client.predict(api_name="/train", precisions=["fp32"], steps=8, **FAST)
    status, summary = result[0], result[8]
    assert isinstance(status, str) and "Done: 1 run" in status, status
    assert [r[0] for r in summary["data"]] == ["torch · fp32"]


def test_an_event_costs_the_server_no_analytics_summary(client, monkeypatch) -> None:
    # gradio 6.31 rebuilt a pandas summary of its last 10,000 events after each event, for a
    # monitoring dashboard this app never opens (18-32 ms of CPU an event, holding the GIL
    # while a run's steps are timed): queue_options() turns it off.
    from gradio.queueing import Queue

    built = []
    get_df = Queue._get_df
    monkeypatch.setattr(Queue, "_get_df", staticmethod(lambda rs: built.append(1) or get_df(rs)))
    client.predict(api_name="/stop")
    client.predict(api_name="/stop")
    assert built == []


def test_an_idle_server_looks_for_events_a_few_dozen_times_a_second(app_url, monkeypatch) -> None:
    # gradio 6.31's queue looked for a new event every millisecond on Linux: ~9 % of a core on
    # a 2-core EPYC with nobody on the page, and beside a run's timed steps. Its loop asks the
    # queue's length once a pass; counted over a second here (fewer on a loaded machine, never
    # more). The shared server is idle between tests of this worker.
    import time

    from gradio.queueing import Queue

    passes = []
    length = Queue.__len__
    monkeypatch.setattr(Queue, "__len__", lambda self: passes.append(1) or length(self))
    time.sleep(1.0)
    assert 0 < len(passes) <= 100, len(passes)


def test_train_streams_one_line_per_run_and_fills_the_table(client, monkeypatch) -> None:
    from mpdemo.ui.train import handlers

    # Five frames a second, as on a machine with cores to spare (on two cores it is one a
    # second, and these 8-step runs end before a frame between the first and the last).
    monkeypatch.setattr(handlers, "YIELD_EVERY_S", 0.2)
    job = client.submit(api_name="/train", steps=8, precisions=["fp32", "bf16"], **FAST)
    result = job.result(timeout=180)
    outputs = job.outputs()
    assert len(outputs) >= 3, "the generator streamed several updates"
    status, loss, scale, step_ms, sps, _, _, gw, summary, repeats, csv_file, json_file, _, _ = (
        result  # Stop: no API value
    )
    assert gw["visible"] is False  # no run watched its gradients
    assert "Done: 2 runs" in status
    assert lines_in(loss) == {"torch · fp32": 8, "torch · bf16": 8}
    # Smoothed by default, with each run's raw curve behind it under a language-free id.
    assert lines_in(loss, every_series=True) == {
        **lines_in(loss),
        "torch · fp32 · raw": 8,
        "torch · bf16 · raw": 8,
    }
    assert set(lines_in(step_ms)) == {"torch · fp32", "torch · bf16"}
    assert set(lines_in(sps)) == {"torch · fp32", "torch · bf16"}
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
    # Text: "" for the baseline, "1.05× [1.01–1.10] slower" (N ≥ 1, its word, "(same)" or
    # "(unsure)" when the interval did not decide), or "ran in fp32".
    assert rows[0][speedup] == ""
    assert float(rows[1][speedup].split("×")[0]) >= 1 and (
        "faster" in rows[1][speedup] or "slower" in rows[1][speedup]
    )
    # Downloads: the CLI's formats, every step of both runs.
    csv_path = csv_file["value"] if isinstance(csv_file, dict) else csv_file
    json_path = json_file["value"] if isinstance(json_file, dict) else json_file
    assert len(Path(csv_path).read_text(encoding="utf-8").strip().splitlines()) == 1 + 16
    runs = json.loads(Path(json_path).read_text(encoding="utf-8"))["runs"]
    assert [r["summary"]["label"] for r in runs] == ["torch · fp32", "torch · bf16"]
    # The first update offered the first run's reproduce script: `python -m mpdemo code`'s text.
    assert 'data-run="torch · bf16"' in first[6]  # one legend for all plots, every run once
    script = outputs[0][13]
    script_path = script["value"] if isinstance(script, dict) else script
    assert script_path and Path(script_path).name == "mpdemo_torch_fp32.py"
    text = Path(script_path).read_text(encoding="utf-8")
    compile(text, script_path, "exec")
    assert "rec = StepPrinter(prep)" in text and "for batch in rec.steps(" in text
    assert wait_no_runner(10)


def test_stop_keeps_what_was_measured(client) -> None:
    job = client.submit(api_name="/train", steps=2000, precisions=["fp32", "bf16"], **FAST)
    deadline = time.monotonic() + 60
    while time.monotonic() < deadline:  # wait until steps are streaming ("step 3 of 2000")
        outs = job.outputs()
        # Not any "step": the plan's sentences say it while the run still prepares, and Stop
        # (off the queue, answered at once) then ends the grid before any run has a row.
        if outs and re.search(r"step \d+ of", str(outs[-1][0])):
            break
        time.sleep(0.2)
    else:
        pytest.fail("no step arrived within 60 s")
    t0 = time.monotonic()
    client.predict(api_name="/stop")  # same client → same session → this session's runner
    status, loss, *_, summary, _repeats, _csv, _json, _run, _script = job.result(timeout=60)
    assert time.monotonic() - t0 < 20
    assert "Stopped" in status
    # The runs take turns step by step: every run that started stopped, keeping its steps so
    # far (the bf16 run starts in the first round, right after fp32's first step).
    rows = {r[0]: r[1] for r in summary["data"]}
    assert "torch · fp32" in rows and set(rows.values()) == {"stopped"}
    assert all(0 < lines_in(loss)[label] < 2000 for label in rows)
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

    first, second = Client(app_url, verbose=False), Client(app_url, verbose=False)
    try:
        running = first.submit(api_name="/train", steps=2000, precisions=["fp32"], **FAST)
        deadline = time.monotonic() + 60
        while time.monotonic() < deadline and not runner_threads():
            time.sleep(0.1)
        waiting = second.submit(api_name="/train", steps=4, precisions=["fp32"], **FAST)
        seen = ""
        while time.monotonic() < deadline:  # the server's line says the place in the status
            outs = waiting.outputs()
            seen = str(outs[-1][0]) if outs else ""
            if " in line" in seen:
                break
            time.sleep(0.1)
        assert "2nd** in line" in seen, seen  # behind the one running
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
        ({"backends": []}, r"Backends: choose at least one"),
        ({"precisions": []}, r"Precisions: choose at least one"),
        ({"lr": -1.0}, r"Learning rate must be"),
        ({"model": "no/such-model-here"}, r"Hub is not reachable|not found"),
        # Refused with the CLI's words (the control named by its label), never clamped.
        ({"steps": 0}, r"Steps must be a whole number from 1 to"),
        ({"batch_size": 100000}, r"Batch size must be a whole number from 1 to"),
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
    es = summary_table([summary], "es", all_columns=True)  # behind the "All columns" box
    assert es["avisos"][0] == "detenida tras 3 de 8 pasos"
    assert es["estado"][0] == "detenida"
    en = summary_table([summary], "en", all_columns=True)
    assert en["warnings"][0] == "stopped after 3 of 8 steps"


def test_summary_numbers_are_shown_in_the_page_language_and_stay_numbers() -> None:
    import gradio as gr

    summary = {"label": "torch · fp32", "backend": "torch", "precision": "fp32",
               "status": "completed", "params": 191874, "final_loss": 0.69314,
               "mean_step_s": 0.0213, "samples_per_s": 1523.4}  # fmt: skip
    session = Session(all_columns=True)  # params and samples/s are behind the box
    session.runs = [{"summary": summary}]
    shown = {}
    for lang in ("en", "es", "pt"):
        sent = gr.Dataframe(interactive=False).postprocess(session.table(lang))
        row = dict(zip(sent.headers, sent.metadata["display_value"][0], strict=True))
        shown[lang] = row
        # The cells themselves stay numbers: the table sorts by value, not by text.
        assert (
            dict(zip(sent.headers, sent.data[0], strict=True))[i18n.t("col_loss", lang)] == 0.6931
        )
    assert shown["en"][i18n.t("col_loss", "en")] == "0.6931"
    assert shown["en"][i18n.t("col_params", "en")] == "191,874"
    assert shown["es"][i18n.t("col_loss", "es")] == "0,6931"
    assert shown["es"][i18n.t("col_samples", "es")] == "1.523"
    assert shown["pt"][i18n.t("col_step_ms", "pt")] == "21,3"


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


def test_building_the_app_imports_no_torch_and_rewrites_no_gradio_stubs() -> None:
    # Python source parsed while the app is imported and built: gradio 6.31's import parsed
    # each of its components' source and stub (168 parses, two seconds of every start) until
    # mpdemo.ui.quick_import turned its stub writer off.
    code = (
        "import ast, sys; parsed = []; parse = ast.parse; "
        "ast.parse = lambda *a, **k: parsed.append(1) or parse(*a, **k); "
        "from mpdemo.ui import build_app, system; build_app(); "
        "print(len(parsed)); "
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
    parsed_line, sizes_line, modules_line = out.stdout.strip().splitlines()[-3:]
    assert int(parsed_line) < 20, parsed_line
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
        elapsed_s=math.nan,  # a StepEvent's field: no clock in these frames
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
    frame = plots.line_frame(series, labels, "loss", plots.View(0.0))
    assert len(frame) < 1000  # the frontend re-bins frames of 1000+ rows
    assert frame["run"].tolist().count("accelerate · fp16") == 1  # placeholder, value NaN
    assert str(frame["step"].dtype) == "int64" and str(frame["value"].dtype) == "float64"
    counts = lines_in(frame)
    assert set(counts) == {"torch · fp32", "torch · fp16"} and max(counts.values()) <= 500
    sframe = plots.scale_frame(series, ["torch · fp16", "accelerate · fp16"])
    assert len(sframe) < 1000
    ticks = sframe[sframe["run"] == "torch · fp16 · skipped"]
    assert ticks["value"].notna().sum() == 2 * 20  # 20 skipped steps, two points each
    main = sframe[sframe["run"] == "torch · fp16"]
    assert {100.0, 2000.0} <= set(main["step"])  # skipped steps stay on the line
    assert "accelerate · fp16 · skipped" in set(sframe["run"])  # in the colour domain already
    cmap = mp_colours.color_map()
    assert all(run in cmap for run in sframe["run"].unique())


def test_session_is_fresh_per_browser_session() -> None:
    import copy

    s = Session()
    s.runner = object()
    s.history.append({"x": 1})
    fresh = copy.deepcopy(s)
    assert fresh.runner is None and fresh.history == []


def test_app_py_only_launches() -> None:
    import inspect

    from mpdemo.ui import run_app

    text = (ROOT / "app.py").read_text(encoding="utf-8")
    assert "run_app()" in text  # what `python -m mpdemo app` runs too
    assert not re.search(r"^import (torch|transformers|accelerate|datasets)", text, re.M)
    # The page's CSS, the upload cap and gradio's missing strings go in here.
    source = inspect.getsource(run_app)
    assert "build_app()" in source and "serve(demo, **launch_options())" in source


def test_runs_taking_turns_read_as_one_comparison_in_the_status() -> None:
    # The runs of a comparison advance step by step together: "Run 1 of 2 ... Run 2 of 2"
    # flickering between step events told a class they ran one after another.
    from mpdemo.config import RunConfig
    from mpdemo.events import RunStarted, StepEvent
    from mpdemo.ui.train.status import status_text

    cfgs = [RunConfig(precision="fp32", steps=10), RunConfig(precision="fp16", steps=10)]
    session = Session()
    session.begin(cfgs)
    assert status_text(session, "en").startswith("Preparing 2 runs to train side by side")
    assert "measuring the training step" not in status_text(session, "en")
    for i, cfg in enumerate(cfgs):
        session.apply(RunStarted(f"{i}:x", cfg.label, i, 2, {}, "cpu", 1, "x", 10))
    for i, cfg in enumerate(cfgs):
        session.apply(StepEvent(f"{i}:x", cfg.label, 3, 0.6, None, False, 50.0, 1.0, None,
                                1e-3, 0.2 * (i + 1)))  # fmt: skip
    text = status_text(session, "es")
    assert text.startswith("2 ejecuciones lado a lado: paso 3 de 10, quedan unos")
    assert "Ejecución" not in text
    # Two repetitions of the comparison (the session holds all four runs): which one is
    # going, then the same line, counting the comparison's own two runs.
    from mpdemo.runs.runner import repeated

    session.begin(repeated(cfgs, 2))
    assert status_text(session, "en").startswith("Repetition 1 of 2: Preparing 2 runs")
    session.state.progress.update(index=2, total=4, phase="running", steps=10, step=3, step_s=0.1)
    assert status_text(session, "en").startswith("Repetition 2 of 2: 2 runs side by side")
    # One run alone: its own line, no "Run 1 of 1", and no calibration (none runs for one).
    session.begin(cfgs[:1])
    text = status_text(session, "en")
    assert text.startswith("Preparing **torch · fp32**") and "measuring" not in text, text
    session.begin(repeated(cfgs[:1], 3))
    session.state.progress.update(index=1, label="torch · fp32 · #2")
    assert status_text(session, "en").startswith(
        "Repetition 2 of 3: Preparing **torch · fp32 · &#35;2**"
    )


def test_a_failed_run_shows_in_the_table_and_status_and_keeps_earlier_downloads() -> None:
    from mpdemo.config import RunConfig
    from mpdemo.engine.core import failed_event
    from mpdemo.messages import ConfigError
    from mpdemo.ui.train.status import status_text

    cfgs = [RunConfig(precision="fp32"), RunConfig(precision="bf16")]
    session = Session()
    session.begin(cfgs)
    ok = failed_event(cfgs[0], RuntimeError("boom"), 0)
    ok.status, ok.summary = "completed", {**ok.summary, "status": "completed", "warning_keys": []}
    session.apply(ok)
    first_files = session.write_files()
    session.begin(cfgs[1:])  # a later training whose run fails to prepare
    session.apply(failed_event(cfgs[1], ConfigError("load_failed", value="x", detail="gone"), 0))
    session.all_columns = True  # the warnings are behind the "All columns" box
    table = session.table("es").data
    assert table["estado"].tolist() == ["falló"]
    assert "no se pudo cargar 'x': gone" in table["avisos"][0]
    assert "falló: no se pudo cargar" in status_text(session, "es", finished=True)
    files = session.write_files()
    runs = json.loads(Path(files["json"]).read_text(encoding="utf-8"))["runs"]
    assert [r["summary"]["status"] for r in runs] == ["completed", "failed"]  # both kept
    assert not Path(first_files["json"]).exists()  # replaced by the newer file, not lost
    session.close()
    assert not Path(files["json"]).exists()


# --- issue 11: controls, colours, plots, small things ------------------------------------------


def test_api_parameters_are_the_control_table_with_its_defaults(app_url: str) -> None:
    from gradio_client import Client

    from mpdemo.config import RunConfig
    from mpdemo.ui.train import controls

    c = Client(app_url, verbose=False)
    try:
        params = c.view_api(print_info=False, return_format="dict")["named_endpoints"]["/train"]
    finally:
        c.close()
    names = [p["parameter_name"] for p in params["parameters"]]
    assert names == [*controls.NAMES, "lang"]
    assert all(p["parameter_has_default"] for p in params["parameters"])
    defaults = controls.defaults()
    # The page (and /train called bare) opens on the first lesson: its settings, RunConfig's
    # defaults for the rest.
    opening = controls.opening_fields()
    assert opening["model"] == "tiny-gpt2"
    for field in set(controls.NAMES) - set(controls.UI_ONLY):
        assert defaults[field] == opening.get(field, getattr(RunConfig(), field)), field


def test_every_run_flag_is_a_control_of_the_page_labelled_in_every_language() -> None:
    """A RunConfig field with a flag reaches the CLI, the page's controls (so /train's
    parameters, above) and a label in each language, from the field: no second table."""
    from mpdemo.cli.main import build_parser
    from mpdemo.config import cli_fields
    from mpdemo.ui.i18n import label_key
    from mpdemo.ui.train import controls

    run = build_parser()._subparsers._group_actions[0].choices["run"]
    flags = {o for a in run._actions for o in a.option_strings}
    for f in cli_fields():
        assert "--" + f.name.replace("_", "-") in flags, f.name
        key = label_key(f.name)
        assert key is not None and any(key == c.label for c in controls.CONTROLS), f.name
        for lang in i18n.LANGS:
            assert key in i18n.LOCALES[lang].strings, (lang, key)


def test_a_field_no_table_lays_out_gets_a_control_from_its_type() -> None:
    """from_field: on/off a checkbox, a whole number a number box with config.py's range, a
    flag's choices a dropdown, text a text box; each builds a component holding its default."""
    import dataclasses

    import gradio as gr

    from mpdemo.config import Limits, flag
    from mpdemo.ui.train import controls

    @dataclasses.dataclass(frozen=True)
    class Grown:
        lost_updates: bool = dataclasses.field(default=True, metadata=flag("x"))
        steps: int = dataclasses.field(default=7, metadata=flag("x"))
        lr: float = dataclasses.field(default=0.5, metadata=flag("x"))
        weights: str = dataclasses.field(default="bf16", metadata=flag("x", choices=("a", "bf16")))
        note: str = dataclasses.field(default="hi", metadata=flag("x"))

    made = {f.name: controls.from_field(f) for f in dataclasses.fields(Grown)}
    assert {n: c.kind for n, c in made.items()} == {
        "lost_updates": "checkbox",
        "steps": "number",
        "lr": "number",
        "weights": "dropdown",
        "note": "textbox",
    }
    assert made["steps"].whole and not made["lr"].whole
    lim = Limits(max_steps=300)
    assert made["steps"].bounds(lim) == (1, 300)  # config.py's range under this server's caps
    assert controls.info_text(made["steps"], "en", lim) == "1 to 300"
    built = {n: controls.build(c, "es", lim, getattr(Grown(), n)) for n, c in made.items()}
    assert isinstance(built["lost_updates"], gr.Checkbox) and built["lost_updates"].value is True
    assert built["steps"].value == 7 and built["steps"].label == "Pasos"
    assert [v for _, v in built["weights"].choices] == ["a", "bf16"]
    assert isinstance(built["note"], gr.Textbox) and built["note"].elem_id == "note"
    assert {c.section for c in made.values()} == {"advanced"}


def test_every_run_of_any_grid_has_its_own_colour(monkeypatch) -> None:
    from mpdemo import registry
    from mpdemo.config import RunConfig
    from mpdemo.runs.runner import grid

    def every_label() -> list[str]:
        runs = grid(RunConfig(), list(registry.BACKENDS), list(registry.PRECISIONS), True)
        runs += grid(RunConfig(loss_scaling=False), list(registry.BACKENDS), ["fp16"])
        return sorted({r.label for r in runs})

    for _ in range(2):  # the registry as it is, then with one more Precision record
        cmap = mp_colours.color_map()
        labels = every_label()
        assert set(labels) <= set(cmap), set(labels) - set(cmap)
        lines = [cmap[lab] for lab in labels] + [cmap[f"{lab} · raw"] for lab in labels]
        assert len(set(lines)) == len(lines), "two series share a colour"
        assert mp_colours.SKIP_COLOR not in lines  # red means a skipped step
        extra = registry.Precision(
            name="fp8x",
            dtype="float8_e4m3fn",
            format="e4m3",
            autocast_dtype="float8_e4m3fn",
            needs_scaler=True,
            accelerate="fp8",
            trainer_flag=None,
        )
        monkeypatch.setitem(registry.PRECISIONS, "fp8x", extra)


def test_series_ids_do_not_depend_on_the_language(client) -> None:
    result = client.predict(
        api_name="/train", lang="es", steps=3, precisions=["fp16"], growth_interval=1, **FAST
    )
    loss, scale = result[1], result[2]
    runs = set(pd_runs(loss)) | set(pd_runs(scale))
    assert runs == {"torch · fp16", "torch · fp16 · raw", "torch · fp16 · skipped"}
    assert runs <= set(mp_colours.color_map())


def pd_runs(frame: dict) -> list[str]:
    """The run column of a LinePlot's serialized value."""
    i = frame["columns"].index("run")
    return [row[i] for row in frame["data"]]


def test_ema_smoothing_is_debiased_and_skips_nan() -> None:
    s = plots.Series("torch · fp32")
    values = [1.0, 0.5, math.nan, 0.25]
    for i, v in enumerate(values, start=1):
        s.add(SimpleNamespace(**{**vars(_step("torch · fp32", i, None)), "loss": v}))
    got = s.smoothed("loss", 0.5)
    assert got[0] == pytest.approx(1.0)  # debiased: the first point is the first value
    assert got[1] == pytest.approx((0.25 + 0.25) / 0.75)
    assert math.isnan(got[2])
    assert got[3] == pytest.approx((0.5 * 0.5 * 0.5 + 0.125 + 0.125) / 0.875)
    frame = plots.line_frame({"torch · fp32": s}, ["torch · fp32"], "loss", plots.View(0.5), True)
    assert set(frame["run"]) == {"torch · fp32", "torch · fp32 · raw"}
    off = plots.line_frame({"torch · fp32": s}, ["torch · fp32"], "loss", plots.View(0.0), True)
    assert lines_in(off, every_series=True) == {"torch · fp32": 3}  # raw: a placeholder


def test_values_reach_the_hover_rounded_and_the_time_axis_in_seconds() -> None:
    assert plots.rounded([0.693147182, 1234567.0, 0.000123456, math.nan]).tolist()[:3] == [
        0.6931,
        1235000.0,
        0.0001235,
    ]
    s = plots.Series("torch · fp32")
    for i in range(1, 4):
        s.add(SimpleNamespace(**{**vars(_step("torch · fp32", i, None)), "elapsed_s": i * 0.51}))
    frame = plots.line_frame(
        {"torch · fp32": s}, ["torch · fp32"], "step_ms", plots.View(0, "time")
    )
    assert frame["step"].tolist() == [0.51, 1.02, 1.53]
    assert plots.step_axis(3) == [0, plots.MIN_STEP_AXIS] and plots.step_axis(500) == [0, 500]


def test_scale_plot_says_why_it_is_empty() -> None:
    from mpdemo.config import RunConfig
    from mpdemo.ui.train.frames import scale_empty_text

    session = Session()
    bf16 = [RunConfig(precision="fp32"), RunConfig(precision="bf16")]
    assert "no run in this comparison has a loss scaler" in scale_empty_text(
        "en", bf16, False, session
    )
    fp16 = [RunConfig(precision="fp16")]
    assert scale_empty_text("en", fp16, False, session) == ""  # it may still report one
    assert "no run reported a loss scale" in scale_empty_text("en", fp16, True, session)
    unscaled = [RunConfig(precision="fp16", loss_scaling=False)]
    assert scale_empty_text("es", unscaled, False, session)


def test_stop_while_idle_says_nothing_runs_and_does_not_eat_the_next_click(client) -> None:
    assert "Nothing is running" in client.predict(api_name="/stop")
    status, *_ = client.predict(api_name="/train", steps=2, precisions=["fp32"], **FAST)
    assert "1 completed" in status


def test_an_input_error_stays_in_the_status_until_the_next_click() -> None:
    import gradio as gr

    from mpdemo.ui.train.handlers import train
    from mpdemo.ui.train.status import idle_status

    session = Session()
    frames = train({"steps": 0}, "en", session)
    first = next(frames)
    assert first["status"].startswith("Not started: Steps must be a whole number from 1 to")
    with pytest.raises(gr.Error):
        next(frames)
    assert idle_status(session, "es").startswith("No se inició: Pasos debe ser")
    assert idle_status(Session(), "en") == i18n.t("status_idle", "en")


def test_presets_say_what_they_loaded_and_when_the_gpu_is_missing() -> None:
    from mpdemo.ui.tabs.why import preset_load
    from mpdemo.ui.train import controls

    d = controls.defaults()
    values, note = preset_load("en", "fp16_vs_fp32_gpu", d, ["auto", "cpu"])
    assert values["device"] == "auto" and values["precisions"] == ["fp32", "fp16"]
    assert "Loaded the preset" in note and "No GPU was found" in note
    values, note = preset_load("es", "fp16_vs_fp32_gpu", d, ["auto", "cpu", "cuda"])
    assert values["device"] == "cuda" and "GPU" not in note.split("**")[-1]
    assert preset_load("en", None, d, ["auto"]) == ({}, "")


def test_builtin_models_show_their_exact_parameter_count() -> None:
    from mpdemo import RunConfig, prepare
    from mpdemo.catalog import MODELS
    from mpdemo.ui.train.controls import model_choices

    for name in ("tiny-bert", "small-bert", "tiny-gpt2"):  # base-bert/base-gpt2: test_device_sizes
        prep = prepare(RunConfig(model=name, device="cpu", train_slice="train[:32]",
                                 eval_slice="validation[:16]"))  # fmt: skip
        count = sum(p.numel() for p in prep.model.parameters())
        assert MODELS[name].approx_params == count, (name, count)
    width = 4096  # amp-mlp: three Linear(4096, 4096) with biases
    assert MODELS["amp-mlp"].approx_params == 3 * (width * width + width)
    entry = dict((v, k) for k, v in model_choices("en", None))["tiny-bert"]
    assert "191,874 params" in entry and "~" not in entry


def test_view_controls_redraw_a_finished_grid_on_a_wall_clock_axis() -> None:
    from mpdemo.config import RunConfig
    from mpdemo.ui.train.handlers import redraw

    session = Session()
    session.begin([RunConfig(precision="fp32")])
    s = session.series["torch · fp32"] = plots.Series("torch · fp32")
    for i in range(1, 6):
        s.add(SimpleNamespace(**{**vars(_step("torch · fp32", i, None)), "elapsed_s": i * 0.25}))
    axes, out = list(redraw(session, "en", 0.0, "time"))
    # The axis change empties each plot first: gradio 6.31 drops data sent with new axis props.
    assert axes["loss"]["value"] is None
    assert axes["loss"]["x_title"] == "seconds since the run started"
    assert axes["loss"]["x_lim"] == [0, None]  # from 0 to wherever the seconds end
    assert "scale" not in axes  # the scale plot stays in steps
    assert "before smoothing" not in axes["legend"]  # smoothing off: no faint curves to explain
    loss = out["loss"]
    assert loss[loss["run"] == "torch · fp32"]["step"].tolist() == [0.25, 0.5, 0.75, 1.0, 1.25]
    axes, back = list(redraw(session, "es", 0.6, "step"))
    assert axes["time"]["x_title"] == "paso" and axes["time"]["x_axis_format"] == "d"
    assert list(redraw(session, "es", 0.3, "step"))[0].keys() >= {"legend", "loss"}  # one update
    assert "sin suavizar" in axes["legend"]


def test_a_refused_number_is_said_wholly_in_spanish_in_the_status_and_the_toast() -> None:
    import gradio as gr

    from mpdemo.ui.train.handlers import train
    from mpdemo.ui.train.status import idle_status

    session = Session()
    frames = train({"steps": 0}, "es", session)
    want = "Pasos debe ser un número entero de 1 a 20.000; se recibió 0"
    assert next(frames)["status"] == f"No se inició: {want}"
    with pytest.raises(gr.Error) as toast:
        next(frames)
    assert toast.value.message == want
    # Switching the page to Portuguese says it again there, named by that page's label.
    assert idle_status(session, "pt").endswith(
        "Passos deve ser um número inteiro de 1 a 20.000; recebido 0"
    )
    assert idle_status(session, "en").endswith(
        "Steps must be a whole number from 1 to 20,000; got 0"
    )


def test_an_empty_grid_names_the_box_to_tick_by_its_label(client) -> None:
    from gradio_client.exceptions import AppError

    with pytest.raises(AppError, match=r"Precisiones: marca al menos una opción \(fp32"):
        client.predict(api_name="/train", lang="es", precisions=[], steps=4)


# --- issue 20: the page in front of a class -----------------------------------------------------


def test_a_repeated_comparison_shows_each_figures_spread(client) -> None:
    result = client.predict(
        api_name="/train", steps=4, precisions=["fp32", "bf16"], repeat=2, **FAST
    )
    status, loss, summary, repeats = result[0], result[1], result[8], result[9]
    assert "Done: 4 runs" in status, status
    labels = ["torch · fp32 · #1", "torch · bf16 · #1", "torch · fp32 · #2", "torch · bf16 · #2"]
    assert [r[0] for r in summary["data"]] == labels
    assert set(lines_in(loss)) == set(labels)  # every repetition its own line
    repeats = repeats.get("value", repeats)  # an update: the table shows only when repeated
    rows = {r[0]: r for r in repeats["data"]}
    assert set(rows) == {"torch · fp32", "torch · bf16"}
    head = repeats["headers"]
    bf16 = rows["torch · bf16"]
    assert bf16[head.index("runs")] == "2"
    lo, _, hi = bf16[head.index("step ms")].partition("–")
    # The lowest and highest typical step of the two: the summary table's own bf16 cells above.
    steps = [
        float(r[summary["headers"].index("step ms")]) for r in summary["data"] if "bf16" in r[0]
    ]
    assert float(lo) == pytest.approx(min(steps), abs=0.06)
    assert float(hi or lo) == pytest.approx(max(steps), abs=0.06)
    assert bf16[head.index("vs fp32")].endswith("×")
    assert rows["torch · fp32"][head.index("vs fp32")] == ""  # fp32 is the reference


def test_repeat_and_steps_rules() -> None:
    from mpdemo.messages import ConfigError
    from mpdemo.runs.runner import check_repeat
    from mpdemo.ui.i18n import error_text

    assert check_repeat(3.0) == 3
    for bad in (0, 11, 2.5, None, ""):
        with pytest.raises(ConfigError) as err:
            check_repeat(bad)
        assert error_text(err.value, "es").startswith("Repetir ×N debe ser")  # the box's label


def test_the_legend_hides_runs_and_closes_one_file() -> None:
    import copy

    from mpdemo.files.recorded import read_runs, reference_files
    from mpdemo.ui.train import frames
    from mpdemo.ui.train.plots import View, line_frame

    s = Session()
    paths = reference_files()[:2]
    for path in paths:
        s.add_recording(read_runs(path))
    if len(s.recordings) < 2:  # one shipped file: open a copy of it as a second file
        other = copy.deepcopy(s.recordings[0].recording)
        other.digest, other.name = "another", "another.json"
        s.add_recording(other)
    first = s.recorded_labels()[0]
    assert frames.toggle_run(s, first) and first in s.view.hidden
    frame = line_frame(s.plot_series(), s.plot_labels(), "loss", s.view)
    assert first not in lines_in(frame) and first in set(frame["run"])  # still in domain
    legend = frames.run_legend(s, "en")
    assert f'data-run="{first}"' in legend and "mp-off" in legend and "data-file=" in legend
    assert frames.toggle_run(s, first) and not s.view.hidden  # shown again
    assert not frames.toggle_run(s, "no such run")
    key = frames.file_key(s.recordings[0])
    kept = s.recordings[1].labels
    assert frames.remove_file(s, key) and s.recorded_labels() == kept
    assert not frames.remove_file(s, key)
    assert View.of(0.6, "step", {"a"}).toggled("a") == View.of(0.6, "step")


def test_every_line_on_the_page_has_its_own_colour() -> None:
    from mpdemo.config import RunConfig
    from mpdemo.files.recorded import read_runs, reference_files
    from mpdemo.runs.runner import grid, repeated
    from mpdemo.ui.train import frames

    s = Session()
    s.begin(repeated(grid(RunConfig(), ["torch"], ["fp32", "bf16", "fp16"], True), 2))
    for path in reference_files():
        s.add_recording(read_runs(path))
    cmap = frames.full_colour_map(s)
    lines = [cmap[lab] for lab in s.plot_labels()]
    assert len(set(lines)) == len(lines) == len(s.plot_labels()), "two lines share a colour"
    assert mp_colours.SKIP_COLOR not in lines
    # The default grid and the first recorded lines: colours from two palettes, never shades.
    assert mp_colours.color_map()["torch · fp32"] != mp_colours.color_map()["torch · bf16"]


def test_axes_span_the_run_and_the_data() -> None:
    from mpdemo.ui.train.frames import x_props
    from mpdemo.ui.train.plots import View

    # Steps: the whole run from the start (no mid-run change, which emptied the charts).
    assert x_props(View(), "en", 40)["x_lim"] == [0, 40]
    # Seconds: from 0 to wherever the data ends, not the step range (0-40 s for 2 s of data).
    time_axis = x_props(View(x_axis="time"), "en", 40)
    assert time_axis["x_lim"] == [0, None] and time_axis["x_axis_format"] != "d"
    spec = next(p for p in plots.PLOTS if p.name == "time")
    assert spec.y_format == "~r"  # 1600 ms, never "1,600" (1.6 to a Spanish reader)


def test_a_language_switch_words_the_scale_sentence_for_the_ticked_boxes() -> None:
    # Before any grid the loss-scale plot's sentence follows the ticked boxes: a preset without
    # a scaler (fp32 against bf16) then a switch to English must not keep the Portuguese one
    # (it was redrawn from the default grid, which has a scaler: nothing was redrawn).
    from mpdemo.ui import i18n
    from mpdemo.ui.train.session import Session
    from mpdemo.ui.train.wiring import lang_scale_empty

    no_scaler = (["fp32", "bf16"], True, False)
    assert lang_scale_empty("en", None, no_scaler) == i18n.t("scale_empty_none", "en")
    assert lang_scale_empty("pt", Session(), no_scaler) == i18n.t("scale_empty_none", "pt")
    assert lang_scale_empty("en", None, (["fp32", "fp16"], True, False)) == ""
    assert lang_scale_empty("en", None, (["fp16"], False, False)) != ""  # fp16, no scaler


def test_the_tabs_language_hooks_answer_in_one_event_each_as_its_own_would():
    # mpdemo/ui/app._merged: many tabs' hooks as one event. Each hook still gets its own inputs
    # (a component two hooks read is sent once), answers in any of gradio's forms (a value, a
    # list, gr.update's dict, {component: update} leaving some out), one that raises leaves
    # only its own outputs as they were, and two on one component send one update.
    import gradio as gr
    import pandas as pd

    from mpdemo.ui.app import _merged

    with gr.Blocks():
        a, b, shared = gr.Textbox(), gr.Textbox(), gr.State()
        o1, o2, o3, o4, o5, o6 = (gr.Textbox() for _ in range(6))

    def boom(lang, x):
        raise RuntimeError("a tab's bug")

    hooks = [
        (lambda lang, x, s: f"{lang}:{x}:{s}", [a, shared], [o1], False),
        (lambda lang, y, s: [f"{y}{s}", lang], [b, shared], [o2, o3], False),
        (lambda lang: gr.update(label=lang), [], [o4], False),
        (lambda lang: {o6: "only this"}, [], [o5, o6], False),
        (boom, [a], [gr.Textbox()], False),
    ]
    fn, inputs, outputs = _merged(hooks)
    assert inputs == [a, shared, b] and len(outputs) == 7
    got = fn("es", "x", "s", "y")
    assert got[:3] == ["es:x:s", "ys", "es"]
    assert got[3]["label"] == "es"
    assert got[4] == gr.skip() and got[5] == "only this" and got[6] == gr.skip()
    # Two hooks on one component (the labels and a tab's text): one update with both.
    fn, _, outputs = _merged([hooks[0], (lambda lang: gr.update(label=lang), [], [o1], False)])
    assert outputs == [o1]
    assert fn("pt", "x", "s") == {**gr.skip(), "value": "pt:x:s", "label": "pt"}
    fn, _, _ = _merged([hooks[2], (lambda lang: gr.skip(), [], [o4], False)])
    assert fn("pt") == gr.update(label="pt")
    table = pd.DataFrame({"a": [1, 2, 3]})  # a value with its own ==
    fn, _, _ = _merged([hooks[2], (lambda lang: table, [], [o4], False)])
    assert fn("pt")["value"] is table and fn("pt")["label"] == "pt"


def test_every_component_reaches_the_page_with_its_settings(app_server) -> None:
    # A component subclass taking (*args, **kwargs) sent gradio 6.31 no props at all: the
    # "Open runs file" button was missing from the page while its API endpoint still answered.
    demo = app_server[1]
    cfg = demo.get_config_file()
    empty = [c["type"] for c in cfg["components"] if not c.get("props")]
    assert empty == []
    ids = {c["props"].get("elem_id") for c in cfg["components"]}
    assert {"open-runs", "lang", "start-btn", "stop-btn", "status", "summary"} <= ids
