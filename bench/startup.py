"""Time from `python app.py` to the page answering, against a bare gradio Blocks app.

    python bench/startup.py            # both, interleaved, 5 rounds: medians and the ratio
    python bench/startup.py app|bare   # one start (for a whole-process timer), exits when served

Each start is a fresh process on a free port; the clock stops at the first HTTP 200 of "/".
"""

from __future__ import annotations

import contextlib
import os
import socket
import statistics
import subprocess
import sys
import time
import urllib.request
from collections.abc import Iterator
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
BARE = "import gradio as gr\nwith gr.Blocks() as demo:\n    gr.Markdown('bare')\ndemo.launch()\n"


def free_port() -> int:
    """A TCP port nobody listens on right now."""
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


@contextlib.contextmanager
def serving(which: str = "app", timeout_s: float = 120.0) -> Iterator[tuple[str, float]]:
    """`which` (app | bare) on a free port: its URL and the seconds from spawning it to its page
    answering; stopped on leaving."""
    port = free_port()
    url = f"http://127.0.0.1:{port}/"
    env = {**os.environ, "GRADIO_SERVER_NAME": "127.0.0.1", "GRADIO_SERVER_PORT": str(port)}
    cmd = [sys.executable, "app.py"] if which == "app" else [sys.executable, "-c", BARE]
    t0 = time.perf_counter()
    proc = subprocess.Popen(
        cmd, cwd=ROOT, env=env, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL
    )
    try:
        while True:
            try:
                with urllib.request.urlopen(url, timeout=1) as r:
                    if r.status == 200:
                        break
            except OSError:
                pass
            if time.perf_counter() - t0 > timeout_s or proc.poll() is not None:
                raise TimeoutError(f"{which} did not answer in {timeout_s} s")
            time.sleep(0.05)
        yield url, time.perf_counter() - t0
    finally:
        proc.terminate()
        proc.wait(30)


def start(which: str, timeout_s: float = 120.0) -> float:
    """Seconds from spawning `which` (app | bare) to its page answering."""
    with serving(which, timeout_s) as (_, seconds):
        return seconds


def main() -> None:
    """One start, or both interleaved with their medians."""
    if len(sys.argv) > 1:
        print(f"{sys.argv[1]}: {start(sys.argv[1]):.2f} s")
        return
    app, bare = [], []
    for _ in range(5):
        app.append(start("app"))
        bare.append(start("bare"))
    ma, mb = statistics.median(app), statistics.median(bare)
    print(f"python app.py answers in {ma:.2f} s (median of 5; {min(app):.2f}-{max(app):.2f})")
    print(f"a bare gradio Blocks app in {mb:.2f} s ({min(bare):.2f}-{max(bare):.2f})")
    print(f"difference {ma - mb:+.2f} s (interleaved: app, bare, app, ...)")


if __name__ == "__main__":
    main()
