"""Engine overhead vs the course's bare loop, and the bf16/fp32 speed-up each one shows.

    python bench/overhead.py [--model tiny-bert] [--steps 40] [--rounds 3] [--device cpu]

Bare loop and engine run interleaved (bare, engine, bare, engine...) on the same prepared
model and batches; the figure is the median over rounds of engine steps/s ÷ bare steps/s.
Targets (DESIGN.md): ≥ 0.97 torch and accelerate, ≥ 0.95 trainer; the engine's bf16/fp32
speed-up within 10% of the bare loop's. Prints figures; asserts nothing.
"""

from __future__ import annotations

import argparse
import json
import statistics
import sys
import threading
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent.parent))
sys.path.insert(0, str(Path(__file__).resolve().parent))

from bare import BARE, steps_per_s  # noqa: E402

from mpdemo import RunConfig, prepare, train  # noqa: E402

TARGET = {"torch": 0.97, "accelerate": 0.97, "trainer": 0.95}


def engine_steps_per_s(cfg: RunConfig, warmup: int) -> float:
    """Throughput of train(cfg) from its own step events' wall-clock stamps."""
    elapsed = [e.elapsed_s for e in train(cfg) if e.kind == "step"]
    return steps_per_s(elapsed, warmup)


def in_worker_thread(fn, *args):  # noqa: ANN001, ANN201
    """Run fn in a fresh thread, as train() runs its run. The main thread never touches torch
    compute here: once it has, its OpenMP pool competes with every other thread's (measured on
    2 cores: a worker's tiny-BERT step goes from 18 ms to 34 ms)."""
    out = []
    worker = threading.Thread(target=lambda: out.append(fn(*args)))
    worker.start()
    worker.join()
    return out[0]


def measure(cfg: RunConfig, rounds: int, warmup: int) -> dict:
    """Interleaved bare/engine rounds for one backend × precision."""
    bare, engine = [], []
    for _ in range(rounds):
        stamps = in_worker_thread(lambda: BARE[cfg.backend](prepare(cfg)))
        bare.append(steps_per_s(stamps, warmup))
        engine.append(engine_steps_per_s(cfg, warmup))
    ratios = [e / b for e, b in zip(engine, bare, strict=True)]
    return {
        "bare_steps_per_s": statistics.median(bare),
        "engine_steps_per_s": statistics.median(engine),
        "ratio": statistics.median(ratios),
    }


def main() -> None:
    """Run the comparison and print a table."""
    p = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    p.add_argument("--model", default="tiny-bert")
    p.add_argument("--steps", type=int, default=40)
    p.add_argument("--rounds", type=int, default=3)
    p.add_argument("--batch-size", type=int, default=32)
    p.add_argument("--device", default="cpu")
    p.add_argument("--backends", default="torch,accelerate,trainer")
    p.add_argument("--precisions", default="fp32,bf16")
    p.add_argument("--json", dest="json_path")
    a = p.parse_args()
    warmup = 3
    base = RunConfig(model=a.model, steps=a.steps, batch_size=a.batch_size, device=a.device)
    results = {}
    print(
        f"{a.model}, batch {a.batch_size}, {a.steps} steps ({warmup} warm-up), "
        f"{a.rounds} interleaved rounds, device {a.device}"
    )
    print(
        f"{'backend':<11}{'prec':<6}{'bare it/s':>10}{'engine it/s':>12}{'ratio':>8}{'target':>8}"
    )
    for backend in a.backends.split(","):
        for precision in a.precisions.split(","):
            r = measure(base.replace(backend=backend, precision=precision), a.rounds, warmup)
            results[(backend, precision)] = r
            print(
                f"{backend:<11}{precision:<6}{r['bare_steps_per_s']:>10.2f}"
                f"{r['engine_steps_per_s']:>12.2f}{r['ratio']:>8.3f}{TARGET[backend]:>8.2f}",
                flush=True,
            )
    precs = a.precisions.split(",")
    if "fp32" in precs:
        print("\nspeed-up vs fp32 (engine / bare; target: within 10%, i.e. ratio ≥ 0.9)")
        for backend in a.backends.split(","):
            for precision in [p for p in precs if p != "fp32"]:
                fp32, other = results[(backend, "fp32")], results[(backend, precision)]
                bare = other["bare_steps_per_s"] / fp32["bare_steps_per_s"]
                eng = other["engine_steps_per_s"] / fp32["engine_steps_per_s"]
                print(
                    f"{backend:<11}{precision:<6} bare {bare:.2f}x  engine {eng:.2f}x  "
                    f"ratio {eng / bare:.3f}"
                )
    if a.json_path:
        Path(a.json_path).write_text(
            json.dumps({f"{b}/{p}": r for (b, p), r in results.items()}, indent=1)
        )


if __name__ == "__main__":
    main()
