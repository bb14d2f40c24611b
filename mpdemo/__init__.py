"""mpdemo: see mixed precision at work. `from mpdemo import RunConfig, prepare, train`."""

from __future__ import annotations

import os
from typing import Any

# OpenMP's idle threads spin briefly before they sleep (set before torch loads): tiny-bert 19.8 ms
# a step with it, 33.6 ms passive, 4.1 s with libgomp's default under load (bench/turns.py).
if "OMP_WAIT_POLICY" not in os.environ:
    os.environ.setdefault("GOMP_SPINCOUNT", "10000")

from .config import Limits, RunConfig  # noqa: E402 - after the OpenMP setting
from .messages import ConfigError, MpdemoError
from .state import reset

__all__ = [
    "RunConfig",
    "Limits",
    "ConfigError",
    "MpdemoError",
    "prepare",
    "train",
    "Runner",
    "reset",
]


def __getattr__(name: str) -> Any:
    # torch and transformers load only when training is asked for: the app starts fast.
    if name in ("prepare", "train"):
        from .engine import core as engine

        return getattr(engine, name)
    if name == "Runner":
        from .runs.runner import Runner

        return Runner
    raise AttributeError(name)
