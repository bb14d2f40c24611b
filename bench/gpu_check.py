"""The CUDA path checked end to end: every backend x fp32/fp16/bf16 (and fp8 where the GPU runs it).

    python bench/gpu_check.py --out bench/results/<gpu>.json        # on a GPU, < 5 min
    python bench/gpu_check.py --device cpu --out /tmp/cpu.json      # tiny sizes (CI runs this)

On a GPU: small BERT (4 x 256) at batch 64 x 128 tokens and the AMP recipe's MLP, 100 steps
each; on a CPU: the tiny BERT at batch 8 x 32, a few steps. For every run it records the
effective dtype (must equal the requested one on CUDA), the loss-scale trajectory, skipped
steps, mean step time (perf_counter after torch.cuda.synchronize, warm-up excluded), samples/s,
peak memory, final loss, speed-up against fp32 of the same backend and, where the GPU's bf16
peak is known, the model FLOP utilisation. Then the engine's overhead against the course's bare
loop, interleaved. fp8 rows run only where mpdemo.engine.fp8.check passes (compute capability 8.9+
and torchao: pip install -r requirements-gpu.txt); they also print how many Linear layers ran
as torchao's Float8Linear. Elsewhere `fp8_skipped` holds the refusal line. Prints a table last; writes everything to --out as a runs JSON (the CLI's and
the app's shape: version, this machine's profile, every run's config, summary and steps), so the
app's "Compare with a recorded run" and its file loader open it next to live runs.

Then each of the course's comparison lessons (mpdemo/teach/lessons.py), its own runs on the same
device, through `python -m mpdemo lesson NAME --json` itself: one runs file each beside --out,
named `lesson-<name>-<gpu>.json` (mpdemo/teach/lesson_recordings.py), the GPU's name in its
machine record. Copied into mpdemo/assets/reference/, a GPU's file is that lesson's recording: the
Train tab's picker opens it beside the live run and names the GPU. `--lesson-steps N` shortens
every lesson (the CPU check in tests), `--lessons none` leaves them out. On CUDA each comparison
lesson trains its GPU size (teach/device_sizes.py: 32 x 256 tokens, base-gpt2 for still-trains
and underflow, base-bert for loss-scaling and backends); each run's loss-fall
ratio (mean loss of its last 5 steps over its first 5; the lessons' bar is 0.85) is printed, so
the first session on a GPU sees whether each lesson's point shows at that size.

`--sweep` then runs `python -m mpdemo sweep` with the device's default grid (sweep/sizes.py:
on CUDA 64x2 to 1024x24 at 8 to 128 x 256 tokens) into `sweep-<gpu>.json` beside --out;
`--sweep-args` passes flags to it (the CPU test's tiny grid). Copied into
mpdemo/assets/reference/sweeps/, that file is the GPU's sweep the Where it pays tab shows on any
machine (mpdemo/sweep/recorded.py).

Re-recording on a GPU, once, within 15 minutes of device time start-up included (an H200
took ~1 min to start, the grid below ~2 min, the lessons at their GPU size ~1 min each, the
sweep ~2-3 min):

    python bench/gpu_check.py --out $OUT/gpu.json --sweep \
        --overhead-backends torch
"""

from __future__ import annotations

import argparse
import json
import os
import sys
import time
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent.parent))
sys.path.insert(0, str(Path(__file__).resolve().parent))

import torch  # noqa: E402

from mpdemo import RunConfig, train
from mpdemo.engine import fp8  # noqa: E402
from mpdemo.engine.precision import check_precision_on, resolve_device  # noqa: E402
from mpdemo.files.recorded import runs_document  # noqa: E402
from mpdemo.files.summary import with_speedups  # noqa: E402
from mpdemo.messages import ConfigError  # noqa: E402
from mpdemo.registry import PRECISION_NAMES  # noqa: E402

# Dense bf16 tensor-core peaks, TFLOP/s (vendor data sheets); MFU is left out for other GPUs.
BF16_PEAK_TFLOPS = {
    "H200": 989.0,
    "H100 SXM": 989.0,
    "H100 PCIe": 756.0,
    "H100": 756.0,
    "A100": 312.0,
    "L40S": 362.0,
    "L4": 121.0,
    "A10G": 70.0,
    "A10": 125.0,
    "RTX 4090": 165.0,
    "RTX 3090": 71.0,
}


