"""The Hugging Face Trainer: the course's TrainingArguments listing, brought to transformers 5."""

from __future__ import annotations

import os
import tempfile
from typing import TYPE_CHECKING, Any

import torch

from ..config import RunConfig, env_int
from ..registry import PRECISIONS
from .hooks import accuracy

if TYPE_CHECKING:
    from .hooks import StepHooks

INPUTS = {
    "model": "model",
    "optimizer": "optimizer",
    "lr_scheduler": "lr_scheduler",
    "train_dataset": "train_dataset",
    "eval_dataset": "eval_dataset",
}
OUTPUT_DIR = os.path.join(tempfile.gettempdir(), "mpdemo-trainer")


def compute_accuracy(eval_pred: Any) -> dict[str, float]:
    """The course's compute_metrics: accuracy of the arg-max class."""
    preds = eval_pred.predictions.argmax(-1).tolist()
    return {"accuracy": accuracy(preds, eval_pred.label_ids.tolist())}


def settings(cfg: RunConfig, device: torch.device, task: str) -> dict[str, Any]:
    """The loop's settings for this run: TrainingArguments' values and the loss scaler's."""
    world = env_int("WORLD_SIZE", 1)
    p = PRECISIONS[cfg.precision]
    return {
        "output_dir": OUTPUT_DIR,
        "max_steps": cfg.steps,
        "per_device_train_batch_size": max(1, cfg.batch_size // world),
        "per_device_eval_batch_size": cfg.batch_size,
        "fp16": p.trainer_flag == "fp16",
        "bf16": p.trainer_flag == "bf16",
        "use_cpu": device.type == "cpu",
        "seed": cfg.seed,
        "compute_metrics": compute_accuracy if task == "cls" else None,
        "prediction_loss_only": task != "cls",
        "loss_scaling": cfg.loss_scaling,
        "init_scale": cfg.init_scale,
        "growth_interval": cfg.growth_interval,
        "float8": p.float8,  # fp8: through the Trainer's Accelerator (mpdemo/engine/fp8.py)
    }


def train_loop(
    model: Any,
    optimizer: Any,
    lr_scheduler: Any,
    train_dataset: Any,
    eval_dataset: Any,
    rec: StepHooks,
    *,
    output_dir: str,
    max_steps: int,
    per_device_train_batch_size: int,
    per_device_eval_batch_size: int,
    fp16: bool,
    bf16: bool,
    use_cpu: bool,
    seed: int,
    compute_metrics: Any,
    prediction_loss_only: bool,
    loss_scaling: bool,
    init_scale: float,
    growth_interval: int,
    float8: bool,
) -> None:
    """The course's TrainingArguments + Trainer listing."""
    from transformers import Trainer, TrainingArguments

    training_args = TrainingArguments(
        output_dir=output_dir,  # the Trainer makes it; with save_strategy="no" it stays empty
        eval_strategy="steps",  # the course's `evaluation_strategy`, renamed in transformers 5
        fp16=fp16,  # on a CPU, transformers sets no autocast and no scaler for fp16: it runs fp32
        bf16=bf16,  # the other half-precision format; True for a bf16 run
        # mpdemo: the arguments below make this run match the other two backends' (the same
        # steps, batches, seed and evaluation), log a loss at every step, and save or print nothing
        eval_steps=max_steps,  # one evaluation, after the last step, like the other backends
        max_steps=max_steps,  # steps, not epochs: every backend trains the same steps
        use_cpu=use_cpu,  # bf16 on a CPU needs it
        per_device_train_batch_size=per_device_train_batch_size,  # the batch, over processes
        per_device_eval_batch_size=per_device_eval_batch_size,  # as the other backends evaluate
        seed=seed,  # the run's seed (the Trainer reseeds torch with it)
        logging_steps=1,  # a loss per step for the plot
        logging_nan_inf_filter=False,  # show NaN/inf losses as they are: that is the lesson
        save_strategy="no",  # a demo keeps no checkpoints
        report_to="none",  # no experiment tracker
        train_sampling_strategy="sequential",  # rows are already in the shared batch order
        dataloader_pin_memory=False,  # the other backends' loaders do not pin memory either
        max_grad_norm=0.0,  # no clipping: the other two backends do not clip either
        disable_tqdm=True,  # no progress bar
        log_level="error",  # no log lines between the steps
        prediction_loss_only=prediction_loss_only,  # True for a model without accuracy (an LM)
        # transformers 5.23 multiplies the loss by the process count when this is on, which
        # only cancels out for models that divide by num_items_in_batch; ours average per
        # batch, so with it on a 2-process run would train (and plot) at twice the loss.
        average_tokens_across_devices=False,
        ddp_find_unused_parameters=False,  # every parameter is used: skip DDP's extra walk
    )
    # fp8: TrainingArguments has no flag for it (transformers 5). Its mixed_precision is what
    # Accelerate's config (`accelerate launch --mixed_precision fp8`) sets and what the Trainer
    # gives its Accelerator, whose torchao backend then converts the Linear layers in train().
    if float8:
        training_args.mixed_precision = "fp8"
    trainer = Trainer(
        model=model,
        args=training_args,
        train_dataset=train_dataset,  # prepare()'s rows, laid out in batch order
        eval_dataset=eval_dataset,  # prepare()'s validation rows
        compute_metrics=compute_metrics,  # accuracy for a classifier, None for a language model
        optimizers=(optimizer, lr_scheduler),  # the optimizer and schedule every backend uses
    )
    # TrainingArguments has no setting for the loss scaler: for fp16 on a GPU, swap in a
    # GradScaler with the run's settings before train() hands it to the optimizer.
    if trainer.accelerator.scaler is not None:
        trainer.accelerator.scaler = torch.amp.GradScaler(
            trainer.accelerator.device.type,
            init_scale=init_scale,
            growth_interval=growth_interval,
            enabled=loss_scaling,
        )
    rec.attach(trainer)  # mpdemo: times each step, reports loss, scale and eval, stops at Stop
    trainer.train()
