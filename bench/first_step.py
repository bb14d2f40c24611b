"""Train click → first step event: the default comparison's first step, cold and warm.

    python bench/first_step.py [--times 3]

In one fresh process: a Runner for the Train tab's default comparison (the page's defaults:
the first lesson, its steps standing) is started and stopped at its first step event, --times times; the
first is cold (it imports torch, transformers and opens the data), the others warm, as a
second click on a running server. Prints seconds from start() to the first step event, and to
each run's first step. Target (DESIGN.md): ≤ 3 s. Asserts nothing.
"""

from __future__ import annotations

import argparse
import os
import sys
import time
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent.parent))


def main() -> None:
    """Start and stop the default comparison --times times; print the delays."""
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("--times", type=int, default=3)
    a = ap.parse_args()
    from mpdemo.runs.runner import Runner
    from mpdemo.ui.train.inputs import DEFAULTS, check_inputs

    configs = check_inputs(dict(DEFAULTS))
    for i in range(a.times):
        t0 = time.perf_counter()
        # As the Train tab starts it: the lesson's steps stand (no fitting to a time budget).
        runner = Runner(configs).start()
        firsts: dict[str, float] = {}
        for ev in runner.events():
            if ev.kind == "step" and ev.label not in firsts:
                firsts[ev.label] = time.perf_counter() - t0
                if len(firsts) == len(configs):
                    runner.stop()
        runner.join()
        each = ", ".join(f"{label} {s:.2f} s" for label, s in firsts.items())
        kind = "cold" if i == 0 else "warm"
        print(f"{kind}: first step {min(firsts.values()):.2f} s after start(); {each}", flush=True)
    print(f"load average: {os.getloadavg()}")


if __name__ == "__main__":
    main()
