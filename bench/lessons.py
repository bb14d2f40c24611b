"""Each lesson of the Train tab, run as the page runs it, on several seeds: its point as figures.

    python bench/lessons.py                        # every lesson but the sweep, seeds 0-4
    python bench/lessons.py underflow --seeds 0,7  # one (or several) lessons, the seeds you name

Prints, per lesson and seed: wall time on this machine (click to last event, as the page's
runner runs it, no calibration), each run's loss over its first 5 and last 10 steps, skipped
steps and the loss-scale range, then the lesson's check (mpdemo/teach/lesson_checks.py): each
figure its point rests on, the bar, and whether it cleared it; the process's peak resident
memory while the lesson's runs were alive together (sampled every 50 ms from /proc: the app's
own footprint included, as a Space's memory cap counts it), and the load average before and
after: a busy machine's wall times are not a quiet machine's. Figures, not asserts
(tests/test_lessons.py asserts the checks on a seed nobody tuned to; speed belongs here).
Exit status 1 where a check failed.
"""

from __future__ import annotations

import os
import statistics
import sys
import threading
import time
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent.parent))

from mpdemo.runs.fold import RunFold  # noqa: E402
from mpdemo.runs.runner import run_grid  # noqa: E402
from mpdemo.teach.lesson_checks import traces_of  # noqa: E402
from mpdemo.teach.lessons import LESSONS  # noqa: E402


def measure(name: str, seed: int = 0) -> dict:
    """Run one lesson's grid with `seed` in this thread; return its figures and its check."""
    lesson = LESSONS[name]
    configs = [c.replace(seed=seed) for c in lesson.configs()]
    events: list = []
    load0 = os.getloadavg()[0]
    t0 = time.perf_counter()
    done = threading.Event()
    peak = [rss_bytes()]

    def sample() -> None:  # the runs are alive together: their peak, not the end's figure
        while not done.wait(0.05):
            peak[0] = max(peak[0], rss_bytes())

    sampler = threading.Thread(target=sample, daemon=True)
    sampler.start()
    try:
        run_grid(configs, events.append, threading.Event())
    finally:
        done.set()
        sampler.join()
    wall = time.perf_counter() - t0
    fold = RunFold(configs)  # the runs' records, as the CLI keeps them
    for ev in events:
        fold.apply(ev)
    traces = traces_of(fold.finished)
    step_s = {c.label: [e.step_time_s for e in events if e.kind == "step" and e.label == c.label]
              for c in configs}  # fmt: skip
    runs = {
        label: {
            "first5": t.first(5),
            "last10": t.last(10),
            "skipped": t.skipped,
            "scales": sorted({s for s in t.scales if s}),
            "step_ms": 1000 * statistics.median(step_s[label]) if step_s[label] else 0.0,
        }
        for label, t in traces.items()
        if t.losses
    }
    readings = lesson.check(traces) if lesson.check else []
    return {"wall": wall, "runs": runs, "readings": readings,
            "load": (load0, os.getloadavg()[0]), "peak_rss": peak[0]}  # fmt: skip


def rss_bytes() -> int:
    """This process's resident memory now (Linux /proc; 0 where there is none)."""
    try:
        with open("/proc/self/statm", encoding="ascii") as f:
            return int(f.read().split()[1]) * os.sysconf("SC_PAGE_SIZE")
    except (OSError, ValueError, IndexError):
        return 0


def main() -> int:
    """Run the lessons named (all but the sweep by default) on each seed; print their figures."""
    args = sys.argv[1:]
    seeds = [0, 1, 2, 3, 4]
    if "--seeds" in args:
        i = args.index("--seeds")
        seeds = [int(x) for x in args[i + 1].split(",")]
        del args[i : i + 2]
    names = args or [n for n, x in LESSONS.items() if not x.sweep]
    print(f"{os.cpu_count()} CPUs; torch threads as the app sets them; seeds {seeds}")
    failed = 0
    for name in names:
        for seed in seeds:
            r = measure(name, seed)
            load = f"load average {r['load'][0]:.1f} before, {r['load'][1]:.1f} after"
            rss = f"peak RSS {r['peak_rss'] / 2**20:.0f} MiB"
            print(
                f"\n{name} seed {seed}: {r['wall']:.1f} s wall, {len(r['runs'])} runs, {rss} ({load})"
            )
            for label, x in r["runs"].items():
                scales = ", ".join(f"2^{s.bit_length() - 1}" for s in map(int, x["scales"]))
                print(
                    f"  {label:32s} loss {x['first5']:.3f} -> {x['last10']:.3f} "
                    f"(first 5 -> last 10), median step {x['step_ms']:.0f} ms, "
                    f"skipped {x['skipped']}" + (f", scale {scales}" if scales else "")
                )
            for reading in r["readings"]:
                print(f"  check {reading}")
                failed += not reading.ok
    print(f"\n{failed} check(s) failed" if failed else "\nevery check held")
    return 1 if failed else 0


if __name__ == "__main__":
    raise SystemExit(main())
