"""What taking turns costs: the course's bare loop alone vs two runs taking turns step by step.

    python bench/turns.py [--model tiny-bert] [--steps 40] [--batch-size 32] [--rounds 4]

Each measurement is a fresh process (OpenMP reads its settings once, at torch's import):
- `alone`: one fp32 run's bare loop in one thread;
- `turns`: two fp32 runs in two threads passing mpdemo.runs.turns.Baton at every step;
each with the OpenMP settings as they come and with OMP_WAIT_POLICY=PASSIVE. Prints the median
step (ms) of each, alternating the variants round by round. Asserts nothing.
"""

from __future__ import annotations

import argparse
import json
import os
import statistics
import subprocess
import sys
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent


def child(mode: str, model: str, steps: int, batch: int) -> None:
    """In the child: time the steps of `mode`, print {"ms": median step} as the last line."""
    sys.path.insert(0, str(ROOT))
    import threading

    import torch

    from mpdemo import RunConfig, prepare
    from mpdemo.runs.turns import Baton

    n = 2 if mode == "turns" else 1
    cfg = RunConfig(model=model, steps=steps, batch_size=batch)
    times: list[list[float]] = [[] for _ in range(n)]
    baton = Baton(n)

    def loop(i: int) -> None:
        baton.take(i)
        try:
            prep = prepare(cfg)  # in the run's own thread and turn, as the runner prepares
            for batch_ in prep.train_dataloader:
                t0 = time.perf_counter()
                loss = prep.model(**batch_).loss
                loss.backward()
                prep.optimizer.step()
                prep.optimizer.zero_grad()
                loss.item()
                times[i].append(time.perf_counter() - t0)
                baton.give(i)
                baton.take(i)
        finally:
            baton.finish(i)

    threads = [threading.Thread(target=loop, args=(i,)) for i in range(n)]
    for t in threads:
        t.start()
    for t in threads:
        t.join()
    warm = [t for ts in times for t in ts[3:]]
    out = {"ms": statistics.median(warm) * 1000, "threads": torch.get_num_threads()}
    print(json.dumps(out), flush=True)


def main() -> None:
    """Alternate the variants in fresh processes and print the medians."""
    p = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    p.add_argument("--child", nargs=4, help=argparse.SUPPRESS)
    p.add_argument("--model", default="tiny-bert")
    p.add_argument("--steps", type=int, default=40)
    p.add_argument("--batch-size", type=int, default=32)
    p.add_argument("--rounds", type=int, default=4)
    a = p.parse_args()
    if a.child:
        child(a.child[0], a.child[1], int(a.child[2]), int(a.child[3]))
        return
    variants = {
        "alone": ("alone", {}),
        "turns": ("turns", {}),
        "alone PASSIVE": ("alone", {"OMP_WAIT_POLICY": "PASSIVE"}),
        "turns PASSIVE": ("turns", {"OMP_WAIT_POLICY": "PASSIVE"}),
    }
    got: dict[str, list[float]] = {k: [] for k in variants}
    names = list(variants)
    for r in range(a.rounds):
        for name in names if r % 2 == 0 else reversed(names):
            mode, env = variants[name]
            args = [mode, a.model, str(a.steps), str(a.batch_size)]
            proc = subprocess.run(
                [sys.executable, __file__, "--child", *args],
                capture_output=True,
                text=True,
                env={**os.environ, "TOKENIZERS_PARALLELISM": "false", **env},
                check=True,
            )
            got[name].append(json.loads(proc.stdout.strip().splitlines()[-1])["ms"])
    print(f"load average: {os.getloadavg()}")
    for name, ms in got.items():
        print(f"{name:14s} median {statistics.median(ms):7.1f} ms  min {min(ms):7.1f} ms  {ms}")


if __name__ == "__main__":
    main()
