"""This machine: names, instruction-set flags, library versions (and, below, a calibrated step).

`machine_info()` is cheap (no timing): it goes into every run's JSON. Every sentence the app
says about speed or memory is rendered from measurements on top of it, never written in advance.
"""

from __future__ import annotations

import datetime as _dt
import functools
import importlib.metadata
import os
import platform
import statistics
import threading
import time
from dataclasses import dataclass
from typing import Any

import torch

# The CPU flags that decide whether fp16/bf16 have hardware support on a CPU.
CPU_FLAGS = ("avx2", "avx512", "avx512_bf16", "avx512_fp16", "amx_bf16", "amx_fp16")
# Library versions worth recording with a run (gradio is the UI's, not the engine's: left out).
VERSIONED = ("torch", "transformers", "accelerate", "datasets")


def _private_flag(name: str) -> bool | None:
    """torch.cpu._is_<name>_supported(), or None when this torch build lacks it (private API)."""
    fn = getattr(torch.cpu, f"_is_{name}_supported", None)
    if fn is None:
        return None
    try:
        return bool(fn())
    except Exception:  # noqa: BLE001 - a private probe that misbehaves just means "unknown"
        return None


@functools.cache
def _proc_cpuinfo() -> tuple[str | None, frozenset[str]]:
    """(model name, flags) from /proc/cpuinfo on Linux; (None, empty) elsewhere."""
    try:
        with open("/proc/cpuinfo", encoding="utf-8", errors="replace") as f:
            text = f.read(200_000)
    except OSError:
        return None, frozenset()
    model: str | None = None
    flags: frozenset[str] = frozenset()
    for line in text.splitlines():
        key, _, value = line.partition(":")
        key = key.strip()
        if key == "model name" and model is None:
            model = value.strip()
        elif key in ("flags", "Features") and not flags:
            flags = frozenset(value.split())
        if model and flags:
            break
    return model, flags


def cpu_name() -> str:
    """The CPU's model string as the OS reports it (platform.processor() as the fallback)."""
    model, _ = _proc_cpuinfo()
    if model:
        return model
    if platform.system() == "Darwin":
        try:
            import subprocess

            out = subprocess.run(
                ["sysctl", "-n", "machdep.cpu.brand_string"],
                capture_output=True,
                text=True,
                timeout=2,
            )
            if out.stdout.strip():
                return out.stdout.strip()
        except (OSError, subprocess.SubprocessError):
            pass
    return platform.processor() or platform.machine() or "unknown CPU"


def cpu_capability() -> str | None:
    """The vector ISA torch's CPU kernels dispatch to ("AVX2", "AVX512", ...); None if unknown."""
    try:
        return str(torch.backends.cpu.get_cpu_capability())
    except Exception:  # noqa: BLE001 - older torch builds lack it
        return None


def cpu_flags() -> dict[str, bool]:
    """avx2/avx512/avx512_bf16/avx512_fp16/amx_bf16/amx_fp16: torch's probes, /proc/cpuinfo as fallback."""
    _, proc = _proc_cpuinfo()
    capability = cpu_capability() or ""
    # torch's own answers first (what its kernels will dispatch on); the OS's flags fill the gaps.
    torch_says = {
        "avx2": _private_flag("avx2"),
        "avx512": _private_flag("avx512"),
        "avx512_bf16": _private_flag("avx512_bf16"),
        "avx512_fp16": None,  # torch 2.13 has no probe for it
        "amx_bf16": _private_flag("amx_tile"),  # AMX tiles come with AMX-BF16 on every part so far
        "amx_fp16": _private_flag("amx_fp16"),
    }
    proc_names = {
        "avx2": ("avx2",),
        "avx512": ("avx512f",),
        "avx512_bf16": ("avx512_bf16",),
        "avx512_fp16": ("avx512_fp16",),
        "amx_bf16": ("amx_bf16",),
        "amx_fp16": ("amx_fp16",),
    }
    flags: dict[str, bool] = {}
    for name in CPU_FLAGS:
        value = torch_says[name]
        if value is None:
            value = any(p in proc for p in proc_names[name])
        flags[name] = bool(value)
    if capability.startswith("AVX512"):
        flags["avx512"] = True
        flags["avx2"] = True
    elif capability == "AVX2":
        flags["avx2"] = True
    return flags


