"""mpdemo: see mixed precision at work. `from mpdemo import RunConfig, prepare, train`."""

from __future__ import annotations

import os
from typing import Any

# OpenMP's idle worker threads sleep at once instead of spinning (libgomp reads this when torch
# loads, so it is set before any import of torch; OMP_WAIT_POLICY=ACTIVE in the environment
# wins). The runs of a comparison each have a pool and take turns, and a shared 2-core machine
# has other processes: on 2 cores at load average ~20, tiny-bert batch 32, the course's loop
# took 1.5-2.5 s a step with libgomp's default wait, 0.13 s passive, 0.17 s on one thread.
os.environ.setdefault("OMP_WAIT_POLICY", "PASSIVE")

from .config import Limits, RunConfig  # noqa: E402 - after the OpenMP setting
from .messages import ConfigError, MpdemoError

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
    if name in ("prepare", "train", "preflight"):
        from .engine import core as engine

        return getattr(engine, name)
    if name == "Runner":
        from .runs.runner import Runner

        return Runner
    if name == "reset":
        from .state import reset

        return reset
    raise AttributeError(name)
