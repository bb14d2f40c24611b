"""Before the runs: the real step, timed for a moment (the calibration), fitting a grid to a
time budget, and the plan event that carries both with their sentences.

Sits above the engine (it prepares a model to time its step); nothing below imports it.
"""

from __future__ import annotations

import itertools
import statistics
import threading
import time
from collections.abc import Callable
from typing import TYPE_CHECKING, Any

import torch

from ..engine.core import collect_garbage, prepare
from ..engine.machine import machine_info
from ..engine.precision import autocast, grad_scaler, synchronize
from ..events import GridPlanned
from ..messages import Note
from ..registry import PRECISIONS
from .calibration import (
    Calibration,
    calibration_key,
    effective_precision,
    store_calibration,
    stored_calibration,
)
from .estimate import GridEstimate
from .notes import busy_note, duration_text, plan_note, speed_notes
from .timing import compare, interleave

if TYPE_CHECKING:
    from ..config import RunConfig

CALIBRATION_BUDGET_S = 10.0  # all precisions together, warm-ups included: seconds, not minutes


def _computing(configs: list[RunConfig], device_type: str) -> list[str]:
    out = ["fp32"]
    for cfg in configs:
        p = effective_precision(cfg.backend, cfg.precision, device_type)
        rec = PRECISIONS.get(p)
        # Only what autocast runs: other precisions (fp8) bring their own code; the ETA then
        # learns their speed from the run itself.
        # fp8 also autocasts (to bf16), but its speed is torchao's Float8Linear, not autocast's.
        if (
            p not in out
            and rec is not None
            and rec.autocast_dtype
            and not rec.needs_compute_capability
        ):
            out.append(p)
    return out


def timed_step(
    model: torch.nn.Module,
    optimizer: torch.optim.Optimizer,
    device: torch.device,
    precision: str,
    cfg: RunConfig,
    next_batch: Callable[[], Any],
) -> Callable[[], float]:
    """One real training step of `precision` (autocast, GradScaler, synchronize) that returns
    its seconds: what calibrate() and the size sweep time, interleaved."""
    scaler = grad_scaler(device, precision, cfg)

    def step() -> float:
        batch = next_batch()
        synchronize(device)  # queued GPU work of the previous step is not this step's
        t0 = time.perf_counter()
        with autocast(device, precision):
            loss = model(**batch).loss
        scaler.scale(loss).backward()
        scaler.step(optimizer)
        scaler.update()
        optimizer.zero_grad(set_to_none=True)
        synchronize(device)  # the clock reads when the GPU is done, not when it was queued
        return time.perf_counter() - t0

    return step


def calibrate(
    configs: list[RunConfig],
    stop: threading.Event | None = None,
    *,
    budget_s: float | None = None,
    force: bool = False,
) -> Calibration | None:
    """Time the real training step of configs[0]'s model/batch for every precision the grid uses.

    Call it in the thread the runs will use (torch's OpenMP pool is per thread). The precisions
    are timed interleaved (mpdemo.runs.timing.interleave: blocks in alternation, on the same batches)
    for about budget_s (CALIBRATION_BUDGET_S when None), and each gets its SpeedCheck against
    fp32. Cached per model/data/batch/device; None when there is nothing to measure or preparing
    fails.
    """
    if not configs:
        return None
    budget_s = CALIBRATION_BUDGET_S if budget_s is None else budget_s
    key = calibration_key(configs[0])
    precisions = _computing(configs, key[4])
    have = None if force else stored_calibration(key)
    if have is not None and all(p in have.step_s for p in precisions):
        return have

    t_start = time.perf_counter()
    # Enough batches for a few rounds; they cycle when the steps outrun them.
    base = configs[0].replace(backend="torch", precision="fp32", steps=64)
    prep = prepare(base)
    setup_s = time.perf_counter() - t_start
    # The first prepare() of a process pays the imports and opens the data; each run's own is
    # warm (tiny-bert: 1-2 s cold, 0.1 s warm). Time a warm one, so the estimate's per-run
    # overhead is what a run pays, not the imports. Collect (and freeze) what the imports made
    # first: else the next prepare() set off Python's full collection of those ~0.5M objects
    # and took 0.35 s, and the estimate said +30..+50 % at the first run's end (bench/eta.py).
    if setup_s < budget_s and not (stop is not None and stop.is_set()):
        del prep
        collect_garbage()
        t_warm = time.perf_counter()
        prep = prepare(base)
        setup_s = time.perf_counter() - t_warm
    model, optimizer, device = prep.model, prep.optimizer, prep.device
    batches = list(prep.train_dataloader)

    def stepper(precision: str) -> Any:
        # Every precision steps through the same batches in the same order, each with its own
        # position: a round's blocks see the same sequence lengths and the same work.
        position = itertools.count()

        def next_batch() -> Any:
            return batches[next(position) % len(batches)]

        return timed_step(model, optimizer, device, precision, base, next_batch)

    model.train()
    # Two fp32 steps first: kernel selection and the optimizer's state are one-time costs.
    fp32 = stepper("fp32")
    fp32()
    fp32()
    elapsed = time.perf_counter() - t_start
    times, load = interleave(
        {p: stepper(p) for p in precisions},
        budget_s=max(1.0, budget_s - elapsed),
        stop=stop,
    )
    step_s = {
        p: statistics.median(t for block in ts for t in block) for p, ts in times.items() if ts
    }
    eval_batches = len(prep.eval_dataloader)
    if "fp32" not in step_s:
        return None
    cal = Calibration(
        key=key,
        device=key[4],
        step_s=step_s,
        setup_s=setup_s,
        eval_batches=eval_batches,
        calibration_s=time.perf_counter() - t_start,
        threads=torch.get_num_threads(),
        checks=compare(times, "fp32", load),
        load=load,
    )
    store_calibration(cal)
    return cal


