"""What taking turns costs: one bare loop alone vs two taking turns, in threads or in greenlets.

    python bench/turns.py [--model tiny-bert] [--steps 40] [--batch-size 32] [--rounds 4]
                          [--load N] [--modes alone,threads,greens,together] [--waits passive,spin]

Each measurement is a fresh process (OpenMP reads its settings once, at torch's import):
- `alone`: one fp32 run's bare loop (the course's) in one thread;
- `threads`: two such runs in two threads passing mpdemo.runs.turns.Baton at every step (mpdemo.runs.together.take_turns);
- `greens`: the same two runs as greenlets of one thread (the baton's `pause` switches);
- `together`: two fp32 runs through the app's own side-by-side runner (mpdemo.runs.together);
- `together1`: the same on one thread (torch.set_num_threads(1)).
Each with the OpenMP waits named in --waits: `passive` (OMP_WAIT_POLICY=PASSIVE), `spin`
(GOMP_SPINCOUNT=10000: a bounded spin, libgomp's policy otherwise), `default` (libgomp's own).
`--load N` keeps N busy-looping processes running for the whole measurement (a shared machine).
Prints the median step (ms) of each variant, alternating them round by round. Asserts nothing.
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

WAITS = {
    "passive": {"OMP_WAIT_POLICY": "PASSIVE"},
    "spin": {"OMP_WAIT_POLICY": "", "GOMP_SPINCOUNT": "10000"},
    "default": {"OMP_WAIT_POLICY": "", "GOMP_SPINCOUNT": ""},
}


def child(mode: str, model: str, steps: int, batch: int) -> None:
    """In the child: time the steps of `mode`, print {"ms": median step} as the last line."""
    sys.path.insert(0, str(ROOT))
    for k in ("OMP_WAIT_POLICY", "GOMP_SPINCOUNT"):
        if os.environ.get(k) == "":  # "" here means unset: libgomp's own default
            del os.environ[k]
    import threading

    import torch  # before mpdemo: libgomp reads the environment as it loads, as it is here

    from mpdemo import RunConfig, prepare
    from mpdemo.runs.together import take_turns
    from mpdemo.runs.turns import Baton

    cfg = RunConfig(model=model, steps=steps, batch_size=batch)
    if mode == "together1":
        torch.set_num_threads(1)  # no OpenMP pool at all: nothing waits for a worker
    if mode.startswith("together"):
        from mpdemo.runs.together import Together

        got: list[float] = []
        cfgs = [cfg, RunConfig(model=model, steps=steps, batch_size=batch, seed=cfg.seed + 1)]

        def emit(ev: object) -> None:
            if getattr(ev, "kind", "") == "step":
                got.append(ev.step_time_s)  # type: ignore[attr-defined]

        Together(cfgs, emit, threading.Event()).run()
        warm = got[6:]
    else:
        n = 1 if mode == "alone" else 2
        times: list[list[float]] = [[] for _ in range(n)]
        baton = Baton(n)

        def loop(i: int) -> None:
            baton.take(i)
            try:
                prep = prepare(cfg)  # in the run's own turn, as the runner prepares
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

        if mode == "greens":
            take_turns(baton, [loop] * n)  # as the app's runner schedules them
        else:
            threads = [threading.Thread(target=loop, args=(i,)) for i in range(n)]
            for t in threads:
                t.start()
            for t in threads:
                t.join()
        warm = [t for ts in times for t in ts[3:]]
    out = {"ms": statistics.median(warm) * 1000, "threads": torch.get_num_threads()}
    print(json.dumps(out), flush=True)


def busy(n: int) -> list[subprocess.Popen]:
    """n processes that spin on the CPU until killed (another tenant's load)."""
    code = "while True: pass"
    return [subprocess.Popen([sys.executable, "-c", code]) for _ in range(n)]


def main() -> None:
    """Alternate the variants in fresh processes and print the medians."""
    p = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    p.add_argument("--child", nargs=4, help=argparse.SUPPRESS)
    p.add_argument("--model", default="tiny-bert")
    p.add_argument("--steps", type=int, default=40)
    p.add_argument("--batch-size", type=int, default=32)
    p.add_argument("--rounds", type=int, default=4)
    p.add_argument("--load", type=int, default=0, help="busy processes kept running meanwhile")
    p.add_argument("--modes", default="alone,threads,greens,together")
    p.add_argument("--waits", default="passive,spin")
    p.add_argument("--timeout", type=float, default=600.0, help="seconds a variant may take")
    a = p.parse_args()
    if a.child:
        child(a.child[0], a.child[1], int(a.child[2]), int(a.child[3]))
        return
    variants = {f"{m} {w}": (m, WAITS[w]) for m in a.modes.split(",") for w in a.waits.split(",")}
    got: dict[str, list[float]] = {k: [] for k in variants}
    walls: dict[str, list[float]] = {k: [] for k in variants}
    names = list(variants)
    hogs = busy(a.load)
    try:
        if hogs:
            time.sleep(5)  # the load is there before the first variant starts
        print(f"load average at the start: {os.getloadavg()}", flush=True)
        for r in range(a.rounds):
            for name in names if r % 2 == 0 else reversed(names):
                mode, env = variants[name]
                args = [mode, a.model, str(a.steps), str(a.batch_size)]
                t0 = time.perf_counter()
                try:
                    proc = subprocess.run(
                        [sys.executable, __file__, "--child", *args],
                        capture_output=True,
                        text=True,
                        env={**os.environ, "TOKENIZERS_PARALLELISM": "false", **env},
                        check=True,
                        timeout=a.timeout,
                    )
                    ms = json.loads(proc.stdout.strip().splitlines()[-1])["ms"]
                except subprocess.TimeoutExpired:
                    ms = float("inf")
                got[name].append(ms)
                walls[name].append(time.perf_counter() - t0)
                print(f"  round {r} {name:18s} {ms:8.1f} ms a step", flush=True)
    finally:
        for h in hogs:
            h.kill()
    print(f"load average at the end: {os.getloadavg()}")
    for name, ms in got.items():
        w = statistics.median(walls[name])
        print(
            f"{name:18s} median {statistics.median(ms):7.1f} ms  min {min(ms):7.1f} ms"
            f"  (process {w:5.1f} s)  {[round(x, 1) for x in ms]}"
        )


if __name__ == "__main__":
    main()
