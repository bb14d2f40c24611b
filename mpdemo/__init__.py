"""mpdemo: see mixed precision at work. `from mpdemo import RunConfig, prepare, train`."""

from __future__ import annotations

import os
from typing import Any

# OpenMP's idle threads spin briefly (libgomp: 10,000 turns) before they sleep, read by libgomp
# as torch loads, so it is set before any import of torch; OMP_WAIT_POLICY or GOMP_SPINCOUNT in
# the environment win. A step is hundreds of short parallel regions: on a quiet 2-core EPYC,
# tiny-bert batch 32 stepped at 19.8 ms with this spin, 33.6 ms with OMP_WAIT_POLICY=PASSIVE.
# libgomp's own spin (300,000 turns) collapsed under 20 busy processes (4.1 s a step), and even
# this one fights other programs for the cores, so while they take cores the runs compute on
# fewer threads (mpdemo.engine.cores). `python bench/turns.py [--load N]` measures all of it.
if "OMP_WAIT_POLICY" not in os.environ:
    os.environ.setdefault("GOMP_SPINCOUNT", "10000")

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
