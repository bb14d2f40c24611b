"""Engine overhead vs the course's bare loop, each measurement in its own process.

    python bench/overhead.py [--model tiny-bert] [--steps 100] [--rounds 8] [--device cpu]
                             [--backends torch,accelerate,trainer] [--precisions fp32]

For every backend × precision, each round starts two fresh processes, one running the course's
listing by hand on prepare()'s output (bench/bare.py), one running the engine's train(); the
order alternates from round to round. Separate processes share no OpenMP pool, allocator or
autocast cache; interleaving spreads a shared machine's load over both sides. Prints, per
backend: steps/s of each side (median and best), and engine ÷ bare as the median of the
per-round ratios, as the ratio of the best rounds (the least disturbed by other processes), and
as the median over the quiet rounds (both sides within 70% of their best).
Then the whole-run figure: per-step wall time from the difference of a long and a short run
in separate processes (what sits between two steps counts). Targets (DESIGN.md): ≥ 0.97 for
every backend. Prints figures; asserts nothing.

--runs N (N ≥ 2): the engine side is a comparison of N such runs taking turns step by step
(mpdemo.runs.runner.run_grid, as the app and the CLI run them), the bare side the course's loop
N times one after another in one thread; only the whole-run figure is printed then (a run's
own step stamps include the other runs' turns).
"""

from __future__ import annotations

import argparse
import json
import os
import statistics
import sys
from pathlib import Path

HERE = Path(__file__).resolve().parent
ROOT = HERE.parent
TARGET = {"torch": 0.97, "accelerate": 0.97, "trainer": 0.97}
WARMUP = 3
QUIET = 0.7  # a round counts as quiet when both sides reached 70% of their best steps/s


def one(side: str, cfg_json: str, runs: int = 1) -> None:
    """In the child process: measure one side, print {"steps_per_s": x} as the last line."""
    sys.path.insert(0, str(ROOT))
    sys.path.insert(0, str(HERE))
    import threading
    import time

    from bare import BARE, steps_per_s

    from mpdemo import RunConfig, prepare, train

    cfg = RunConfig.from_dict(json.loads(cfg_json))
    t0 = time.perf_counter()
    if runs > 1:
        # Steps/s over the steps after the warm-up, every run's: the engine's from its step
        # events' wall_s (the runs interleave), the bare loops' from their stamps, run by run.
        if side == "engine":  # the runs of a comparison, taking turns step by step
            from mpdemo.runs.runner import run_grid

            walls: list[float] = []
            run_grid(
                [cfg] * runs,
                lambda ev: walls.append(ev.wall_s) if ev.kind == "step" else None,
                threading.Event(),
            )
            timed = walls[WARMUP * runs :]
            rate = (len(timed) - 1) / (timed[-1] - timed[0])
        else:  # the course's loop for each run, one after another, in one thread
            out: list[list[float]] = []
            worker = threading.Thread(
                target=lambda: [out.append(BARE[cfg.backend](prepare(cfg))) for _ in range(runs)]
            )
            worker.start()
            worker.join()
            spans = [(st[-1] - st[WARMUP], len(st) - 1 - WARMUP) for st in out]
            rate = sum(n for _, n in spans) / sum(s for s, _ in spans)
        wall = time.perf_counter() - t0
        print(json.dumps({"steps_per_s": rate, "wall_s": wall}), flush=True)
        return
    if side == "engine":
        # train() prepares and trains in its own worker thread, as the app and the CLI do.
        stamps = [e.elapsed_s for e in train(cfg) if e.kind == "step"]
    else:
        # The bare loop in a fresh thread too, so both sides have the same thread setup.
        out: list[list[float]] = []
        worker = threading.Thread(target=lambda: out.append(BARE[cfg.backend](prepare(cfg))))
        worker.start()
        worker.join()
        stamps = out[0]
    wall = time.perf_counter() - t0  # the whole call: preparing, every step, what sits between
    print(json.dumps({"steps_per_s": steps_per_s(stamps, WARMUP), "wall_s": wall}), flush=True)


def spawn(side: str, cfg: dict, runs: int = 1) -> dict[str, float]:
    """Run one side in a fresh Python process; its steps/s and the whole call's wall seconds."""
    sys.path.insert(0, str(HERE))
    from child import run_child

    return run_child(Path(__file__).resolve(), "--one", side, json.dumps(cfg), "--runs", str(runs),
                     what=side)  # fmt: skip