def bf16_peak(name: str) -> float | None:
    """The bf16 peak for a GPU name, longest matching key first."""
    for key in sorted(BF16_PEAK_TFLOPS, key=len, reverse=True):
        if key.lower() in name.lower():
            return BF16_PEAK_TFLOPS[key] * 1e12
    return None


def train_flops_per_step(summary: dict, cfg: RunConfig) -> float:
    """6 x params x tokens (forward + backward), the usual estimate; attention left out."""
    tokens = cfg.batch_size * (cfg.max_length if cfg.model != "amp-mlp" else 1)
    return 6.0 * summary["params"] * tokens


def run_one(cfg: RunConfig) -> dict:
    """One engine run as the runs JSON holds it: summary, every step (loss scale included), evals."""
    steps, evals, summary = [], [], {}
    for ev in train(cfg):
        if ev.kind == "step":
            steps.append(ev.to_dict())
        elif ev.kind == "eval":
            evals.append(ev.to_dict())
        elif ev.kind == "end":
            summary = ev.summary.to_dict()  # a plain dict: the MFU and speed-up are added below
    return {"config": cfg.to_dict(), "summary": summary, "steps": steps, "evals": evals}


def record_lessons(device: str, folder: Path, names: list[str], steps: int | None) -> dict:
    """Each lesson's own runs on `device`, through the lesson command: name → file, exit, wall s.

    The file is named for the device the runs ran on (a GPU's short name, or the CPU's).
    """
    from mpdemo.cli.main import main as cli_main
    from mpdemo.engine.machine import machine_info
    from mpdemo.teach.lesson_recordings import file_name

    ran_on = resolve_device(device).type
    folder.mkdir(parents=True, exist_ok=True)
    out: dict = {}
    before = os.environ.get("MPDEMO_LESSON_STEPS")
    try:
        if steps:  # the lessons' own knob (teach/lessons.py): every run this many steps
            os.environ["MPDEMO_LESSON_STEPS"] = str(steps)
        for name in names:
            path = folder / file_name(name, machine_info(), ran_on)
            t0 = time.perf_counter()
            argv = ["lesson", name, "--device", device, "--json", str(path), "--quiet"]
            try:
                code: int | str = cli_main(argv)  # 1: a run failed (the file says which)
            except Exception as err:  # noqa: BLE001 - one lesson's crash keeps the others
                code = f"{type(err).__name__}: {err}"
            wall = time.perf_counter() - t0
            written = path.is_file()
            falls = loss_falls(path) if written else {}
            out[name] = {"file": path.name if written else None, "exit": code, "wall_s": wall,
                         "loss_fall": falls}  # fmt: skip
            for label, ratio in falls.items():
                print(f"  {name} {label}: loss fell to {ratio:.2f} of its start", flush=True)
            print(f"lesson {name}: {'wrote ' + path.name if written else 'no file'}, exit {code}"
                  f" ({wall:.1f} s)", flush=True)  # fmt: skip
    finally:
        if before is None:
            os.environ.pop("MPDEMO_LESSON_STEPS", None)
        else:
            os.environ["MPDEMO_LESSON_STEPS"] = before
    return out


