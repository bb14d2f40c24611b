"""`python app.py` stopped by Ctrl-C or SIGTERM: the runs end, the exit is 130 / 143 (0 when
idle), no abort and no half-written file (mpdemo/ui/serve.py)."""

from __future__ import annotations

import os
import signal
import subprocess
import sys
import time
import urllib.request

import pytest
from conftest import ROOT
from test_ui import free_port


def start_server(tmp_path, command: tuple[str, ...] = ("app.py",), cwd=ROOT):
    """The app as a person starts it (`python app.py` in the clone by default), and its URL."""
    port = free_port()
    env = {
        **os.environ,
        "GRADIO_SERVER_NAME": "127.0.0.1",
        "GRADIO_SERVER_PORT": str(port),
        "XDG_CACHE_HOME": str(tmp_path / "cache"),
        "TMPDIR": str(tmp_path),
    }
    proc = subprocess.Popen(
        [sys.executable, *command], cwd=cwd, env=env, stdout=subprocess.PIPE,
        stderr=subprocess.STDOUT, text=True,
    )  # fmt: skip
    url = f"http://127.0.0.1:{port}/"
    deadline = time.monotonic() + 120
    while time.monotonic() < deadline:
        assert proc.poll() is None, proc.stdout.read()
        try:
            urllib.request.urlopen(url, timeout=2).close()
            return proc, url
        except OSError:
            time.sleep(0.3)
    proc.kill()
    raise AssertionError("the server never answered")


@pytest.mark.parametrize(("sig", "code"), [(signal.SIGTERM, 143), (signal.SIGINT, 130)])
def test_stopping_the_server_mid_run_ends_the_run_and_exits_cleanly(tmp_path, sig, code):
    from gradio_client import Client

    proc, url = start_server(tmp_path)
    try:
        client = Client(url, verbose=False)
        job = client.submit(
            api_name="/train", backends=["torch"], precisions=["fp32"], steps=20000,
            train_slice="train[:256]", eval_slice="validation[:64]", batch_size=8,
        )  # fmt: skip
        deadline = time.monotonic() + 120
        while time.monotonic() < deadline and not job.outputs():  # its first frame: it runs
            time.sleep(0.3)
        time.sleep(1.0)
        # 130 / 143 (not 0) below also says the server saw a comparison in progress.
        proc.send_signal(sig)
        out, _ = proc.communicate(timeout=90)
    finally:
        proc.kill()
    assert proc.returncode == code, out
    assert "terminate called" not in out and "Traceback" not in out, out
    assert not list(tmp_path.rglob("*.part")), "a half-written file was left"


def test_the_installed_command_serves_from_any_folder_and_an_idle_stop_exits_0(tmp_path):
    """`python -m mpdemo app` (the `mpdemo app` of an installed wheel) from an empty folder."""
    empty = tmp_path / "empty"
    empty.mkdir()
    proc, _ = start_server(tmp_path, ("-m", "mpdemo", "app"), cwd=empty)
    try:
        proc.send_signal(signal.SIGTERM)
        out, _ = proc.communicate(timeout=60)
    finally:
        proc.kill()
    assert proc.returncode == 0, out
