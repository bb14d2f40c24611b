"""Recorded runs: the runs JSON written with its machine, read back, shown beside live runs,
kept by the browser across a reload; and the ZeroGPU path (selected only where it applies)."""

from __future__ import annotations

import copy
import json
import threading
from pathlib import Path

import pytest

from mpdemo.cli import main as cli
from mpdemo.files.machines import cpu_short_name, gpu_short_name, machine_tag
from mpdemo.files.recorded import FORMAT_VERSION, RecordingError, read_runs, reference_files
from mpdemo.ui.train.recorded import save_runs
from mpdemo.ui.train.session import Session
from mpdemo.ui.train.session_store import MAX_STORED_CHARS

TINY = ["--train-slice", "train[:128]", "--eval-slice", "validation[:32]", "--batch-size", "8"]


@pytest.fixture(scope="module")
def cli_json(tmp_path_factory) -> Path:
    """A runs JSON written by `python -m mpdemo run --json` (in this process: same code path)."""
    path = tmp_path_factory.mktemp("runs") / "cli.json"
    code = cli.main(["run", *TINY, "--steps", "4", "--precision", "fp32,bf16", "--quiet",
                     "--json", str(path)])  # fmt: skip
    assert code == cli.EXIT_OK
    return path


# --- the file ------------------------------------------------------------------------------


def test_cli_json_carries_the_machine_and_reads_back(cli_json: Path) -> None:
    doc = json.loads(cli_json.read_text(encoding="utf-8"))
    assert doc["version"] == FORMAT_VERSION
    m = doc["machine"]
    assert m["device_kind"] == "cpu" and m["cpu"]["name"] and m["date"]
    assert {"torch", "transformers", "accelerate"} <= {k for k, v in m["versions"].items() if v}
    rec = read_runs(cli_json)
    assert [r["summary"]["label"] for r in rec.runs] == ["torch · fp32", "torch · bf16"]
    assert [len(r["steps"]) for r in rec.runs] == [4, 4]
    assert rec.tag == machine_tag(m) and rec.tag and rec.date == m["date"][:10]


@pytest.mark.parametrize(
    ("content", "key", "words"),
    [
        (b"not json at all", "runs_not_json", "is not JSON"),
        (b"\xff\xfe\x00garbage", "runs_not_json", "is not JSON"),
        (b"[1, 2, 3]", "runs_bad_shape", 'no "runs" list'),
        (b'{"version": 2, "runs": []}', "runs_bad_shape", "not a list of runs"),
        (b'{"version": 2, "runs": [{"summary": {"backend": "torch"}}]}', "runs_bad_field",
         "runs[0].summary.precision is missing"),
        (b'{"version": 2, "runs": [{"summary": {"backend": "torch", "precision": "fp32", '
         b'"samples_per_s": "fast"}}]}', "runs_bad_field",
         "runs[0].summary.samples_per_s is not a number"),
        (b'{"version": 2, "runs": [{"summary": {"backend": "torch", "precision": "fp32"}, '
         b'"steps": [{"step": "one"}]}]}', "runs_bad_field",
         "runs[0].steps[0].step is not a number"),
        (b'{"version": 99, "runs": []}', "runs_newer", "newer mpdemo"),
    ],
)  # fmt: skip
def test_bad_files_say_what_is_wrong_in_one_line(content: bytes, key: str, words: str) -> None:
    with pytest.raises(RecordingError) as err:
        read_runs(content, "bad.json")
    assert err.value.key == key
    text = str(err.value)
    assert words in text and "bad.json" in text and "\n" not in text


def test_first_version_files_still_load_as_recorded() -> None:
    doc = {"runs": [{"summary": {"label": "torch · fp32", "backend": "torch",
                                 "precision": "fp32", "samples_per_s": 10.0}}]}  # fmt: skip
    rec = read_runs(json.dumps(doc).encode(), "old.json")
    assert rec.version == 1 and rec.machine is None and rec.tag == "recorded"


def test_machine_tags_are_short_and_tell_machines_apart() -> None:
    assert gpu_short_name("NVIDIA H200") == "H200"
    assert gpu_short_name("NVIDIA A100-SXM4-80GB") == "A100"
    assert gpu_short_name("NVIDIA GeForce RTX 4090") == "RTX 4090"
    assert gpu_short_name("NVIDIA H200 MIG 3g.71gb") == "H200 MIG"  # a ZeroGPU slice
    assert cpu_short_name("AMD EPYC 7B13 64-Core Processor") == "EPYC 7B13"
    assert cpu_short_name("Intel(R) Xeon(R) Platinum 8481C CPU @ 2.70GHz") == "Xeon 8481C"
    # The same bare name on two CPUs with different vector units: the ISA tells them apart.
    assert cpu_short_name("AMD EPYC", "AVX512") != cpu_short_name("AMD EPYC", "AVX2")
    cuda = {"device_kind": "cuda", "gpu": {"name": "NVIDIA H200"}, "cpu": {"name": "AMD EPYC"}}
    assert machine_tag(cuda) == "H200"


