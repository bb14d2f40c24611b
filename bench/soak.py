"""Start/stop soak, first-step latency and peak memory of the default comparison.

    python bench/soak.py [--cycles 50]

Prints: threads and RSS before/after N start/stop cycles (targets: threads back to baseline,
RSS growth ≤ 50 MB), seconds from Runner.start() to the first step event (target ≤ 3 s, warm
process), and the process's peak RSS over the default comparison (target ≤ 1.2 GB).
"""

from __future__ import annotations

import argparse
import gc
import resource
import sys
import threading
import time
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent.parent))

import psutil  # noqa: E402

from mpdemo import RunConfig  # noqa: E402
from mpdemo.runs.runner import Runner, grid  # noqa: E402


def cycle(cfg: RunConfig) -> float:
    """Start a run, stop it at its second step; return seconds to the first step event."""
    t0 = time.perf_counter()
    first = None
    runner = Runner([cfg]).start()
    for ev in runner.events():
        if ev.kind == "step":
            first = first or time.perf_counter() - t0
            if ev.step >= 2:
                runner.stop()
    if not runner.join(30):
        raise RuntimeError("worker did not end")
    return first or float("nan")


def main() -> None:
    """Run the soak and print the figures."""
    p = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    p.add_argument("--cycles", type=int, default=50)
    a = p.parse_args()
    proc = psutil.Process()
    cfg = RunConfig(device="cpu", steps=1000)
    cycle(cfg)  # warm-up: imports, first allocations
    gc.collect()
    threads0, rss0 = threading.active_count(), proc.memory_info().rss
    firsts = [cycle(cfg) for _ in range(a.cycles)]
    gc.collect()
    time.sleep(0.5)
    threads1, rss1 = threading.active_count(), proc.memory_info().rss
    print(
        f"{a.cycles} start/stop cycles: threads {threads0} -> {threads1}, "
        f"RSS {rss0 / 2**20:.0f} MB -> {rss1 / 2**20:.0f} MB ({(rss1 - rss0) / 2**20:+.0f} MB)"
    )
    firsts.sort()
    print(
        f"start -> first step event: median {firsts[len(firsts) // 2]:.2f} s, "
        f"max {firsts[-1]:.2f} s (warm process, default model on CPU)"
    )
    runner = Runner(grid(RunConfig(device="cpu"), ["torch"], ["fp32", "bf16"])).start()
    for _ in runner.events():
        pass
    peak = resource.getrusage(resource.RUSAGE_SELF).ru_maxrss * 1024
    print(
        f"default comparison (torch fp32+bf16, 100 steps): peak RSS of this process "
        f"{peak / 2**20:.0f} MB"
    )


if __name__ == "__main__":
    main()