def _version(dist: str) -> str | None:
    try:
        return importlib.metadata.version(dist)
    except importlib.metadata.PackageNotFoundError:
        return None


def _gpu_info() -> dict[str, Any] | None:
    """The first accelerator: CUDA (name, compute capability, bf16) or Apple's MPS; None on CPU only."""
    if torch.cuda.is_available():
        index = torch.cuda.current_device()
        major, minor = torch.cuda.get_device_capability(index)
        props = torch.cuda.get_device_properties(index)
        return {
            "kind": "cuda",
            "name": torch.cuda.get_device_name(index),
            "capability": f"{major}.{minor}",
            "bf16": bool(torch.cuda.is_bf16_supported()),
            "memory_bytes": int(props.total_memory),
            "count": torch.cuda.device_count(),
        }
    mps = getattr(torch.backends, "mps", None)
    if mps is not None and mps.is_available():
        return {"kind": "mps", "name": "Apple GPU (MPS)", "capability": None, "bf16": None}
    return None


@functools.cache
def _static_info() -> dict[str, Any]:
    """What does not change while the process lives (names, flags, versions)."""
    capability = cpu_capability()
    gpu = _gpu_info()
    return {
        "device_kind": gpu["kind"] if gpu else "cpu",
        "device_name": gpu["name"] if gpu else cpu_name(),
        "cpu": {
            "name": cpu_name(),
            "capability": capability,
            "flags": cpu_flags(),
            "cores": os.cpu_count(),
        },
        "gpu": gpu,
        "versions": {name: _version(name) for name in VERSIONED},
        "python": platform.python_version(),
        "platform": platform.platform(terse=True),
    }


def machine_info() -> dict[str, Any]:
    """This machine as a JSON-ready dict: device kind/name, CPU flags, GPU, versions, threads, date.

    Cheap (nothing is timed): the static part is cached once per process; the thread count and
    the date are read each call because a run may change the first.
    """
    info = dict(_static_info())
    info["cpu"] = dict(info["cpu"])
    info["torch_threads"] = torch.get_num_threads()
    info["date"] = _dt.datetime.now(_dt.UTC).isoformat(timespec="seconds")
    return info


def refresh_machine_info() -> dict[str, Any]:
    """Forget the cached names/flags and read them again (a GPU hot-plugged, a test's monkeypatch)."""
    _static_info.cache_clear()
    _proc_cpuinfo.cache_clear()
    return machine_info()


# --- memory: the bytes autograd keeps for backward ------------------------------------------


_CAST_OR_VIEW = (
    "ToCopyBackward",
    "TBackward",
    "TransposeBackward",
    "PermuteBackward",
    "ViewBackward",
    "UnsafeViewBackward",
    "ExpandBackward",
    "AliasBackward",
)


class SavedBytes:
    """Counts the bytes autograd saves for backward while active (torch saved_tensors_hooks).

    Counted: tensors the model computed (they have a grad_fn), each storage once. Left out: the
    batch (data, kept anyway), parameters and autocast's low-precision copies of them. What is
    left is the activations, which autocast stores in bf16/fp16 wherever it runs.
    """

    def __init__(self, model: torch.nn.Module | None = None) -> None:
        self.bytes = 0
        self._seen: set[int] = set()
        self._params = {p.data_ptr() for p in model.parameters()} if model is not None else set()
        self._ctx: Any = None

    def _pack(self, t: torch.Tensor) -> torch.Tensor:
        try:
            ptr = t.untyped_storage().data_ptr()
        except (RuntimeError, NotImplementedError):  # tensors without storage (sparse, meta)
            return t
        # Only what the model computed (it has a grad_fn): the batch and its casts are data.
        if t.grad_fn is None or ptr in self._seen or ptr in self._params or self._is_param_cast(t):
            return t
        self._seen.add(ptr)
        self.bytes += t.untyped_storage().nbytes()
        return t

    @staticmethod
    def _is_param_cast(t: torch.Tensor) -> bool:
        # A weight saved as autocast's cast and/or a view of it (Linear saves weight.t()):
        # cast/view nodes only, back to a leaf (AccumulateGrad).
        fn = t.grad_fn
        for _ in range(8):
            if fn is None:
                return False
            name = type(fn).__name__
            if name == "AccumulateGrad":
                return True
            if not name.startswith(_CAST_OR_VIEW):
                return False
            inputs = [f for f, _ in fn.next_functions if f is not None]
            if len(inputs) != 1:
                return False
            fn = inputs[0]
        return False

    @staticmethod
    def _unpack(t: torch.Tensor) -> torch.Tensor:
        return t

    def __enter__(self) -> SavedBytes:
        self._ctx = torch.autograd.graph.saved_tensors_hooks(self._pack, self._unpack)
        self._ctx.__enter__()
        return self

    def __exit__(self, *exc: Any) -> None:
        self.close()

    def close(self) -> None:
        """Pop the hooks (idempotent): the thread's later steps run without them."""
        if self._ctx is not None:
            ctx, self._ctx = self._ctx, None
            ctx.__exit__(None, None, None)