# --- beside live runs ---------------------------------------------------------------------


def test_a_recording_fills_plots_and_table_with_its_own_speedups(cli_json: Path) -> None:
    rec = read_runs(cli_json)
    s = Session()
    labels = s.add_recording(rec)
    assert labels == [f"torch · fp32 · {rec.tag}", f"torch · bf16 · {rec.tag}"]
    assert s.plot_labels() == labels
    assert {k: len(v.step) for k, v in s.plot_series().items()} == dict.fromkeys(labels, 4)
    rows = {r["label"]: r for r in s.summaries()}
    assert rows[labels[0]]["speedup_vs_fp32"] == 1.0
    fp32, bf16 = (rec.runs[i]["summary"]["samples_per_s"] for i in (0, 1))
    assert rows[labels[1]]["speedup_vs_fp32"] == pytest.approx(bf16 / fp32)
    # The same file again replaces itself; another file from the same machine is named by its
    # file name and date, not numbered.
    assert s.add_recording(read_runs(cli_json)) == labels
    other = copy.deepcopy(rec)
    other.digest = "another file"
    source = f"{rec.name} {rec.date}" if rec.date else rec.name
    assert s.add_recording(other) == [f"{lab} · {source}" for lab in labels]
    assert len(s.table("en").data) == 4


def test_recorded_lines_get_their_own_colours() -> None:
    from mpdemo.colours import color_map
    from mpdemo.ui.train.frames import full_colour_map, recorded_colours

    s = Session()
    for path in reference_files():
        s.add_recording(read_runs(path))
    colours = {lab: c for lab, c in recorded_colours(s).items() if lab in s.recorded_labels()}
    assert set(colours) == set(s.recorded_labels())
    live = set(color_map().values())
    assert not set(colours.values()) & live and len(set(colours.values())) == len(colours)
    assert set(s.plot_labels()) <= set(full_colour_map(s))  # every line the plots draw


# --- across a reload ----------------------------------------------------------------------


def _finished_session(cli_json: Path) -> Session:
    """A session as after a training: the CLI's runs as this session's history."""
    s = Session()
    runs = read_runs(cli_json).runs
    s.configs = [cli.RunConfig.from_dict(r["config"]) for r in runs]
    for r in runs:
        s.apply(_end_event(r))
    return s


def _end_event(run: dict):
    from types import SimpleNamespace

    return SimpleNamespace(kind="end", run_id="x", label=run["summary"]["label"],
                           status="completed", summary=run["summary"])  # fmt: skip


def test_stored_runs_come_back_in_a_new_session_and_a_tampered_one_is_dropped_alone(
    cli_json: Path,
) -> None:
    s = _finished_session(cli_json)
    s.add_recording(read_runs(cli_json))
    text = save_runs(s)  # what the page hands the browser to keep, and gets back after a reload
    assert isinstance(text, str)  # one string: gradio's page copies an object leaf by leaf
    fresh = Session()
    assert fresh.restore(text) == 4
    value = json.loads(text)  # a browser that kept the older object form
    assert Session().restore(value) == 4
    assert [r["summary"]["label"] for r in fresh.runs] == ["torch · fp32", "torch · bf16"]
    assert fresh.plot_labels() == s.plot_labels()
    assert [r["label"] for r in fresh.summaries()] == [r["label"] for r in s.summaries()]
    bad = copy.deepcopy(value)
    bad["recordings"][0]["runs"][0]["summary"]["samples_per_s"] = "lots"
    other = Session()  # the tampered file goes; the runs trained here come back
    assert other.restore(bad) == 2 and len(other.history) == 2 and not other.recordings
    # One run whose config holds a control character (a follower's stored teacher's run): that
    # run alone is dropped, the store is not lost.
    odd = copy.deepcopy(value)
    odd["runs"][0]["config"]["dataset"] = "reviews\x07"
    third = Session()
    assert third.restore(odd) == 3
    assert [r["summary"]["label"] for r in third.history] == ["torch · bf16"]
    assert Session().restore("nothing stored") == 0
    s.clear()
    assert s.stored() is None and not s.plot_labels() and s.table("en").data.empty


