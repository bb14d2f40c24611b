"""The default size sweep, as `python -m mpdemo sweep` runs it, with its wall time.

    python bench/sweep.py                       # the default grid (about a minute on 2 cores)
    python bench/sweep.py --sizes 32x1 --batch-sizes 8 --budget 1    # a smoke run

Prints each point as it comes (step per precision, speed-up with its 95 % interval, verdict),
the estimate beside what each point really took, the crossover sentence, the memory anatomy,
other processes' share of the CPU while it ran, and the whole sweep's wall time.
"""

from __future__ import annotations

import argparse
import json
import sys
import threading
import time
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent.parent))

from mpdemo.cli.sweep import memory_lines, point_line  # noqa: E402
from mpdemo.engine.machine import machine_note  # noqa: E402
from mpdemo.runs.timing import LoadMeter  # noqa: E402
from mpdemo.sweep.notes import sweep_document
from mpdemo.sweep.plan import SweepSpec, plan_sweep
from mpdemo.sweep.run import run_sweep
from mpdemo.sweep.sizes import (
    DEFAULT_BATCH_SIZES,
    DEFAULT_BUDGET_S,
    DEFAULT_SIZES,
    parse_batch_sizes,
    parse_sizes,
)


def main() -> int:
    """Run the sweep, print the figures; 0 when it completed."""
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("--sizes", default=DEFAULT_SIZES)
    ap.add_argument("--batch-sizes", default=DEFAULT_BATCH_SIZES)
    ap.add_argument("--budget", type=float, default=DEFAULT_BUDGET_S)
    ap.add_argument("--json", dest="json_path")
    args = ap.parse_args()

    t0 = time.perf_counter()
    meter = LoadMeter()
    spec = SweepSpec(
        sizes=parse_sizes(args.sizes),
        batch_sizes=parse_batch_sizes(args.batch_sizes),
        budget_s=args.budget,
    )
    plan = plan_sweep(spec)
    planned_s = time.perf_counter() - t0
    print(f"# {machine_note().text}")
    print(
        f"# plan: {len(plan.points)} points x {', '.join(plan.precisions)}, estimate "
        f"{plan.estimate_s:.0f} s (probe {', '.join(f'{p} {r / 1e9:.3g}' for p, r in plan.rates.items())}"
        f" GFLOP/s; planned in {planned_s:.1f} s)"
    )
    estimates = {(p.size, p.batch_size): p.estimate_s for p in plan.points}
    points, memory, end = [], None, None

    def on_event(ev):
        nonlocal memory, end
        if ev.kind == "point":
            points.append(ev)
            est = estimates[(parse_sizes(f"{ev.hidden}x{ev.layers}")[0], ev.batch_size)]
            print(f"{point_line(ev)}  [took {ev.wall_s:.1f} s, estimate {est:.1f} s]", flush=True)
        elif ev.kind == "memory":
            memory = ev
            print("\n".join(memory_lines(ev)), flush=True)
        elif ev.kind == "sweep_end":
            end = ev

    run_sweep(plan, on_event, threading.Event())
    wall = time.perf_counter() - t0
    load = meter.read() or {}
    for note in end.notes:
        print(f"* {note['text']}")
    print(
        f"# {end.status}: {end.points} of {end.total} points; sweep {end.wall_s:.1f} s, wall "
        f"{wall:.1f} s from the start of this script's sweep (imports excluded); other "
        f"processes took {100 * load.get('others', 0.0):.0f} % of the CPU, steal "
        f"{100 * load.get('steal', 0.0):.0f} %"
    )
    if args.json_path:
        doc = sweep_document(points, memory, spec=spec, status=end.status, notes=end.notes)
        doc["wall_s"] = wall
        Path(args.json_path).write_text(json.dumps(doc, indent=1), encoding="utf-8")
    return 0 if end.status == "completed" else 1


if __name__ == "__main__":
    raise SystemExit(main())
