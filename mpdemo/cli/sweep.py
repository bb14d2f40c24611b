"""`python -m mpdemo sweep ...`: the size sweep, headless; points printed as they come."""

from __future__ import annotations

import argparse
import json
import sys
import threading
from typing import TYPE_CHECKING

from .. import engine
from ..config import Limits, RunConfig
from ..engine.machine import machine_info, machine_note
from ..files.atomic import write_csv_atomic, write_text_atomic
from ..files.summary import ratio_text
from ..messages import EN, ConfigError, Note
from ..runs.notes import duration_text
from ..sweep.notes import CSV_COLUMNS, crossover_notes, csv_rows, params_label, sweep_document
from ..sweep.recorded import FOLDER, shipped_sweeps
from ..sweep.sizes import (
    CUDA_GRID,
    DEFAULT_BATCH_SIZES,
    DEFAULT_BUDGET_S,
    DEFAULT_SIZES,
    SWEEP_PRECISIONS,
    builtin_size,
    default_grid,
    parse_batch_sizes,
    parse_sizes,
)
from ..sweep.spec import SweepSpec
from ..teach.device_sizes import kind_of
from ..teach.published import PUBLISHED
from .common import (
    EXIT_FAILED,
    EXIT_OK,
    EXIT_SIGNAL,
    add_field_flags,
    add_output_flags,
    check_outputs,
    choice_list,
    stop_on_signals,
    table,
)

if TYPE_CHECKING:
    from ..sweep.events import SweepEvent, SweepFinished, SweepMemory, SweepPoint


# run's flags that the sweep's points take (its --model and --batch-size: the memory anatomy's).
_BASE_FLAGS = ("dataset", "train_slice", "device", "seed", "lr", "max_length", "loss_scaling")
_BASE_FLAGS += ("init_scale", "growth_interval", "batch_size")


def add_sweep_parser(
    sub: argparse._SubParsersAction[argparse.ArgumentParser],
) -> argparse.ArgumentParser:
    """The `sweep` subcommand: run's flags where they apply, plus the grid's."""
    p = sub.add_parser(
        "sweep",
        help="where mixed precision pays here: speed-up vs fp32 over model size x batch size, "
        "and the memory one step holds per precision",
    )
    p.add_argument(
        "--sizes",
        default=None,
        help=f"the built-in BERT's width x layers, comma-separated (default on a CPU "
        f"{DEFAULT_SIZES}: tiny-bert, small-bert and 26 M parameters; on CUDA {CUDA_GRID.sizes} "
        f"at {CUDA_GRID.max_length} tokens, where small sizes were launch-bound on an H200)",
    )
    p.add_argument(
        "--batch-sizes",
        default=None,
        help=f"comma-separated (default {DEFAULT_BATCH_SIZES}; on CUDA {CUDA_GRID.batch_sizes})",
    )
    p.add_argument(
        "--precision",
        type=choice_list(SWEEP_PRECISIONS, "precision"),
        default=None,
        help="compared with fp32 (default: what autocast offers on the device: bf16 on a "
        "CPU, fp16 and bf16 on CUDA)",
    )
    p.add_argument(
        "--budget",
        type=float,
        default=None,
        help=f"seconds of timing for all points together (default {DEFAULT_BUDGET_S:g}; on CUDA "
        f"{CUDA_GRID.budget_s:g}); a slow point goes on until it has 6 interleaved rounds",
    )
    helps = {
        "max_length": f"tokens a row (default {RunConfig.max_length}; on CUDA {CUDA_GRID.max_length})",
        "model": "the memory anatomy's model: tiny-bert or small-bert (or --memory-size)",
        "batch_size": "the memory anatomy's",
    }
    add_field_flags(p, (*_BASE_FLAGS, "model"), helps)
    p.set_defaults(max_length=None)  # the device's grid's (with_device_grid)
    p.add_argument("--memory-size", default=None, help="the memory anatomy's width x layers")
    p.add_argument("--no-memory", action="store_true", help="skip the memory anatomy")
    json_, csv_ = "write the points and the memory as JSON", "write one row per point and precision"
    add_output_flags(p, json_, csv_, "no plan line on stderr")
    p.add_argument(
        "--published",
        action="store_true",
        help="also print the GPU sweeps that ship and published figures from other machines "
        "(not run here), with sources",
    )
    return p


