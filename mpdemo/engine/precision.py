"""The torch side of the precision records (mpdemo/registry.py): checks, autocast, GradScaler."""

from __future__ import annotations

import time
import warnings
from collections.abc import Callable, Iterator
from contextlib import contextmanager
from typing import TYPE_CHECKING, Any

import torch
from torch import nn

from ..messages import ConfigError
from ..registry import PRECISIONS
from . import fp8

if TYPE_CHECKING:
    from ..config import RunConfig

DTYPES: dict[str, torch.dtype] = {name: p.torch_dtype() for name, p in PRECISIONS.items()}
# float32 is "fp32" (tf32 stores fp32 too): the first name of each dtype
NAMES: dict[torch.dtype, str] = {d: n for n, d in reversed(DTYPES.items())}


def dtype_name(dtype: torch.dtype | None) -> str | None:
    """'fp16' for torch.float16 and so on; other dtypes by their torch name."""
    if dtype is None:
        return None
    return NAMES.get(dtype, str(dtype).replace("torch.", ""))


def resolve_device(requested: str) -> torch.device:
    """auto → CUDA, then Apple's MPS, then CPU; an explicit device that is missing is an error."""
    if requested == "auto":
        if torch.cuda.is_available():
            return torch.device("cuda")
        if torch.backends.mps.is_available():
            return torch.device("mps")
        return torch.device("cpu")
    if requested == "cuda" and not torch.cuda.is_available():
        raise ConfigError("no_cuda")
    if requested == "mps" and not torch.backends.mps.is_available():
        raise ConfigError("no_mps")
    return torch.device(requested)


def check_precision_on(device: torch.device, precision: str) -> None:
    """Refuse in one line what the hardware cannot do at all, read from the precision's record."""
    p = PRECISIONS[precision]
    if p.float8:  # its refusal names what this machine has, and torchao's version
        fp8.check(device)
    elif p.needs_compute_capability is not None:
        on_gpu = device.type == "cuda" and torch.cuda.is_available()
        cc = torch.cuda.get_device_capability(device) if on_gpu else None
        if cc is None:
            raise ConfigError(p.refusal, device=device.type)
        if cc < p.needs_compute_capability:
            gpu = torch.cuda.get_device_name(device)
            raise ConfigError(p.refusal, device=f"{gpu} (compute capability {cc[0]}.{cc[1]})")
    bf16_gpu = device.type == "cuda" and p.autocast_dtype == "bfloat16"
    if bf16_gpu and not p.float8 and not torch.cuda.is_bf16_supported():
        raise ConfigError("no_bf16_gpu", gpu=torch.cuda.get_device_name(device))


def effective_precision(backend: str, precision: str, device_type: str) -> str:
    """What a run's matmuls will compute in (fp16 through Accelerate/Trainer on a CPU: fp32)."""
    autocasts = device_type != "mps" or autocast_supported(torch.device("mps"), precision)
    return PRECISIONS[precision].runs_as(backend, device_type, autocasts)


def tf32_in_effect(device: torch.device) -> str | None:
    """The setting that makes fp32 matmuls run in TF32 on this (sm >= 8.0) GPU now, else None."""
    if device.type != "cuda" or not torch.cuda.is_available():
        return None
    if torch.cuda.get_device_capability(device) < (8, 0):
        return None
    mode = torch.get_float32_matmul_precision()
    if mode != "highest":
        return f'"{mode}"'
    return "allow_tf32" if torch.backends.cuda.matmul.allow_tf32 else None


TorchFlags = tuple[str, bool, bool]  # float32 matmul precision, cuBLAS TF32, cuDNN TF32


def torch_flags() -> TorchFlags:
    """The process-wide torch settings a run changes (a record's matmul_flags)."""
    cuda, cudnn = torch.backends.cuda.matmul, torch.backends.cudnn
    return torch.get_float32_matmul_precision(), cuda.allow_tf32, cudnn.allow_tf32


def set_torch_flags(flags: TorchFlags) -> None:
    """Put `flags` (torch_flags()'s tuple) in place."""
    torch.set_float32_matmul_precision(flags[0])
    torch.backends.cuda.matmul.allow_tf32 = flags[1]
    torch.backends.cudnn.allow_tf32 = flags[2]