MIN_FIT_STEPS = 20  # fewer steps than this would show no curve worth reading


def fit_steps(configs: list[RunConfig], cal: Calibration, fit_s: float) -> int | None:
    """Steps per run that bring the grid near fit_s seconds; None when it already fits."""
    asked = max(c.steps for c in configs)
    estimate = GridEstimate(configs, cal)
    total = estimate.remaining_s()
    if total is None or total <= fit_s * 1.25:
        return None
    per_step = sum(r.predicted_step_s or 0.0 for r in estimate.runs)
    overhead = estimate.overhead_s() * len(configs)
    if per_step <= 0:
        return None
    steps = int((fit_s - overhead) / per_step)
    steps = max(MIN_FIT_STEPS, min(asked, steps))
    return steps if steps < asked else None


def plan_grid(
    configs: list[RunConfig],
    stop: threading.Event | None = None,
    fit_s: float | None = None,
    force: bool = False,
) -> GridPlanned:
    """Calibrate for a grid and build its GridPlanned event (calibration None when it failed).

    With fit_s, the event's `steps` is what each run should do to end near fit_s seconds;
    force measures again even when this process has a calibration for the grid.
    """
    machine = machine_info()
    try:
        cal = calibrate(configs, stop, force=force)
    except Exception:  # noqa: BLE001 - the runs themselves will report what is wrong
        cal = None
    if cal is None:
        return GridPlanned(machine=machine, calibration=None, expected_s=None, notes=[])
    steps = fit_steps(configs, cal, fit_s) if fit_s else None
    notes: list[Note] = []
    if steps is not None:
        full = GridEstimate(configs, cal).remaining_s() or 0.0
        fitted = GridEstimate([c.replace(steps=steps) for c in configs], cal).remaining_s()
        # At the fewest steps a grid may still run long (fp16 on a CPU without fp16 kernels):
        # then the note must not promise a minute next to an estimate of five.
        key = "fit_steps" if (fitted or 0.0) <= fit_s * 1.25 else "fit_steps_min"
        notes.append(
            Note(key, {"asked": configs[0].steps, "full": duration_text(full), "steps": steps})
        )
        configs = [c.replace(steps=steps) for c in configs]
    estimate = GridEstimate(configs, cal)
    busy = busy_note(cal.load)
    notes = [
        *speed_notes(cal, machine, configs),
        *([busy] if busy else []),
        *notes,
        plan_note(estimate, cal),
    ]
    return GridPlanned(
        machine=machine,
        calibration=cal.to_dict(),
        expected_s=estimate.remaining_s(),
        notes=[n.to_dict() for n in notes],
        steps=steps,
    )
