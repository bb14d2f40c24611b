"""What a sweep streams: its plan, each measured point, the memory anatomy and the end."""

from __future__ import annotations

from dataclasses import dataclass
from typing import Literal

from ..events import _Event  # the run events' base: one JSON-ready form for every event
from ..files.machines import Machine
from ..runs.timing import SpeedCheck


@dataclass
class _Shape(_Event):
    """The model and batch a point or the memory anatomy measured, on which device."""

    model: str
    hidden: int
    layers: int
    params: int
    batch_size: int
    seq: int
    device: str

    def shape(self) -> dict[str, object]:
        """These fields alone, for the JSON and CSV rows."""
        return {k: getattr(self, k) for k in _Shape.__dataclass_fields__}


@dataclass
class SweepPlanned(_Event):
    """Before the first point: the machine, the points in order, the estimate."""

    machine: Machine
    device: str
    precisions: list[str]
    points: list[dict[str, object]]
    estimate_s: float
    seq: int
    kind: Literal["sweep_plan"] = "sweep_plan"


@dataclass
class SweepPoint(_Shape):
    """One size x batch, every precision timed interleaved against fp32."""

    index: int
    total: int
    step_s: dict[str, float]  # median step per precision
    checks: dict[str, dict[str, object]]  # precision -> SpeedCheck.to_dict(), fp32 left out
    samples_per_s: dict[str, float]
    tflops: dict[str, float]  # achieved, by FLOPS_RULE
    mfu: dict[str, float | None]  # tflops / the device's dense peak for the precision
    peak: dict[str, list[object] | None]  # [peak's precision, TFLOP/s] per precision, or None
    load: dict[str, float] | None
    wall_s: float
    kind: Literal["point"] = "point"

    def check(self, precision: str) -> SpeedCheck | None:
        """The precision's SpeedCheck against fp32 (None for fp32 itself)."""
        raw = self.checks.get(precision)
        return SpeedCheck.from_dict(raw) if raw else None

    def rows(self) -> list[dict[str, object]]:
        """One JSON/CSV row per precision (fp32's speed-up is 1 by definition, no interval)."""
        out = []
        for precision, step in self.step_s.items():
            c = self.check(precision)
            out.append(
                {
                    **self.shape(),
                    "precision": precision,
                    "step_s": step,
                    "speedup_vs_fp32": 1.0 if c is None else c.speedup,
                    "speedup_interval": c and c.interval,
                    "speed_verdict": c and c.verdict,
                    "speed_reason": c and c.reason,
                    "rounds": c and c.rounds,
                    "samples_per_s": self.samples_per_s.get(precision),
                    "tflops": self.tflops.get(precision),
                    "mfu": self.mfu.get(precision),
                }
            )
        return out


@dataclass
class SweepMemory(_Shape):
    """The memory anatomy of one size and batch, per precision, with Accelerate's estimate."""

    parts: dict[str, dict[str, object]]  # precision -> Anatomy.to_dict()
    estimate: dict[str, dict[str, int] | None]  # precision -> accelerate's parts and "training"
    notes: list[dict[str, object]]
    kind: Literal["memory"] = "memory"


@dataclass
class SweepFinished(_Event):
    """The sweep ended: how, how many points, and the crossover sentences from them."""

    status: str  # completed | stopped | failed
    points: int
    total: int
    wall_s: float
    notes: list[dict[str, object]]
    error: dict[str, object] | None = None  # the Note of what failed
    kind: Literal["sweep_end"] = "sweep_end"


SweepEvent = SweepPlanned | SweepPoint | SweepMemory | SweepFinished
