"""Speed verdicts under a switching background load, against the same comparison on a quiet machine.

    python bench/verdicts.py [--times 4] [--precisions fp32,bf16] [--period 2.0]

Runs the default comparison (torch backend, default model, its steps as the Train tab runs
them) --times times on the quiet machine and --times times while another process switches
a busy loop on every core on and off every --period seconds, a quiet one and a loaded one in
turn (the machine drifts between minutes: bf16 against fp32 measured 0.83-0.90x in four quiet
comparisons within five minutes on a 2-core EPYC). The quiet interleaved figure is the median of
the quiet comparisons' own figures, its verdict theirs (the same measurement as the loaded
ones: the runs' own steps, taking turns). Prints, for each comparison and precision: the
verdict, the figure and its 95 % interval, the share of CPU other processes took, whether the
interval holds the quiet figure and whether the verdict is its opposite; then the counts (the
target: never opposite; the interval holds the quiet figure in most loaded comparisons), and the
same count for the quiet comparisons, which says how often any comparison can meet it here.
Prints figures; asserts nothing.
"""

from __future__ import annotations

import argparse
import multiprocessing as mp
import os
import statistics
import sys
import threading
import time
from pathlib import Path
from typing import Any

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
    a = ap.parse_args()

    from mpdemo import RunConfig
    from mpdemo.runs.fold import RunFold
    from mpdemo.runs.runner import grid, run_grid

    configs = grid(RunConfig(), ["torch"], a.precisions.split(","))

    def comparison(busy: bool) -> tuple[list[Any], float]:
        """The default comparison as a new click runs it: its end summaries (fp32's left out) and
        its wall seconds; with the busy loop on every core if `busy`."""
        stop = mp.Event()
        workers = [
            mp.Process(target=_busy, args=(stop, a.period), daemon=True)
            for _ in range((os.cpu_count() or 1) if busy else 0)
        ]
        for w in workers:
            w.start()
        try:
            fold = RunFold(configs)  # the speed-ups are the fold's, as every reader gets them
            t0 = time.perf_counter()
            run_grid(configs, fold.apply, threading.Event())
            wall = time.perf_counter() - t0
        finally:
            stop.set()
            for w in workers:
                w.join(5)
        ends = [s for s in fold.summaries if s.precision != "fp32"]
        return ends, wall

    runs: list[tuple[str, int, Any, float]] = []  # (quiet | loaded, i, summary, wall)
    for i in range(a.times):
        for kind in ("quiet", "loaded"):
            ends, wall = comparison(busy=kind == "loaded")
            runs += [(kind, i, s, wall) for s in ends]
            print(f"{kind} {i + 1}: {wall:.0f} s", flush=True)

    quiet = {}  # precision -> (figure, verdict): the quiet comparisons' median and majority
    for p in {s.precision for _, _, s, _ in runs}:
        mine = [s for kind, _, s, _ in runs if kind == "quiet" and s.precision == p]
        figures = [s.speedup_vs_fp32 for s in mine if s.speedup_vs_fp32 is not None]
        verdicts = [s.speed_verdict for s in mine]
        if figures:
            quiet[p] = (statistics.median(figures), max(set(verdicts), key=verdicts.count))
    for p, (figure, v) in sorted(quiet.items()):
        print(f"\nthe quiet figure, {p}: {v} {figure:.3f}x (median of {a.times} quiet comparisons)")
    counts = {k: [0, 0, 0] for k in ("quiet", "loaded")}  # held, opposite, total
    for kind, i, s, _ in runs:
        figure, v = quiet.get(s.precision, (None, None))
        lo, hi = s.speedup_interval or (None, None)
        held = figure is not None and lo is not None and lo <= figure <= hi
        opp = v is not None and s.speed_verdict in OPPOSITE.get(v, set())
        check = s.speed_check or {}
        c = counts[kind]
        c[0] += held
        c[1] += opp
        c[2] += 1
        print(
            f"{kind} {i + 1}, {s.precision}: {s.speed_verdict:7s} "
            f"{_fig(s.speedup_vs_fp32, s.speedup_interval)} ({check.get('rounds')} rounds, "
            f"others took {(check.get('others_cpu') or 0):.0%} of the CPU; reason "
            f"{s.speed_reason}); holds the quiet figure: {'yes' if held else 'no'}; "
            f"opposite: {'YES' if opp else 'no'}"
        )
    held, opposite, total = counts["loaded"]
    q_held, _, q_total = counts["quiet"]
    print(
        f"\nloaded: {held} of {total} intervals held the quiet figure; {opposite} verdicts were "
        f"its opposite\nquiet (the control): {q_held} of {q_total} intervals held it"
    )


if __name__ == "__main__":
    main()