def with_device_grid(args: argparse.Namespace) -> argparse.Namespace:
    """The flags left unset filled from the device's default grid (sweep/sizes.py)."""
    unset = [
        k for k in ("sizes", "batch_sizes", "budget", "max_length") if getattr(args, k) is None
    ]
    if not unset:
        return args
    grid = default_grid(kind_of(engine.resolve_device(args.device).type))
    filled = {k: getattr(grid, "budget_s" if k == "budget" else k) for k in unset}
    return argparse.Namespace(**{**vars(args), **filled})


def spec_from_args(args: argparse.Namespace) -> SweepSpec:
    """The SweepSpec the flags describe (ConfigError, one line, where they cannot run)."""
    lim = Limits.from_env()
    args = with_device_grid(args)
    base = RunConfig(**{k: getattr(args, k) for k in _BASE_FLAGS})
    base.validate(lim)
    memory = None
    if not args.no_memory:
        if args.memory_size:
            sizes = parse_sizes(args.memory_size)
            if len(sizes) != 1:
                raise ConfigError("sweep_bad_sizes", value=args.memory_size)
            memory = sizes[0]
        else:
            memory = builtin_size(args.model)
            if memory is None:
                raise ConfigError("sweep_memory_model", value=args.model)
    budget = args.budget
    if not (0 < budget <= 3600):  # NaN fails both comparisons
        raise ConfigError("sweep_bad_budget", value=budget)
    return SweepSpec(
        sizes=parse_sizes(args.sizes),
        batch_sizes=parse_batch_sizes(args.batch_sizes, lim),
        precisions=tuple(args.precision) if args.precision else None,
        base=base,
        budget_s=budget,
        memory_size=memory,
        memory_batch=args.batch_size,
    )


def _ms(seconds: float) -> str:
    # Three significant digits, never an exponent: 8,410 ms reads better than 8.41e+03.
    ms = seconds * 1000
    return f"{ms:,.0f}" if ms >= 100 else f"{ms:.3g}"


def point_line(ev: SweepPoint) -> str:
    """One point as the CLI prints it: every precision's step, speed-up, interval, verdict."""
    parts = []
    for precision, step in ev.step_s.items():
        text = f"{precision} {_ms(step)} ms"
        c = ev.check(precision)
        if c is not None and c.speedup is not None:
            why = f", {c.reason}" if c.reason else ""
            text += f" {ratio_text(c.speedup, c.interval, c.verdict)}{why}"
        text += f", {ev.samples_per_s[precision]:.0f} samples/s, {ev.tflops[precision]:.3g} TFLOP/s"
        if ev.mfu.get(precision) is not None:
            kind, peak = ev.peak[precision]
            text += f", MFU {ev.mfu[precision]:.1%} of {kind} {peak:g}"
        parts.append(text)
    head = (
        f"[{ev.index + 1}/{ev.total}] {ev.model} ({ev.hidden}x{ev.layers}, "
        f"{params_label(ev.params)} params) batch {ev.batch_size} x {ev.seq}:"
    )
    return head + " " + "; ".join(parts)


def memory_lines(ev: SweepMemory) -> list[str]:
    """The memory anatomy as a small table, the sentences and the rule under it."""
    cols = ("weights", "grads", "optimizer", "saved act.", "total", "peak", "Accelerate")
    keys = ("weights_bytes", "grads_bytes", "optimizer_bytes", "saved_activation_bytes")
    rows = []
    for precision, a in ev.parts.items():
        est = (ev.estimate.get(precision) or {}).get("training")
        values = [a.get(k) for k in (*keys, "total_bytes", "peak_mem_bytes")] + [est]
        rows.append([precision, *(f"{v / 2**20:.2f}" if v is not None else "-" for v in values)])
    lines = table([["MiB", *cols], *rows], str.rjust)
    title = (
        f"memory of one step: {ev.model} ({ev.hidden}x{ev.layers}, {ev.params:,} params), "
        f"batch {ev.batch_size} x {ev.seq}, {ev.device}"
    )
    return [title, *lines, *[f"  {n['text']}" for n in ev.notes], f"  {EN['anatomy_rule']}"]