@contextmanager
def matmul_precision(precision: str) -> Iterator[None]:
    """The record's process-wide matmul flags (tf32's) for the run, restored afterwards
    (runs taking turns in one thread have them swapped at every turn: mpdemo.runs.together)."""
    saved = torch_flags()
    set_torch_flags(PRECISIONS[precision].matmul_flags or saved)
    try:
        yield
    finally:
        set_torch_flags(saved)


def autocast_supported(device: torch.device, precision: str) -> bool:
    """Whether this torch build can autocast `precision` (its record's autocast dtype) here."""
    dtype = PRECISIONS[precision].torch_autocast_dtype()
    if dtype is None:  # fp32, tf32: no autocast
        return False
    # Entering the context is what raises or warns for an unsupported (device, dtype) pair.
    try:
        if not torch.amp.is_autocast_available(device.type):
            return False
        with warnings.catch_warnings(record=True) as caught:
            warnings.simplefilter("always")
            with torch.autocast(device.type, dtype=dtype):
                pass
    except (RuntimeError, AttributeError):
        return False
    return not any("disabl" in str(w.message).lower() for w in caught)


def autocast(device: torch.device, precision: str) -> Any:
    """torch.autocast for a precision; fp32 gives a disabled (no-op) context, one code path."""
    enabled = autocast_supported(device, precision)
    dtype = PRECISIONS[precision].torch_autocast_dtype() or torch.bfloat16
    return torch.autocast(device.type, dtype=dtype, enabled=enabled)


def grad_scaler(device: torch.device, precision: str, cfg: RunConfig) -> torch.amp.GradScaler:
    """torch.amp.GradScaler, enabled only for fp16 with loss scaling on (a no-op otherwise)."""
    return torch.amp.GradScaler(
        device.type,
        init_scale=cfg.init_scale,
        growth_interval=cfg.growth_interval,
        enabled=cfg.replace(precision=precision).scales_loss,
    )


class DtypeProbe:
    """A forward hook that records the dtype a matmul layer really produced, then removes itself."""

    def __init__(self, model: nn.Module) -> None:
        self.dtype: torch.dtype | None = None
        # The first matmul layer (nn.Linear or GPT-2's Conv1D, by name: transformers unimported).
        matmuls = (
            m for m in model.modules() if isinstance(m, nn.Linear) or type(m).__name__ == "Conv1D"
        )
        module = next(matmuls, None)
        self._handle = module.register_forward_hook(self._hook) if module is not None else None

    def _hook(self, _module: nn.Module, _inputs: Any, output: Any) -> None:
        if self.dtype is None and isinstance(output, torch.Tensor):
            self.dtype = output.dtype
        self.close()

    def close(self) -> None:
        """Remove the hook (idempotent)."""
        if self._handle is not None:
            self._handle.remove()
            self._handle = None


def synchronize(device: torch.device) -> None:
    """Wait for queued GPU work so the clock measures it (a no-op on CPU)."""
    if device.type == "cuda":
        torch.cuda.synchronize(device)
    elif device.type == "mps":
        torch.mps.synchronize()


def timed_step(
    model: nn.Module,
    optimizer: torch.optim.Optimizer,
    device: torch.device,
    precision: str,
    cfg: RunConfig,
    next_batch: Callable[[], Any],
) -> Callable[[], float]:
    """One real training step of `precision` (autocast, GradScaler, synchronize) that returns
    its seconds: what the size sweep times, interleaved, and the memory anatomy counts."""
    scaler = grad_scaler(device, precision, cfg)

    def step() -> float:
        batch = next_batch()
        synchronize(device)  # queued GPU work of the previous step is not this step's
        t0 = time.perf_counter()
        optimizer.zero_grad(set_to_none=True)  # first: the anatomy counts the step's gradients
        with autocast(device, precision):
            loss = model(**batch).loss
        scaler.scale(loss).backward()
        scaler.step(optimizer)
        scaler.update()
        synchronize(device)  # the clock reads when the GPU is done, not when it was queued
        return time.perf_counter() - t0

    return step
