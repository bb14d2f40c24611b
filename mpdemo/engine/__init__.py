"""The engine: where torch lives (prepare, data, models, precision, the Recorder, this machine).

This module imports no torch: torch-free code calls `engine.prepare(...)` and the like, each name
loaded with its module on first use (PEP 562), so `python app.py` starts without torch.
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
}
__all__ = sorted(_WHERE)


def __getattr__(name: str) -> Any:
    if name not in _WHERE:
        raise AttributeError(f"module {__name__!r} has no attribute {name!r}")
    return getattr(importlib.import_module(f"{__name__}.{_WHERE[name]}"), name)
