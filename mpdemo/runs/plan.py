"""Before and around the runs: the calibrated step, fitting a grid to a time budget, the
estimate of the time left, and the sentences rendered from those measurements.

Sits above the engine (it prepares a model to time its step); nothing below imports it.
"""

from __future__ import annotations

import itertools
import math
import re
import statistics
import threading
import time
from collections.abc import Callable
from dataclasses import dataclass, field
from typing import Any

import torch

from ..engine.core import collect_garbage, prepare
from ..engine.machine import hardware_reason, machine_info
from ..engine.precision import (
    autocast,
    autocast_supported,
    grad_scaler,
    resolve_device,
    synchronize,
)
from ..events import GridPlanned
from ..files.summary import peers, typical_step_s
from ..messages import Note
from ..registry import BACKENDS, PRECISIONS
from .timing import BUSY_SHARE, SpeedCheck, compare, interleave, runs_interval

# --- calibration: the real step, timed for a moment before the runs ---------------------------

CALIBRATION_BUDGET_S = 10.0  # all precisions together, warm-ups included: seconds, not minutes


def effective_precision(backend: str, precision: str, device_type: str) -> str:
    """What a run's matmuls will compute in (fp16 through Accelerate/Trainer on a CPU: fp32)."""
    if precision == "fp32":
        return "fp32"
    b = BACKENDS.get(backend)
    if device_type == "cpu" and precision == "fp16" and b is not None and not b.cpu_fp16:
        return "fp32"
    if device_type == "mps" and not autocast_supported(torch.device("mps"), precision):
        return "fp32"
    return precision


@dataclass(frozen=True)
class Calibration:
    """Seconds per training step for one model/data/batch/device, per computing precision, and
    each precision's interleaved SpeedCheck against fp32: the one source of its verdict."""

    key: tuple[Any, ...]
    device: str
    step_s: dict[str, float]  # the median of the interleaved steps
    setup_s: float  # prepare(): data, tokenizer, model
    eval_batches: int
    calibration_s: float  # how long the whole calibration took
    threads: int
    checks: dict[str, SpeedCheck] = field(default_factory=dict)  # precision -> vs fp32
    load: dict[str, float] | None = None  # other processes' and steal's share of the CPU

    def ratio(self, precision: str) -> float | None:
        """Step time of `precision` over fp32's (None when either was not measured)."""
        if precision not in self.step_s or "fp32" not in self.step_s:
            return None
        return self.step_s[precision] / max(self.step_s["fp32"], 1e-12)

    def to_dict(self) -> dict[str, Any]:
        """JSON-ready form."""
        return {
            "device": self.device,
            "model": self.key[0],
            "dataset": self.key[1],
            "batch_size": self.key[2],
            "max_length": self.key[3],
            "step_s": dict(self.step_s),
            "checks": {p: c.to_dict() for p, c in self.checks.items()},
            "load": self.load,
            "setup_s": self.setup_s,
            "eval_batches": self.eval_batches,
            "calibration_s": self.calibration_s,
            "threads": self.threads,
        }


_lock = threading.Lock()
_calibrations: dict[tuple[Any, ...], Calibration] = {}


def calibration_key(cfg: Any) -> tuple[Any, ...]:
    """What the step time depends on: model, data, batch, sequence length, device."""
    device = resolve_device(cfg.device).type
    return (cfg.model, cfg.dataset, cfg.batch_size, cfg.max_length, device)


def cached_calibration(cfg: Any) -> Calibration | None:
    """This process's calibration for cfg's model/batch/device, if one was measured."""
    try:
        key = calibration_key(cfg)
    except Exception:  # noqa: BLE001 - a device that cannot resolve has no calibration
        return None
    with _lock:
        return _calibrations.get(key)


def latest_calibration(device_type: str) -> Calibration | None:
    """The most recent calibration this process made on a device type ("cpu", "cuda"), if any."""
    with _lock:
        recent = [c for c in _calibrations.values() if c.device == device_type]
    return recent[-1] if recent else None


