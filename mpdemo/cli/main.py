"""`python -m mpdemo run ...` (and code, underflow, lesson): the engine, headless, with a summary
table and JSON/CSV."""

from __future__ import annotations

import argparse
import json
import math
import os
import signal
import sys
import threading
from collections.abc import Callable
from dataclasses import fields
from typing import TYPE_CHECKING, Any

from .. import engine, log
from ..catalog import DEVICES
from ..config import MAX_REPEAT, RunConfig, cli_fields, coerce_field, env_int
from ..files.atomic import write_text_atomic
from ..files.recorded import write_runs, write_steps_csv
from ..files.summary import repeat_groups, scale_text, speedup_text, typical_step_s
from ..messages import ConfigError, MpdemoError, render
from ..notebook.command import add_notebook_parser, notebook_main
from ..registry import BACKEND_NAMES, PRECISION_NAMES
from ..runs.runner import check_memory, check_repeat, grid, repeated, run_grid
from ..runs.state import ComparisonState
from ..teach.device_sizes import size_line
from ..teach.formats import LOW_PRECISION
from ..teach.lesson_checks import check_runs, traces_of
from ..teach.lesson_recordings import recording_for
from ..teach.lessons import LESSONS, Lesson, cpu_note_here, get
from ..teach.listing import script_for
from ..teach.underflow import collect
from ..wording import ENGLISH
from .common import (
    EXIT_BAD_INPUT,
    EXIT_FAILED,
    EXIT_OK,
    EXIT_SIGNAL,
    Parser,
    add_field_flags,
    add_output_flags,
    check_outputs,
    stop_on_signals,
    table,
)
from .sweep import add_sweep_parser, sweep_main

if TYPE_CHECKING:
    from ..events import Event
    from ..files.summary import Summary

TABLE_COLUMNS = [
    ("backend", "backend"),
    ("precision", "prec"),
    ("device", "device"),
    ("effective_dtype", "ran as"),
    ("status", "status"),
    ("final_loss", "loss"),
    ("eval", "eval"),
    ("median_step_s", "step ms"),  # the typical step: a stall of another process moves it least
    ("samples_per_s", "samples/s"),
    ("speedup", "vs fp32"),
    ("saved_activation_bytes", "saved MiB"),
    ("peak_mem_bytes", "peak MiB"),
    ("skipped_steps", "skipped"),
    ("final_loss_scale", "scale"),
]


_UNDERFLOW_FLAGS = ("model", "dataset", "train_slice", "batch_size", "seed")


def build_parser() -> argparse.ArgumentParser:
    """The argument parser; flags are RunConfig's fields in kebab case."""
    p = Parser(prog="python -m mpdemo", description="Mixed precision, measured.")
    sub = p.add_subparsers(dest="command", required=True, parser_class=Parser)
    run = sub.add_parser("run", help="train the grid of backends x precisions, print a summary")
    add_field_flags(run, lists={"backend": BACKEND_NAMES, "precision": PRECISION_NAMES})
    add_output_flags(run)
    run.add_argument(
        "--repeat",
        type=int,
        default=1,
        help=f"run the whole comparison N times (1 to {MAX_REPEAT}), each with its own speed measurement, "
        "and show how far the figures move",
    )
    # `code` takes every flag `run` takes, so a `run` command line becomes its script by one word.
    sub.add_parser(
        "code",
        parents=[run],
        conflict_handler="resolve",
        help="print the script that reproduces one run: the backend's loop with these settings",
    )
    und = sub.add_parser(
        "underflow",
        help="gradient magnitudes vs a format's range (fp16, bf16, fp8), from a real batch",
    )
    und.add_argument(
        "--format",
        dest="fmt",
        choices=LOW_PRECISION,
        default="fp16",
        help="the format the gradients are cast to: fp16, bf16, or fp8's e4m3 / e5m2",
    )
    add_field_flags(und, _UNDERFLOW_FLAGS)
    und.add_argument("--scale", type=float, default=1.0, help="loss (or per-tensor) scale S")
    und.add_argument("--json", dest="json_path")
    add_sweep_parser(sub)
    les = sub.add_parser("lesson", help="run one of the course's lessons (--list names them)")
    les.add_argument("name", nargs="?", help="the lesson to run (see --list)")
    les.add_argument("--list", action="store_true", help="list the lessons in the course's order")
    add_output_flags(les)
    les.set_defaults(repeat=1)  # `run`'s flag, which _run reads: a lesson runs once
    # bench/gpu_check.py records each lesson on the device it measures (--device cuda there).
    les.add_argument(
        "--device",
        choices=DEVICES,
        default=None,
        help="train the lesson's runs on this device (default: its own, auto)",
    )
    add_notebook_parser(sub)
    sub.add_parser(
        "app", help="open the page, as `python app.py` does (GRADIO_SERVER_PORT picks the port)"
    )
    return p


