"""A class on one server: N visitors press Train with the defaults at the same moment.

For each class size (1 = one visitor alone, then 8 and 30 by default) a fresh `python app.py`
is started on 127.0.0.1 (nothing shared from a previous round, nothing calibrated), N
gradio_client sessions submit /train with every input at its default at once, and each one's
time to a finished comparison is printed, with the last one against the visitor alone and the
server's resident memory (now and peak). Loopback only; every wait is bounded, and the server
is stopped at the end of each round.

    python bench/classroom.py                # 1, 8 and 30 visitors
    python bench/classroom.py --visitors 8   # 1 and 8
"""

from __future__ import annotations

import argparse
import os
import socket
import statistics
import subprocess
import sys
import threading
import time
import urllib.request
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
TARGET = 2.5  # the last of 8 visitors within 2.5x of one visitor alone


def free_port() -> int:
    """A TCP port nobody listens on right now, on the loopback interface."""
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


def wait_answering(url: str, proc: subprocess.Popen, timeout: float = 120.0) -> None:
    """Until the page answers (or the server died, or timeout seconds passed)."""
    deadline = time.monotonic() + timeout
    while time.monotonic() < deadline:
        if proc.poll() is not None:
            raise RuntimeError(f"the server exited with {proc.returncode}")
        try:
            with urllib.request.urlopen(url, timeout=2) as r:  # noqa: S310 - loopback only
                if r.status == 200:
                    return
        except OSError:
            time.sleep(0.2)
    raise RuntimeError(f"the server did not answer within {timeout:.0f} s")


def rss_mb(pid: int) -> tuple[float, float]:
    """(resident now, peak resident) of a process, in MiB (Linux /proc)."""
    now = peak = float("nan")
    try:
        for line in Path(f"/proc/{pid}/status").read_text().splitlines():
            if line.startswith("VmRSS:"):
                now = int(line.split()[1]) / 1024
            elif line.startswith("VmHWM:"):
                peak = int(line.split()[1]) / 1024
    except OSError:
        pass
    return now, peak


def one_round(visitors: int, timeout_s: float) -> dict:
    """A fresh server, `visitors` sessions pressing Train at once; their times and its memory."""
    from gradio_client import Client

    port = free_port()
    url = f"http://127.0.0.1:{port}/"
    env = {
        **os.environ,
        "GRADIO_SERVER_NAME": "127.0.0.1",
        "GRADIO_SERVER_PORT": str(port),
        "GRADIO_ANALYTICS_ENABLED": "False",
        "HF_HUB_OFFLINE": "1",
        "HF_DATASETS_OFFLINE": "1",
        "MPDEMO_MAX_VIEWERS": str(max(64, visitors + 8)),
    }
    proc = subprocess.Popen(
        [sys.executable, "app.py"],
        cwd=ROOT,
        env=env,
        stdout=subprocess.DEVNULL,
        stderr=subprocess.DEVNULL,
    )
    try:
        wait_answering(url, proc)
        clients = [Client(url, verbose=False) for _ in range(visitors)]
        times: list[float | None] = [None] * visitors
        statuses: list[str] = [""] * visitors
        go = threading.Barrier(visitors)

        def visit(i: int) -> None:
            go.wait()  # everyone presses Train at the same moment
            t0 = time.monotonic()
            job = clients[i].submit(api_name="/train")  # every input at its default
            try:
                result = job.result(timeout=timeout_s)
            except Exception as err:  # noqa: BLE001 - reported as this visitor's failure
                statuses[i] = f"failed: {type(err).__name__}: {err}"
                return
            times[i] = time.monotonic() - t0
            statuses[i] = str(result[0])

        threads = [threading.Thread(target=visit, args=(i,), daemon=True) for i in range(visitors)]
        for th in threads:
            th.start()
        for th in threads:
            th.join(timeout_s + 30)
        now, peak = rss_mb(proc.pid)
        for c in clients:
            c.close()
    finally:
        proc.terminate()
        try:
            proc.wait(15)
        except subprocess.TimeoutExpired:
            proc.kill()
    done = [s for s in statuses if s.startswith("Done")]
    return {
        "visitors": visitors,
        "times": times,
        "finished": sum(1 for s in statuses if "Done:" in s),
        "watched": sum(1 for s in statuses if "another visitor" in s),
        "failed": [s for s in statuses if not s or s.startswith("failed")],
        "rss_mb": now,
        "peak_rss_mb": peak,
        "done": len(done),
    }


def main() -> int:
    """Run the rounds and print the figures."""
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--visitors", type=int, nargs="*", default=[8, 30])
    ap.add_argument("--timeout", type=float, default=600.0, help="seconds per visitor, at most")
    args = ap.parse_args()
    alone = one_round(1, args.timeout)
    base = alone["times"][0]
    print(f"1 visitor alone: {base:.1f} s to a finished comparison" if base else "alone: failed")
    print(f"  server RSS {alone['rss_mb']:.0f} MiB (peak {alone['peak_rss_mb']:.0f} MiB)")
    for n in args.visitors:
        r = one_round(n, args.timeout)
        got = sorted(t for t in r["times"] if t is not None)
        print(f"\n{n} visitors at once: {len(got)} of {n} finished a comparison")
        print("  each (s): " + ", ".join(f"{t:.1f}" for t in got))
        if got and base:
            last = got[-1]
            print(
                f"  first {got[0]:.1f} s, median {statistics.median(got):.1f} s, last {last:.1f} s"
                f" = {last / base:.2f}x one alone" + (f" (target <= {TARGET}x)" if n == 8 else "")
            )
        print(f"  watched another visitor's comparison: {r['watched']} of {n}")
        print(f"  server RSS {r['rss_mb']:.0f} MiB (peak {r['peak_rss_mb']:.0f} MiB)")
        for f in r["failed"][:3]:
            print(f"  failed: {f[:200]}")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