def forget_calibrations() -> None:
    """Drop every cached calibration (the next grid measures again)."""
    with _lock:
        _calibrations.clear()


def _computing(configs: list[Any], device_type: str) -> list[str]:
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
    cfg: Any,
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
    configs: list[Any],
    stop: threading.Event | None = None,
    *,
    budget_s: float = CALIBRATION_BUDGET_S,
    force: bool = False,
) -> Calibration | None:
    """Time the real training step of configs[0]'s model/batch for every precision the grid uses.

    Call it in the thread the runs will use (torch's OpenMP pool is per thread). The precisions
    are timed interleaved (mpdemo.runs.timing.interleave: blocks in alternation, on the same batches)
    for about budget_s, and each gets its SpeedCheck against fp32. Cached per
    model/data/batch/device; None when there is nothing to measure or preparing fails.
    """
    if not configs:
        return None
    key = calibration_key(configs[0])
    precisions = _computing(configs, key[4])
    with _lock:
        if not force and key in _calibrations:
            have = _calibrations[key]
            if all(p in have.step_s for p in precisions):
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
    with _lock:
        _calibrations.pop(key, None)  # re-inserted last: the dict's order is recency
        _calibrations[key] = cal
    return cal


# --- sentences: every one rendered from the profile ------------------------------------------
# Each returns Notes (a message key + arguments): the CLI prints the English, the UI renders the
# same keys in the page's language. A nested {"key", "args"} argument is rendered the same way.


def check_note(check: SpeedCheck, machine: dict[str, Any], device: str) -> Note:
    """The sentence of one SpeedCheck: its verdict, the speed-up with its 95 % interval, the
    interleaved rounds and the step times it came from, and the hardware facts that explain it.

    Every speed sentence (under the precisions, in the status, in the CLI) is this one.
    """
    args: dict[str, Any] = {
        "precision": check.precision,
        "ms": (check.step_s or 0.0) * 1000,
        "fp32_ms": (check.baseline_step_s or 0.0) * 1000,
        "rounds": check.rounds,
        "why": hardware_reason(machine, check.precision, device),
    }
    if check.speedup is not None and check.low is not None and check.high is not None:
        args.update(speedup=check.speedup, low=check.low, high=check.high)
    if check.verdict == "faster":
        return Note("speed_faster", args)
    if check.verdict == "slower":
        # "1.9x slower (1.7-2.2x)": the slowdown and its interval, the speed-up's turned round.
        return Note(
            "speed_slower",
            {
                **args,
                "ratio": 1 / check.speedup,
                "ratio_low": 1 / check.high,
                "ratio_high": 1 / check.low,
            },
        )
    if check.verdict == "same":
        return Note("speed_same", args)
    why = check.reason or "wide"
    reason: dict[str, Any] = {"key": f"unsure_{why}", "args": {"rounds": check.rounds}}
    if why == "busy":
        reason["args"]["pct"] = (check.others_cpu or 0.0) * 100
    key = "speed_unsure" if "speedup" in args else "speed_unsure_no_interval"
    return Note(key, {**args, "reason": reason})


def speed_note(
    cal: Calibration, machine: dict[str, Any], precision: str, backend: str | None = None
) -> Note | None:
    """One sentence on how fast `precision` stepped vs fp32 here; None without a measurement.

    With a backend whose `precision` computes in fp32 on this device, the sentence says so.
    """
    if precision == "fp32":
        return None
    if backend is not None and effective_precision(backend, precision, cal.device) == "fp32":
        prose = BACKENDS[backend].prose if backend in BACKENDS else backend
        return Note(
            "runs_as_fp32",
            {"precision": precision, "backend": prose, "device": cal.device.upper()},
        )
    check = cal.checks.get(precision)
    return check_note(check, machine, cal.device) if check is not None else None


