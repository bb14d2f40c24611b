"""Engine overhead vs the course's bare loop, each side in its own process.

    python bench/overhead.py [--model tiny-bert] [--steps 100] [--rounds 8] [--device cpu]
                             [--backends torch,accelerate,trainer] [--precisions fp32]
                             [--runs N] [--slice 0.5] [--sequential]

Each round starts two fresh processes at once, one running the course's listing by hand on
prepare()'s output (bench/bare.py), one the engine as the app and the CLI run it (a Runner in its
thread, its events read in another); they take turns every --slice seconds (SIGSTOP / SIGCONT,
bench/child.run_paired), so both see the same machine within a second, and who starts
alternates. Each side's figure is its whole run's wall time a step, from the end of the warm-up
to its last step, less the spans it was stopped: whatever sits between steps counts. Separate
processes share no OpenMP pool, allocator or autocast cache. Prints each round and, per
backend, the medians and bare ÷ engine as the median of the per-round ratios. Target
(DESIGN.md): ≥ 0.97 for every backend. Prints figures; asserts nothing.

Why paired: on a shared 2-core VM a process's speed drifts by 10-30 % over minutes, and one
after the other the sides met different machines (the older design, --sequential, kept for
comparison: the sides in turn, whole runs from the difference of a long and a short run).

--runs N (N ≥ 2): the engine side is a comparison of N such runs taking turns step by step,
the bare side the course's loop N times one after another in one thread.
"""

from __future__ import annotations

import argparse
import json
import os
import statistics
import sys
from pathlib import Path
from typing import Any

HERE = Path(__file__).resolve().parent
ROOT = HERE.parent
TARGET = {"torch": 0.97, "accelerate": 0.97, "trainer": 0.97}
WARMUP = 3
QUIET = 0.7  # a round counts as quiet when both sides reached 70% of their best steps/s


def one(side: str, cfg_json: str, runs: int = 1, paired: bool = False) -> None:
    """In the child process: measure one side, print {"steps_per_s": x, "windows": [...]} as
    the last line; a window is [perf_counter after the warm-up, at the last step, steps between]."""
    sys.path.insert(0, str(ROOT))
    sys.path.insert(0, str(HERE))
    import threading
    import time

    from bare import BARE

    from mpdemo import RunConfig, prepare

    if paired:
        # The partner process runs while this one is stopped: mpdemo.engine.cores would read
        # its CPU as another program's and halve torch's threads. A quiet machine has none.
        from mpdemo.engine import cores

        cores.CHECK_S = float("inf")
    cfg = RunConfig.from_dict(json.loads(cfg_json))
    t0 = time.perf_counter()
    if side == "engine":
        # The app's and the CLI's way: a Runner trains the comparison's runs in its thread
        # (taking turns step by step when there are several) and this thread reads its events,
        # as the page's handler does. Each step is stamped in the training thread, as the bare
        # loop stamps its own (the reader gets steps a few times a second, not one by one).
        from mpdemo.runs.runner import Runner

        stamps: list[float] = []

        class Stamped(Runner):
            def emit(self, event: Any) -> None:
                if event.kind == "step":
                    stamps.append(time.perf_counter())
                super().emit(event)

        runner = Stamped([cfg] * runs).start()
        for _ in runner.events():
            pass
        timed = stamps[WARMUP * runs :]
        windows = [(timed[0], timed[-1], len(timed) - 1)]
    else:  # the course's loop for each run, one after another, in one fresh thread
        out: list[list[float]] = []
        worker = threading.Thread(
            target=lambda: [out.append(BARE[cfg.backend](prepare(cfg))) for _ in range(runs)]
        )
        worker.start()
        worker.join()
        windows = [(st[WARMUP], st[-1], len(st) - 1 - WARMUP) for st in out]
    rate = sum(n for _, _, n in windows) / sum(b - a for a, b, _ in windows)
    wall = time.perf_counter() - t0  # the whole call: preparing, every step, what sits between
    print(json.dumps({"steps_per_s": rate, "wall_s": wall, "windows": windows}), flush=True)


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
    p.add_argument(
        "--sequential",
        action="store_true",
        help="the older design: the two sides one after the other, and whole runs from the "
        "difference of a long and a short run",
    )
    p.add_argument("--slice", type=float, default=0.5, help="seconds a side runs at a time")
    p.add_argument("--paired-child", action="store_true", help=argparse.SUPPRESS)
    a = p.parse_args()
    if a.one:
        one(*a.one, runs=a.runs, paired=a.paired_child)
        return
    sys.path.insert(0, str(ROOT))
    from mpdemo import RunConfig

    base = RunConfig(model=a.model, steps=a.steps, batch_size=a.batch_size, device=a.device)
    backends, precisions = a.backends.split(","), a.precisions.split(",")
    cells = [(b, pr) for b in backends for pr in precisions]
    if not a.sequential:
        paired(a, base, cells)
        return
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


