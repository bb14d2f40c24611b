"""Step time with and without `--watch-grads N`, each measurement in its own process.

    python bench/watch_grads.py [--model tiny-bert] [--precision fp16] [--steps 40]
                                [--every 5] [--rounds 8]

Each round starts two fresh processes, one training with watch_grads=0 and one with
watch_grads=N (the order alternates from round to round, so a shared machine's load falls on
both). Prints, per side: the median step time the run reports (median_step_s: the hooks'
seconds are taken out of a watched step), the whole run's wall time per step (what sits between
steps counts: the histograms are computed there), min and median over the rounds, and the
ratio watched / plain of each. Then the every-N-th steps (the ones watched in the watched run)
apart from the other steps, on both sides, and each such step against the mean of its two
neighbours in the same process (a ratio a shared machine's slow drift of load barely moves):
the watched steps themselves should match the plain run's. Also what one histogram costs: the
seconds the watched run spent outside its steps, divided by the histograms it made. Prints
figures; asserts nothing.
"""

from __future__ import annotations

import argparse
import json
import os
import statistics
import sys
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent


def one(cfg_json: str) -> None:
    """In the child: train once; print the run's median step, wall per step, histograms made."""
    sys.path.insert(0, str(ROOT))
    from mpdemo import RunConfig, train

    d = json.loads(cfg_json)
    every = d.pop("every")  # not the config's: the steps the watched side watches
    cfg = RunConfig.from_dict(d)
    t0 = time.perf_counter()
    first = None
    hist = 0
    summary = None
    times: list[float] = []  # each step's time as the run reports it
    for ev in train(cfg):
        if ev.kind == "step":
            if first is None:
                first = time.perf_counter()  # preparation is left out of the wall time
            times.append(ev.step_time_s)
        elif ev.kind == "grads":
            hist += 1
        elif ev.kind == "end":
            summary = ev.summary
    wall = time.perf_counter() - (first or t0)
    steps = summary["steps"]
    # The every-N-th steps (watched in the watched run; the same steps of the plain run), past
    # the warm-up steps the summary leaves out, and the others.
    nth = [i for i in range(cfg.warmup_steps, len(times)) if (i + 1) % every == 0]
    others = [times[i] for i in range(cfg.warmup_steps, len(times)) if (i + 1) % every]
    # Each N-th step against its neighbours' mean (the one before alone after the last step).
    near = [
        times[i]
        / statistics.fmean(times[j] for j in (i - 1, i + 1) if cfg.warmup_steps <= j < len(times))
        for i in nth
    ]
    print(
        json.dumps(
            {
                "median_step_s": summary["median_step_s"],
                "wall_per_step_s": wall / max(steps - 1, 1),
                "step_sum_s": summary["mean_step_s"] * steps,
                "histograms": hist,
                "nth_step_s": statistics.median(times[i] for i in nth),
                "other_step_s": statistics.median(others),
                "nth_vs_neighbours": statistics.median(near),
            }
        ),
        flush=True,
    )


def spawn(cfg: dict) -> dict[str, float]:
    """One training in a fresh Python process."""
    sys.path.insert(0, str(Path(__file__).resolve().parent))
    from child import run_child

    return run_child(Path(__file__).resolve(), "--one", json.dumps(cfg))


def main() -> None:
    """Run the rounds, print the figures."""
    p = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    p.add_argument("--one", help=argparse.SUPPRESS)
    p.add_argument("--model", default="tiny-bert")
    p.add_argument("--precision", default="fp16")
    p.add_argument("--steps", type=int, default=40)
    p.add_argument("--every", type=int, default=5)
    p.add_argument("--rounds", type=int, default=8)
    p.add_argument("--batch-size", type=int, default=32)
    args = p.parse_args()
    if args.one:
        one(args.one)
        return
    base = {
        "model": args.model,
        "precision": args.precision,
        "steps": args.steps,
        "batch_size": args.batch_size,
        "device": "cpu",
    }
    # "every" tells the plain side's child which steps the watched side watches.
    base["every"] = args.every
    sides = {"plain": {**base, "watch_grads": 0}, "watched": {**base, "watch_grads": args.every}}
    got: dict[str, list[dict[str, float]]] = {"plain": [], "watched": []}
    for r in range(args.rounds):
        order = ["plain", "watched"] if r % 2 == 0 else ["watched", "plain"]
        for side in order:
            got[side].append(spawn(sides[side]))
        print(
            f"round {r + 1}: "
            + "  ".join(f"{s} {got[s][-1]['median_step_s'] * 1e3:.1f} ms" for s in order),
            flush=True,
        )
    print(f"\n{args.model} {args.precision}, {args.steps} steps, watch every {args.every}, "
          f"{args.rounds} rounds (load average now {os.getloadavg()[0]:.1f})")  # fmt: skip
    rows = (
        ("median_step_s", "median step"),
        ("nth_step_s", f"steps {args.every},{2 * args.every},.."),
        ("other_step_s", "other steps"),
        ("wall_per_step_s", "wall per step"),
    )
    for key, name in rows:
        row = []
        for side in ("plain", "watched"):
            xs = [g[key] * 1e3 for g in got[side]]
            row.append(f"{side} min {min(xs):.1f} median {statistics.median(xs):.1f} ms")
        ratios = [w[key] / p_[key] for w, p_ in zip(got["watched"], got["plain"], strict=True)]
        print(
            f"{name:>14}: "
            + "; ".join(row)
            + f"; watched/plain median {statistics.median(ratios):.3f}"
        )
    near = {s: statistics.median(g["nth_vs_neighbours"] for g in got[s]) for s in got}
    print(
        f"steps {args.every},{2 * args.every},.. each / its neighbours' mean, median over rounds: "
        f"plain {near['plain']:.3f}, watched {near['watched']:.3f}"
    )
    w = got["watched"]
    hist = statistics.median(g["histograms"] for g in w)
    extra = statistics.median(g["wall_per_step_s"] for g in w) - statistics.median(
        g["wall_per_step_s"] for g in got["plain"]
    )
    per = extra * (args.steps - 1) / hist if hist else float("nan")
    print(
        f"histograms per watched run: {hist:.0f}; wall time added per histogram: {per * 1e3:.1f} ms"
    )


if __name__ == "__main__":
    main()