def busy_note(load: dict[str, float] | None) -> Note | None:
    """'Other processes took 38 % of the CPU while ...' when they took more than BUSY_SHARE."""
    if not load or (load.get("others") or 0.0) <= BUSY_SHARE:
        return None
    return Note(
        "busy_machine", {"pct": load["others"] * 100, "steal": (load.get("steal") or 0.0) * 100}
    )


def speed_notes(cal: Calibration, machine: dict[str, Any], configs: list[Any]) -> list[Note]:
    """The speed sentences for a grid: one per precision (and per backend where it differs)."""
    out: list[Note] = []
    seen: set[tuple[str, str]] = set()
    for cfg in configs:
        eff = effective_precision(cfg.backend, cfg.precision, cal.device)
        key = (cfg.precision, cfg.backend if eff != cfg.precision else "")
        if key in seen:
            continue
        seen.add(key)
        note = speed_note(cal, machine, cfg.precision, cfg.backend)
        if note is not None:
            out.append(note)
    return out


def duration_text(seconds: float) -> str:
    """'45 s', '3 min 20 s': short, unit symbols only (the same in every language)."""
    s = max(0, round(seconds))
    if s < 90:
        return f"{s} s"
    m, s = divmod(s, 60)
    if m < 60:
        return f"{m} min {s:02d} s"
    h, m = divmod(m, 60)
    return f"{h} h {m:02d} min"


def plan_note(estimate: GridEstimate, cal: Calibration) -> Note:
    """'about 70 s in all for 2 runs' from the calibration, said before the first run."""
    return Note(
        "plan_expect",
        {
            "total": duration_text(estimate.remaining_s() or 0.0),
            "runs": len(estimate.runs),
            "cal_s": cal.calibration_s,
        },
    )


# The runs step this much slower or faster than the calibration said: the estimate says so.
REVISE_BEYOND = 1.3


def eta_note(estimate: GridEstimate) -> Note | None:
    """'Re-estimated: the runs step 3.1x slower than measured before them ...', or None."""
    factor = estimate.load_factor()
    left = estimate.remaining_s()
    if factor is None or left is None or 1 / REVISE_BEYOND <= factor <= REVISE_BEYOND:
        return None
    kind = "eta_rounds" if estimate.interleaved else "eta_revised"
    key = f"{kind}_slower" if factor > 1 else f"{kind}_faster"
    return Note(key, {"factor": factor if factor > 1 else 1 / factor, "left": duration_text(left)})


def run_speed_notes(
    summaries: list[dict[str, Any]], machine: dict[str, Any] | None = None
) -> list[Note]:
    """The speed sentences after a grid, rendered from the runs' summaries' SpeedChecks.

    One per precision and measurement (three backends share one check), the same sentence the
    page showed under the precisions before the runs. Where a run's own median steps, compared
    with its backend's fp32 run, land outside the check's interval, a note says the machine's
    load changed while they ran, and that the interleaved figure stands.
    """
    m = machine or machine_info()
    base = {
        peers(s): s
        for s in summaries
        if s.get("precision") == "fp32" and typical_step_s(s) and s.get("status") != "failed"
    }
    out: list[Note] = []
    seen: set[tuple[Any, ...]] = set()
    for s in summaries:
        raw = s.get("speed_check")
        if s.get("precision") == "fp32" or not raw or s.get("status") == "failed":
            continue
        check = SpeedCheck.from_dict(raw)
        device = str(s.get("device") or "cpu").split(":")[0]
        key = (s.get("machine"), s.get("model"), check.precision, check.speedup, check.low)
        if key not in seen:
            seen.add(key)
            out.append(check_note(check, m, device))
        ref = base.get(peers(s))
        if ref is None or not typical_step_s(s) or not check.interval:
            continue
        if check.step_s == typical_step_s(s) and check.baseline_step_s == typical_step_s(ref):
            continue  # measured on the runs' own steps (they took turns): one figure, no other
        # The runs' own figure, with its own interval: only when the two intervals do not meet
        # did the load change between the measurement and the runs.
        timed = max(1, (s.get("steps") or 1) - s.get("warmup_steps", 3))
        ref_timed = max(1, (ref.get("steps") or 1) - ref.get("warmup_steps", 3))
        iv = runs_interval(
            typical_step_s(ref), ref.get("step_time_mad"), ref_timed,
            typical_step_s(s), s.get("step_time_mad"), timed,
        )  # fmt: skip
        if iv is not None and (iv[1] < check.low or iv[0] > check.high):
            ratio = typical_step_s(ref) / typical_step_s(s)
            args = {"label": s.get("label"), "base": ref.get("label"), "ratio": ratio,
                    "low": check.low, "high": check.high}  # fmt: skip
            out.append(Note("load_changed", args))
    return out


