"""One record per backend and per precision: every other module reads these tables.

Adding a precision is one `Precision` record here plus the code that runs it; adding a backend is
one `Backend` record plus its module in `mpdemo/backends/`. Nothing here imports torch: the app
and the CLI read these tables at start-up (dtypes are named by their torch attribute).
"""

from __future__ import annotations

import importlib
from dataclasses import dataclass
from types import ModuleType
from typing import Any


@dataclass(frozen=True, kw_only=True)
class Precision:
    """A precision the app trains in, and how each library is told to use it."""

    name: str  # the CLI's and RunConfig's value
    dtype: str  # torch attribute of the number format, e.g. "float16"
    autocast_dtype: str | None  # what torch.autocast runs matmuls in; None: no autocast
    needs_scaler: bool  # a GradScaler guards it against underflow (only fp16)
    accelerate: str  # Accelerator(mixed_precision=...)
    trainer_flag: str | None  # the TrainingArguments flag set to True (None: none)
    bits: int
    exponent_bits: int
    mantissa_bits: int
    # What hardware has fast kernels for it: an explanation shown next to a measurement,
    # never a claim about the machine at hand (the calibrated step decides that).
    fast_on: str
    # Only trains where the hardware has it (fp8): checked before anything loads.
    needs_compute_capability: tuple[int, int] | None = None

    def torch_dtype(self) -> Any:
        """The torch dtype of the number format (imports torch)."""
        import torch

        return getattr(torch, self.dtype)

    def torch_autocast_dtype(self) -> Any:
        """The dtype autocast runs in, or None when the precision does not autocast."""
        import torch

        return getattr(torch, self.autocast_dtype) if self.autocast_dtype else None


@dataclass(frozen=True, kw_only=True)
class Backend:
    """A training backend: the course's listing, brought up to date, in `mpdemo.backends`."""

    name: str  # the CLI's and RunConfig's value
    display: str  # in the UI's checkboxes and tables
    prose: str  # inside a sentence: "the Trainer does not autocast fp16 on CPU"
    module: str  # mpdemo.backends.<module>: its INPUTS, settings() and train_loop()
    multi_process: bool  # may run under `accelerate launch` on several processes
    # Its loop makes an Accelerator (directly or through the Trainer): Accelerate's process-wide
    # state is reset before and after, so the next run may pick another mixed_precision.
    uses_accelerate: bool = False
    # Autocasts fp16 on a CPU. Accelerate 1.15's and the Trainer's fp16 set no autocast and no
    # scaler there (DESIGN.md), so those runs compute in fp32; each run's dtype audit checks it.
    cpu_fp16: bool = True

    def load(self) -> ModuleType:
        """The backend's module, imported on first use (the Trainer costs seconds)."""
        return importlib.import_module(f"mpdemo.backends.{self.module}")


PRECISIONS: dict[str, Precision] = {
    p.name: p
    for p in [
        Precision(
            name="fp32",
            dtype="float32",
            autocast_dtype=None,
            needs_scaler=False,
            accelerate="no",
            trainer_flag=None,
            bits=32,
            exponent_bits=8,
            mantissa_bits=23,
            fast_on="every device: the baseline",
        ),
        Precision(
            name="bf16",
            dtype="bfloat16",
            autocast_dtype="bfloat16",
            needs_scaler=False,
            accelerate="bf16",
            trainer_flag="bf16",
            bits=16,
            exponent_bits=8,
            mantissa_bits=7,
            fast_on="NVIDIA Ampere and newer GPUs; CPUs with AVX512-BF16 or AMX-BF16",
        ),
        Precision(
            name="fp16",
            dtype="float16",
            autocast_dtype="float16",
            needs_scaler=True,
            accelerate="fp16",
            trainer_flag="fp16",
            bits=16,
            exponent_bits=5,
            mantissa_bits=10,
            fast_on="NVIDIA GPUs with tensor cores (Volta and newer); CPUs with AVX512-FP16 or AMX-FP16",
        ),
        # tf32: fp32 weights and no autocast; torch lets the GPU's tensor cores take fp32
        # matmuls with their inputs rounded to 10 mantissa bits (allow_tf32 / "high" matmul
        # precision, set for the run and restored after: mpdemo/engine/precision.py). CUDA only,
        # compute capability 8.0 (Ampere) and newer; refused elsewhere.
        Precision(
            name="tf32",
            dtype="float32",
            autocast_dtype=None,
            needs_scaler=False,
            accelerate="no",
            trainer_flag="tf32",
            bits=19,
            exponent_bits=8,
            mantissa_bits=10,
            fast_on="NVIDIA GPUs with compute capability 8.0 and newer (Ampere, Ada, Hopper)",
            needs_compute_capability=(8, 0),
        ),
        # fp8 (mpdemo/fp8.py): torchao's Float8Linear runs the matmuls in E4M3 (E5M2 where its
        # config says so) with per-tensor scales; the rest autocasts to bf16, as Accelerate's
        # mixed_precision="fp8" does. No GradScaler: each tensor carries its own scale. The
        # Trainer has no flag for it: its Accelerator gets it as Accelerate's config would.
        Precision(
            name="fp8",
            dtype="float8_e4m3fn",
            autocast_dtype="bfloat16",
            needs_scaler=False,
            accelerate="fp8",
            trainer_flag=None,
            bits=8,
            exponent_bits=4,
            mantissa_bits=3,
            fast_on="NVIDIA GPUs with fp8 tensor cores: compute capability 8.9 and newer (Ada, Hopper)",
            needs_compute_capability=(8, 9),
        ),
    ]
}

BACKENDS: dict[str, Backend] = {
    b.name: b
    for b in [
        Backend(
            name="torch",
            display="PyTorch AMP",
            prose="PyTorch AMP",
            module="torch_amp",
            multi_process=False,
        ),
        Backend(
            name="accelerate",
            display="Accelerate",
            prose="Accelerate",
            module="accelerate",
            multi_process=True,
            uses_accelerate=True,
            cpu_fp16=False,
        ),
        Backend(
            name="trainer",
            display="Trainer",
            prose="the Trainer",
            module="trainer",
            multi_process=True,
            uses_accelerate=True,
            cpu_fp16=False,
        ),
    ]
}

PRECISION_NAMES: tuple[str, ...] = tuple(PRECISIONS)  # grid order: fp32 (the baseline) first
BACKEND_NAMES: tuple[str, ...] = tuple(BACKENDS)
