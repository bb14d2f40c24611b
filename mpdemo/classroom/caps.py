"""One visitor's fair share of a server: a hosted server caps one comparison's total time (one
visitor's days-long grid would hold the class for days), and each address holds at most its share
of gradio's server-wide slots (one stranger's 64 silent followers of a board left nobody else one)."""

from __future__ import annotations

import collections
import os
import threading
from collections.abc import Callable

from ..config import Limits
from ..messages import MpdemoError
from ..sweep.spec import SweepPlan, fitting_budget

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


def too_long(
    total: float, cap: float, pace: float = 0.0, runs: int = 1, lead: float = 0.0
) -> TooLong:
    """The one-line refusal: how long it would take, the cap, and the steps a run that fit."""
    args = {"need": round(total / 60.0, 1), "cap": round(cap / 60.0, 1)}
    steps = int((cap - lead) / (pace * max(1, runs))) if pace > 0 else 0
    if steps >= MIN_STEPS:
        return TooLong("comparison_too_long", steps=steps, **args)
    return TooLong("comparison_too_long_runs", **args)


def check_sweep(plan: SweepPlan, cap: float | None) -> None:
    """Raise TooLong when a sweep's plan is over the cap: it shares the comparisons' line."""
    if cap is None or plan.estimate_s <= cap:
        return
    args = {"need": round(plan.estimate_s / 60.0, 1), "cap": round(cap / 60.0, 1)}
    budget = fitting_budget(plan, cap)
    if budget is not None:
        raise TooLong("sweep_too_long_cap", budget=budget, **args)
    raise TooLong("sweep_too_long_cap_points", **args)


class ShareFull(MpdemoError):
    """This address holds its share of one kind of slot already."""


def per_address(limit: int) -> int:
    """One address's share of a server-wide limit: half of it, at least one."""
    return max(1, limit // 2)


class Shares:
    """What each address holds now, by kind ('viewer', 'follower')."""

    def __init__(self) -> None:
        self._lock = threading.Lock()
        self._held: collections.Counter[tuple[str, str]] = collections.Counter()

    def take(self, kind: str, client: str, limit: int, key: str) -> Callable[[], None]:
        """One more `kind` for `client`, and its release; ShareFull when it holds `limit`."""
        if not client:
            return lambda: None
        with self._lock:
            if self._held[kind, client] >= limit:
                raise ShareFull(key, limit=limit)
            self._held[kind, client] += 1
        done: list[bool] = []

        def release() -> None:
            with self._lock:
                if done:
                    return
                done.append(True)
                self._held[kind, client] -= 1
                if self._held[kind, client] <= 0:
                    del self._held[kind, client]

        return release