def memory_notes(summaries: list[dict[str, Any]]) -> list[Note]:
    """Activation memory of each non-fp32 run vs its backend's fp32 run, from the measured bytes."""
    base = {
        peers(s): s.get("saved_activation_bytes")
        for s in summaries
        if s.get("precision") == "fp32" and s.get("saved_activation_bytes")
    }
    out: list[Note] = []
    for s in summaries:
        b, v = base.get(peers(s)), s.get("saved_activation_bytes")
        if s.get("precision") == "fp32" or not b or not v:
            continue
        ratio = v / b
        args = {"label": s.get("label"), "mb": v / 2**20, "fp32_mb": b / 2**20}
        if ratio < 0.95:
            out.append(Note("mem_less", {**args, "pct": (1 - ratio) * 100}))
        elif ratio > 1.05:
            out.append(Note("mem_more", {**args, "pct": (ratio - 1) * 100}))
        else:
            out.append(Note("mem_same", args))
    return out


# --- the estimate of the time left --------------------------------------------------------------


@dataclass
class _RunPlan:
    label: str
    steps: int
    predicted_step_s: float | None
    done_steps: int = 0
    step_times: list[float] | None = None
    stamps: list[float] | None = None  # the clock at each step event: the run's wall rate
    finished: bool = False
    started_at: float | None = None


# A run's own rate counts as much as the prediction after this many timed steps.
PRIOR_STEPS = 30
# Interleaved runs: the pace of this many rounds at the start and at the end is compared to
# tell the load changed.
ROUNDS_COMPARED = 5


