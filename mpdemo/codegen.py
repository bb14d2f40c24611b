"""A runnable script that reproduces one run with the backend's own code (the course's listing)."""

from __future__ import annotations

from .config import RunConfig

HEADER = '''"""Reproduce the mpdemo run {label!r} with {what}.

Run it from the mpdemo repository (or with mpdemo installed): python {filename}
mpdemo.prepare() builds the same model, optimizer and batches as the app did.
"""

import torch

from mpdemo import RunConfig, prepare

cfg = RunConfig(
{fields}
)
prep = prepare(cfg)
model, optimizer, lr_scheduler = prep.model, prep.optimizer, prep.lr_scheduler
'''

TORCH = """
# The course's listing, brought up to date: torch.amp works for "cuda" and "cpu" alike
# (torch.cuda.amp.GradScaler is deprecated), and the scaler is enabled only for fp16.
device_type = prep.device.type
scaler = torch.amp.GradScaler(
    device_type, init_scale={init_scale!r}, growth_interval={growth_interval}, enabled={scaler_on}
)
model.train()
for step, batch in enumerate(prep.train_dataloader, start=1):
    with torch.autocast(device_type=device_type, dtype={dtype}, enabled={autocast_on}):
        outputs = model(**batch)
        loss = outputs.loss
    scaler.scale(loss).backward()
    scaler.step(optimizer)
    scaler.update()
    optimizer.zero_grad()
    lr_scheduler.step()
    print(f"step {{step}}  loss {{loss.item():.4f}}  scale {{scaler.get_scale() if scaler.is_enabled() else None}}")
"""

ACCELERATE = """
from accelerate import Accelerator
from accelerate.utils import GradScalerKwargs

# On a CPU, mixed_precision="fp16" sets no autocast and no scaler (accelerate 1.15):
# the run is plain fp32. "bf16" autocasts on CPUs and GPUs alike.
accelerator = Accelerator(
    mixed_precision={mixed_precision!r},
    kwargs_handlers=[
        GradScalerKwargs(init_scale={init_scale!r}, growth_interval={growth_interval}, enabled={loss_scaling})
    ],
)
model, optimizer, train_dataloader, lr_scheduler = accelerator.prepare(
    model, optimizer, prep.raw_train_loader, lr_scheduler
)
model.train()
for step, batch in enumerate(train_dataloader, start=1):
    outputs = model(**batch)
    loss = outputs.loss
    accelerator.backward(loss)
    optimizer.step()
    lr_scheduler.step()
    optimizer.zero_grad()
    scale = accelerator.scaler.get_scale() if accelerator.scaler is not None else None
    print(f"step {{step}}  loss {{loss.item():.4f}}  scale {{scale}}  skipped {{accelerator.optimizer_step_was_skipped}}")
"""

TRAINER = """
import tempfile

import numpy as np
from transformers import Trainer, TrainingArguments


def compute_metrics(eval_pred):
    predictions = np.argmax(eval_pred.predictions, axis=-1)
    return {{"accuracy": float((predictions == eval_pred.label_ids).mean())}}


training_args = TrainingArguments(
    output_dir=tempfile.mkdtemp(),
    eval_strategy="steps",  # the course's `evaluation_strategy` was renamed in transformers 5
    eval_steps={steps},
    max_steps={steps},
    per_device_train_batch_size={batch_size},
    per_device_eval_batch_size={batch_size},
    learning_rate={lr!r},
    fp16={fp16},  # on a CPU this runs in fp32: no autocast, no scaler
    bf16={bf16},
    use_cpu={use_cpu},  # bf16 on a CPU needs it
    logging_steps=1,
    save_strategy="no",
    report_to="none",
    train_sampling_strategy="sequential",  # prep.train_dataset is already in batch order
    max_grad_norm=0.0,
)
trainer = Trainer(
    model=model,
    args=training_args,
    train_dataset=prep.train_dataset,
    eval_dataset=prep.eval_dataset,
    optimizers=(optimizer, lr_scheduler),
    compute_metrics={metrics},
)
trainer.train()
"""