def main() -> None:
    """Run the rounds and print the table."""
    p = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    p.add_argument("--one", nargs=2, metavar=("SIDE", "CONFIG_JSON"), help=argparse.SUPPRESS)
    p.add_argument("--model", default="tiny-bert")
    p.add_argument("--steps", type=int, default=100)  # 40 left warm-up drift in the rate
    p.add_argument("--rounds", type=int, default=8)
    p.add_argument(
        "--short",
        type=int,
        default=None,
        help="steps of the short run for the whole-run figure (default: a fifth of --steps)",
    )
    p.add_argument("--batch-size", type=int, default=32)
    p.add_argument("--device", default="cpu")
    p.add_argument("--backends", default="torch,accelerate,trainer")
    p.add_argument("--precisions", default="fp32")
    p.add_argument("--json", dest="json_path")
    p.add_argument("--runs", type=int, default=1, help="runs per comparison, taking turns")
    a = p.parse_args()
    if a.one:
        one(*a.one, runs=a.runs)
        return
    sys.path.insert(0, str(ROOT))
    from mpdemo import RunConfig

    base = RunConfig(model=a.model, steps=a.steps, batch_size=a.batch_size, device=a.device)
    backends, precisions = a.backends.split(","), a.precisions.split(",")
    cells = [(b, pr) for b in backends for pr in precisions]
    runs: dict[tuple[str, str], dict[str, list[float]]] = {
        c: {"bare": [], "engine": []} for c in cells
    }
    # Whole runs: (wall of a --steps run - wall of a --short run) / the steps between, each in
    # its own process. Everything a step costs counts, wherever it sits (data, events, eval
    # setup scaling with steps); everything fixed (imports, model building) cancels.
    short = a.short or max(WARMUP + 2, a.steps // 5)
    whole: dict[tuple[str, str], dict[str, list[float]]] = {
        c: {"bare": [], "engine": []} for c in cells
    }
    print(
        f"{a.model}, batch {a.batch_size}, {a.steps} steps ({WARMUP} warm-up), {a.rounds} rounds, "
        f"one process per measurement, interleaved; device {a.device}",
        flush=True,
    )
    for r in range(a.rounds):
        order = ("bare", "engine") if r % 2 == 0 else ("engine", "bare")
        for b, pr in cells:
            cfg = base.replace(backend=b, precision=pr).to_dict()
            for side in order:
                long_run = spawn(side, cfg, a.runs)
                short_run = spawn(side, {**cfg, "steps": short}, a.runs)
                runs[(b, pr)][side].append(long_run["steps_per_s"])
                steps = (a.steps - short) * a.runs  # every run's steps: N runs take turns
                per_step = (long_run["wall_s"] - short_run["wall_s"]) / steps
                whole[(b, pr)][side].append(per_step)
                # Each figure as it comes: a run cut short by a deadline still says something.
                print(
                    f"  {b}/{pr} {side}: whole {per_step * 1000:.2f} ms a step, "
                    f"{long_run['steps_per_s']:.2f} steps/s after warm-up",
                    file=sys.stderr,
                )
        print(f"  round {r + 1}/{a.rounds} done", file=sys.stderr, flush=True)
    print(f"load average at the end: {os.getloadavg()}")
    if a.runs > 1:
        _print_whole(a, cells, whole, short, runs)
        return
    print(
        f"{'backend':<11}{'prec':<6}{'bare it/s med/best':>20}{'engine it/s med/best':>22}"
        f"{'ratio med':>11}{'ratio min':>11}{'ratio best':>12}{'quiet (n)':>13}{'target':>8}"
    )
    results = {}
    for b, pr in cells:
        bare, eng = runs[(b, pr)]["bare"], runs[(b, pr)]["engine"]
        ratios = [e / x for e, x in zip(eng, bare, strict=True)]
        # Rounds where both sides ran near their best: another process did not stall either.
        quiet = [e / x for e, x in zip(eng, bare, strict=True)
                 if e >= QUIET * max(eng) and x >= QUIET * max(bare)]  # fmt: skip
        res = {
            "bare": bare,
            "engine": eng,
            "ratio_median": statistics.median(ratios),
            "ratio_min": min(ratios),
            "ratio_best": max(eng) / max(bare),
            "ratio_quiet": statistics.median(quiet) if quiet else None,
            "quiet_rounds": len(quiet),
        }
        results[f"{b}/{pr}"] = res
        print(
            f"{b:<11}{pr:<6}{statistics.median(bare):>10.2f}/{max(bare):<9.2f}"
            f"{statistics.median(eng):>11.2f}/{max(eng):<10.2f}"
            f"{res['ratio_median']:>11.3f}{res['ratio_min']:>11.3f}{res['ratio_best']:>12.3f}"
            f"{res['ratio_quiet'] or float('nan'):>9.3f} ({len(quiet)})"
            f"{TARGET[b]:>8.2f}"
        )
    print(f"\nwhole runs ({a.steps} - {short} steps, wall ms a step; ratio = bare / engine)")
    for b, pr in cells:
        bare, eng = whole[(b, pr)]["bare"], whole[(b, pr)]["engine"]
        ratios = [x / e for e, x in zip(eng, bare, strict=True) if e > 0]
        med = statistics.median(ratios) if ratios else float("nan")
        results[f"{b}/{pr}"]["whole_bare_ms"] = [x * 1000 for x in bare]
        results[f"{b}/{pr}"]["whole_engine_ms"] = [x * 1000 for x in eng]
        results[f"{b}/{pr}"]["whole_ratio_median"] = med
        print(
            f"{b:<11}{pr:<6} bare {statistics.median(bare) * 1000:7.2f} ms  engine "
            f"{statistics.median(eng) * 1000:7.2f} ms  ratio {med:.3f} (target {TARGET[b]:.2f})"
        )
    if "fp32" in precisions and len(precisions) > 1:
        print("\nspeed-up vs fp32, medians (engine / bare; target: ratio ≥ 0.9)")
        for b in backends:
            f32 = runs[(b, "fp32")]
            for pr in (x for x in precisions if x != "fp32"):
                other = runs[(b, pr)]
                bare = statistics.median(other["bare"]) / statistics.median(f32["bare"])
                eng = statistics.median(other["engine"]) / statistics.median(f32["engine"])
                print(f"{b:<11}{pr:<6} bare {bare:.2f}x  engine {eng:.2f}x  ratio {eng / bare:.3f}")
    if a.json_path:
        Path(a.json_path).write_text(json.dumps(results, indent=1))


def _print_whole(a: argparse.Namespace, cells: list, whole: dict, short: int, runs_: dict) -> None:
    """The whole-run figures of comparisons whose runs take turns, against the bare loop."""
    print(
        f"\n{a.runs} runs taking turns, whole runs ({a.steps} - {short} steps each; wall ms a "
        "step over every run's steps; ratio = bare / engine, per round)"
    )
    results = {}
    for b, pr in cells:
        bare, eng = runs_[(b, pr)]["bare"], runs_[(b, pr)]["engine"]
        ratios = sorted(e / x for e, x in zip(eng, bare, strict=True))
        print(
            f"{b:<11}{pr:<6} steps/s after warm-up: bare {statistics.median(bare):.2f}, engine "
            f"{statistics.median(eng):.2f}; engine / bare per round: median "
            f"{statistics.median(ratios):.3f}, min {ratios[0]:.3f}, max {ratios[-1]:.3f}"
        )
    for b, pr in cells:
        bare, eng = whole[(b, pr)]["bare"], whole[(b, pr)]["engine"]
        ratios = sorted(x / e for e, x in zip(eng, bare, strict=True) if e > 0)
        med = statistics.median(ratios) if ratios else float("nan")
        results[f"{b}/{pr}"] = {"bare_ms": bare, "engine_ms": eng, "ratios": ratios}
        ratios = ratios or [float("nan")]  # a short run outlasted the long one: load noise
        print(
            f"{b:<11}{pr:<6} bare {statistics.median(bare) * 1000:7.2f} ms (min "
            f"{min(bare) * 1000:.2f})  engine {statistics.median(eng) * 1000:7.2f} ms (min "
            f"{min(eng) * 1000:.2f})  ratio median {med:.3f} min {ratios[0]:.3f} max "
            f"{ratios[-1]:.3f}; min/min {min(bare) / min(eng):.3f} (target {TARGET[b]:.2f})"
        )
    if a.json_path:
        Path(a.json_path).write_text(json.dumps(results, indent=1))


if __name__ == "__main__":
    main()