class GridEstimate:
    """Seconds left for a whole grid: the calibration first, then each run's measured speed.

    Pending runs get their calibrated step time times the factor by which the runs so far were
    slower or faster than calibrated (load on a shared machine moves every run alike); the run
    in progress uses its own wall-clock rate since its warm-up (step, data loading and a stall
    of another process included: what the person waits for); each run adds the measured
    per-run overhead (preparing, evaluating), first estimated from the calibration's.
    """

    def __init__(
        self,
        configs: list[Any],
        cal: Calibration | None,
        clock: Any = time.monotonic,
        interleaved: bool = False,
    ) -> None:
        self.clock = clock
        self.cal = cal
        # The runs take turns step by step (mpdemo.runs.together): what is left is the rounds
        # left at the pace of the rounds, not one run after another.
        self.interleaved = interleaved
        self.batch = {c.label: (c.batch_size, c.eval_slice) for c in configs}
        device = cal.device if cal is not None else "cpu"
        self.runs = [
            _RunPlan(
                c.label,
                c.steps,
                cal.step_s.get(effective_precision(c.backend, c.precision, device))
                if cal is not None
                else None,
                step_times=[],
                stamps=[],
            )
            for c in configs
        ]
        self.warmup = configs[0].warmup_steps if configs else 0
        # Per run outside the steps: prepare() and the evaluation (forward only: about a third
        # of a training step per batch), until a finished run tells the real figure. The
        # calibration times a warm prepare() when it can (its first one paid the imports);
        # a cold one is capped, as the runs' are warm.
        self.overheads: list[float] = []
        # Of each finished run's overhead, the part after its last step (evaluation, summary):
        # what is still ahead once a run has stepped its last step.
        self.tails: list[float] = []
        self._guess_overhead = 0.0
        if cal is not None:
            fwd = cal.step_s.get("fp32", 0.0) / 3
            self._guess_overhead = min(cal.setup_s, 1.0) + cal.eval_batches * fwd
        self._current: _RunPlan | None = None
        self._last_end: float | None = None
        self._grid_start = clock()

    def _run(self, label: str) -> _RunPlan | None:
        for r in self.runs:
            if r.label == label and not r.finished:
                return r
        return None

    def update(self, ev: Any) -> None:
        """Take one engine event (start/step/end; others are ignored)."""
        now = self.clock()
        kind = getattr(ev, "kind", None)
        if kind == "start":
            run = self._run(ev.label)
            if run is not None:
                run.started_at = now
                self._current = run
        elif kind == "step":
            run = self._run(ev.label)
            if run is not None:
                run.done_steps = ev.step
                assert run.step_times is not None and run.stamps is not None
                run.step_times.append(ev.step_time_s)
                run.stamps.append(now)
        elif kind == "end":
            run = self._run(ev.label)
            if run is not None:
                run.finished = True
                stamps, times = run.stamps or [], run.step_times or []
                steps_s = (stamps[-1] - stamps[0] + times[0]) if stamps else 0.0
                began = self._last_end if self._last_end is not None else self._grid_start
                self.overheads.append(max(0.0, (now - began) - steps_s))
                if stamps:
                    self.tails.append(max(0.0, now - stamps[-1]))
            self._last_end = now
            self._current = None

    def _rate(self, run: _RunPlan) -> float | None:
        """Wall seconds per step of a run since its warm-up; None before three such steps."""
        st = run.stamps or []
        if len(st) < self.warmup + 3:
            return None
        return (st[-1] - st[self.warmup]) / (len(st) - 1 - self.warmup)

    def _factor(self, exclude: _RunPlan | None = None) -> float:
        """Measured / calibrated step time over the latest other runs (1.0 before any)."""
        ratios = []
        for r in self.runs:
            rate = self._rate(r)
            if r is not exclude and r.predicted_step_s and rate is not None:
                ratios.append(rate / r.predicted_step_s)
        return statistics.median(ratios[-3:]) if ratios else 1.0

    def fit(self, steps: int) -> None:
        """The comparison was fitted to its time budget: each run makes `steps` steps."""
        for r in self.runs:
            r.steps = min(r.steps, steps)

    def load_factor(self) -> float | None:
        """Wall seconds a step over the calibrated step, for the latest runs (None before any).

        Above 1: the runs step slower than measured before them (the machine got busier).
        Interleaved: the last rounds' pace over the pace of the first rounds after the warm-up.
        """
        if self.interleaved:
            return self._round_factor()
        ratios = []
        for r in self.runs:
            rate = self._rate(r)
            if r.predicted_step_s and rate is not None:
                ratios.append(rate / r.predicted_step_s)
        return statistics.median(ratios[-3:]) if ratios else None

    def overhead_s(self) -> float:
        """Seconds each run spends outside its steps (preparing, evaluating): measured or guessed."""
        return statistics.median(self.overheads) if self.overheads else self._guess_overhead

    def _speed(self, run: _RunPlan) -> float | None:
        # The run's whole rate so far, not a window of recent steps (that jumps with every
        # burst of another process's load), weighed against what the calibration and the
        # other runs predict until the run has timed enough steps of its own: one stall among
        # its first few steps alone moved the estimate by +64 % (bench/eta.py).
        rate = self._rate(run)
        prior = run.predicted_step_s * self._factor(run) if run.predicted_step_s else None
        if rate is not None and prior is not None:
            n = len(run.stamps or []) - 1 - self.warmup  # steps timed since the warm-up
            weight = n / (n + PRIOR_STEPS)
            return weight * rate + (1.0 - weight) * prior
        if rate is not None or prior is not None:
            return rate if rate is not None else prior
        known = [x for r in self.runs if (x := self._rate(r)) is not None]
        return statistics.fmean(known) if known else None

    def _round_factor(self) -> float | None:
        st = max((r.stamps or [] for r in self.runs if not r.finished), key=len, default=[])
        first = self.warmup + ROUNDS_COMPARED
        if len(st) < first + ROUNDS_COMPARED:
            return None
        early = (st[first] - st[self.warmup]) / ROUNDS_COMPARED
        late = (st[-1] - st[-1 - ROUNDS_COMPARED]) / ROUNDS_COMPARED
        return late / early if early > 0 else None

    def _eval_guess(self, run: _RunPlan) -> float:
        """A run's evaluation: its batches at about a third of a step each (forward only)."""
        batch, eval_slice = self.batch.get(run.label, (32, ""))
        m = re.search(r"\[:(\d+)\]", eval_slice or "")
        rows = int(m.group(1)) if m else 500
        step = statistics.median(run.step_times) if run.step_times else 0.0
        return math.ceil(rows / max(1, batch)) * step / 3

    def _remaining_rounds(self) -> float | None:
        """Interleaved: the rounds left at the pace of the rounds so far, then the evaluations."""
        live = [r for r in self.runs if not r.finished]
        if not live:
            return 0.0
        rates = [x for r in live if (x := self._rate(r)) is not None]
        if not rates:
            return None
        # The whole pace since the warm-up: a burst of load among the last rounds must not
        # move the estimate by itself (bench/eta.py).
        per_round = statistics.median(rates)
        rounds = max(r.steps - r.done_steps for r in live)
        tails = [t for t in self.tails]
        evals = sum(statistics.median(tails) if tails else self._eval_guess(r) for r in live)
        return rounds * per_round + evals

    def remaining_s(self) -> float | None:
        """Seconds until the last run of the grid ends; None while nothing can say."""
        if self.interleaved:
            return self._remaining_rounds()
        total = 0.0
        overhead = self.overhead_s()
        for r in self.runs:
            if r.finished:
                continue
            speed = self._speed(r)
            if speed is None:
                return None
            total += (r.steps - r.done_steps) * speed
            if r is self._current:
                # The part of the overhead still ahead: the evaluation (prepare is behind it),
                # as the finished runs measured it once they have.
                total += statistics.median(self.tails) if self.tails else overhead * 0.5
            else:
                total += overhead
        return total

    def total_s(self) -> float | None:
        """Predicted whole-grid seconds: elapsed so far plus what is left."""
        left = self.remaining_s()
        return None if left is None else (self.clock() - self._grid_start) + left


MIN_FIT_STEPS = 20  # fewer steps than this would show no curve worth reading


def estimate_for(
    configs: list[Any], ev: Any, clock: Any = time.monotonic, previous: GridEstimate | None = None
) -> GridEstimate:
    """The estimate after a plan event: a calibrated grid's, or the interleaved runs' own.

    A later plan event of interleaved runs (their steps fitted to the time budget) refits the
    estimate already running, which keeps the rounds it timed.
    """
    if getattr(ev, "interleaved", False):
        est = previous if previous is not None and previous.interleaved else None
        est = est or GridEstimate(configs, None, clock=clock, interleaved=True)
        if ev.steps is not None:
            est.fit(ev.steps)
        return est
    cal = cached_calibration(configs[0]) if ev.calibration and configs else None
    return GridEstimate(configs, cal, clock=clock)


def fit_steps(configs: list[Any], cal: Calibration, fit_s: float) -> int | None:
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
    configs: list[Any],
    stop: threading.Event | None = None,
    fit_s: float | None = None,
    force: bool = False,
) -> Any:
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