def loss_falls(path: Path) -> dict[str, float]:
    """Each run's loss-fall ratio in a runs file: mean loss of its last 5 steps / its first 5."""
    from mpdemo.files.recorded import RecordingError, read_runs

    try:
        rec = read_runs(path)
    except RecordingError:
        return {}
    out = {}
    for r in rec.runs:
        losses = [st["loss"] for st in r["steps"] if st.get("loss") is not None]
        if len(losses) >= 2:
            k = min(5, len(losses) // 2)
            out[r["summary"]["label"]] = (sum(losses[-k:]) / k) / (sum(losses[:k]) / k)
    return out


def record_sweep(device: str, folder: Path, extra: str) -> dict:
    """The default sweep on `device` (or --sweep-args' grid), through the sweep command itself."""
    import shlex

    from mpdemo.cli.main import main as cli_main
    from mpdemo.engine.machine import machine_info
    from mpdemo.teach.lesson_recordings import file_name

    name = file_name("sweep", machine_info(), resolve_device(device).type)[len("lesson-") :]
    path = folder / name
    t0 = time.perf_counter()
    argv = ["sweep", "--device", device, "--json", str(path), *shlex.split(extra)]
    try:
        code: int | str = cli_main(argv)
    except Exception as err:  # noqa: BLE001 - the figures above are written already
        code = f"{type(err).__name__}: {err}"
    wall = time.perf_counter() - t0
    print(f"sweep: {'wrote ' + name if path.is_file() else 'no file'}, exit {code} ({wall:.1f} s)",
          flush=True)  # fmt: skip
    return {"file": name if path.is_file() else None, "exit": code, "wall_s": wall}


def lesson_names(spec: str) -> list[str]:
    """--lessons: 'all' (every comparison lesson, in the course's order), 'none', or names."""
    from mpdemo.teach.lessons import LESSONS, get

    if spec == "none":
        return []
    if spec == "all":
        return [n for n, x in LESSONS.items() if not x.sweep]  # the sweep is not a runs file
    names = [n.strip() for n in spec.split(",") if n.strip()]
    for n in names:
        try:
            sweep = get(n).sweep
        except ConfigError as err:  # an unknown name: the lessons there are, in one line
            raise SystemExit(f"gpu_check: {err}") from None
        if sweep:
            raise SystemExit(f"gpu_check: {n} is the size sweep, not a comparison lesson")
    return names


def main() -> None:
    """Run the grid, the overhead check, write JSON, print the table."""
    p = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    p.add_argument("--device", default="auto")
    p.add_argument("--out", default="gpu_check.json")
    p.add_argument("--steps", type=int, default=None)
    p.add_argument("--skip-overhead", action="store_true")
    p.add_argument("--lessons", default="all", help="all, none, or lesson names (a,b)")
    p.add_argument("--lesson-steps", type=int, default=None, help="every lesson run's steps")
    p.add_argument("--overhead-backends", default="torch,accelerate,trainer")
    p.add_argument("--sweep", action="store_true", help="then the default sweep, beside --out")
    p.add_argument("--sweep-args", default="", help="flags for the sweep (e.g. a tiny grid)")
    a = p.parse_args()
    lessons = lesson_names(a.lessons)  # a bad name: refused before anything trains
    cuda = torch.cuda.is_available() and a.device in ("auto", "cuda")
    device = "cuda" if cuda else "cpu"
    if cuda:
        models = [("small-bert", 64, 128), ("amp-mlp", 64, 64)]
        steps = a.steps or 100
        gpu = torch.cuda.get_device_name(0)
    else:
        models = [("tiny-bert", 8, 32)]
        steps = a.steps or 5
        gpu = None
    peak = bf16_peak(gpu) if gpu else None
    # fp8 rows where the machine runs fp8 (compute capability 8.9+ and torchao); elsewhere the
    # JSON and the last lines say why not, in the app's own words.
    try:
        fp8.check(torch.device(device))
        fp8_skipped = None
    except ConfigError as err:
        fp8_skipped = str(err)
    # Precisions this device cannot run are refused in one line each, and left out.
    refused = {}
    for p in PRECISION_NAMES:
        if p == "fp8":
            continue  # said above, with its own reason
        try:
            check_precision_on(resolve_device(device), p)
        except ConfigError as err:
            refused[p] = str(err)
    for p, why in refused.items():
        print(f"skipped {p}: {why}", flush=True)
    t_start = time.perf_counter()
    runs = []
    for model, batch, seq in models:
        for backend in ("torch", "accelerate", "trainer"):
            for precision in PRECISION_NAMES:  # the registry's: fp32, bf16, fp16, fp8
                if cuda and precision == "bf16" and not torch.cuda.is_bf16_supported():
                    continue
                if precision == "fp8" and fp8_skipped:
                    continue
                if precision in refused:  # e.g. tf32 on a CPU or a GPU before sm 8.0
                    continue
                cfg = RunConfig(
                    model=model, backend=backend, precision=precision, device=device,
                    steps=steps, batch_size=batch, max_length=seq,
                    train_slice="train", eval_slice="validation[:256]",
                )  # fmt: skip
                r = run_one(cfg)
                s = r["summary"]
                if len(models) > 1:  # two models, one grid each: name the model in the label
                    s["label"] = f"{s['label']} · {model}"
                if s.get("mean_step_s") and peak:
                    s["mfu_vs_bf16_peak"] = train_flops_per_step(s, cfg) / s["mean_step_s"] / peak
                runs.append(r)
                print(f"  {model} {s['label']}: {s['status']}, ran as {s['effective_dtype']}, "
                      f"{(s['mean_step_s'] or 0) * 1000:.1f} ms/step", flush=True)  # fmt: skip
    # Each run against the fp32 run of its backend and model, as the app and the CLI say it.
    for r, s in zip(runs, with_speedups(r["summary"] for r in runs), strict=True):
        r["summary"] = s.to_dict()
    overhead = {}
    if not a.skip_overhead:
        from overhead import measure

        model, batch, seq = models[0]
        for backend in [b for b in a.overhead_backends.split(",") if b]:
            cfg = RunConfig(model=model, backend=backend, precision="bf16" if cuda else "fp32",
                            device=device, steps=max(steps // 2, 8), batch_size=batch,
                            max_length=seq, train_slice="train")  # fmt: skip
            overhead[backend] = measure(cfg, rounds=3 if cuda else 1)
    result = {
        **runs_document(runs),  # version, machine (device, GPU/CPU, versions, date), runs
        "gpu": gpu,
        "device": device,
        "cuda": torch.version.cuda,
        "bf16_peak_flops": peak,
        "timing": "perf_counter after torch.cuda.synchronize, first 3 steps excluded",
        "wall_s": time.perf_counter() - t_start,
        "overhead_vs_bare_loop": overhead,
        "fp8_skipped": fp8_skipped,  # None when the fp8 rows ran
        "lessons": {},  # name → its runs file beside this one, exit code, wall time
    }
    Path(a.out).parent.mkdir(parents=True, exist_ok=True)
    Path(a.out).write_text(json.dumps(result, indent=1, default=str))
    # Then the lessons, each a runs file of its own: the figures above are written already.
    lesson_files = record_lessons(device, Path(a.out).resolve().parent, lessons, a.lesson_steps)
    result.update(lessons=lesson_files, wall_s=time.perf_counter() - t_start)
    Path(a.out).write_text(json.dumps(result, indent=1, default=str))
    if a.sweep:
        result["sweep"] = record_sweep(device, Path(a.out).resolve().parent, a.sweep_args)
        result["wall_s"] = time.perf_counter() - t_start
        Path(a.out).write_text(json.dumps(result, indent=1, default=str))
    print(f"\n{gpu or 'CPU'}  (torch {torch.__version__}, {result['wall_s']:.0f} s)")
    hdr = (f"{'model':<11}{'backend':<11}{'prec':<5}{'ran as':<7}{'ms/step':>8}{'samples/s':>10}"
           f"{'vs fp32':>8}{'peak MB':>8}{'skip':>5}{'scale':>9}{'MFU':>6}  loss")  # fmt: skip
    print(hdr)
    for r in runs:
        s, c = r["summary"], r["config"]
        mfu = s.get("mfu_vs_bf16_peak")
        mem = s.get("peak_mem_bytes")  # None on a CPU: its memory figure is the activations'
        mem_mb = f"{mem / 2**20:.0f}" if mem else "-"
        print(f"{c['model']:<11}{s['backend']:<11}{s['precision']:<5}{s['effective_dtype'] or '-':<7}"
              f"{(s['mean_step_s'] or 0) * 1000:>8.1f}{s['samples_per_s'] or 0:>10.0f}"
              f"{s.get('speedup_vs_fp32') or 0:>7.2f}x{mem_mb:>8}"
              f"{s['skipped_steps']:>5}{s['final_loss_scale'] or '-':>9}"
              f"{(f'{mfu:.0%}' if mfu else '-'):>6}  {s['final_loss'] or float('nan'):.4f}")  # fmt: skip
    for r in runs:
        audit = r["summary"].get("fp8_audit")
        if audit:
            print(f"fp8 {r['summary']['label']}: {audit['float8_layers']} of "
                  f"{audit['linear_layers']} Linear layers ran as Float8Linear "
                  f"{audit.get('formats') or ''}")  # fmt: skip
    if fp8_skipped:
        print(f"fp8 rows not run: {fp8_skipped}")
    for backend, o in overhead.items():
        print(f"overhead {backend}: engine/bare steps/s = {o['ratio']:.3f}")
    for name, rec in lesson_files.items():
        print(f"lesson {name}: {rec['file'] or 'no file'}, exit {rec['exit']}, "
              f"{rec['wall_s']:.1f} s")  # fmt: skip
    print(f"wrote {a.out}")


if __name__ == "__main__":
    main()
