"""Machine tags: the short name a run's machine goes by after its label ('H200', 'EPYC 7B13')."""

from __future__ import annotations

import re
from typing import TypedDict


class MachineCPU(TypedDict, total=False):
    """A machine record's CPU: the OS's name, torch's ISA, the fp16/bf16 flags, its cores."""

    name: str | None
    capability: str | None
    flags: dict[str, bool]
    cores: int | None


class MachineGPU(TypedDict, total=False):
    """A machine record's first accelerator (CUDA or Apple's MPS)."""

    kind: str
    name: str
    capability: str | None
    bf16: bool | None
    memory_bytes: int
    count: int


class Machine(TypedDict, total=False):
    """What a run's JSON says of its machine; read from files too, so every key may be missing."""

    device_kind: str
    device_name: str
    cpu: MachineCPU
    gpu: MachineGPU | None
    versions: dict[str, str | None]
    python: str
    platform: str
    torch_threads: int
    date: str


_VENDOR = re.compile(r"\b(NVIDIA|GeForce|Tesla|AMD|Intel|Radeon)\b", re.IGNORECASE)
_CPU_NOISE = re.compile(
    r"\((R|TM|C)\)|\bCPU\b|\bProcessor\b|@.*$|\b\d+-Core\b|\b(Platinum|Gold|Silver|Bronze)\b",
    re.IGNORECASE,
)


def gpu_short_name(name: str) -> str:
    """'NVIDIA H200' → 'H200', 'NVIDIA A100-SXM4-80GB' → 'A100', 'NVIDIA GeForce RTX 4090' → 'RTX 4090'."""
    words = _VENDOR.sub(" ", name).split()
    if not words:
        return "GPU"
    take = 2 if words[0].upper() in ("RTX", "GTX", "QUADRO", "TITAN") and len(words) > 1 else 1
    short = " ".join(words[:take]).split("-")[0] if take == 1 else " ".join(words[:take])
    if "MIG" in (w.upper() for w in words):  # a slice of a GPU is not the whole GPU
        short += " MIG"
    return short


def cpu_short_name(name: str, capability: str | None = None) -> str:
    """'AMD EPYC 7B13 64-Core Processor' → 'EPYC 7B13'; a name with no model number gets the ISA."""
    short = " ".join(_CPU_NOISE.sub(" ", _VENDOR.sub(" ", name)).split()) or "CPU"
    if not any(ch.isdigit() for ch in short) and capability:
        short += f" {capability}"  # 'AMD EPYC' alone names three different CPUs seen here
    return short


def machine_tag(machine: Machine | None) -> str:
    """A short, unambiguous name for the device a recording ran on."""
    if not machine:
        return "recorded"
    gpu = machine.get("gpu") or {}
    kind = machine.get("device_kind")
    if kind == "cuda" and gpu.get("name"):
        return gpu_short_name(str(gpu["name"]))
    if kind == "mps":
        return "Apple GPU"
    cpu = machine.get("cpu") or {}
    name = cpu.get("name") or machine.get("device_name") or "CPU"
    return cpu_short_name(str(name), cpu.get("capability"))


def describe_machine(machine: Machine | None) -> str:
    """One line: 'NVIDIA H200 · torch 2.13.0 · transformers 5.24.0 · accelerate 1.15.0'."""
    if not machine:
        return "an unknown machine"
    parts = [str(machine.get("device_name") or machine_tag(machine))]
    if machine.get("device_kind") == "cuda":
        cpu = (machine.get("cpu") or {}).get("name")
        if cpu:
            parts.append(f"CPU {cpu}")
    versions = machine.get("versions") or {}
    parts += [
        f"{k} {v}"
        for k, v in versions.items()
        if k in ("torch", "transformers", "accelerate") and v
    ]
    return " · ".join(parts)