COURSE = {
    "torch": """scaler = torch.amp.GradScaler()

for batch in train_dataloader:
    inputs, targets = batch["input_ids"], batch["labels"]
    with torch.autocast(device_type="cpu", dtype=torch.float16):
        outputs = model(inputs, labels=targets)
        loss = outputs.loss
    scaler.scale(loss).backward()
    scaler.step(optimizer)
    scaler.update()
    optimizer.zero_grad()
""",
    "accelerate": """accelerator = Accelerator(mixed_precision="fp16")

model, optimizer, train_dataloader, lr_scheduler = \\
    accelerator.prepare(model, optimizer, train_dataloader, lr_scheduler)

for batch in train_dataloader:
    inputs, targets = batch["input_ids"], batch["labels"]
    outputs = model(inputs, labels=targets)
    loss = outputs.loss
    accelerator.backward(loss)
    optimizer.step()
    optimizer.zero_grad()
""",
    "trainer": """training_args = TrainingArguments(
    output_dir="./results",
    evaluation_strategy="epoch",
    fp16=True
)

trainer = Trainer(
    model=model,
    args=training_args,
    train_dataset=dataset["train"],
    eval_dataset=dataset["validation"],
    compute_metrics=compute_metrics,
)

trainer.train()
""",
}

CHANGES = {
    "torch": [
        "torch.cuda.amp.GradScaler() → torch.amp.GradScaler(device_type): one API for GPU and CPU",
        "enabled=(precision == 'fp16'): fp32 and bf16 run the same loop with a no-op scaler",
        "device_type comes from the model's device, not a hard-coded 'cpu'",
        "on most CPUs fp16 autocast is many times slower than fp32; bf16 is the CPU's fast path",
    ],
    "accelerate": [
        "Accelerator(mixed_precision='fp16') on a CPU raises nothing but autocasts nothing: "
        "the run is plain fp32 (accelerate 1.15)",
        "GradScalerKwargs sets the scaler's init_scale and growth_interval",
        "accelerator.scaler.get_scale() and accelerator.optimizer_step_was_skipped show the scale",
    ],
    "trainer": [
        "evaluation_strategy → eval_strategy (transformers 5 removed the old name)",
        "TrainingArguments(fp16=True) on a CPU runs in fp32; bf16=True on a CPU needs use_cpu=True",
        "max_steps instead of epochs, so every backend trains the same number of steps",
    ],
}


def _fields(cfg: RunConfig) -> str:
    defaults = RunConfig()
    items = [
        f"    {k}={v!r},"
        for k, v in cfg.to_dict().items()
        if v != getattr(defaults, k) or k in ("model", "backend", "precision", "steps")
    ]
    return "\n".join(items)


def script_for(cfg: RunConfig) -> str:
    """The Python script that reproduces `cfg` with its backend's own code."""
    what = {"torch": "plain PyTorch AMP", "accelerate": "Accelerate", "trainer": "the Trainer"}
    filename = f"mpdemo_{cfg.backend}_{cfg.precision}.py"
    head = HEADER.format(
        label=cfg.label, what=what[cfg.backend], filename=filename, fields=_fields(cfg)
    )
    dtype = {"fp16": "torch.float16", "bf16": "torch.bfloat16"}.get(cfg.precision, "torch.float32")
    values = {
        "init_scale": cfg.init_scale,
        "growth_interval": cfg.growth_interval,
        "loss_scaling": cfg.loss_scaling,
        "scaler_on": cfg.precision == "fp16" and cfg.loss_scaling,
        "dtype": dtype,
        "autocast_on": cfg.precision != "fp32",
        "mixed_precision": {"fp32": "no"}.get(cfg.precision, cfg.precision),
        "steps": cfg.steps,
        "batch_size": cfg.batch_size,
        "lr": cfg.lr,
        "fp16": cfg.precision == "fp16",
        "bf16": cfg.precision == "bf16",
        "use_cpu": "prep.device.type == 'cpu'",
        "metrics": "compute_metrics if prep.task == 'cls' else None",
    }
    body = {"torch": TORCH, "accelerate": ACCELERATE, "trainer": TRAINER}[cfg.backend]
    return head + body.format(**values)
