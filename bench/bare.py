"""The course's bare loops, on prepare(cfg)'s model and batches: the yardstick for the engine.

Each returns the wall-clock time stamps at the end of every step (perf_counter, after the
device finished), so throughput is measured the same way for the bare loop and the engine.
"""

from __future__ import annotations

import shutil
import tempfile
import time

import torch

from mpdemo.engine.precision import DTYPES, synchronize
from mpdemo.registry import PRECISIONS


def bare_torch(prep) -> list[float]:  # noqa: ANN001
    """The course's torch.autocast + GradScaler listing."""
    device_type = prep.device.type
    precision = prep.cfg.precision
    scaler = torch.amp.GradScaler(device_type, enabled=precision == "fp16")
    dtype = DTYPES.get(precision, torch.float32)
    stamps = []
    for batch in prep.train_dataloader:
        with torch.autocast(device_type=device_type, dtype=dtype, enabled=precision != "fp32"):
            outputs = prep.model(**batch)
            loss = outputs.loss
        scaler.scale(loss).backward()
        scaler.step(prep.optimizer)
        scaler.update()
        prep.optimizer.zero_grad()
        loss.item()  # the course prints the loss; the engine reads it too
        synchronize(prep.device)
        stamps.append(time.perf_counter())
    return stamps


def bare_accelerate(prep) -> list[float]:  # noqa: ANN001
    """The course's Accelerator listing."""
    from accelerate import Accelerator

    from mpdemo.backends.accelerate import reset_accelerate_state

    reset_accelerate_state()
    accelerator = Accelerator(
        mixed_precision=PRECISIONS[prep.cfg.precision].accelerate, cpu=prep.device.type == "cpu"
    )
    model, optimizer, loader, lr_scheduler = accelerator.prepare(
        prep.model, prep.optimizer, prep.raw_train_loader, prep.lr_scheduler
    )
    stamps = []
    for batch in loader:
        outputs = model(**batch)
        loss = outputs.loss
        accelerator.backward(loss)
        optimizer.step()
        lr_scheduler.step()
        optimizer.zero_grad()
        loss.item()
        synchronize(prep.device)
        stamps.append(time.perf_counter())
    reset_accelerate_state()
    return stamps


def bare_trainer(prep) -> list[float]:  # noqa: ANN001
    """The course's TrainingArguments listing (eval off), timed by a one-line callback."""
    from transformers import Trainer, TrainerCallback, TrainingArguments

    from mpdemo.backends.accelerate import reset_accelerate_state

    reset_accelerate_state()
    stamps: list[float] = []

    class Stamp(TrainerCallback):
        def on_step_end(self, args, state, control, **kwargs):  # noqa: ANN001
            synchronize(prep.device)
            stamps.append(time.perf_counter())

    out = tempfile.mkdtemp()
    try:
        cfg = prep.cfg
        args = TrainingArguments(
            output_dir=out,
            max_steps=cfg.steps,
            per_device_train_batch_size=cfg.batch_size,
            learning_rate=cfg.lr,
            fp16=cfg.precision == "fp16",
            bf16=cfg.precision == "bf16",
            use_cpu=prep.device.type == "cpu",
            report_to="none",
            save_strategy="no",
            train_sampling_strategy="sequential",
            max_grad_norm=0.0,
            disable_tqdm=True,
            log_level="error",
            logging_steps=1,  # a loss each step, as the engine reads it (the torch loop: loss.item())
        )
        Trainer(
            model=prep.model,
            args=args,
            train_dataset=prep.train_dataset,
            optimizers=(prep.optimizer, prep.lr_scheduler),
            callbacks=[Stamp()],
        ).train()
    finally:
        shutil.rmtree(out, ignore_errors=True)
        reset_accelerate_state()
    return stamps


BARE = {"torch": bare_torch, "accelerate": bare_accelerate, "trainer": bare_trainer}
