"""A fair share of the line: how long one comparison may take on a shared (hosted) server.

One process trains one comparison at a time, so one visitor's days-long grid would make the
whole class wait days. On a hosted server a comparison has a total-time cap: nothing measures it
before it runs, so it is stopped once its own first rounds (or steps) say it would pass the cap,
with what would fit; the same comparison asked again is refused at once (line.py).
"""

from __future__ import annotations

import os
from typing import TYPE_CHECKING

from ..config import Limits, RunConfig
from ..messages import MpdemoError
from ..sweep.spec import SweepPlan, fitting_budget

if TYPE_CHECKING:
    from ..runs.estimate import GridEstimate

MIN_STEPS = 20  # fewer steps a run than this fit no curve worth reading
HOSTED_CAP_S = 15 * 60.0  # a lesson's worth: a class of 20 behind it waits its turn, not days


class TooLong(MpdemoError):
    """A comparison longer than this server's cap for one comparison."""


def cap_s() -> float | None:
    """Seconds one comparison may take here (MPDEMO_MAX_COMPARISON_S; hosted 900); None: no cap."""
    raw = os.environ.get("MPDEMO_MAX_COMPARISON_S", "").strip()
    if raw:
        try:
            value = float(raw)
        except ValueError:
            value = HOSTED_CAP_S
        return value if value > 0 else None
    return HOSTED_CAP_S if Limits.from_env().hosted else None


def fitting_steps(configs: list[RunConfig], estimate: GridEstimate, cap: float) -> int | None:
    """Steps a run that would bring this grid under cap, from its estimate; None: none would."""
    per_step = sum(r.predicted_step_s or 0.0 for r in estimate.runs)
    overhead = estimate.overhead_s() * len(configs)
    if per_step <= 0:
        return None
    steps = int((cap - overhead) / per_step)
    return steps if steps >= MIN_STEPS else None


def too_long(
    configs: list[RunConfig], total: float, cap: float, estimate: GridEstimate | None = None
) -> TooLong:
    """The one-line refusal: how long it would take, the cap, and what would fit."""
    steps = fitting_steps(configs, estimate, cap) if estimate is not None else None
    args = {"need": round(total / 60.0, 1), "cap": round(cap / 60.0, 1)}
    if steps is not None:
        return TooLong("comparison_too_long", steps=steps, **args)
    return TooLong("comparison_too_long_runs", **args)


def too_long_paced(runs: int, total: float, cap: float, pace: float, lead: float) -> TooLong:
    """The refusal of a comparison with no plan: the steps a run that fit at `pace` (seconds a
    step, its own steps measured it) after `lead` (seconds before its first step)."""
    args = {"need": round(total / 60.0, 1), "cap": round(cap / 60.0, 1)}
    steps = int((cap - lead) / (pace * max(1, runs))) if pace > 0 else 0
    if steps >= MIN_STEPS:
        return TooLong("comparison_too_long", steps=steps, **args)
    return TooLong("comparison_too_long_runs", **args)


def check_sweep(plan: SweepPlan, cap: float | None) -> None:
    """Raise TooLong when a sweep's plan (its estimate, from the rates it probed) is over the
    cap one comparison has here: it shares their line, so it shares their bound."""
    if cap is None or plan.estimate_s <= cap:
        return
    args = {"need": round(plan.estimate_s / 60.0, 1), "cap": round(cap / 60.0, 1)}
    budget = fitting_budget(plan, cap)
    if budget is not None:
        raise TooLong("sweep_too_long_cap", budget=budget, **args)
    raise TooLong("sweep_too_long_cap_points", **args)