def configs_from_args(args: argparse.Namespace) -> list[RunConfig]:
    """The grid of RunConfigs the flags describe, each validated."""
    names = {f.name for f in fields(RunConfig)} - {"backend", "precision"}
    base = RunConfig(**{k: v for k, v in vars(args).items() if k in names})  # read by _read_flags
    return [cfg.validate() for cfg in grid(base, args.backend, args.precision)]


def main(argv: list[str] | None = None) -> int:
    """Entry point; returns the exit code."""
    parser = build_parser()
    args = parser.parse_args(argv)
    _read_flags(parser, args)
    log.setup()  # warnings and failures on stderr; MPDEMO_LOG_LEVEL=DEBUG adds tracebacks
    if args.command == "app":
        from ..ui import run_app  # gradio: only for the page, never for the other commands

        run_app()  # serves until Ctrl-C or SIGTERM, then exits the process itself
    commands: dict[str, Callable[[argparse.Namespace], int]] = {
        "run": _run,
        "code": _code,
        "underflow": _underflow,
        "sweep": sweep_main,
        "lesson": _lesson,
        "notebook": notebook_main,
    }
    try:
        return commands[args.command](args)
    except MpdemoError as err:
        print(f"mpdemo: error: {err}", file=sys.stderr)
        return EXIT_BAD_INPUT
    except KeyboardInterrupt:  # before or after the grid (during it, _run writes what finished)
        print("mpdemo: interrupted", file=sys.stderr)
        return EXIT_SIGNAL + signal.SIGINT


def _read_flags(parser: argparse.ArgumentParser, args: argparse.Namespace) -> None:
    """Each RunConfig flag read by the page's rule (config.coerce_field); a bad one: exit 2."""
    for name in (f.name for f in cli_fields()):
        # None: a flag left unset whose default the command fills later (the sweep's grid).
        if getattr(args, name, None) is not None:
            try:
                value = coerce_field(name, getattr(args, name), model=getattr(args, "model", None))
            except ConfigError as err:
                parser.error(str(err))
            setattr(args, name, value)


def _run(
    args: argparse.Namespace,
    configs: list[RunConfig] | None = None,
    after: Callable[[list[dict[str, Any]]], None] | None = None,
) -> int:
    from ..runs.estimate import eta_note
    from ..runs.notes import duration_text, memory_notes, run_speed_notes

    check_outputs(args)
    configs = configs if configs is not None else configs_from_args(args)
    for cfg in configs:
        engine.preflight(cfg)  # bad input → exit 2 before any training
    check_memory(configs)  # the runs of a comparison are alive together
    check_repeat(args.repeat)
    main_proc = int(os.environ.get("RANK", "0")) == 0
    single = env_int("WORLD_SIZE", 1) == 1
    if main_proc:
        print(f"# {engine.machine_note().text}")  # this machine: names, flags
    state = ComparisonState(repeated(configs, args.repeat))
    runs = state.fold.finished  # the runs JSON's entries (with their speed-ups), in grid order

    def on_event(ev: Event) -> None:
        state.apply(ev)
        estimate = state.estimate
        if ev.kind == "plan" and main_proc:
            print("\n".join(f"# {n['text']}" for n in ev.notes), flush=True)
        elif ev.kind == "start" and main_proc and not args.quiet:
            left = estimate.remaining_s() if estimate is not None else None
            eta = f", about {duration_text(left)} left in all" if left is not None else ""
            revised = eta_note(estimate) if estimate is not None else None
            if revised is not None:  # the runs left the measured pace: say so, and why
                eta = f"; {revised.text}"
            print(
                f"[{ev.index + 1}/{ev.total}] {ev.label} on {ev.device}, "
                f"{ev.params:,} params, {ev.steps} steps{eta}",
                file=sys.stderr,
                flush=True,
            )

    # The grid runs in this thread, like a plain script: torch's OpenMP pool is the only one.
    stop = threading.Event()
    with stop_on_signals(stop, graceful=single) as caught:
        run_grid(configs, on_event, stop, repeat=args.repeat)
    if caught:
        name = signal.Signals(caught["signal"]).name
        print(f"mpdemo: stopped by {name}; the runs that finished are below", file=sys.stderr)
    failed = any(r["summary"]["status"] == "failed" for r in runs)
    code = EXIT_SIGNAL + caught["signal"] if caught else EXIT_FAILED if failed else EXIT_OK
    if not main_proc:
        return code
    summaries = state.fold.summaries
    print(format_table(summaries))
    if args.repeat > 1:
        print(repeat_text(summaries))
    for r in runs:
        for w in r["summary"].get("warnings", []):
            print(f"  {r['summary']['label']}: {w}")
    # What the runs themselves measured: speed vs each backend's fp32 run, and memory.
    for note in [*run_speed_notes(summaries), *memory_notes(summaries)]:
        print(f"  {note.text}")
    if not runs and (args.json_path or args.csv_path):
        # Stopped before a run ended: a runs file with no runs is not one mpdemo can open.
        print("mpdemo: no run finished; no file written", file=sys.stderr)
    elif args.json_path:
        write_runs(args.json_path, runs)
    if runs and args.csv_path:
        write_steps_csv(args.csv_path, runs)
    if after is not None:  # a lesson: whether its runs showed its point
        after(runs)
    return code


