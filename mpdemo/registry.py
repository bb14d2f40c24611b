"""One record per backend and per precision: the rest read its fields, never its name. No torch."""

from __future__ import annotations

import importlib
from dataclasses import dataclass
from types import ModuleType
from typing import Any


@dataclass(frozen=True, kw_only=True)
class Precision:
    """A precision the app trains in: where it runs, how each library is told to use it."""

    name: str  # the CLI's and RunConfig's value
    dtype: str  # torch attribute of what its tensors hold, e.g. "float16"
    format: str  # its number format in mpdemo.teach.formats/rounding: bits, range, rounding
    accelerate: str  # Accelerator(mixed_precision=...)
    trainer_flag: str | None = None  # the TrainingArguments flag set to True
    autocast_dtype: str | None = None  # what torch.autocast runs matmuls in; None: no autocast
    needs_scaler: bool = False  # a GradScaler guards it against underflow (only fp16)
    watch_format: str = "fp16"  # the format its gradients are watched against (gradwatch)
    # checked before anything loads; elsewhere refused by the message key `refusal` ({device})
    needs_compute_capability: tuple[int, int] | None = None
    refusal: str = ""
    # Process-wide (matmul precision, cuBLAS TF32, cuDNN TF32), set for its run's turns only.
    matmul_flags: tuple[str, bool, bool] | None = None
    float8: bool = False  # torchao's Float8Linear layers run its matmuls (mpdemo/engine/fp8.py)

    def torch_dtype(self) -> Any:
        """The torch dtype of what its tensors hold (imports torch)."""
        import torch

        return getattr(torch, self.dtype)

    def torch_autocast_dtype(self) -> Any:
        """The dtype autocast runs in, or None when the precision does not autocast."""
        import torch

        return getattr(torch, self.autocast_dtype) if self.autocast_dtype else None

    def runs_as(self, backend: str, device_type: str, autocasts: bool = True) -> str:
        """What its matmuls compute in: fp32 where its autocast does not apply (`autocasts`)."""
        if self.autocast_dtype is None:
            return self.name
        b = BACKENDS.get(backend)
        if device_type == "cpu" and self.autocast_dtype == "float16" and b and not b.cpu_fp16:
            return "fp32"
        return self.name if autocasts else "fp32"


@dataclass(frozen=True, kw_only=True)
class Backend:
    """A training backend: the course's listing, brought up to date, in `mpdemo.backends`."""

    name: str  # the CLI's and RunConfig's value
    display: str  # in the UI's checkboxes and tables
    module: str  # mpdemo.backends.<module>: its INPUTS, settings() and train_loop()
    # Accelerate's process-wide state is reset around it: the next run may pick another precision.
    uses_accelerate: bool = False
    # Autocasts fp16 on a CPU (Accelerate's and the Trainer's fp16 run in fp32 there: DESIGN.md).
    cpu_fp16: bool = True

    def load(self) -> ModuleType:
        """The backend's module, imported on first use (the Trainer costs seconds)."""
        return importlib.import_module(f"mpdemo.backends.{self.module}")


PRECISIONS: dict[str, Precision] = {
    p.name: p
    for p in [
        Precision(name="fp32", dtype="float32", format="fp32", accelerate="no"),
        Precision(
            name="bf16",
            dtype="bfloat16",
            format="bf16",
            autocast_dtype="bfloat16",
            accelerate="bf16",
            trainer_flag="bf16",
            watch_format="bf16",
        ),
        Precision(
            name="fp16",
            dtype="float16",
            format="fp16",
            autocast_dtype="float16",
            needs_scaler=True,
            accelerate="fp16",
            trainer_flag="fp16",
        ),
        # tf32: fp32 matmuls on the tensor cores, inputs rounded to 10 mantissa bits, set for its
        # turns only (TrainingArguments(tf32=True) would set it for the whole process).
        Precision(
            name="tf32",
            dtype="float32",
            format="tf32",
            accelerate="no",
            needs_compute_capability=(8, 0),
            refusal="tf32_needs_gpu",
            matmul_flags=("high", True, True),
        ),
        # fp8: torchao's Float8Linear, per-tensor scales (no GradScaler), the rest in bf16 autocast,
        # as Accelerate's mixed_precision="fp8" does.
        Precision(
            name="fp8",
            dtype="float8_e4m3fn",
            format="e4m3",
            autocast_dtype="bfloat16",
            accelerate="fp8",
            watch_format="e5m2",
            needs_compute_capability=(8, 9),
            float8=True,
        ),
    ]
}

BACKENDS: dict[str, Backend] = {
    b.name: b
    for b in [
        Backend(name="torch", display="PyTorch AMP", module="torch_amp"),
        Backend(
            name="accelerate",
            display="Accelerate",
            module="accelerate",
            uses_accelerate=True,
            cpu_fp16=False,
        ),
        Backend(
            name="trainer",
            display="Trainer",
            module="trainer",
            uses_accelerate=True,
            cpu_fp16=False,
        ),
    ]
}

PRECISION_NAMES: tuple[str, ...] = tuple(PRECISIONS)  # grid order: fp32 (the baseline) first
BACKEND_NAMES: tuple[str, ...] = tuple(BACKENDS)
