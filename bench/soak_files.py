"""Server memory after many sessions opened large runs files and went away.

    python bench/soak_files.py [--sessions 12] [--at-once 2] [--runs 10] [--steps 100000]

Starts the app (`python app.py`'s build and launch options) in a child process on 127.0.0.1,
writes one large runs file (the shipped default recording, its runs stretched to --steps steps:
about 29 MB at the defaults, under the upload cap), then opens --sessions sessions through
gradio_client, --at-once at a time: each opens the file with /load_runs and closes. Prints the
server's RSS at its baseline (after one warm-up session), at its peak, and once the sessions are
gone (target: back within 100 MB of the baseline). Loopback only; every loop is bounded.
"""

from __future__ import annotations

import argparse
import json
import os
import socket
import subprocess
import sys
import tempfile
import time
from concurrent.futures import ThreadPoolExecutor
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT))

import psutil  # noqa: E402

SERVER = """
import sys
sys.path.insert(0, {root!r})
from mpdemo.config import Limits
from mpdemo.ui import build_app, launch_options
demo = build_app().queue(default_concurrency_limit=1, max_size=Limits.from_env().max_queue)
demo.launch(server_name="127.0.0.1", server_port={port}, quiet=True, **launch_options())
"""
# How long the server may take to free a closed session: gradio notices a closed heartbeat
# at its next beat (every 15 s), then runs unload.
SETTLE_S = 40.0


def free_port() -> int:
    """A TCP port on the loopback nobody listens on right now."""
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


def big_file(folder: Path, runs: int, steps: int) -> Path:
    """The default CPU recording with `runs` runs of `steps` steps each, as a runs file."""
    from mpdemo.files.recorded import MAX_FILE_BYTES, REFERENCE_DIR

    doc = json.loads((REFERENCE_DIR / "default-cpu.json").read_text(encoding="utf-8"))
    template = doc["runs"][0]
    base = template["steps"][0]
    loss = round(base.get("loss") or 0.7, 4)
    out = []
    for k in range(runs):
        run = json.loads(json.dumps(template))
        run["summary"]["label"] = f"torch · fp32 #{k + 1}"
        run["summary"]["steps"] = run["config"]["steps"] = steps
        # A step and its loss: what keeps 10 x 100,000 steps under the upload cap.
        run["steps"] = [{"step": i + 1, "loss": loss} for i in range(steps)]
        out.append(run)
    doc["runs"] = out
    path = folder / "big-runs.json"
    path.write_text(json.dumps(doc, separators=(",", ":")), encoding="utf-8")
    if path.stat().st_size > MAX_FILE_BYTES:
        raise SystemExit(f"{path.stat().st_size / 2**20:.1f} MiB is over the upload cap")
    return path


def wait_up(url: str, proc: subprocess.Popen, timeout_s: float = 120.0) -> None:
    """Until the server answers (or it died, or the time is up)."""
    import urllib.request

    end = time.monotonic() + timeout_s
    while time.monotonic() < end:
        if proc.poll() is not None:
            raise SystemExit(f"the server exited with {proc.returncode}")
        try:
            with urllib.request.urlopen(url + "config", timeout=2):
                return
        except OSError:
            time.sleep(0.5)
    raise SystemExit("the server did not answer")


def one_session(url: str, path: Path) -> float:
    """Open `path` in a fresh session, then close it; seconds the open took."""
    from gradio_client import Client, handle_file

    client = Client(url, verbose=False)
    try:
        t0 = time.perf_counter()
        result = client.predict(handle_file(str(path)), api_name="/load_runs")
        took = time.perf_counter() - t0
        if not str(result[0]).startswith("Opened"):
            raise SystemExit(f"the file was not opened: {result[0]!r}")
        return took
    finally:
        client.close()  # its heartbeat ends: the server's unload frees the session


def rss_mb(proc: psutil.Process) -> float:
    """The server's resident memory in MiB."""
    return proc.memory_info().rss / 2**20


def settle(proc: psutil.Process, target_mb: float, wait_s: float = SETTLE_S) -> float:
    """RSS once it is down to `target_mb`, or after `wait_s`."""
    end = time.monotonic() + wait_s
    while time.monotonic() < end:
        time.sleep(1.0)
        now = rss_mb(proc)
        if now <= target_mb:
            return now
    return rss_mb(proc)


def main() -> None:
    """Run the soak and print the figures."""
    p = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    p.add_argument("--sessions", type=int, default=12)
    p.add_argument("--at-once", type=int, default=2)
    p.add_argument("--runs", type=int, default=10)
    p.add_argument("--steps", type=int, default=100_000)
    a = p.parse_args()
    if not 1 <= a.sessions <= 200 or not 1 <= a.at_once <= 8:
        raise SystemExit("--sessions 1..200, --at-once 1..8")
    port = free_port()
    url = f"http://127.0.0.1:{port}/"
    with tempfile.TemporaryDirectory(prefix="mpdemo-soak-") as tmp:
        path = big_file(Path(tmp), a.runs, a.steps)
        size = path.stat().st_size / 2**20
        env = {**os.environ, "GRADIO_ANALYTICS_ENABLED": "False"}
        server = subprocess.Popen(
            [sys.executable, "-c", SERVER.format(root=str(ROOT), port=port)], env=env
        )
        try:
            wait_up(url, server)
            proc = psutil.Process(server.pid)
            warm = one_session(url, path)  # imports, first allocations, gradio's caches
            base = settle(proc, 0, SETTLE_S)  # the warm-up session freed too
            peak, times = base, []
            with ThreadPoolExecutor(a.at_once) as pool:
                for start in range(0, a.sessions, a.at_once):
                    n = min(a.at_once, a.sessions - start)
                    times += list(pool.map(lambda _: one_session(url, path), range(n)))
                    peak = max(peak, rss_mb(proc))
            after = settle(proc, base + 50)
        finally:
            server.terminate()
            server.wait(30)
    times.sort()
    print(
        f"runs file: {size:.1f} MiB ({a.runs} runs x {a.steps:,} steps); open: warm-up "
        f"{warm:.1f} s, median {times[len(times) // 2]:.1f} s, max {times[-1]:.1f} s"
    )
    print(
        f"{a.sessions} sessions ({a.at_once} at once) opened it and closed: server RSS "
        f"baseline {base:.0f} MiB, peak {peak:.0f} MiB, after {after:.0f} MiB "
        f"({after - base:+.0f} MiB; target within 100 MB)"
    )


if __name__ == "__main__":
    main()