def published_lines() -> list[str]:
    """The published figures as a table under the heading that says they were not run here."""
    rows = [
        [p.hardware, p.workload, f"{p.precision} vs {p.baseline}", ratio_text(p.speedup),
         f"{p.figure:g} vs {p.baseline_figure:g} {p.unit}" if p.unit else "-", p.url]
        for p in PUBLISHED
    ]  # fmt: skip
    header = ["hardware", "workload", "precision", "speed-up", "figures", "source"]
    return [f"# {EN['published_heading']}", *(x.rstrip() for x in table([header, *rows]))]


def recorded_lines() -> list[str]:
    """Each shipped GPU sweep's sentences, under a heading naming its machine and file."""
    out = []
    for rec in shipped_sweeps():
        out.append(f"# recorded with this code on {rec.about} ({rec.date or 'no date'}), not run "
                   f"here: mpdemo/assets/reference/{FOLDER}/{rec.name}")  # fmt: skip
        for seq, notes in rec.notes():
            out += [f"{n.text} [{seq} tokens a row]" for n in notes]
    return out


def sweep_main(args: argparse.Namespace) -> int:
    """Run the sweep the flags describe; 0 done, 2 bad input (raised), 1 failed or interrupted."""
    from ..sweep.plan import plan_sweep  # torch: the plan probes the device
    from ..sweep.run import run_sweep

    spec = spec_from_args(args)
    # Every refusal comes here, before anything is timed: a path that cannot be written too.
    check_outputs(args)
    plan = plan_sweep(spec)
    print(f"# {machine_note().text}")
    if not args.quiet:
        sizes = ",".join(s.name for s in spec.sizes)
        batches = ",".join(str(b) for b in spec.batch_sizes)
        about = f"about {duration_text(plan.estimate_s)} by the estimate; {EN['flops_rule']}"
        grid = f"(sizes {sizes} x batch sizes {batches}) x {', '.join(plan.precisions)}"
        print(f"# {len(plan.points)} points {grid}, {about}", file=sys.stderr, flush=True)
    points: list[SweepPoint] = []
    memory: SweepMemory | None = None
    end: SweepFinished | None = None

    def on_event(ev: SweepEvent) -> None:
        nonlocal memory, end
        if ev.kind == "point":
            points.append(ev)
            print(point_line(ev), flush=True)
        elif ev.kind == "memory":
            memory = ev
            print("\n".join(memory_lines(ev)), flush=True)
        elif ev.kind == "sweep_end":
            end = ev

    stop = threading.Event()
    # SIGINT and SIGTERM stop it at the next point: the points measured are written, exit 130/143.
    with stop_on_signals(stop) as caught:
        run_sweep(plan, on_event, stop)  # this thread: torch's one OpenMP pool
    if caught:
        print("mpdemo: interrupted; the points measured are kept", file=sys.stderr)
    notes = end.notes if end else [n.to_dict() for n in crossover_notes(points, plan.device.type)]
    for n in notes:
        print(n["text"])
    status = "stopped" if caught else (end.status if end is not None else "failed")
    if end is not None and end.error:
        print(f"mpdemo: error: {Note(end.error['key'], end.error['args']).text}", file=sys.stderr)
    if end is not None:
        print(
            f"# {end.points} of {end.total} points in {duration_text(end.wall_s)}", file=sys.stderr
        )
    if args.published:  # after what ran here, under headings that say it did not
        print("\n".join([*recorded_lines(), *published_lines()]))
    if args.json_path:
        doc = sweep_document(points, memory, machine_info(), spec, status, notes)
        write_text_atomic(args.json_path, json.dumps(doc, indent=1))
    if args.csv_path:
        write_csv_atomic(args.csv_path, CSV_COLUMNS, csv_rows(points))
    if caught:
        return EXIT_SIGNAL + caught["signal"]
    return EXIT_OK if status == "completed" else EXIT_FAILED
