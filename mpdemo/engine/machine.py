"""What this machine is (names, CPU flags, versions: in every run's JSON) and the sentences that say
so. Torch-free to import: the probes load torch."""

from __future__ import annotations

import datetime as _dt
import functools
import importlib.metadata
import os
import platform
import re

from ..files.machines import Machine, MachineGPU
from ..messages import Note

# The CPU flags that decide whether fp16/bf16 have hardware support: name -> (torch's probe,
# /proc/cpuinfo's flag). torch 2.13 has no avx512_fp16 probe; AMX tiles come with AMX-BF16 so far.
_PROBES = {
    "avx2": ("avx2", "avx2"),
    "avx512": ("avx512", "avx512f"),
    "avx512_bf16": ("avx512_bf16", "avx512_bf16"),
    "avx512_fp16": (None, "avx512_fp16"),
    "amx_bf16": ("amx_tile", "amx_bf16"),
    "amx_fp16": ("amx_fp16", "amx_fp16"),
}
CPU_FLAGS = tuple(_PROBES)
# Library versions worth recording with a run (gradio is the UI's, not the engine's: left out).
VERSIONED = ("torch", "transformers", "accelerate", "datasets")


def _private_flag(name: str) -> bool | None:
    """torch.cpu._is_<name>_supported(), or None when this torch build lacks it (private API)."""
    import torch

    try:
        return bool(getattr(torch.cpu, f"_is_{name}_supported")())
    except Exception:  # noqa: BLE001 - a private probe missing or misbehaving means "unknown"
        return None


@functools.cache
def _proc_cpuinfo() -> tuple[str | None, frozenset[str]]:
    """(model name, flags) from /proc/cpuinfo on Linux; (None, empty) elsewhere."""
    try:
        with open("/proc/cpuinfo", encoding="utf-8", errors="replace") as f:
            text = f.read(200_000)
    except OSError:
        return None, frozenset()
    # The first CPU's lines ("model name\t: AMD EPYC ..."; ARM names its flags "Features").
    model = re.search(r"^model name\s*:(.*)$", text, re.M)
    flags = re.search(r"^(?:flags|Features)\s*:(.*)$", text, re.M)
    return (model[1].strip() if model else None), frozenset(flags[1].split() if flags else ())


def cpu_name() -> str:
    """The CPU's model string as the OS reports it (platform.processor() as the fallback)."""
    model, _ = _proc_cpuinfo()
    if model:
        return model
    if platform.system() == "Darwin":
        try:
            import subprocess

            ask = ["sysctl", "-n", "machdep.cpu.brand_string"]
            out = subprocess.run(ask, capture_output=True, text=True, timeout=2)
            if out.stdout.strip():
                return out.stdout.strip()
        except (OSError, subprocess.SubprocessError):
            pass
    return platform.processor() or platform.machine() or "unknown CPU"


def cpu_capability() -> str | None:
    """The vector ISA torch's CPU kernels dispatch to ("AVX2", "AVX512", ...); None if unknown."""
    import torch

    try:
        return str(torch.backends.cpu.get_cpu_capability())
    except Exception:  # noqa: BLE001 - older torch builds lack it
        return None


def cpu_flags() -> dict[str, bool]:
    """avx2/avx512/avx512_bf16/avx512_fp16/amx_bf16/amx_fp16: torch's probes, /proc/cpuinfo as fallback."""
    _, proc = _proc_cpuinfo()
    capability = cpu_capability() or ""
    # torch's own answers first (what its kernels will dispatch on); the OS's flags fill the gaps.
    flags: dict[str, bool] = {}
    for name, (probe, proc_flag) in _PROBES.items():
        said = _private_flag(probe) if probe else None
        flags[name] = bool(proc_flag in proc if said is None else said)
    flags["avx512"] |= capability.startswith("AVX512")
    flags["avx2"] |= capability.startswith(("AVX512", "AVX2"))
    return flags


def _version(dist: str) -> str | None:
    """The installed distribution's version; None when it is not installed."""
    try:
        return importlib.metadata.version(dist)
    except importlib.metadata.PackageNotFoundError:
        return None


def _gpu_info() -> MachineGPU | None:
    """The first accelerator: CUDA (name, compute capability, bf16) or Apple's MPS; None on CPU only."""
    import torch

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
    if torch.backends.mps.is_available():
        return {"kind": "mps", "name": "Apple GPU (MPS)", "capability": None, "bf16": None}
    return None


