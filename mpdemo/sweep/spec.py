"""The size sweep's plan as torch-free records, the FLOPs rule and the estimates."""

from __future__ import annotations

import bisect
import contextlib
import os
from collections.abc import Mapping
from dataclasses import dataclass, field
from typing import TYPE_CHECKING

from ..config import Limits, RunConfig, on_hf_space
from ..runs.runner import BYTES_PER_PARAM
from ..runs.timing import MIN_ROUNDS
from .sizes import DEFAULT_BUDGET_S, DEFAULT_SIZES, Size, parse_sizes

if TYPE_CHECKING:
    import torch

SWEEP_VERSION = 1
POINT_CAP_S = 60.0  # one point may go past its share of the budget until it has MIN_ROUNDS rounds
# The whole sweep's cap in seconds (MPDEMO_MAX_SWEEP_S): a public Space shares 2 vCPUs.
MAX_SWEEP_S_LOCAL, MAX_SWEEP_S_HOSTED = 1800.0, 300.0


@dataclass(frozen=True)
class SweepSpec:
    """What a sweep measures: sizes x batch sizes x precisions, on the data and device of `base`."""

    sizes: tuple[Size, ...] = field(default_factory=lambda: parse_sizes(DEFAULT_SIZES))
    batch_sizes: tuple[int, ...] = (8, 32)
    precisions: tuple[str, ...] | None = None  # None: default_precisions(device)
    base: RunConfig = field(default_factory=RunConfig)  # dataset, device, seed, max_length...
    budget_s: float = DEFAULT_BUDGET_S  # the timing of all points together, at the least
    memory_size: Size | None = Size(64, 2)  # the memory anatomy's model; None: no anatomy
    memory_batch: int = 32

    def to_dict(self) -> dict[str, object]:
        """JSON-ready form."""
        return {
            "sizes": [s.name for s in self.sizes],
            "batch_sizes": list(self.batch_sizes),
            "precisions": list(self.precisions) if self.precisions else None,
            "base": self.base.to_dict(),
            "budget_s": self.budget_s,
            "memory_size": self.memory_size.name if self.memory_size else None,
            "memory_batch": self.memory_batch,
        }


FLOPS_RULE = "6 x parameters x tokens per step"  # forward 2, backward 4 (Kaplan et al. 2020)


def step_flops(params: int, batch_size: int, seq: int) -> float:
    """Model FLOPs of one training step by the rule: 6 x parameters x tokens (all parameters)."""
    return 6.0 * params * batch_size * seq


def max_sweep_s() -> float:
    """The sweep's cap in seconds: MPDEMO_MAX_SWEEP_S, else 300 s hosted and 1800 s elsewhere."""
    with contextlib.suppress(ValueError):  # unset or not a number: the default
        return float(os.environ.get("MPDEMO_MAX_SWEEP_S", ""))
    hosted = Limits.from_env().hosted or on_hf_space()
    return MAX_SWEEP_S_HOSTED if hosted else MAX_SWEEP_S_LOCAL


def activation_bytes(size: Size, batch: int, seq: int, bytes_per_value: int) -> int:
    """Activations a BERT saves for backward, by Korthikanti et al. (2022)."""
    h, a = size.hidden, size.heads
    per_layer = seq * batch * h * (34 + 5 * a * seq / h)
    return int(size.layers * per_layer * bytes_per_value / 2)


def memory_estimate(params: int, size: Size, batch: int, seq: int) -> int:
    """Bytes one fp32 step may hold: weights, gradients, AdamW's moments and activations."""
    return BYTES_PER_PARAM * params + activation_bytes(size, batch, seq, 4)


@dataclass(frozen=True)
class PointPlan:
    """One point before it runs: size, batch, parameters and what it is estimated to take."""

    size: Size
    batch_size: int
    params: int
    estimate_s: float
    memory_bytes: int

    def to_dict(self) -> dict[str, object]:
        """JSON-ready form."""
        return {
            "model": self.size.model,
            "hidden": self.size.hidden,
            "layers": self.size.layers,
            "params": self.params,
            "batch_size": self.batch_size,
            "estimate_s": self.estimate_s,
            "memory_bytes": self.memory_bytes,
        }


@dataclass(frozen=True)
class SweepPlan:
    """A checked sweep: its points in the order they run, the precisions, the estimate."""

    spec: SweepSpec
    device: torch.device
    precisions: tuple[str, ...]
    points: tuple[PointPlan, ...]
    rates: dict[str, float]  # FLOP/s the probe measured per precision
    estimate_s: float
    cap_s: float

    def point_budget_s(self) -> float:
        """Each point's share of the timing budget (it may go on to MIN_ROUNDS rounds)."""
        return self.spec.budget_s / max(1, len(self.points))


def _point_estimate(
    params: int, batch: int, seq: int, rates: Mapping[str, float], budget: float
) -> float:
    # interleave's rule: a warm-up step each, rounds up to the cap; building the model ~ a warm-up.
    steps = {p: step_flops(params, batch, seq) / max(r, 1.0) for p, r in rates.items()}
    one_round = sum(steps.values())
    rounds_s = min(max(budget, MIN_ROUNDS * one_round), max(3 * budget, POINT_CAP_S) + one_round)
    return 2 * one_round + rounds_s


def fitting_budget(plan: SweepPlan, cap_s: float) -> int | None:
    """The largest whole timing budget (s) whose estimate is within cap_s; None when 1 s is not."""
    seq, n = plan.spec.base.max_length, max(1, len(plan.points))

    def total(budget: float) -> float:
        return sum(
            _point_estimate(p.params, p.batch_size, seq, plan.rates, budget / n)
            for p in plan.points
        )

    budgets = range(1, max(1, int(plan.spec.budget_s)) + 1)
    fits = bisect.bisect_right(budgets, cap_s, key=total)  # the estimate grows with the budget
    return budgets[fits - 1] if fits else None
