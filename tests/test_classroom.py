"""Classroom and public-Space load: many visitors at once, odd input, start/stop cycles."""

from __future__ import annotations

import threading
import time

import pytest
from test_ui import FAST, runner_threads, wait_no_runner

from mpdemo import RunConfig
from mpdemo.runs.runner import Runner
from tests.conftest import lines_in

# Five visitors, each with its own run, so a line or row in the wrong session would show.
VISITORS = [
    (["torch"], ["fp32"]),
    (["torch"], ["bf16"]),
    (["accelerate"], ["fp32"]),
    (["accelerate"], ["bf16"]),
    (["trainer"], ["fp32"]),
]


def test_five_visitors_at_once_all_finish_and_see_only_their_own_runs(app_url):  # noqa: F811
    from gradio_client import Client

    clients = [Client(app_url, verbose=False) for _ in VISITORS]
    try:
        jobs = [
            c.submit(api_name="/train", steps=6, backends=b, precisions=p, **FAST)
            for c, (b, p) in zip(clients, VISITORS, strict=True)
        ]
        queued_ranks: list[int] = []
        deadline = time.monotonic() + 240
        while time.monotonic() < deadline and not all(j.done() for j in jobs):
            for j in jobs:  # the server's line says each one's place in its status
                outs = j.outputs()
                if outs and " in line" in str(outs[-1][0]):
                    queued_ranks.append(str(outs[-1][0]))
            assert len(runner_threads()) <= 1  # one training at a time in this process
            time.sleep(0.1)
        assert queued_ranks, "the waiting visitors were told their place in the queue"
        for job, (b, p) in zip(jobs, VISITORS, strict=True):
            status, loss, *_, summary, _repeats, _csv, _json, _run, _script = job.result(timeout=60)
            label = f"{b[0]} · {p[0]}"
            assert "Done: 1 run (1 completed)" in status
            assert lines_in(loss) == {label: 6}
            assert [r[0] for r in summary["data"]] == [label]
    finally:
        for c in clients:
            c.close()
    assert wait_no_runner(10)


def test_absurd_input_is_refused_fast_and_the_next_run_works(app_url):  # noqa: F811
    from gradio_client import Client
    from gradio_client.exceptions import AppError

    client = Client(app_url, verbose=False)
    try:
        for bad in ({"model": "x" * 10_000_000}, {"lr": 1e6}, {"batch_size": 0}):
            t0 = time.monotonic()
            with pytest.raises(AppError):
                client.predict(api_name="/train", steps=4, **{**FAST, **bad})
            assert time.monotonic() - t0 < 10  # well under 2 s here; generous for loaded CI
        status, *_ = client.predict(api_name="/train", steps=3, precisions=["fp32"], **FAST)
        assert "1 completed" in status
    finally:
        client.close()


def test_start_stop_cycles_leave_no_threads_behind():
    cfg = RunConfig(device="cpu", steps=1000, **{k: v for k, v in FAST.items() if k != "device"})
    baseline = threading.active_count()
    for _ in range(4):  # one thread left behind a cycle would show after the first
        runner = Runner([cfg]).start()
        for ev in runner.events():
            if ev.kind == "step":
                runner.stop()
        assert runner.join(15)
        assert [s["status"] for s in runner.state.fold.summaries] == ["stopped"]
    time.sleep(0.3)
    assert threading.active_count() <= baseline