# --- calibration: the real step, timed for a moment before the runs ---------------------------

# Facts from DESIGN.md (accelerate 1.15, transformers 5): on a CPU, Accelerate's and the
# Trainer's fp16 set no autocast and no scaler, so those runs compute in fp32. The dtype audit
# of each run checks this after the fact.
_NO_CPU_FP16 = ("accelerate", "trainer")
CALIBRATION_BUDGET_S = 10.0  # all precisions together, warm-ups included: seconds, not minutes
TIMED_STEPS = 3


def effective_precision(backend: str, precision: str, device_type: str) -> str:
    """What a run's matmuls will compute in (fp16 through Accelerate/Trainer on a CPU: fp32)."""
    if precision == "fp32":
        return "fp32"
    if device_type == "cpu" and precision == "fp16" and backend in _NO_CPU_FP16:
        return "fp32"
    if device_type == "mps":
        from .precision import autocast_supported

        if not autocast_supported(torch.device("mps"), precision):
            return "fp32"
    return precision


@dataclass(frozen=True)
class Calibration:
    """Seconds per training step for one model/data/batch/device, per computing precision."""

    key: tuple[Any, ...]
    device: str
    step_s: dict[str, float]  # median of the timed steps
    spread: dict[str, float]  # (slowest - fastest) / median of the timed steps: the noise
    setup_s: float  # prepare(): data, tokenizer, model
    eval_batches: int
    calibration_s: float  # how long the whole calibration took
    threads: int

    def ratio(self, precision: str) -> float | None:
        """Step time of `precision` over fp32's (None when either was not measured)."""
        if precision not in self.step_s or "fp32" not in self.step_s:
            return None
        return self.step_s[precision] / max(self.step_s["fp32"], 1e-12)

    def noise(self, precision: str) -> float:
        """Relative noise of a ratio to fp32: both spreads, and never under 10%."""
        return max(0.10, self.spread.get(precision, 0.0) + self.spread.get("fp32", 0.0))

    def to_dict(self) -> dict[str, Any]:
        """JSON-ready form."""
        return {
            "device": self.device,
            "model": self.key[0],
            "dataset": self.key[1],
            "batch_size": self.key[2],
            "max_length": self.key[3],
            "step_s": dict(self.step_s),
            "spread": dict(self.spread),
            "setup_s": self.setup_s,
            "eval_batches": self.eval_batches,
            "calibration_s": self.calibration_s,
            "threads": self.threads,
        }


_lock = threading.Lock()
_calibrations: dict[tuple[Any, ...], Calibration] = {}


def calibration_key(cfg: Any) -> tuple[Any, ...]:
    """What the step time depends on: model, data, batch, sequence length, device."""
    from .precision import resolve_device

    device = resolve_device(cfg.device).type
    return (cfg.model, cfg.dataset, cfg.batch_size, cfg.max_length, device)


def cached_calibration(cfg: Any) -> Calibration | None:
    """This process's calibration for cfg's model/batch/device, if one was measured."""
    try:
        key = calibration_key(cfg)
    except Exception:  # noqa: BLE001 - a device that cannot resolve has no calibration
        return None
    with _lock:
        return _calibrations.get(key)


