"""The time left for a comparison whose runs take turns, and the sentence when the pace changed."""

from __future__ import annotations

import math
import re
import statistics
import time
from collections.abc import Callable
from dataclasses import dataclass, field
from typing import TYPE_CHECKING

from .. import engine
from ..engine.precision import effective_precision
from ..messages import Note
from .notes import duration_text

if TYPE_CHECKING:
    from ..config import RunConfig
    from ..events import Event


@dataclass
class _RunPlan:
    config: RunConfig
    # The precision its matmuls compute in (fp16 through Accelerate on a CPU: fp32).
    computes: str
    step_times: list[float] = field(default_factory=list)
    stamps: list[float] = field(default_factory=list)  # the clock at each step: its wall rate
    finished: bool = False
    evaluated: bool = False  # its eval event came (its evaluation is behind it)


ROUNDS_COMPARED = 5  # rounds at the start and at the end whose paces tell the load changed
# An eval batch over a training step, until a run in the same precision has evaluated: 2-core AVX2
# EPYC, tiny-bert batch 32: fp32 0.29-0.33, fp16 0.19, bf16 0.24, so none carries over to another.
EVAL_PER_STEP = {"fp32": 0.3, "tf32": 0.3}  # tf32: fp32 weights and activations, not measured
EVAL_PER_STEP_16 = 0.22  # fp16, bf16 (and fp8, whose other layers run in bf16)
# The process's first collection after a comparison: 0.2 s quiet on 2 cores, stretched as rounds.
FIRST_COLLECT_S = 0.2


class GridEstimate:
    """Seconds left for the runs of a comparison taking turns (mpdemo.runs.together)."""

    def __init__(
        self, configs: list[RunConfig], clock: Callable[[], float] = time.monotonic
    ) -> None:
        self.clock = clock
        self.runs = [
            _RunPlan(c, effective_precision(c.backend, c.precision, "cpu")) for c in configs
        ]
        self.warmup = configs[0].warmup_steps if configs else 0
        # Evaluation seconds over batches x median step, by the precision a run computes in.
        self.eval_ratios: dict[str, list[float]] = {}
        self._last_step_at: float | None = None  # the clock at the latest step of any run
        self._last_end: float | None = None

    def _run(self, label: str) -> _RunPlan | None:
        return next((r for r in self.runs if r.config.label == label and not r.finished), None)

    def update(self, ev: Event) -> None:
        """Take one engine event (start/step/eval/end; others are ignored)."""
        now = self.clock()
        run = self._run(ev.label) if ev.kind in ("start", "step", "eval", "end") else None
        if ev.kind == "start" and run is not None:
            device = str(ev.device).split(":")[0]  # "cuda:0" -> "cuda"
            run.computes = effective_precision(run.config.backend, run.config.precision, device)
        elif ev.kind == "step":
            if run is not None:
                run.step_times.append(ev.step_time_s)
                run.stamps.append(now)
            self._last_step_at = now
        elif ev.kind == "eval" and run is not None:
            run.evaluated = True
            began, step = self._eval_began(), self._step_s(run)
            if began is not None and step > 0:
                ratio = (now - began) / (self._eval_batches(run) * step * self.stall())
                self.eval_ratios.setdefault(run.computes, []).append(ratio)
        elif ev.kind == "end":
            if run is not None:
                run.finished = True
            self._last_end = now

    def _rate(self, run: _RunPlan) -> float | None:
        """Wall seconds per step of a run since its warm-up; None before three such steps."""
        st = run.stamps
        if len(st) < self.warmup + 3:
            return None
        return (st[-1] - st[self.warmup]) / (len(st) - 1 - self.warmup)

    def load_factor(self) -> float | None:
        """The last rounds' pace over the first rounds' (None before enough): > 1, it got busier."""
        st = max((r.stamps for r in self.runs if not r.finished), key=len, default=[])
        first = self.warmup + ROUNDS_COMPARED
        if len(st) < first + ROUNDS_COMPARED:
            return None
        early = (st[first] - st[self.warmup]) / ROUNDS_COMPARED
        late = (st[-1] - st[-1 - ROUNDS_COMPARED]) / ROUNDS_COMPARED
        return late / early if early > 0 else None

    def _eval_batches(self, run: _RunPlan) -> int:
        m = re.search(r"\[:(\d+)\]", run.config.eval_slice or "")
        rows = int(m.group(1)) if m else 500
        return math.ceil(rows / max(1, run.config.batch_size))

    def _eval_began(self) -> float | None:
        """When the evaluation now running began: at the last step, or at the previous run's end."""
        if self._last_step_at is None:
            return None
        return max(self._last_step_at, self._last_end or self._last_step_at)

    def _step_s(self, run: _RunPlan) -> float:
        """A run's median step after its warm-up (its own timer: stalls left out)."""
        times = run.step_times
        return statistics.median(times[self.warmup :] or times) if times else 0.0

    def stall(self) -> float:
        """Wall seconds a round over its runs' median steps (>= 1): load and hand-overs add."""
        timed = [(rate, r) for r in self.runs if (rate := self._rate(r)) is not None]
        steps = sum(self._step_s(r) for _, r in timed)
        if not timed or steps <= 0:
            return 1.0
        return max(1.0, statistics.median(rate for rate, _ in timed) / steps)

    def _eval_guess(self, run: _RunPlan) -> float:
        """A run's evaluation: batches x median step x its precision's eval/step ratio x stall."""
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

    def remaining_s(self) -> float | None:
        """Seconds until the last run ends: rounds left, evaluations, collection (None: unknown)."""
        live = [r for r in self.runs if not r.finished]
        if not live:  # the collection after the last run's end is what is left
            since = self.clock() - self._last_end if self._last_end is not None else 0.0
            return max(0.0, self._collect_s() - since)
        rates = [x for r in live if (x := self._rate(r)) is not None]
        if not rates:
            return None
        # The whole pace since the warm-up: a burst among the last rounds must not move it.
        per_round = statistics.median(rates)
        rounds = max(r.config.steps - len(r.step_times) for r in live)
        # Then each run's evaluation at its own step time; the one under way has begun.
        pending = [r for r in live if not r.evaluated]
        evals = sum(self._eval_guess(r) for r in pending)
        began = self._eval_began()
        if pending and rounds <= 0 and began is not None:
            evals -= min(self._eval_guess(pending[0]), self.clock() - began)
        return rounds * per_round + evals + self._collect_s()


REVISE_BEYOND = 1.3  # rounds this much slower or faster than the first: the estimate says so


def eta_note(estimate: GridEstimate) -> Note | None:
    """'Re-estimated: the rounds go 3.1x slower than the first rounds ...', or None."""
    factor = estimate.load_factor()
    left = estimate.remaining_s()
    if factor is None or left is None or 1 / REVISE_BEYOND <= factor <= REVISE_BEYOND:
        return None
    key = "eta_rounds_slower" if factor > 1 else "eta_rounds_faster"
    return Note(key, {"factor": factor if factor > 1 else 1 / factor, "left": duration_text(left)})
