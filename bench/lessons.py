"""Each lesson of the Train tab, run as the page runs it: wall time, loss-fall ratios, the gap.

    python bench/lessons.py                  # every lesson but the sweep
    python bench/lessons.py underflow        # one (or several) by name

Prints, per lesson: wall time on this machine (click to last event, as the page's runner runs
it, no calibration), each run's loss-fall ratio (mean loss over its last 5 steps / its first
5; the default comparison's bar is 0.85), skipped steps and the loss-scale range, and for the
underflow lesson the gap between unscaled and scaled fp16's last-5 losses, and the process's
peak resident memory while the lesson's runs were alive together (sampled every 50 ms from
/proc: the app's own footprint included, as a Space's memory cap counts it). Also the load
average before and after: a busy machine's wall times are not a quiet machine's. Figures, not
asserts (tests/test_lessons.py checks what the lessons are; speed belongs here).
"""

from __future__ import annotations

import os
import statistics
import sys
import threading
import time
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent.parent))

from mpdemo.runs.runner import run_grid  # noqa: E402
from mpdemo.teach.lessons import LESSONS  # noqa: E402


def measure(name: str) -> dict:
    """Run one lesson's grid in this thread; return its figures."""
    lesson = LESSONS[name]
    configs = lesson.configs()
    steps: dict[str, list] = {c.label: [] for c in configs}
    load0 = os.getloadavg()[0]
    t0 = time.perf_counter()

    def on_event(ev) -> None:
        if ev.kind == "step":
            steps.setdefault(ev.label, []).append(ev)

    done = threading.Event()
    peak = [rss_bytes()]

    def sample() -> None:  # the runs are alive together: their peak, not the end's figure
        while not done.wait(0.05):
            peak[0] = max(peak[0], rss_bytes())

    sampler = threading.Thread(target=sample, daemon=True)
    sampler.start()
    try:
        run_grid(configs, on_event, threading.Event())
    finally:
        done.set()
        sampler.join()
    wall = time.perf_counter() - t0
    runs = {}
    for label, evs in steps.items():
        losses = [e.loss for e in evs]
        scales = sorted({e.loss_scale for e in evs if e.loss_scale})
        runs[label] = {
            "first5": statistics.fmean(losses[:5]),
            "last5": statistics.fmean(losses[-5:]),
            "skipped": sum(bool(e.skipped) for e in evs),
            "scales": scales,
            "step_ms": 1000 * statistics.median(e.step_time_s for e in evs),
        }
    return {"wall": wall, "runs": runs, "load": (load0, os.getloadavg()[0]), "peak_rss": peak[0]}


def rss_bytes() -> int:
    """This process's resident memory now (Linux /proc; 0 where there is none)."""
    try:
        with open("/proc/self/statm", encoding="ascii") as f:
            return int(f.read().split()[1]) * os.sysconf("SC_PAGE_SIZE")
    except (OSError, ValueError, IndexError):
        return 0


def main() -> int:
    """Run the lessons named (all but the sweep by default) and print their figures."""
    names = sys.argv[1:] or [n for n, x in LESSONS.items() if not x.sweep]
    print(f"{os.cpu_count()} CPUs; torch threads as the app sets them")
    for name in names:
        r = measure(name)
        load = f"load average {r['load'][0]:.1f} before, {r['load'][1]:.1f} after"
        rss = f"peak RSS {r['peak_rss'] / 2**20:.0f} MiB"
        print(f"\n{name}: {r['wall']:.1f} s wall, {len(r['runs'])} runs, {rss} ({load})")
        for label, x in r["runs"].items():
            scales = ", ".join(f"2^{s.bit_length() - 1}" for s in map(int, x["scales"]))
            print(
                f"  {label:24s} loss {x['first5']:.3f} -> {x['last5']:.3f} "
                f"(ratio {x['last5'] / x['first5']:.2f}), median step {x['step_ms']:.0f} ms, "
                f"skipped {x['skipped']}" + (f", scale {scales}" if scales else "")
            )
        scaled = r["runs"].get("torch · fp16")
        unscaled = r["runs"].get("torch · fp16 · S=1")
        if scaled and unscaled:
            print(
                f"  unscaled - scaled fp16, last 5 steps: {unscaled['last5'] - scaled['last5']:+.3f}"
            )
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