def test_what_the_browser_keeps_stays_small(cli_json: Path) -> None:
    s = Session()
    rec = read_runs(cli_json)
    big = copy.deepcopy(rec)
    step = big.runs[0]["steps"][0]
    big.runs[0]["steps"] = [{**step, "step": i + 1} for i in range(20_000)]
    big.digest = "big"
    s.add_recording(big)
    value = s.stored()
    assert value is not None and len(json.dumps(value)) <= MAX_STORED_CHARS
    assert len(value["recordings"][0]["runs"][0]["steps"]) <= 500


def test_reference_recordings_really_ran_and_say_where() -> None:
    files = {p.name: p for p in reference_files()}
    assert {"default-cpu.json", "scale-moves-cpu.json"} <= set(files)
    for path in files.values():
        rec = read_runs(path)
        assert rec.machine and rec.machine["device_kind"] and rec.machine["date"]
        assert all(r["summary"]["status"] == "completed" and r["steps"] for r in rec.runs)
    scale = read_runs(files["scale-moves-cpu.json"]).runs[0]
    # growth_interval 10: the scale must have grown at least once in 100 steps.
    assert scale["config"]["growth_interval"] == 10
    scales = [st["loss_scale"] for st in scale["steps"] if st["loss_scale"]]
    assert max(scales) > scales[0]


# --- ZeroGPU ------------------------------------------------------------------------------


def test_zerogpu_flag_is_the_one_the_spaces_package_reads(monkeypatch) -> None:
    spaces_config = pytest.importorskip("spaces.config")
    from mpdemo.ui import zerogpu

    for value, on in (("true", True), ("1", True), ("False", False), ("", False)):
        monkeypatch.setenv(zerogpu.FLAG, value)
        assert spaces_config.Settings().zero_gpu is on
        assert zerogpu.enabled() is on
    monkeypatch.delenv(zerogpu.FLAG)
    assert not zerogpu.enabled()


def test_duration_comes_from_the_estimate_and_is_capped(monkeypatch) -> None:
    from mpdemo.config import RunConfig
    from mpdemo.ui import zerogpu

    short = [RunConfig(steps=10).to_dict()]
    long = [RunConfig(steps=2000, precision=p).to_dict() for p in ("fp32", "fp16", "bf16")]
    monkeypatch.setenv(zerogpu.MAX_S_VAR, "200")
    assert zerogpu.MIN_S <= zerogpu.duration_s(short) < zerogpu.duration_s(long) == 200
    monkeypatch.delenv(zerogpu.MAX_S_VAR)
    assert zerogpu.duration_s(long) == zerogpu.DEFAULT_MAX_S


def test_without_the_flag_training_uses_the_plain_runner(monkeypatch) -> None:
    from mpdemo.config import RunConfig
    from mpdemo.runs.runner import Runner
    from mpdemo.ui import zerogpu

    monkeypatch.delenv(zerogpu.FLAG, raising=False)
    monkeypatch.setattr(zerogpu, "_gpu_fn", None)
    assert isinstance(zerogpu.make_runner([RunConfig()]), Runner)
    assert zerogpu.gpu_function() is zerogpu.train_in_gpu
    assert not zerogpu.setup()


