"""A comparison's derived state, folded once by the runner that produces its events: every reader
(page, CLI, notebook, class) reads this one object, under `lock` from another thread."""

from __future__ import annotations

import threading
import time
from collections.abc import Callable
from typing import TYPE_CHECKING, Any

from ..config import RunConfig
from .fold import Run, RunFold

if TYPE_CHECKING:
    from ..events import Event, GradHistograms, GridPlanned
    from .estimate import GridEstimate

PACE_STEPS = 20  # a run's latest steps, whose mean is the status line's pace


class ComparisonState:
    """Fold, estimate, progress, notes: what a comparison's events add up to, kept as they come."""

    def __init__(
        self, configs: list[RunConfig], clock: Callable[[], float] = time.monotonic
    ) -> None:
        self.configs = list(configs)  # every run, repetitions included
        self.clock = clock
        self.lock = threading.RLock()
        self.fold = RunFold(self.configs)
        self.plan: GridPlanned | None = None  # this machine and its sentences, once planned
        self.estimate: GridEstimate | None = None  # seconds left, from the plan on
        self.machine: dict[str, Any] | None = None  # the machine the runs ran on, once known
        self.errors: list[tuple[str, dict[str, Any]]] = []  # (label, note) of failed runs
        # Each watched run's latest GradHistograms (the fold keeps a spread for the runs file).
        self.grads: dict[str, GradHistograms] = {}
        self._recent: dict[str, list[float]] = {}  # each run's last PACE_STEPS step times
        self.progress: dict[str, Any] = {
            "index": 0,
            "total": len(self.configs),
            "phase": "preparing",
            "label": self.configs[0].label if self.configs else "",
        }

    def __deepcopy__(self, memo: dict[int, Any]) -> ComparisonState:
        # gradio reads a gr.State's default through dataclasses.asdict (a deep copy, and a lock
        # has none): a copy starts empty, as a page that follows no comparison yet.
        return ComparisonState(self.configs, self.clock)

    def apply(self, ev: Event) -> Run | None:
        """Take one event; the run's record when it finished that run, else None."""
        with self.lock:
            finished = self.fold.apply(ev)
            if self.estimate is not None:
                self.estimate.update(ev)
            p = self.progress
            if ev.kind == "plan":
                from .estimate import GridEstimate  # a grid is running: torch is loaded

                self.plan = ev
                self.machine = self.machine or ev.machine
                # A repetition's plan keeps the rounds the runs already timed.
                self.estimate = self.estimate or GridEstimate(self.configs, self.clock)
            elif ev.kind == "start":
                p.update(index=ev.index, total=ev.total, label=ev.label, step=0, steps=ev.steps)
                p.update(phase="running", step_s=None)
            elif ev.kind == "grads":
                self.grads[ev.label] = ev
            elif ev.kind == "step":
                recent = self._recent.setdefault(ev.label, [])
                recent.append(ev.step_time_s)
                del recent[:-PACE_STEPS]
                p.update(label=ev.label, step=ev.step, step_s=sum(recent) / len(recent))
            elif ev.kind == "end" and ev.status == "failed":  # the status says why, in words
                keys = ev.summary.get("warning_keys") or []
                detail = {"key": "failed", "args": {"detail": ev.summary.get("error")}}
                self.errors.append((ev.label, keys[-1] if keys else detail))
            return finished

    def remaining_s(self) -> float | None:
        """Seconds left for the whole comparison: the estimate's, else the current run's pace."""
        with self.lock:
            if self.estimate is not None:
                return self.estimate.remaining_s()
            p = self.progress
            if p.get("step_s") and p.get("steps"):
                return (p["steps"] - p.get("step", 0)) * p["step_s"]
            return None
