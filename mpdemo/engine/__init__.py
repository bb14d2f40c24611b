"""The engine: where torch lives. prepare() builds a run's model, optimizer and data (core.py, data.py,
models.py); precision.py is the one precision code path; recorder.py is a backend's `rec` (times each
step, emits events, builds the summary); machine.py, probes.py, memory.py measure this machine;
gradwatch.py and master.py watch gradients and keep pure-bf16 weights. Nothing here imports gradio.

This package's own module imports no torch: the torch-free code reaches the engine through the
names below, `engine.prepare(...)`, each loaded with its module on first use (PEP 562), so that
`python app.py` and `python -m mpdemo --help` start without torch and the one list of the engine's
entry points outside it stands here instead of in a function-level import at every caller.
"""

from __future__ import annotations

import importlib
from typing import Any

# name -> the engine module that defines it
_WHERE = {
    "collect_garbage": "core",
    "execute": "core",
    "failed_event": "core",
    "next_collect_s": "core",
    "preflight": "core",
    "prepare": "core",
    "hardware_reason": "machine",
    "machine_info": "machine",
    "machine_note": "machine",
    "resolve_device": "precision",
    "set_torch_flags": "precision",
    "torch_flags": "precision",
    "Anatomy": "memory",
}
__all__ = sorted(_WHERE)


def __getattr__(name: str) -> Any:
    if name not in _WHERE:
        raise AttributeError(f"module {__name__!r} has no attribute {name!r}")
    return getattr(importlib.import_module(f"{__name__}.{_WHERE[name]}"), name)
