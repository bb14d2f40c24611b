"""Speed verdicts under a switching background load, against the quiet interleaved figure.

    python bench/verdicts.py [--times 4] [--precisions fp32,bf16] [--period 2.0] [--quiet-s 20]

First measures each precision against fp32 on a quiet machine (one long interleaved
measurement, mpdemo.runs.plan.calibrate). Then runs the default comparison (torch backend, default
model, fitted to about a minute like the Train tab's) --times times while another process
switches a busy loop on every core on and off every --period seconds, and prints, for each
comparison and precision: the verdict, the speed-up and its 95 % interval, the share of CPU the
other process took, whether the interval holds the quiet figure, and whether the verdict is the
opposite of the quiet one (the target: never). Prints figures; asserts nothing.
"""

from __future__ import annotations

import argparse
import multiprocessing as mp
import os
import sys
import threading
import time
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent.parent))

OPPOSITE = {
    "faster": {"slower", "same"},
    "slower": {"faster", "same"},
    "same": {"faster", "slower"},
}


def _fig(x: float | None, interval: list[float] | None = None) -> str:
    """'1.234x [1.1, 1.3]' with what there is."""
    text = f"{x:.3f}x" if x is not None else "-"
    return text + (f" [{interval[0]:.3f}, {interval[1]:.3f}]" if interval else " [no interval]")


def _busy(stop: mp.Event, period: float) -> None:
    """Spin for `period` seconds, idle for `period` seconds, until stopped."""
    while not stop.is_set():
        end = time.monotonic() + period
        x = 0
        while time.monotonic() < end and not stop.is_set():
            x += 1
        stop.wait(period)


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("--times", type=int, default=4)
    ap.add_argument("--precisions", default="fp32,bf16")
    ap.add_argument("--period", type=float, default=2.0)
    ap.add_argument("--quiet-s", type=float, default=20.0)
    ap.add_argument("--fit-s", type=float, default=60.0)
    a = ap.parse_args()

    from mpdemo import RunConfig
    from mpdemo.runs.calibration import forget_calibrations
    from mpdemo.runs.plan import calibrate
    from mpdemo.runs.runner import grid, run_grid

    precisions = a.precisions.split(",")
    configs = grid(RunConfig(), ["torch"], precisions)
    quiet = calibrate(configs, budget_s=a.quiet_s, force=True)
    assert quiet is not None
    print(
        f"quiet, {a.quiet_s:.0f} s interleaved (others took {quiet.load['others']:.0%} of the CPU):"
    )
    for p, c in quiet.checks.items():
        print(
            f"  {p}: {c.verdict:7s} {c.speedup:.3f}x [{c.low:.3f}, {c.high:.3f}] ({c.rounds} rounds)"
        )

    stop = mp.Event()
    workers = [
        mp.Process(target=_busy, args=(stop, a.period), daemon=True)
        for _ in range(os.cpu_count() or 1)
    ]
    for w in workers:
        w.start()
    held = total = opposite = 0
    try:
        for i in range(a.times):
            forget_calibrations()  # each comparison measures again, as a new click would
            events: list = []
            t0 = time.perf_counter()
            run_grid(configs, events.append, threading.Event(), calibrate=True, fit_s=a.fit_s)
            wall = time.perf_counter() - t0
            for ev in events:
                if ev.kind != "end" or ev.summary.precision == "fp32":
                    continue
                s = ev.summary
                ref = quiet.checks.get(s.precision)
                check = s.speed_check or {}
                lo, hi = s.speedup_interval or (None, None)
                holds = ref is not None and ref.speedup is not None and lo is not None
                holds = holds and lo <= ref.speedup <= hi
                opp = ref is not None and s.speed_verdict in OPPOSITE.get(ref.verdict, set())
                total += 1
                held += holds
                opposite += opp
                print(
                    f"comparison {i + 1}, {s.precision}: {s.speed_verdict:7s} "
                    f"{_fig(s.speedup_vs_fp32, s.speedup_interval)} ({check.get('rounds')} rounds, "
                    f"others took {(check.get('others_cpu') or 0):.0%} of the CPU; reason "
                    f"{s.speed_reason}); holds the quiet {_fig(ref.speedup, ref.interval) if ref else '-'}: "
                    f"{'yes' if holds else 'no'}; opposite: {'YES' if opp else 'no'}; {wall:.0f} s"
                )
    finally:
        stop.set()
        for w in workers:
            w.join(5)
    print(
        f"\n{held} of {total} intervals held the quiet figure; {opposite} verdicts were its opposite"
    )


if __name__ == "__main__":
    main()