def _lesson(args: argparse.Namespace) -> int:
    """List the lessons, or run one through `run`'s code (or `sweep`'s) and print its check."""
    if args.list or not args.name:
        print(list_text())
        return EXIT_OK
    lesson = get(args.name)  # an unknown name: ConfigError, exit 2 with the names
    if lesson.sweep:  # the sweep's defaults with the lesson's output flags
        sweep = build_parser().parse_args(["sweep"])
        vars(sweep).update({k: getattr(args, k) for k in ("json_path", "csv_path", "quiet")})
        return sweep_main(sweep)
    print(f"{render(f'lesson_{lesson.key}_title', {})}: {render(f'lesson_{lesson.key}_look', {})}")
    recorded = recording_text(lesson.name)
    print(f"# {recorded}" if recorded else "# no GPU recording of this lesson ships with the app")
    device = args.device or "auto"  # a lesson's runs ask for auto themselves
    kind = engine.resolve_device(device).type
    sized = size_line(lesson.name, kind)  # a CUDA GPU: teach/device_sizes.py's size
    if sized is not None:
        print(f"# {render(*sized)}")
    configs = [c.replace(device=device) for c in lesson.configs(kind)]
    return _run(args, configs, after=lambda runs: print_check(lesson, runs))


def recording_text(name: str) -> str | None:
    """Where the lesson's GPU recording is, and on which GPU; None when none ships."""
    rec = recording_for(name)
    if rec is None:
        return None
    return (
        f"recorded on {rec.machine_name} ({rec.date or 'no date'}): {rec.path}; the Train "
        "tab's lesson picker draws it beside the live runs"
    )


def list_text() -> str:
    """One paragraph a lesson: name, title, the slide it serves, what to look for, its runs."""
    on_cpu = engine.resolve_device("auto").type == "cpu"
    out = []
    for i, lesson in enumerate(LESSONS.values(), 1):
        say = lambda part, k=lesson.key: render(f"lesson_{k}_{part}", {})  # noqa: E731
        if lesson.sweep:
            runs = "the size sweep (python -m mpdemo sweep)"
        else:
            cfgs = lesson.configs()
            runs = f"{', '.join(c.label for c in cfgs)}; {cfgs[0].model}, {cfgs[0].steps} steps"
        lines = [
            f"{i}. {lesson.name}: {say('title')}",
            f"   slide: {say('slide')}",
            f"   look for: {say('look')}",
            f"   runs: {runs}",
        ]
        if cpu_note_here(lesson, on_cpu):
            lines.append(f"   here: {say('cpu')}")
        recorded = recording_text(lesson.name)
        if recorded:
            lines.append(f"   {recorded}")
        out.append("\n".join(lines))
    return "\n\n".join(out)


def print_check(lesson: Lesson, runs: list[dict[str, object]]) -> None:
    """Whether the runs showed the lesson's point: each figure its check reads, and its bar."""
    if lesson.check is None:
        return
    readings = check_runs(lesson.check, traces_of(runs))
    if not readings:
        print("# the lesson's check: too few steps to read")
        return
    held = all(r.ok for r in readings)
    print(f"# the lesson's check {'held' if held else 'did NOT hold'} on these runs:")
    for r in readings:
        print(f"#   {r}")