@functools.cache
def _static_info() -> Machine:
    """What does not change while the process lives (names, flags, versions)."""
    gpu = _gpu_info()
    return {
        "device_kind": gpu["kind"] if gpu else "cpu",
        "device_name": gpu["name"] if gpu else cpu_name(),
        "cpu": {
            "name": cpu_name(),
            "capability": cpu_capability(),
            "flags": cpu_flags(),
            "cores": os.cpu_count(),
        },
        "gpu": gpu,
        "versions": {name: _version(name) for name in VERSIONED},
        "python": platform.python_version(),
        "platform": platform.platform(terse=True),
    }


def machine_info() -> Machine:
    """This machine as a JSON-ready dict (cached, but threads and date, which a run may change)."""
    import torch

    info = Machine(**_static_info())
    info["cpu"] = info["cpu"].copy()
    info["torch_threads"] = torch.get_num_threads()
    info["date"] = _dt.datetime.now(_dt.UTC).isoformat(timespec="seconds")
    return info


# --- sentences about the hardware: facts that explain a measurement, never a verdict ---------

# The instructions that make a CPU's fp16/bf16 fast, each named as the sentences say it ("AMX-BF16").
FAST_16BIT = ("avx512_bf16", "amx_bf16", "avx512_fp16", "amx_fp16")
_FLAG_LABELS = {f: f.upper().replace("_", "-") for f in FAST_16BIT}


def _isa(machine: Machine) -> str:
    cpu = machine.get("cpu") or {}
    cap = cpu.get("capability") or ""
    if cap.upper().startswith("AVX512"):
        return "AVX512"
    if cap.upper().startswith("AVX2") or (cpu.get("flags") or {}).get("avx2"):
        return "AVX2"
    return cap or platform.machine() or "CPU"


def hardware_reason(machine: Machine, precision: str, device_type: str) -> dict[str, object]:
    """Why a precision may run as it does here: the hardware facts, as a nested message."""
    gpu = machine.get("gpu") or {}
    if device_type == "cuda" and gpu:
        return {"key": "hw_gpu", "args": {"name": gpu.get("name"), "cc": gpu.get("capability")}}
    if device_type == "mps":
        return {"key": "hw_mps", "args": {}}
    flags = (machine.get("cpu") or {}).get("flags") or {}
    present = [_FLAG_LABELS[f] for f in FAST_16BIT if f.endswith(f"_{precision}") and flags.get(f)]
    if present:
        return {"key": "hw_cpu_has", "args": {"isa": _isa(machine), "flags": ", ".join(present)}}
    return {"key": "hw_cpu_lacks", "args": {"isa": _isa(machine), "precision": precision}}


def machine_note(machine: Machine | None = None) -> Note:
    """'This machine: ...' in one sentence: names, flags, threads, torch (no speed claim)."""
    m = machine or machine_info()
    torch_v = (m.get("versions") or {}).get("torch") or _version("torch")
    cpu = m.get("cpu") or {}
    gpu = m.get("gpu") or {}
    if m.get("device_kind") == "cuda" and gpu:
        key = "machine_cuda" if gpu.get("bf16") else "machine_cuda_no_bf16"
        args = {"name": gpu.get("name"), "cc": gpu.get("capability"), "cpu": cpu.get("name")}
        return Note(key, {**args, "torch": torch_v})
    if m.get("device_kind") == "mps":
        return Note("machine_mps", {"cpu": cpu.get("name"), "torch": torch_v})
    flags = cpu.get("flags") or {}
    has = [label for f, label in _FLAG_LABELS.items() if flags.get(f)]
    lacks = [label for f, label in _FLAG_LABELS.items() if not flags.get(f)]
    # Never "has -": a CPU with none of the flags (or all of them) gets its own sentence.
    key = "machine_cpu" if has and lacks else "machine_cpu_lacks" if lacks else "machine_cpu_has"
    return Note(
        key,
        {
            "name": cpu.get("name"),
            "isa": _isa(m),
            "threads": m.get("torch_threads"),
            "torch": torch_v,
            "has": ", ".join(has),
            "lacks": ", ".join(lacks),
        },
    )
