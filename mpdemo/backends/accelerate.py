"""Hugging Face Accelerate: the course's Accelerator listing, one process or many."""

from __future__ import annotations

from typing import TYPE_CHECKING

from ..precision import ACCELERATE_NAMES
from .common import Recorder, eval_loop

if TYPE_CHECKING:
    from ..prepared import Prepared


def reset_accelerate_state() -> None:
    """Forget the previous run's Accelerator so the next one may pick another mixed_precision."""
    from accelerate.state import AcceleratorState, GradientState, PartialState

    # Keep PartialState (the process group) when launched on several processes.
    distributed = PartialState._shared_state != {} and PartialState().num_processes > 1
    AcceleratorState._reset_state(reset_partial_state=not distributed)
    GradientState._reset_state()


def make_accelerator(prep: Prepared):  # -> accelerate.Accelerator
    """Accelerator(mixed_precision=...) with the run's loss-scaler settings."""
    from accelerate import Accelerator
    from accelerate.utils import DataLoaderConfiguration, GradScalerKwargs

    cfg = prep.cfg
    reset_accelerate_state()
    scaler_kwargs = GradScalerKwargs(
        init_scale=cfg.init_scale, growth_interval=cfg.growth_interval, enabled=cfg.loss_scaling
    )
    return Accelerator(
        mixed_precision=ACCELERATE_NAMES[cfg.precision],
        cpu=prep.device.type == "cpu",
        kwargs_handlers=[scaler_kwargs],
        # split_batches: --batch-size is the global batch, shared out over the processes.
        dataloader_config=DataLoaderConfiguration(split_batches=True),
    )


def run(prep: Prepared, rec: Recorder) -> None:
    """accelerator.prepare + accelerator.backward; scale and skips from the accelerator."""
    accelerator = make_accelerator(prep)
    # Differs from torch: Accelerate wraps forward in autocast and owns the scaler.
    model, optimizer, train_dataloader, eval_dataloader, lr_scheduler = accelerator.prepare(
        prep.model, prep.optimizer, prep.raw_train_loader, prep.raw_eval_loader, prep.lr_scheduler
    )
    rec.processes = accelerator.num_processes
    model.train()
    for batch in train_dataloader:
        rec.begin()
        outputs = model(**batch)
        loss = outputs.loss
        accelerator.backward(loss)
        optimizer.step()
        lr_scheduler.step()  # AcceleratedScheduler does not step when the optimizer skipped
        optimizer.zero_grad(set_to_none=True)
        scaler = accelerator.scaler
        scale = scaler.get_scale() if scaler is not None and scaler.is_enabled() else None
        if accelerator.num_processes > 1:  # the curve shown is the global one
            loss = accelerator.reduce(loss.detach(), reduction="mean")
        if not rec.end(loss.detach(), scale, accelerator.optimizer_step_was_skipped):
            break
    if rec.should_evaluate():
        metrics = eval_loop(model, eval_dataloader, prep.task)
        if accelerator.num_processes > 1:
            metrics = {k: _mean_over_processes(accelerator, v) for k, v in metrics.items()}
        rec.record_eval(metrics)
    accelerator.free_memory()
    reset_accelerate_state()


def _mean_over_processes(accelerator, value: float) -> float:  # noqa: ANN001
    import torch

    t = torch.tensor([value], device=accelerator.device)
    return float(accelerator.reduce(t, reduction="mean"))
