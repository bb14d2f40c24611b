"""The calibrated step as a record (seconds a step per computing precision, each one's verdict
against fp32), what the estimate and the sentences read. Torch-free.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any

from .timing import SpeedCheck


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
