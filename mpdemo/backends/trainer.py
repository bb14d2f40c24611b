"""The Hugging Face Trainer: the course's TrainingArguments listing, brought to transformers 5."""

from __future__ import annotations

import shutil
import tempfile
from typing import TYPE_CHECKING, Any

import torch

from .accelerate import reset_accelerate_state
from .common import Recorder, accuracy

if TYPE_CHECKING:
    from ..prepared import Prepared


def _reporter(rec: Recorder, holder: dict[str, Any]):  # -> TrainerCallback
    """A read-only TrainerCallback that turns the Trainer's hooks into the Recorder's calls."""
    from transformers import TrainerCallback

    class Reporter(TrainerCallback):
        def on_step_begin(self, args, state, control, **kwargs):  # noqa: ANN001
            rec.begin()

        def on_step_end(self, args, state, control, **kwargs):  # noqa: ANN001
            # The clock stops here; the loss arrives in on_log right after (logging_steps=1).
            self.dt = rec.lap()
            acc = holder["trainer"].accelerator
            scaler = acc.scaler
            self.scale = scaler.get_scale() if scaler is not None and scaler.is_enabled() else None
            self.skipped = acc.optimizer_step_was_skipped

        def on_log(self, args, state, control, logs=None, **kwargs):  # noqa: ANN001
            is_train_log = bool(logs) and "loss" in logs and "eval_loss" not in logs
            if is_train_log and not rec.end(logs["loss"], self.scale, self.skipped, dt=self.dt):
                control.should_training_stop = True

        def on_evaluate(self, args, state, control, metrics=None, **kwargs):  # noqa: ANN001
            keep = {k.removeprefix("eval_"): v for k, v in (metrics or {}).items()}
            rec.record_eval({k: keep[k] for k in ("loss", "accuracy") if k in keep})

    return Reporter()


def run(prep: Prepared, rec: Recorder) -> None:
    """Trainer + TrainingArguments(fp16/bf16, eval_strategy, max_steps); events via a callback."""
    from transformers import PrinterCallback, Trainer, TrainingArguments

    cfg, device = prep.cfg, prep.device
    reset_accelerate_state()
    output_dir = tempfile.mkdtemp(prefix="mpdemo-trainer-")
    holder: dict[str, Any] = {}

    def compute_metrics(eval_pred: Any) -> dict[str, float]:
        preds = eval_pred.predictions.argmax(-1).tolist()
        acc, _source = accuracy(preds, eval_pred.label_ids.tolist())
        return {"accuracy": acc}

    try:
        world = max(1, _world_size())
        args = TrainingArguments(
            output_dir=output_dir,
            max_steps=cfg.steps,
            per_device_train_batch_size=max(1, cfg.batch_size // world),
            per_device_eval_batch_size=cfg.batch_size,
            learning_rate=cfg.lr,
            fp16=cfg.precision == "fp16",
            bf16=cfg.precision == "bf16",
            use_cpu=device.type == "cpu",  # bf16 on a CPU needs it (transformers 5)
            eval_strategy="steps",  # the course's `evaluation_strategy`, renamed in transformers 5
            eval_steps=cfg.steps,  # one evaluation, at the end, like the other backends
            logging_strategy="steps",
            logging_steps=1,  # a loss per step for the plot
            logging_nan_inf_filter=False,  # show NaN/inf losses as they are: that is the lesson
            save_strategy="no",
            report_to="none",
            train_sampling_strategy="sequential",  # rows are already in the shared batch order
            dataloader_drop_last=False,  # the train rows are exactly steps x batch already
            dataloader_pin_memory=False,
            max_grad_norm=0.0,  # no clipping: the other two backends do not clip either
            seed=cfg.seed,
            disable_tqdm=True,
            log_level="error",
            prediction_loss_only=prep.task != "cls",
            # transformers 5.23 multiplies the loss by the process count when this is on, which
            # only cancels out for models that divide by num_items_in_batch; ours average per
            # batch, so with it on a 2-process run would train (and plot) at twice the loss.
            average_tokens_across_devices=False,
            ddp_find_unused_parameters=False,  # every parameter is used: skip DDP's extra walk
        )
        trainer = Trainer(
            model=prep.model,
            args=args,
            train_dataset=prep.train_dataset,
            eval_dataset=prep.eval_dataset,
            optimizers=(prep.optimizer, prep.lr_scheduler),
            compute_metrics=compute_metrics if prep.task == "cls" else None,
            callbacks=[_reporter(rec, holder)],
        )
        holder["trainer"] = trainer
        # disable_tqdm swaps the progress bar for a PrinterCallback: our Reporter speaks instead.
        trainer.remove_callback(PrinterCallback)
        _apply_scaler_settings(trainer, prep)
        rec.processes = trainer.accelerator.num_processes
        trainer.train()
    finally:
        shutil.rmtree(output_dir, ignore_errors=True)
        reset_accelerate_state()


def _apply_scaler_settings(trainer: Any, prep: Prepared) -> None:
    """Give the Trainer's scaler the run's init_scale/growth_interval/loss_scaling.

    TrainingArguments (transformers 5.23) has no switch for these, so we swap in an equivalent
    torch.amp.GradScaler before train() prepares the optimizer (which takes the scaler then).
    """
    acc = trainer.accelerator
    if acc.scaler is None:
        return
    cfg = prep.cfg
    acc.scaler = torch.amp.GradScaler(
        acc.device.type,
        init_scale=cfg.init_scale,
        growth_interval=cfg.growth_interval,
        enabled=cfg.loss_scaling,
    )


def _world_size() -> int:
    import os

    return int(os.environ.get("WORLD_SIZE", "1"))
