"""The estimate of the time left for a grid: the calibration first, then each run's measured
speed, and the sentence that says when the runs step slower or faster than measured.
"""

from __future__ import annotations

import math
import re
import statistics
import time
from collections.abc import Callable
from dataclasses import dataclass
from typing import TYPE_CHECKING

from .. import engine
from ..engine.precision import effective_precision
from ..messages import Note
from .calibration import Calibration
from .notes import duration_text

if TYPE_CHECKING:
    from ..config import RunConfig
    from ..events import Event, GridPlanned


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
    evaluated: bool = False  # its eval event came (interleaved: its evaluation is behind it)
    # The precision its matmuls compute in (fp16 through Accelerate on a CPU: fp32).
    computes: str = "fp32"


# A run's own rate counts as much as the prediction after this many timed steps.
PRIOR_STEPS = 30
# Interleaved runs: the pace of this many rounds at the start and at the end is compared to
# tell the load changed.
ROUNDS_COMPARED = 5
# An evaluation batch (forward only, no autograd) over a training step of the same run (each
# by its own timer, the evaluation's stretched as the rounds were), until a run of this
# comparison that computes in the same precision has evaluated. Measured on a 2-core AVX2
# EPYC, tiny-bert batch 32, batch by batch between the steps (load cancels): fp32 0.33, fp16
# 0.19, bf16 0.24; whole evaluations at the end of comparisons whose rounds ran undisturbed
# (stretched x1.03): fp32 0.29, fp16 0.19, and up to 0.36 when the load changed during the
# evaluation. Autocast's backward costs more than twice its forward on a CPU; fp32's fast step
# leaves a batch's fixed costs a larger share. So an fp32 run's measured ratio is not carried
# over to an fp16 run (that made the fp16 run's guess 30-150 % long).
EVAL_PER_STEP = {"fp32": 0.3, "tf32": 0.3}  # tf32: fp32 weights and activations, not measured
EVAL_PER_STEP_16 = 0.22  # fp16, bf16 (and fp8, whose other layers run in bf16)
# The process's first collection after a comparison scans everything the imports made, then
# freezes it (mpdemo.engine.core.collect_garbage): 0.2 s quiet, 0.3-0.6 s at load 4-8 on 2 cores
# (stretched as the rounds were).
FIRST_COLLECT_S = 0.2


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
        configs: list[RunConfig],
        cal: Calibration | None,
        clock: Callable[[], float] = time.monotonic,
        interleaved: bool = False,
    ) -> None:
        self.clock = clock
        self.cal = cal
        # The runs take turns step by step (mpdemo.runs.together): what is left is the rounds
        # left at the pace of the rounds, not one run after another.
        self.interleaved = interleaved
        self.batch = {c.label: (c.batch_size, c.eval_slice) for c in configs}
        self.kinds = {c.label: (c.backend, c.precision) for c in configs}
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
                computes=effective_precision(c.backend, c.precision, device),
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
        # Interleaved: each evaluated run's evaluation seconds over its batches x its median
        # step (measured from the start of its evaluation turn to its eval event), by the
        # precision it computes in.
        self.eval_ratios: dict[str, list[float]] = {}
        self._last_step_at: float | None = None  # the clock at the latest step of any run
        self._current: _RunPlan | None = None
        self._last_end: float | None = None
        self._grid_start = clock()

    def _run(self, label: str) -> _RunPlan | None:
        for r in self.runs:
            if r.label == label and not r.finished:
                return r
        return None

    def update(self, ev: Event) -> None:
        """Take one engine event (start/step/end; others are ignored)."""
        now = self.clock()
        if ev.kind == "start":
            run = self._run(ev.label)
            if run is not None:
                run.started_at = now
                self._current = run
                backend, precision = self.kinds.get(ev.label, ("torch", "fp32"))
                device = str(ev.device).split(":")[0]  # "cuda:0" -> "cuda"
                run.computes = effective_precision(backend, precision, device)
        elif ev.kind == "step":
            run = self._run(ev.label)
            if run is not None:
                run.done_steps = ev.step
                assert run.step_times is not None and run.stamps is not None
                run.step_times.append(ev.step_time_s)
                run.stamps.append(now)
            self._last_step_at = now
        elif ev.kind == "eval":
            run = self._run(ev.label)
            if run is not None and self.interleaved:
                self._measure_eval(run, now)
        elif ev.kind == "end":
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

    def _eval_batches(self, run: _RunPlan) -> int:
        batch, eval_slice = self.batch.get(run.label, (32, ""))
        m = re.search(r"\[:(\d+)\]", eval_slice or "")
        rows = int(m.group(1)) if m else 500
        return math.ceil(rows / max(1, batch))

    def _eval_began(self) -> float | None:
        """Interleaved: when the evaluation now running began (the runs evaluate one after
        another once every run has trained: at the last step, or at the previous run's end)."""
        if self._last_step_at is None:
            return None
        return max(self._last_step_at, self._last_end or self._last_step_at)

    def _step_s(self, run: _RunPlan) -> float:
        """A run's median step after its warm-up (its own timer: stalls left out)."""
        times = run.step_times or []
        return statistics.median(times[self.warmup :] or times) if times else 0.0

    def stall(self) -> float:
        """Interleaved: wall seconds a round over the sum of its runs' median steps (at least 1).

        Other processes' load, the hand-overs and what sits between two steps stretch a round
        beyond its steps' own times; an evaluation is stretched alike.
        """
        timed = [(rate, r) for r in self.runs if (rate := self._rate(r)) is not None]
        steps = sum(self._step_s(r) for _, r in timed)
        if not timed or steps <= 0:
            return 1.0
        return max(1.0, statistics.median(rate for rate, _ in timed) / steps)

    def _measure_eval(self, run: _RunPlan, now: float) -> None:
        run.evaluated = True
        began = self._eval_began()
        step = self._step_s(run)
        if began is not None and step > 0:
            ratio = (now - began) / (self._eval_batches(run) * step * self.stall())
            self.eval_ratios.setdefault(run.computes, []).append(ratio)

    def _eval_guess(self, run: _RunPlan) -> float:
        """A run's evaluation: its batches at its own median step times the evaluation / step
        ratio a run of this comparison in the same precision measured (or the prior's),
        stretched as the rounds were."""
        measured = self.eval_ratios.get(run.computes)
        if measured:
            ratio = statistics.median(measured)
        else:
            ratio = EVAL_PER_STEP.get(run.computes, EVAL_PER_STEP_16)
        return self._eval_batches(run) * self._step_s(run) * ratio * self.stall()

    def _collect_s(self) -> float:
        """The collection after the comparison (mpdemo.engine.core.collect_garbage)."""
        measured = engine.next_collect_s()
        return FIRST_COLLECT_S * self.stall() if measured is None else measured

    def _remaining_rounds(self) -> float | None:
        """Interleaved: the rounds left at the pace of the rounds so far, then the evaluations."""
        live = [r for r in self.runs if not r.finished]
        if not live:  # the collection after the last run's end is what is left
            since = self.clock() - self._last_end if self._last_end is not None else 0.0
            return max(0.0, self._collect_s() - since)
        rates = [x for r in live if (x := self._rate(r)) is not None]
        if not rates:
            return None
        # The whole pace since the warm-up: a burst of load among the last rounds must not
        # move the estimate by itself (bench/eta.py).
        per_round = statistics.median(rates)
        rounds = max(r.steps - r.done_steps for r in live)
        # Then each run's evaluation, one after another, each at its own step time (an fp16
        # run's may be ten times an fp32 run's); the one under way has begun.
        pending = [r for r in live if not r.evaluated]
        evals = sum(self._eval_guess(r) for r in pending)
        began = self._eval_began()
        if pending and rounds <= 0 and began is not None:
            evals -= min(self._eval_guess(pending[0]), self.clock() - began)
        return rounds * per_round + evals + self._collect_s()

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


def estimate_for(
    configs: list[RunConfig],
    ev: GridPlanned,
    clock: Callable[[], float] = time.monotonic,
    previous: GridEstimate | None = None,
) -> GridEstimate:
    """The estimate after a plan event: the interleaved runs' own (one already running keeps
    the rounds it timed), or one run after another's from their own steps."""
    if ev.interleaved:
        if previous is not None and previous.interleaved:
            return previous
        return GridEstimate(configs, None, clock=clock, interleaved=True)
    return GridEstimate(configs, None, clock=clock)


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
