"""Is the Train tab's "about T left" true? The default comparison, estimate vs what really came.

    python bench/eta.py [--steps N] [--precisions fp32,bf16] [--backends torch] [--every S]

Runs the page's default comparison exactly as the Train button does (same configs, runs taking
turns step by step, same Session and
GridEstimate), samples the estimate of the time left at every event, and afterwards compares it
with the real time left. Prints the worst error
after the first 10 % of the time (target: within ±30 %), and the figures behind it; --every S
prints the error every S seconds from 10 % to the end (the last seconds are the evaluations),
with the machine's load average beside the figures.
"""

from __future__ import annotations

import argparse
import os
import sys
import time
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent.parent))


def main() -> int:
    """Run the comparison, print the estimate check; exit 1 when it misses ±30 %."""
    from mpdemo.runs.runner import Runner
    from mpdemo.runs.state import ComparisonState
    from mpdemo.ui.train.inputs import DEFAULTS, check_inputs

    ap = argparse.ArgumentParser()
    ap.add_argument("--steps", type=int, default=DEFAULTS["steps"])
    ap.add_argument("--precisions", default=",".join(DEFAULTS["precisions"]))
    ap.add_argument("--backends", default=",".join(DEFAULTS["backends"]))
    ap.add_argument("--every", type=float, default=None, help="print the error every S seconds")
    args = ap.parse_args()
    print("load average at the start: {:.2f} {:.2f} {:.2f}".format(*os.getloadavg()))
    values = {
        **DEFAULTS,
        "steps": args.steps,
        "precisions": args.precisions.split(","),
        "backends": args.backends.split(","),
    }
    configs = check_inputs(values)
    session = ComparisonState(configs)  # what the page reads its estimate from
    t0 = time.monotonic()
    runner = Runner(configs).start()
    samples: list[tuple[float, float]] = []  # (seconds since the click, estimated seconds left)
    first_estimate = None
    for ev in runner.events(timeout=0.2):
        if ev is not None:
            session.apply(ev)
            if ev.kind == "plan":
                first_estimate = time.monotonic() - t0
                print("plan:", *(f"  {n['text']}" for n in ev.notes), sep="\n")
        left = session.estimate.remaining_s() if session.estimate is not None else None
        if left is not None:
            samples.append((time.monotonic() - t0, left))
    total = time.monotonic() - t0
    runs = ", ".join(
        f"{r['summary']['label']} {r['summary'].get('mean_step_s', 0) * 1000:.0f} ms/step"
        for r in session.fold.finished
    )
    print(f"runs: {runs}; steps per run {session.configs[0].steps}")
    print(f"estimate first shown {first_estimate:.1f} s after the click; total {total:.1f} s")
    window = [(t, est) for t, est in samples if 0.1 * total <= t <= 0.95 * total]
    errors = [(t, est, total - t, (est - (total - t)) / (total - t)) for t, est in window]
    worst = max(errors, key=lambda e: abs(e[3]))
    print("  t (s)   estimated left   real left   error")
    for frac in (0.1, 0.25, 0.5, 0.75, 0.9):
        t, est, real, err = min(errors, key=lambda e, f=frac: abs(e[0] - f * total))
        print(f"  {t:6.1f}   {est:12.1f}   {real:9.1f}   {err:+6.0%}")
    if args.every:
        print("  every sample from 10% on (the window ends at 95%):")
        print("  t (s)   estimated left   real left   error")
        shown = -args.every
        for t, est, real, err in (
            (t, est, total - t, (est - (total - t)) / (total - t))
            for t, est in samples
            if 0.1 * total <= t < total
        ):
            if t - shown >= args.every or real < 3.0:  # the last seconds: every sample
                shown = t
                print(f"  {t:6.1f}   {est:12.1f}   {real:9.1f}   {err:+6.0%}")
    est = session.estimate
    if est is not None:
        from statistics import median

        from mpdemo.runs import estimate as E

        ratios = ", ".join(f"{p} {median(r):.2f}" for p, r in est.eval_ratios.items())
        print(
            f"evaluation / step measured: {ratios or '-'} (prior fp32 "
            f"{E.EVAL_PER_STEP['fp32']:.2f}, 16-bit {E.EVAL_PER_STEP_16:.2f}); "
            f"rounds stretched x{est.stall():.2f} beyond their steps"
        )
    ok = abs(worst[3]) <= 0.30
    print(
        f"worst error from 10% to 95% of the time: {worst[3]:+.0%} at {worst[0]:.1f} s "
        f"(estimated {worst[1]:.1f} s left, really {worst[2]:.1f} s) -> "
        f"{'within' if ok else 'OUTSIDE'} ±30%"
    )
    print("load average at the end: {:.2f} {:.2f} {:.2f}".format(*os.getloadavg()))
    return 0 if ok else 1


if __name__ == "__main__":
    raise SystemExit(main())
