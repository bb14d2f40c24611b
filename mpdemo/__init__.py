"""mpdemo: see mixed precision at work. `from mpdemo import RunConfig, prepare, train`."""

from __future__ import annotations

from typing import Any

from .config import Limits, RunConfig
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
