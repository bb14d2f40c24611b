"""The Recorder, a backend's `rec` in the app: times each step, emits events, builds the Summary."""

from __future__ import annotations

import math
import statistics
import threading
import time
import traceback
from typing import TYPE_CHECKING, Any

import torch

from ..backends.hooks import StepHooks
from ..events import Emit, EvalEvent, GradHistograms, RunFinished, RunStarted, StepEvent
from ..files.summary import Summary
from ..log import run_logger
from ..messages import MpdemoError, Note
from ..registry import BACKENDS, PRECISIONS
from ..runs.timing import spread
from . import fp8
from .cores import Cores
from .memory import SavedBytes
from .numerics import RunNumerics
from .precision import DtypeProbe, autocast_supported, dtype_name, synchronize

if TYPE_CHECKING:
    from ..runs.turns import Lane
    from .prepared import Prepared

NONFINITE_PATIENCE = 5  # with a scaler, a few inf/NaN steps are normal: the scale backs off


class Recorder(StepHooks):
    """Times each step honestly, turns it into events, decides stop/diverge, builds the summary."""

    def __init__(
        self,
        prep: Prepared,
        emit: Emit,
        stop: threading.Event,
        *,
        index: int = 0,
        total: int = 1,
        lane: Lane | None = None,
    ) -> None:
        self.prep = prep
        self.lane = lane
        self.cfg = prep.cfg
        self.precision = PRECISIONS[prep.cfg.precision]  # the record of what the run asked for
        self.emit = emit
        self.stop = stop
        self.index, self.total = index, total
        self.run_id = f"{index}:{self.cfg.label}"
        self.log = run_logger(self.run_id)
        self.error_detail: str | None = None
        self.device = prep.device
        self.notes: list[Note] = list(prep.notes)
        self.step = 0
        self.losses: list[float] = []
        self.times: list[float] = []
        self.scales: list[float | None] = []
        self.skipped = 0
        self.status: str | None = None
        self.metrics: dict[str, float] = {}
        self.effective_dtype: torch.dtype | None = None
        self._nonfinite = 0
        self._t0 = self._start = self._origin = 0.0  # perf_counter at: step, run, comparison
        self._probe = DtypeProbe(prep.model)
        self.numerics = RunNumerics(prep)  # watched grads, lost updates, TF32
        self.fp8_audit: dict[str, Any] | None = None  # fp8 runs: fp8.audit of the model
        self._saved: SavedBytes | None = None  # armed for the first step only
        self.saved_activation_bytes: int | None = None
        # torch's threads (engine/cores.py): the comparison's, or (a run alone) its own, from start()
        self.cores: Cores | None = lane.pace.cores if lane is not None else None

    def start(self) -> None:
        """Emit RunStarted; arm the dtype probe and the memory baseline."""
        if self.cfg.unscaled:
            self.notes.append(Note("no_scaler"))
        mps_no_amp = self.device.type == "mps" and self.precision.autocast_dtype is not None
        if mps_no_amp and not autocast_supported(self.device, self.cfg.precision):
            self.notes.append(Note("mps_autocast_off", {"precision": self.cfg.precision}))
        if self.device.type == "cuda":
            torch.cuda.reset_peak_memory_stats(self.device)
        if self.lane is None:
            self.cores = Cores(self.device.type)
        self._start = time.perf_counter()
        self._origin = self.lane.pace.started_at if self.lane is not None else self._start
        self.emit(
            RunStarted(
                run_id=self.run_id,
                label=self.cfg.label,
                index=self.index,
                total=self.total,
                config=self.cfg.to_dict(),
                device=str(self.device),
                params=self.prep.params,
                requested_dtype=self.cfg.precision,
                steps=self.cfg.steps,
                warnings=[n.to_dict() for n in self.notes],
            )
        )

    def begin(self) -> None:
        """Call right before the step's forward pass."""
        synchronize(self.device)  # earlier queued GPU work must not be billed to this step
        if self.step == 0:
            # Count the activations kept for backward over the first step (a warm-up step,
            # left out of the timings, so the hooks' cost never reaches mean_step_s).
            self._saved = SavedBytes(self.prep.model).__enter__()
        self.numerics.before_step(self.step + 1)
        self._t0 = time.perf_counter()

    def lap(self) -> float:
        """Seconds since begin(), after the device finished the step's work."""
        synchronize(self.device)  # the step's GPU kernels have finished before we read the clock
        dt = time.perf_counter() - self._t0
        dt -= self.numerics.excluded_s()  # its hooks' seconds inside the step are not training
        self._close_saved()
        return dt

    def _close_saved(self) -> None:
        if self._saved is not None:
            self._saved.close()
            self.saved_activation_bytes = self._saved.bytes or None
            self._saved = None

    def end(
        self,
        loss: torch.Tensor | float,
        scale: float | None,
        skipped: bool = False,
        dt: float | None = None,
    ) -> bool:
        """Call after the optimizer step; returns False when the loop must stop."""
        dt = self.lap() if dt is None else dt
        loss_val = float(loss)  # .item(): a sync point, after the clock was read
        self.step += 1
        self.skipped += int(skipped)
        self.losses.append(loss_val)
        self.times.append(dt)
        self.scales.append(scale)
        bs = self.cfg.batch_size
        tokens = self.prep.tokens_per_sample
        lost, grads = self.numerics.after_step(scale)
        self.emit(
            StepEvent(
                run_id=self.run_id,
                label=self.cfg.label,
                step=self.step,
                loss=loss_val,
                loss_scale=scale,
                skipped=bool(skipped),
                step_time_s=dt,
                samples_per_s=bs / dt if dt > 0 else 0.0,
                tokens_per_s=bs * tokens / dt if tokens and dt > 0 else None,
                lr=float(self.prep.optimizer.param_groups[0]["lr"]),
                elapsed_s=time.perf_counter() - self._start,
                wall_s=time.perf_counter() - self._origin,
                lost_update_share=lost,
            )
        )
        if grads is not None:
            self.emit(GradHistograms(run_id=self.run_id, label=self.cfg.label, **grads))
        if self.lane is None and self.cores is not None:
            self.cores.tick(self.step)
        if self._diverged(loss_val, scale):
            self.status = "diverged"
            return False
        if self.stop.is_set():
            self.status = "stopped"
            self.notes.append(Note("stopped_by_user", {"step": self.step, "steps": self.cfg.steps}))
            return False
        return self.step < self.cfg.steps

    def _diverged(self, loss: float, scale: float | None) -> bool:
        if not math.isfinite(loss):
            self._nonfinite += 1
            # Without a scaler one NaN poisons the weights; with one, give it a few back-offs.
            diverged = scale is None or self._nonfinite >= NONFINITE_PATIENCE
            if diverged:
                self.notes.append(
                    Note("diverged_nonfinite", {"loss": str(loss), "step": self.step})
                )
            return diverged
        self._nonfinite = 0
        first = next((x for x in self.losses if math.isfinite(x)), loss)
        exploded = loss > max(50.0, 20.0 * first)
        if exploded:
            args = {"first": first, "loss": loss, "step": self.step}
            self.notes.append(Note("diverged_exploded", args))
        return exploded

    def should_evaluate(self) -> bool:
        """Evaluate only runs that trained to the end (a stopped run should stop now)."""
        return self.status is None

    def record_eval(self, metrics: dict[str, float]) -> None:
        """Emit the validation metrics."""
        self.metrics = {k: float(v) for k, v in metrics.items()}
        self.emit(EvalEvent(self.run_id, self.cfg.label, self.step, self.metrics))

    def fail(self, err: BaseException) -> None:
        """A backend raised: record it as the run's result."""
        self.status = "failed"
        if isinstance(err, MpdemoError):
            self.notes.append(err.note)
        else:
            detail = f"{type(err).__name__}: {err}".split("\n")[0][:300]
            self.notes.append(Note("failed", {"detail": detail}))
        # The person sees the one line above; the traceback goes to the log and the run's JSON.
        self.error_detail = "".join(traceback.format_exception(err))
        self.log.error("failed: %s", err, exc_info=err)

    def finish(self) -> Summary:
        """Build the summary, emit RunFinished, return the summary."""
        self._close_saved()  # a step that raised between begin() and lap() must not leave hooks
        self._probe.close()
        self.effective_dtype = self._probe.dtype
        self.numerics.close()
        self.notes += self.numerics.notes()
        # fp8: what ran is which layers torchao converted (none: the probe's bf16 stands)
        a = self.fp8_audit = fp8.audit(self.prep.model) if self.precision.float8 else None
        if a and a["float8_layers"]:
            self.effective_dtype = torch.float8_e4m3fn
            kept_in = dtype_name(self.precision.torch_autocast_dtype())  # the kept layers'
            args = {"float8": a["float8_layers"], "linear": a["linear_layers"], "dtype": kept_in}
            self.notes.append(Note("fp8_layers", {**args, "kept": len(a["kept"])}))
        if self.cores is not None:
            self.notes += self.cores.notes()
            if self.lane is None:
                self.cores.close()
        if self.processes > 1:
            args = {"n": self.processes, "batch": self.cfg.batch_size}
            self.notes.append(Note("distributed", args))
        status = self.status or "completed"
        summary = self.summary(status)
        self.log.info("%s after %d steps", status, self.step)
        try:
            self.emit(RunFinished(self.run_id, self.cfg.label, status, summary))
        finally:
            if self.lane is not None:  # the other runs go on without it
                self.lane.finish()
        return summary

    def _dtype_notes(self, effective: str | None) -> list[Note]:
        requested = self.cfg.precision
        if effective is None or effective == requested:
            return []
        # Its name, not its English prose ("the Trainer"): the sentence is said in every language.
        backend = BACKENDS[self.cfg.backend].display
        # Accelerate's and the Trainer's fp16 set no autocast on a CPU: the run computed in fp32.
        if self.precision.autocast_dtype == "float16" and effective == "fp32":
            args = {"effective": effective, "backend": backend, "device": self.device.type.upper()}
            return [Note("fp16_not_applied", args)]
        return [Note("dtype_mismatch", {"requested": requested, "effective": effective})]

    def summary(self, status: str) -> Summary:
        """What the run measured (mpdemo.files.summary.Summary)."""
        warm = self.times[self.cfg.warmup_steps :] or self.times
        mean_step = statistics.fmean(warm) if warm else None
        effective = self.numerics.effective(dtype_name(self.effective_dtype))
        notes = self._dtype_notes(effective) + self.notes
        # CUDA's allocator peak (a CPU process's RSS depends on what ran before the run)
        peak = torch.cuda.max_memory_allocated(self.device) if self.device.type == "cuda" else None
        cv = statistics.pstdev(warm) / mean_step if mean_step and len(warm) > 1 else None
        median = statistics.median(warm) if warm else None
        tokens = self.prep.tokens_per_sample
        bs = self.cfg.batch_size
        return Summary(
            label=self.cfg.label,
            backend=self.cfg.backend,
            precision=self.cfg.precision,
            device=str(self.device),
            model=self.cfg.model,
            dataset="random" if self.prep.task == "regression" else self.cfg.dataset,
            requested_dtype=self.cfg.precision,
            effective_dtype=effective,
            params=self.prep.params,
            steps=self.step,
            skipped_steps=self.skipped,
            final_loss=self.losses[-1] if self.losses else None,
            mean_step_s=mean_step,
            median_step_s=median,
            samples_per_s=bs / median if median else None,
            tokens_per_s=bs * tokens / median if median and tokens else None,
            step_time_cv=cv,
            step_time_mad=spread(warm),
            saved_activation_bytes=self.saved_activation_bytes,
            peak_mem_bytes=int(peak) if peak is not None else None,
            peak_mem_kind="cuda max_memory_allocated" if peak is not None else None,
            final_loss_scale=next((s for s in reversed(self.scales) if s is not None), None),
            status=status,
            train_rows=self.prep.train_rows,
            eval_rows=self.prep.eval_rows,
            processes=self.processes,
            elapsed_s=time.perf_counter() - self._start if self._start else 0.0,
            warnings=[n.text for n in notes],
            warning_keys=[n.to_dict() for n in notes],
            eval_loss=self.metrics.get("loss"),
            eval_accuracy=self.metrics.get("accuracy"),
            error_detail=self.error_detail,
            fp8_audit=self.fp8_audit,
            extra=self.numerics.summary_fields(),
        )
