"""What mpdemo's Accelerate path does each step beyond the course's bare loop, and its cost.

    python bench/step_extras.py [--model tiny-bert] [--batch-size 32] [--steps 20]

In one process, on one prepared model: each piece of per-step work the engine adds to the
course's listing (bench/bare.py's bare_accelerate) timed alone, best of 5 x N calls:
`accelerator.reduce` of the loss (a clone on one process), the Recorder's begin/lap/end with
its StepEvent, and for runs that take turns the StateSwap at a hand-over (torch's random state,
Accelerate's shared dicts) and the baton's hand-over between two threads. Then the course's
step (median, after 3 warm-up steps) and the pieces' sum as a share of it. Quick and in-process:
the whole-run figure that counts is bench/overhead.py's. Prints figures; asserts nothing.
"""

from __future__ import annotations

import argparse
import os
import statistics
import sys
import threading
import time
import timeit
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent.parent))


def best_us(fn, number: int = 2000) -> float:  # noqa: ANN001
    """Microseconds a call, the best of 5 repeats (the least disturbed by other processes)."""
    return min(timeit.repeat(fn, number=number, repeat=5)) / number * 1e6


def handover_us(n: int = 2000) -> float:
    """Microseconds a hand-over of mpdemo.runs.turns.Baton between two otherwise idle threads."""
    from mpdemo.runs.turns import Baton

    baton = Baton(2)

    def run(i: int) -> None:
        baton.take(i)
        for _ in range(n):
            baton.give(i)
            baton.take(i)
        baton.finish(i)

    threads = [threading.Thread(target=run, args=(i,)) for i in range(2)]
    t0 = time.perf_counter()
    for t in threads:
        t.start()
    for t in threads:
        t.join()
    return (time.perf_counter() - t0) / (2 * n) * 1e6


def main() -> None:
    """Time the pieces, then the course's step; print the table."""
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("--model", default="tiny-bert")
    ap.add_argument("--batch-size", type=int, default=32)
    ap.add_argument("--steps", type=int, default=20)
    a = ap.parse_args()

    # mpdemo first, torch after: mpdemo sets the app's OpenMP settings before torch loads.
    from mpdemo import RunConfig, prepare

    cfg = RunConfig(model=a.model, batch_size=a.batch_size, steps=a.steps, backend="accelerate")

    import torch
    from accelerate import Accelerator

    from mpdemo.backends.accelerate import reset_accelerate_state
    from mpdemo.engine.recorder import Recorder
    from mpdemo.runs.together import StateSwap

    prep = prepare(cfg)
    reset_accelerate_state()
    accelerator = Accelerator(mixed_precision="no", cpu=prep.device.type == "cpu")
    model, optimizer, loader = accelerator.prepare(
        prep.model, prep.optimizer, prep.raw_train_loader
    )
    loss = model(**next(iter(loader))).loss.detach()

    rec = Recorder(prep, lambda ev: None, threading.Event())
    rec.start()
    rec.begin()  # the first step arms the activation probe: leave it behind
    rec.lap()

    def recorder_step() -> None:
        rec.begin()
        rec.end(loss, None, False)
        rec.losses.clear(), rec.times.clear(), rec.scales.clear()  # keep memory flat

    swap, turn = StateSwap(accelerate=True), [0]  # the state in place is run 0's

    def swap_once() -> None:
        swap(turn[0], 1 - turn[0])
        turn[0] = 1 - turn[0]

    pieces = {
        "accelerator.reduce(loss)": best_us(lambda: accelerator.reduce(loss, "mean")),
        "Recorder begin/lap/end + StepEvent": best_us(recorder_step, 500),
        "StateSwap at a hand-over (turns)": best_us(swap_once, 500),
        "baton hand-over (turns)": handover_us(),
    }
    if turn[0] == 1:
        swap_once()  # run 0's state (this accelerator's) back in place

    times: list[float] = []

    def course() -> None:
        model.train()
        for batch in loader:
            t0 = time.perf_counter()
            outputs = model(**batch)
            accelerator.backward(outputs.loss)
            optimizer.step()
            optimizer.zero_grad()
            outputs.loss.item()
            times.append(time.perf_counter() - t0)

    worker = threading.Thread(target=course)  # a fresh thread, as the runs have
    worker.start()
    worker.join()
    reset_accelerate_state()
    step_us = statistics.median(times[3:]) * 1e6
    print(f"{a.model}, batch {a.batch_size}, torch {torch.__version__}; load {os.getloadavg()}")
    for name, us in pieces.items():
        print(f"  {name:<38}{us:9.1f} us")
    total = sum(pieces.values())
    print(f"  {'sum (every step, at most)':<38}{total:9.1f} us")
    print(f"  {'the course step (median)':<38}{step_us:9.1f} us -> {total / step_us:.2%} of it")


if __name__ == "__main__":
    main()