def _cell(s: dict[str, Any], key: str) -> str:
    if key == "eval":
        if s.get("eval_accuracy") is not None:
            return f"acc {s['eval_accuracy']:.3f}"
        return f"loss {s['eval_loss']:.3f}" if s.get("eval_loss") is not None else "-"
    if key == "speedup":
        return speedup_text(s)
    if key == "final_loss_scale":
        return scale_text(s.get(key))
    v = typical_step_s(s) if key == "median_step_s" else s.get(key)
    if v is None:
        return "-"
    if key == "median_step_s":
        return f"{v * 1000:.1f}"
    if key in ("peak_mem_bytes", "saved_activation_bytes"):
        return f"{v / 2**20:.2f}"
    if key == "samples_per_s":
        return f"{v:.0f}"
    if key == "final_loss":
        return f"{v:.4f}"
    return str(v)


def repeat_text(summaries: list[Summary]) -> str:
    """Each precision's figures across the repetitions: the speed-ups' range and the verdicts."""
    lines = ["repeated:"]
    for group in repeat_groups(summaries):
        s0 = group[0]
        ups = [s.speedup_vs_fp32 for s in group if s.speedup_vs_fp32 is not None]
        steps = [typical_step_s(s) * 1000 for s in group if typical_step_s(s)]
        verdicts = ", ".join(s.speed_verdict or "-" for s in group)
        line = f"  {s0.backend} · {s0.precision}: {len(group)} runs"
        if steps:
            line += f", step {min(steps):.1f}-{max(steps):.1f} ms"
        if ups and s0.precision != "fp32":
            line += f", vs fp32 {min(ups):.2f}-{max(ups):.2f}x ({verdicts})"
        lines.append(line)
    return "\n".join(lines)


def format_table(summaries: list[dict[str, Any]]) -> str:
    """A fixed-width table, one row per run."""
    # Peak memory is the CUDA allocator's: a column only when a run has one.
    cols = [(k, h) for k, h in TABLE_COLUMNS
            if k != "peak_mem_bytes" or any(s.get(k) is not None for s in summaries)]  # fmt: skip
    rows = [[h for _, h in cols], *[[_cell(s, k) for k, _ in cols] for s in summaries]]
    return "\n".join(table(rows, rule=True))


def _code(args: argparse.Namespace) -> int:
    """Print the reproduce script of one run (mpdemo.teach.listing), as the app's download has it."""
    configs = configs_from_args(args)
    if len(configs) != 1:
        print("mpdemo: error: code takes one --backend and one --precision", file=sys.stderr)
        return EXIT_BAD_INPUT
    sys.stdout.write(script_for(configs[0]))
    return EXIT_OK


def _underflow(args: argparse.Namespace) -> int:
    check_outputs(args)
    if not (math.isfinite(args.scale) and 0 < args.scale <= 2.0**64):
        rule = {"key": "rule_above", "args": {"lo": 0, "hi": "2^64"}}
        raise ConfigError("bad_number", field="scale", rule=rule, value=args.scale)
    cfg = RunConfig(**{k: getattr(args, k) for k in _UNDERFLOW_FLAGS}).validate()
    fmt, share = args.fmt, ENGLISH.share  # shares as the page's Underflow lab writes them
    # S = 1 counted too: the page's table shows what flushes to zero without a scale beside S.
    lab = collect(cfg, scales=(args.scale, 1.0), fmts=(fmt,))
    report = lab.report(float(args.scale), fmt)
    name = fmt.upper() if fmt.startswith("e") else fmt
    print(
        f"{name}: max {report['max']:g}, smallest normal {report['min_normal']:g}, "
        f"smallest subnormal {report['min_subnormal']:g} (torch.finfo)"
    )
    for kind in ("activation", "weight"):
        r = report[kind]
        best, kept = r["best_scale"], ""
        if best:
            kept = f"; most kept as normals at 2^{best['log2']} ({share(best['normal_share'])})"
        at_one = lab.shares(kind, 1.0, fmt)["underflow_share"]
        print(
            f"{kind} gradients: {r['nonzero']:,} non-zero values; in {name} at scale 1: "
            f"{share(at_one)} flush to zero; at scale {args.scale:g}: "
            f"{share(r['underflow_share'])} flush to zero, {share(r['subnormal_share'])} "
            f"subnormal, {share(r['overflow_share'])} overflow{kept}"
        )
    if args.json_path:
        write_text_atomic(args.json_path, json.dumps(report, indent=1))
    return EXIT_OK
