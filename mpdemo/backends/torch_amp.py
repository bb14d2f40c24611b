"""Plain PyTorch AMP: the course's listing brought up to date (torch.amp, device-agnostic)."""

from __future__ import annotations

import functools
from typing import TYPE_CHECKING

from ..precision import autocast, grad_scaler
from .common import Recorder, eval_loop

if TYPE_CHECKING:
    from ..prepared import Prepared


def run(prep: Prepared, rec: Recorder) -> None:
    """torch.autocast + torch.amp.GradScaler; the scale is read after every update()."""
    cfg, device = prep.cfg, prep.device
    model, optimizer, lr_scheduler = prep.model, prep.optimizer, prep.lr_scheduler
    # Differs from its siblings: we build autocast and the scaler ourselves. Both are no-ops
    # when disabled, so fp32, fp16 and bf16 share this one code path.
    amp = functools.partial(autocast, device, cfg.precision)
    scaler = grad_scaler(device, cfg.precision, cfg)
    prev_scale = cfg.init_scale
    model.train()
    for batch in prep.train_dataloader:
        rec.begin()
        with amp():
            outputs = model(**batch)
            loss = outputs.loss
        scaler.scale(loss).backward()
        scaler.step(optimizer)
        scaler.update()
        optimizer.zero_grad(set_to_none=True)
        scale = scaler.get_scale() if scaler.is_enabled() else None  # .item(): one sync per step
        # GradScaler halves the scale exactly when it skipped the optimizer step on inf/NaN.
        skipped = scale is not None and scale < prev_scale
        prev_scale = scale if scale is not None else prev_scale
        if not skipped:  # as Accelerate and the Trainer do: no schedule step without an update
            lr_scheduler.step()
        if not rec.end(loss.detach(), scale, skipped):
            break
    if rec.should_evaluate():
        metrics = eval_loop(model, prep.eval_dataloader, prep.task, amp)
        rec.record_eval(metrics)