def test_with_the_flag_the_grid_runs_inside_the_gpu_call(monkeypatch) -> None:
    """spaces.GPU wraps the training; no run thread starts outside the wrapped call; Stop ends it.

    CUDA-less torch cannot import spaces' real worker code, so spaces.GPU is replaced by one
    that records its arguments and runs the task in this process, as the forked worker would.
    """
    spaces = pytest.importorskip("spaces")
    from mpdemo.config import RunConfig
    from mpdemo.runs.runner import Runner
    from mpdemo.ui import zerogpu

    calls: list[dict] = []
    inside = threading.Event()

    def fake_gpu(task=None, *, duration=None, size=None):
        def wrap(fn):
            def wrapped(*args):
                calls.append({"duration": duration(*args), "args": args})
                inside.set()
                try:
                    yield from fn(*args)
                finally:
                    inside.clear()

            return wrapped

        return wrap

    started_outside: list[bool] = []
    real_start = Runner.start

    def spy_start(self):
        started_outside.append(not inside.is_set())
        return real_start(self)

    monkeypatch.setenv(zerogpu.FLAG, "true")
    monkeypatch.setattr(spaces, "GPU", fake_gpu)
    monkeypatch.setattr(zerogpu, "_gpu_fn", None)
    monkeypatch.setattr(Runner, "start", spy_start)
    assert zerogpu.setup()
    cfgs = [RunConfig(train_slice="train[:128]", eval_slice="validation[:32]", steps=400,
                      batch_size=8, device="cpu", precision=p) for p in ("fp32", "bf16")]  # fmt: skip
    runner = zerogpu.make_runner(cfgs)
    assert isinstance(runner, zerogpu.GpuRunner)
    runner.start()
    assert runner.alive
    for ev in runner.events(timeout=0.1):
        if ev is not None and ev.kind == "step" and ev.step == 3:
            runner.stop()  # the Stop button: a flag file the worker polls
    assert runner.join(1) and not runner.alive
    assert len(calls) == 1 and calls[0]["args"][0] == [c.to_dict() for c in cfgs]
    assert zerogpu.MIN_S <= calls[0]["duration"] <= zerogpu.max_duration_s()
    assert started_outside == [False]  # the Runner's thread started inside the GPU call
    # The runs take turns step by step: both stopped, each with its steps so far.
    assert [s["status"] for s in runner.state.fold.summaries] == ["stopped", "stopped"]
    # The profile comes from where the runs ran (the worker), for the runs JSON.
    assert runner.state.machine is not None and runner.state.machine["device_kind"] == "cpu"


# --- through the API (gradio_client) ------------------------------------------------------


@pytest.fixture(scope="module")
def app_url():
    """The app in this process on a free port (as app.py launches it)."""
    import socket

    from mpdemo.ui import build_app

    with socket.socket() as sock:
        sock.bind(("127.0.0.1", 0))
        port = sock.getsockname()[1]
    demo = build_app().queue(default_concurrency_limit=1)
    demo.launch(prevent_thread_lock=True, server_name="127.0.0.1", server_port=port, quiet=True)
    yield f"http://127.0.0.1:{port}/"
    demo.close()


def test_load_runs_api_draws_a_cli_file_and_a_broken_one_changes_nothing(
    app_url: str, cli_json: Path, tmp_path: Path
) -> None:
    from gradio_client import Client, handle_file

    from mpdemo.ui.train.plots import PLOTS
    from tests.conftest import lines_in

    loss_at, summary_at = 1, 1 + len(PLOTS)  # /load_runs: status, the plots, the summary
    tag = read_runs(cli_json).tag
    want = [f"torch · fp32 · {tag}", f"torch · bf16 · {tag}"]
    client = Client(app_url, verbose=False)
    try:
        result = client.predict(handle_file(str(cli_json)), api_name="/load_runs")
        assert "cli.json" in result[0] and tag in result[0]
        assert [row[0] for row in result[summary_at]["data"]] == want
        assert lines_in(result[loss_at]) == dict.fromkeys(want, 4)
        for content in (b"{ not json", b'{"version": 99, "runs": []}'):
            bad = tmp_path / "broken.json"
            bad.write_bytes(content)
            again = client.predict(handle_file(str(bad)), api_name="/load_runs")
            assert "broken.json" in again[0] and "\n" not in again[0].strip()
            assert again[summary_at]["data"] == result[summary_at]["data"]
            assert lines_in(again[loss_at]) == lines_in(result[loss_at])
    finally:
        client.close()


def test_a_training_beside_a_recording_draws_both_on_one_axis(cli_json: Path) -> None:
    from mpdemo.ui.train import handlers as train_tab
    from tests.conftest import lines_in

    session = Session()
    rec = read_runs(cli_json)
    long = copy.deepcopy(rec)  # a recording longer than the live run
    long.runs[0]["steps"] = [{**long.runs[0]["steps"][0], "step": i + 1} for i in range(100)]
    long.runs[0]["config"]["steps"] = 100
    labels = session.add_recording(long)
    values = {"train_slice": "train[:64]", "eval_slice": "validation[:32]", "steps": 3,
              "batch_size": 8, "device": "cpu", "precisions": ["fp32"]}  # fmt: skip
    frames = list(train_tab.train(values, "en", session))
    first = frames[0]["loss"]
    assert first["value"] is None and first["x_lim"][1] >= 100  # the recorded 100 steps fit
    loss = next(f["loss"] for f in reversed(frames) if "loss" in f and f["loss"] is not None)
    loss = loss["value"] if isinstance(loss, dict) else loss
    drawn = lines_in(loss)
    assert drawn[labels[0]] == 100 and drawn[labels[1]] == 4 and drawn["torch · fp32"] == 3
    assert [r["label"] for r in session.summaries()] == ["torch · fp32", *labels]