def paired_round(cfg: dict, r: int, runs: int = 1, slice_s: float = 0.5) -> dict[str, float]:
    """Round `r` of one config: a bare and an engine process at once, taking turns every
    `slice_s` s (bench/child.run_paired), who starts alternating with r; each side's whole-run
    wall ms a step from its own stamps, less the spans it was stopped."""
    sys.path.insert(0, str(HERE))
    import child  # looked up on the module at each call: the tests run the children in-process

    order = ("bare", "engine") if r % 2 == 0 else ("engine", "bare")  # who starts
    args = [["--one", side, json.dumps(cfg), "--runs", str(runs), "--paired-child"]
            for side in order]  # fmt: skip
    outs, spans = child.run_paired(Path(__file__).resolve(), args[0], args[1], slice_s)
    ms = {}
    for side, out, sp in zip(order, outs, spans, strict=True):
        steps = sum(n for _, _, n in out["windows"])
        ms[side] = sum(child.active_s(sp, t0, t1) for t0, t1, _ in out["windows"]) / steps * 1e3
    return ms


def measure(cfg: Any, rounds: int = 3, slice_s: float = 0.5) -> dict[str, Any]:
    """One config's engine overhead (bench/gpu_check.py's seam): `rounds` paired rounds; the
    median of bare ÷ engine per round as `ratio` (≥ 0.97 is the target), and each round's ms."""
    per: dict[str, list[float]] = {"bare": [], "engine": [], "ratios": []}
    for r in range(rounds):
        ms = paired_round(cfg.to_dict(), r, 1, slice_s)
        per["bare"].append(ms["bare"])
        per["engine"].append(ms["engine"])
        per["ratios"].append(ms["bare"] / ms["engine"])
    return {"ratio": statistics.median(per["ratios"]), "rounds": rounds, **per}


def paired(a: argparse.Namespace, base: Any, cells: list[tuple[str, str]]) -> None:
    """Each round: a bare and an engine process at once, taking turns every --slice seconds
    (bench/child.run_paired); each side's whole-run wall time a step from its own stamps, from
    the end of the warm-up to its last step, less the spans it was stopped."""
    print(
        f"{a.model}, batch {a.batch_size}, {a.steps} steps ({WARMUP} warm-up), {a.rounds} rounds; "
        f"each round a bare and an engine process taking turns every {a.slice} s; "
        f"{a.runs} run(s) a side; device {a.device}",
        flush=True,
    )
    per: dict[tuple[str, str], dict[str, list[float]]] = {
        c: {"bare": [], "engine": [], "ratio": []} for c in cells
    }
    for r in range(a.rounds):
        for b, pr in cells:
            ms = paired_round(base.replace(backend=b, precision=pr).to_dict(), r, a.runs, a.slice)
            for side in ("bare", "engine"):
                per[(b, pr)][side].append(ms[side])
            per[(b, pr)]["ratio"].append(ms["bare"] / ms["engine"])
            print(
                f"  round {r + 1}/{a.rounds} {b}/{pr}: bare {ms['bare']:.2f} ms a step, engine "
                f"{ms['engine']:.2f} ms; bare / engine {ms['bare'] / ms['engine']:.3f}",
                file=sys.stderr,
                flush=True,
            )
    print(f"load average at the end: {os.getloadavg()}")
    print(
        f"{'backend':<11}{'prec':<6}{'bare ms':>9}{'engine ms':>11}{'ratio med':>11}"
        f"{'min':>8}{'max':>8}{'rounds >= target':>18}{'target':>8}"
    )
    results = {}
    for b, pr in cells:
        d = per[(b, pr)]
        ratios = d["ratio"]
        held = sum(x >= TARGET[b] for x in ratios)
        results[f"{b}/{pr}"] = {**d, "ratio_median": statistics.median(ratios)}
        print(
            f"{b:<11}{pr:<6}{statistics.median(d['bare']):>9.2f}{statistics.median(d['engine']):>11.2f}"
            f"{statistics.median(ratios):>11.3f}{min(ratios):>8.3f}{max(ratios):>8.3f}"
            f"{f'{held} of {len(ratios)}':>18}{TARGET[b]:>8.2f}"
        )
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
