"""What the Recorder watches beyond time and loss: gradient histograms (`--watch-grads N`), lost
updates (engine/master.py), bytes per parameter and the TF32 audit, their seconds off the clock."""

from __future__ import annotations

import statistics
from typing import TYPE_CHECKING, Any

import torch

from ..messages import Note
from ..registry import BACKENDS, PRECISIONS
from ..teach.rounding import log2_windows
from . import gradwatch, master
from .precision import tf32_in_effect

if TYPE_CHECKING:
    from .prepared import Prepared


class RunNumerics:
    """Per-run numerics hooks; idle (no hooks at all) unless the config asks for them."""

    def __init__(self, prep: Prepared) -> None:
        cfg = prep.cfg
        self.prep = prep
        self.precision = PRECISIONS[cfg.precision]
        # Watched against its own format (fp32's and tf32's: fp16's, what it flushes).
        fmt, every = self.precision.watch_format, cfg.watch_grads
        self.watch = gradwatch.GradWatch(prep.model, fmt, every) if every else None
        self.lost = master.LostUpdates(prep.optimizer) if cfg.tracks_updates else None
        self.lost_shares: list[float] = []
        self.bytes_per_param: dict[str, float] | None = None
        self.tf32: str | None = None
        self._step = 0
        # The scale the first backward used: init_scale where a GradScaler runs (Accelerate's
        # and the Trainer's fp16 set none on a CPU); later, the scale the previous step left.
        scaler_runs = prep.device.type != "cpu" or BACKENDS[cfg.backend].cpu_fp16
        self._scale = cfg.init_scale if cfg.scales_loss and scaler_runs else None

    def before_step(self, step: int) -> None:
        """Before step `step` (1-based) starts its clock: arm what watches it."""
        self._step = step
        if self.watch is not None:
            self.watch.arm(step)
        if self.lost is not None:
            self.lost.snapshot()
        if step == 1:
            self.tf32 = tf32_in_effect(self.prep.device)

    def excluded_s(self) -> float:
        """Seconds the hooks spent inside the step: not the training's time."""
        return (self.watch.spent if self.watch else 0.0) + (self.lost.spent if self.lost else 0.0)

    def after_step(self, scale: float | None) -> tuple[float | None, dict[str, Any] | None]:
        """(the step's lost-update share, its gradient histograms), after the clock stopped;
        `scale` is the one after this step's update (its gradients carried the one before)."""
        share = self.lost.take() if self.lost is not None else None
        if share is not None:
            self.lost_shares.append(share)
        grads = None
        if self.watch is not None:
            used = self._scale if self._scale is not None else 1.0
            grads = self.watch.collect(self._step, used)
            if grads is not None:  # with log2 of each watched format's edges
                grads["windows"] = log2_windows(gradwatch.WATCH_FORMATS)
        if self.bytes_per_param is None and self.prep.cfg.tracks_updates:
            self.bytes_per_param = master.bytes_per_param(self.prep.model, self.prep.optimizer)
        self._scale = scale
        return share, grads

    def close(self) -> None:
        """Remove every hook."""
        if self.watch is not None:
            self.watch.close()
        if self.lost is not None:
            self.lost.close()

    def notes(self) -> list[Note]:
        """The audit's sentences: TF32 in effect, stochastic rounding's source."""
        cfg, out = self.prep.cfg, []
        if self.tf32 is not None and self.precision.autocast_dtype is None:
            gpu = torch.cuda.get_device_name(self.prep.device)
            if self.precision.matmul_flags is not None:
                out.append(Note("tf32_ran", {"gpu": gpu}))
            else:
                out.append(Note("fp32_ran_tf32", {"setting": self.tf32, "gpu": gpu}))
        source = master.sr_source(cfg.weights)
        if source is not None:
            out.append(Note("weights_sr", {"source": source}))
        return out

    def summary_fields(self) -> dict[str, Any]:
        """The summary's numerics keys (only those that apply)."""
        out: dict[str, Any] = {}
        if self.lost_shares:
            out["lost_update_share"] = statistics.fmean(self.lost_shares)
        if self.bytes_per_param is not None:
            out["bytes_per_param"] = self.bytes_per_param
        return out

    def effective(self, effective: str | None) -> str | None:
        """A tf32 run's matmuls ran in TF32 when it was in effect (the probe sees fp32 outputs)."""
        flags_on = self.precision.matmul_flags is not None and self.tf32 is not None
        return self.precision.name if flags_on and effective == "fp32" else effective
