"""Plain PyTorch AMP: the course's listing brought up to date (torch.amp, device-agnostic)."""

from __future__ import annotations

from typing import TYPE_CHECKING, Any

import torch

from ..engine import fp8
from ..engine.precision import autocast_supported
from ..registry import PRECISIONS

if TYPE_CHECKING:
    from ..config import RunConfig
    from .hooks import StepHooks

INPUTS = {
    "model": "model",
    "optimizer": "optimizer",
    "lr_scheduler": "lr_scheduler",
    "train_dataloader": "train_dataloader",
    "eval_dataloader": "eval_dataloader",
}


def settings(cfg: RunConfig, device: torch.device, task: str) -> dict[str, Any]:
    """The loop's settings for this run: device type, autocast dtype, scaler on or off."""
    p = PRECISIONS[cfg.precision]
    return {
        "device_type": device.type,
        "dtype": p.torch_autocast_dtype(),
        # fp32 runs the same loop with autocast off; so does a device that cannot autocast it.
        "autocast": p.autocast_dtype is not None and autocast_supported(device, cfg.precision),
        "loss_scaling": p.needs_scaler and cfg.loss_scaling,
        "init_scale": cfg.init_scale,
        "growth_interval": cfg.growth_interval,
        # fp8: torchao's Float8Linear layers, with mpdemo/engine/fp8.py's layer filter and config
        "float8": p.float8,
        "convert_to_float8_training": fp8.converter() if p.float8 else None,
        "float8_filter": fp8.linear_filter if p.float8 else None,
        "float8_config": fp8.float8_config if p.float8 else None,
    }


def train_loop(
    model: Any,
    optimizer: Any,
    lr_scheduler: Any,
    train_dataloader: Any,
    eval_dataloader: Any,
    rec: StepHooks,
    *,
    device_type: str,
    dtype: Any,
    autocast: bool,
    loss_scaling: bool,
    init_scale: float,
    growth_interval: int,
    float8: bool,
    convert_to_float8_training: Any,
    float8_filter: Any,
    float8_config: Any,
) -> None:
    """The course's torch.autocast + GradScaler loop."""
    # torch.cuda.amp.GradScaler is deprecated: torch.amp.GradScaler takes the device type
    # (GPU or CPU), and enabled=False turns it into a no-op, so fp32 and bf16 share this loop.
    scaler = torch.amp.GradScaler(
        device_type, init_scale=init_scale, growth_interval=growth_interval, enabled=loss_scaling
    )
    scale = scaler.get_scale()  # the scale before the first step (1.0 while the scaler is off)
    # fp8: torchao swaps nn.Linear layers for Float8Linear, whose matmuls run in fp8 with a
    # scale per tensor (E4M3 forward, E5M2 gradients); the first and last Linear stay in bf16,
    # like everything else under the bf16 autocast below. Weights stay the optimizer's tensors.
    if float8:
        convert_to_float8_training(
            model, module_filter_fn=float8_filter(model), config=float8_config()
        )
    model.train()  # from_pretrained returns a model in eval mode (dropout off)
    for batch in rec.steps(train_dataloader):  # mpdemo: times each step; stops at Stop
        # The model's own device type, not a hard-coded "cpu"; enabled=False for fp32.
        with torch.autocast(device_type=device_type, dtype=dtype, enabled=autocast):
            outputs = model(**batch)  # the whole batch: input_ids, attention_mask and labels
            loss = outputs.loss
        scaler.scale(loss).backward()
        scaler.step(optimizer)
        scaler.update()
        optimizer.zero_grad()
        # update() lowers the scale exactly when step() skipped the update (inf/NaN gradients):
        # like Accelerate and the Trainer, the learning-rate schedule waits for a real update.
        skipped = scaler.get_scale() < scale
        scale = scaler.get_scale()
        if not skipped:
            lr_scheduler.step()
        rec.record(loss, scaler, skipped)  # mpdemo: the step's loss, scale and skip, for the plots
    # Validation runs in the precision the model trained in.
    with torch.autocast(device_type=device_type, dtype=dtype, enabled=autocast):
        rec.evaluate(model, eval_dataloader)  # mpdemo: validation loss and accuracy, once
