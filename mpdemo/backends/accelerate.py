"""Hugging Face Accelerate: the course's Accelerator listing, one process or many."""

from __future__ import annotations

from typing import TYPE_CHECKING, Any

from ..registry import PRECISIONS

if TYPE_CHECKING:
    import torch

    from ..config import RunConfig
    from .hooks import StepHooks

# The loop's inputs: parameter name -> the attribute of prepare()'s result it is. Accelerate
# takes the CPU-side loaders: accelerator.prepare() moves (and, on several processes, shards) them.
INPUTS = {
    "model": "model",
    "optimizer": "optimizer",
    "lr_scheduler": "lr_scheduler",
    "train_dataloader": "raw_train_loader",
    "eval_dataloader": "raw_eval_loader",
}


def settings(cfg: RunConfig, device: torch.device, task: str) -> dict[str, Any]:
    """The loop's settings for this run: Accelerate's precision name, device, loss scaler."""
    return {
        "mixed_precision": PRECISIONS[cfg.precision].accelerate,
        "cpu": device.type == "cpu",
        "loss_scaling": cfg.loss_scaling,
        "init_scale": cfg.init_scale,
        "growth_interval": cfg.growth_interval,
    }


def reset_accelerate_state() -> None:
    """Forget the previous run's Accelerator so the next one may pick another mixed_precision."""
    from accelerate.state import AcceleratorState, GradientState, PartialState

    # Keep PartialState (the process group) when launched on several processes.
    distributed = PartialState._shared_state != {} and PartialState().num_processes > 1
    AcceleratorState._reset_state(reset_partial_state=not distributed)
    GradientState._reset_state()


def train_loop(
    model: Any,
    optimizer: Any,
    lr_scheduler: Any,
    train_dataloader: Any,
    eval_dataloader: Any,
    rec: StepHooks,
    *,
    mixed_precision: str,
    cpu: bool,
    loss_scaling: bool,
    init_scale: float,
    growth_interval: int,
) -> None:
    """The course's Accelerator loop: accelerator.prepare, then accelerator.backward."""
    from accelerate import Accelerator
    from accelerate.utils import DataLoaderConfiguration, GradScalerKwargs

    # Accelerate wraps the forward pass in autocast and owns the GradScaler. With
    # mixed_precision="fp16" on a CPU, accelerate 1.15 sets neither: the run is plain fp32.
    accelerator = Accelerator(
        mixed_precision=mixed_precision,
        cpu=cpu,  # the device this run chose, even where a GPU is present
        # GradScalerKwargs: the run's init_scale, growth_interval and loss scaling on/off
        kwargs_handlers=[
            GradScalerKwargs(
                init_scale=init_scale, growth_interval=growth_interval, enabled=loss_scaling
            )
        ],
        # split_batches: the batch size is the global batch, shared out over the processes
        dataloader_config=DataLoaderConfiguration(split_batches=True),
    )
    # The eval loader too: on several processes each one evaluates its share of the rows.
    model, optimizer, train_dataloader, eval_dataloader, lr_scheduler = accelerator.prepare(
        model, optimizer, train_dataloader, eval_dataloader, lr_scheduler
    )
    model.train()  # from_pretrained returns a model in eval mode (dropout off)
    for batch in rec.steps(train_dataloader):  # mpdemo: times each step; stops at Stop
        outputs = model(**batch)  # the whole batch: input_ids, attention_mask and labels
        loss = outputs.loss
        accelerator.backward(loss)
        optimizer.step()
        # The shared learning-rate schedule; it does not step when the optimizer step was skipped.
        lr_scheduler.step()
        optimizer.zero_grad()
        rec.record(  # mpdemo: the loss averaged over processes, the scale and the skip, for the plots
            accelerator.reduce(loss.detach(), "mean"),
            accelerator.scaler,
            accelerator.optimizer_step_was_skipped,
        )
    rec.evaluate(model, eval_dataloader, accelerator.reduce)  # mpdemo: validation metrics, once