def forget_calibrations() -> None:
    """Drop every cached calibration (the next grid measures again)."""
    with _lock:
        _calibrations.clear()


def _computing(configs: list[Any], device_type: str) -> list[str]:
    from .registry import PRECISIONS

    out = ["fp32"]
    for cfg in configs:
        p = effective_precision(cfg.backend, cfg.precision, device_type)
        rec = PRECISIONS.get(p)
        # Only what autocast runs: other precisions (fp8) bring their own code; the ETA then
        # learns their speed from the run itself.
        if p not in out and rec is not None and rec.autocast_dtype:
            out.append(p)
    return out


def calibrate(
    configs: list[Any],
    stop: threading.Event | None = None,
    *,
    budget_s: float = CALIBRATION_BUDGET_S,
    force: bool = False,
) -> Calibration | None:
    """Time the real training step of configs[0]'s model/batch for every precision the grid uses.

    Call it in the thread the runs will use (torch's OpenMP pool is per thread). One warm-up per
    precision, then up to TIMED_STEPS timed steps, fewer when the budget runs short. Cached per
    model/data/batch/device; None when there is nothing to measure or preparing fails.
    """
    if not configs:
        return None
    key = calibration_key(configs[0])
    with _lock:
        if not force and key in _calibrations:
            have = _calibrations[key]
            if all(p in have.step_s for p in _computing(configs, key[4])):
                return have
    from .engine import prepare
    from .precision import autocast, grad_scaler, synchronize

    t_start = time.perf_counter()
    precisions = _computing(configs, key[4])
    n_batches = 2 + (1 + TIMED_STEPS) * len(precisions)
    base = configs[0].replace(backend="torch", precision="fp32", steps=n_batches)
    prep = prepare(base)
    setup_s = time.perf_counter() - t_start
    model, optimizer, device = prep.model, prep.optimizer, prep.device
    batches = list(prep.train_dataloader)

    def step(i: int, precision: str, scaler: Any) -> float:
        batch = batches[i % len(batches)]
        synchronize(device)
        t0 = time.perf_counter()
        with autocast(device, precision):
            loss = model(**batch).loss
        scaler.scale(loss).backward()
        scaler.step(optimizer)
        scaler.update()
        optimizer.zero_grad(set_to_none=True)
        synchronize(device)
        return time.perf_counter() - t0

    model.train()
    i = 0
    # Two fp32 steps first: kernel selection and the optimizer's state are one-time costs.
    fp32_scaler = grad_scaler(device, "fp32", base)
    for _ in range(2):
        step(i, "fp32", fp32_scaler)
        i += 1
    step_s: dict[str, float] = {}
    spread: dict[str, float] = {}
    for n, precision in enumerate(precisions):
        if stop is not None and stop.is_set():
            break
        scaler = grad_scaler(device, precision, base)
        warm = step(i, precision, scaler)
        i += 1
        left = budget_s - (time.perf_counter() - t_start)
        share = left / max(len(precisions) - n, 1)
        count = max(1, min(TIMED_STEPS, int(share / max(warm, 1e-6))))
        times = []
        for _ in range(count):
            times.append(step(i, precision, scaler))
            i += 1
        med = statistics.median(times)
        step_s[precision] = med
        spread[precision] = (max(times) - min(times)) / med if len(times) > 1 else 0.25
    eval_batches = len(prep.eval_dataloader)
    if "fp32" not in step_s:
        return None
    cal = Calibration(
        key=key,
        device=key[4],
        step_s=step_s,
        spread=spread,
        setup_s=setup_s,
        eval_batches=eval_batches,
        calibration_s=time.perf_counter() - t_start,
        threads=torch.get_num_threads(),
    )
    with _lock:
        old = _calibrations.get(key)
        if old is not None and not force:  # keep precisions measured earlier
            cal = Calibration(
                **{**cal.__dict__, "step_s": {**old.step_s, **cal.step_s}},
            )
            cal = Calibration(**{**cal.__dict__, "spread": {**old.spread, **cal.spread}})
        _calibrations[key] = cal
    return cal
