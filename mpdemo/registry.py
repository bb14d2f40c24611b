"""One record per backend and per precision: every other module reads these tables.

Adding a precision is one `Precision` record here plus the code that runs it; adding a backend is
one `Backend` record plus its module in `mpdemo/backends/`. Nothing here imports torch: the app
and the CLI read these tables at start-up (dtypes are named by their torch attribute).
"""

from __future__ import annotations

import importlib
from collections.abc import Callable
from dataclasses import dataclass
from typing import Any


@dataclass(frozen=True)
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


@dataclass(frozen=True)
class Backend:
    """A training backend: the course's listing, brought up to date, in `mpdemo.backends`."""

    name: str  # the CLI's and RunConfig's value
    display: str  # in the UI's checkboxes and tables
    prose: str  # inside a sentence: "the Trainer does not autocast fp16 on CPU"
    module: str  # mpdemo.backends.<module>, whose run(prep, rec) trains
    multi_process: bool  # may run under `accelerate launch` on several processes

    def runner(self) -> Callable[[Any, Any], None]:
        """The backend's run(prep, rec), imported on first use (the Trainer costs seconds)."""
        return importlib.import_module(f"mpdemo.backends.{self.module}").run


PRECISIONS: dict[str, Precision] = {
    p.name: p
    for p in [
        Precision(
            "fp32",
            "float32",
            None,
            False,
            "no",
            None,
            32,
            8,
            23,
            "every device: the baseline",
        ),
        Precision(
            "bf16",
            "bfloat16",
            "bfloat16",
            False,
            "bf16",
            "bf16",
            16,
            8,
            7,
            "NVIDIA Ampere and newer GPUs; CPUs with AVX512-BF16 or AMX-BF16",
        ),
        Precision(
            "fp16",
            "float16",
            "float16",
            True,
            "fp16",
            "fp16",
            16,
            5,
            10,
            "NVIDIA GPUs with tensor cores (Volta and newer); CPUs with AVX512-FP16 or AMX-FP16",
        ),
        # fp8 (mpdemo/fp8.py): torchao's Float8Linear runs the matmuls in E4M3 (E5M2 where its
        # config says so) with per-tensor scales; the rest autocasts to bf16, as Accelerate's
        # mixed_precision="fp8" does. No GradScaler: each tensor carries its own scale. The
        # Trainer has no flag for it: its Accelerator gets it as Accelerate's config would.
        Precision(
            "fp8",
            "float8_e4m3fn",
            "bfloat16",
            False,
            "fp8",
            None,
            8,
            4,
            3,
            "NVIDIA GPUs with fp8 tensor cores: compute capability 8.9 and newer (Ada, Hopper)",
            needs_compute_capability=(8, 9),
        ),
    ]
}

BACKENDS: dict[str, Backend] = {
    b.name: b
    for b in [
        Backend("torch", "PyTorch AMP", "PyTorch AMP", "torch_amp", False),
        Backend("accelerate", "Accelerate", "Accelerate", "accelerate", True),
        Backend("trainer", "Trainer", "the Trainer", "trainer", True),
    ]
}

PRECISION_NAMES: tuple[str, ...] = tuple(PRECISIONS)  # grid order: fp32 (the baseline) first
BACKEND_NAMES: tuple[str, ...] = tuple(BACKENDS)


def precision(name: str) -> Precision:
    """The record of a precision name (KeyError for an unknown one)."""
    return PRECISIONS[name]


def backend(name: str) -> Backend:
    """The record of a backend name (KeyError for an unknown one)."""
    return BACKENDS[name]
