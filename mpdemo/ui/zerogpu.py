"""ZeroGPU Spaces: CUDA exists only inside a `@spaces.GPU(duration=...)` call, in a worker
process `spaces` forks. There the grid runs in `train_in_gpu` and `GpuRunner` (the Runner's
interface) relays its events; Stop reaches the fork through a flag file, and a closed tab
closes the generator, which `spaces` passes on. Elsewhere `make_runner` is the plain Runner."""

from __future__ import annotations

import importlib.util
import math
import os
import shutil
import tempfile
import threading
import time
from collections.abc import Iterator
from pathlib import Path
from typing import Any

from .. import engine
from ..catalog import MODELS
from ..config import Limits, RunConfig, env_int
from ..runs.runner import Runner, RunnerInterface, repeated
from ..runs.state import ComparisonState
from ..state import on_reset

FLAG = "SPACES_ZERO_GPU"  # what `spaces` itself reads (spaces/config.py)
# The longest GPU call asked for: ZeroGPU refuses one above its maximum, which depends on the
# visitor's plan and is not documented, so the Space's owner sets it.
MAX_S_VAR = "MPDEMO_ZEROGPU_MAX_S"
DEFAULT_MAX_S = 120
MIN_S = 30  # a GPU call also starts the worker and builds the model
# Guesses (the page's process has no GPU to measure): preparing a run, and one step of a
# 4M-parameter model at 64 x 128 tokens.
SETUP_GUESS_S = 15.0
STEP_GUESS_S = 0.05
MARGIN = 1.5


def enabled() -> bool:
    """True on a ZeroGPU Space: `spaces` is installed and its flag reads true as it reads it."""
    flag = os.environ.get(FLAG, "").strip().lower() in ("1", "t", "true")
    return flag and importlib.util.find_spec("spaces") is not None


def max_duration_s() -> int:
    """The cap on one GPU call (MPDEMO_ZEROGPU_MAX_S, default 120 s)."""
    return max(MIN_S, env_int(MAX_S_VAR, DEFAULT_MAX_S))


def estimate_s(configs: list[RunConfig]) -> float:
    """Seconds the grid should take, guessed from its models' sizes (nothing is timed before)."""
    total = 0.0
    for cfg in configs:
        entry = MODELS.get(cfg.model)
        params = entry.approx_params if entry is not None else 100_000_000  # a Hub model: big
        size = max(1.0, params / 4e6) * max(1.0, cfg.batch_size * cfg.max_length / (64 * 128))
        total += SETUP_GUESS_S + cfg.steps * STEP_GUESS_S * size
    return total


def duration_s(
    config_dicts: list[dict[str, Any]],
    stop_path: str = "",
    beat_s: float = 0.0,
    repeat: int = 1,
) -> int:
    """What the GPU call asks for (spaces.GPU passes train_in_gpu's arguments): the estimate
    of every repetition with a margin, capped to the allowed maximum."""
    seconds = estimate_s([RunConfig.from_dict(d) for d in config_dicts]) * max(1, repeat)
    want = math.ceil(seconds * MARGIN)
    return int(min(max(want, MIN_S), max_duration_s()))


def train_in_gpu(
    config_dicts: list[dict[str, Any]],
    stop_path: str,
    beat_s: float,
    repeat: int = 1,
) -> Iterator[list[Any]]:
    """The whole grid, run where the GPU is; yields its events in batches every beat (configs
    travel as dicts, events pickled: both cross a process)."""
    configs = [RunConfig.from_dict(d) for d in config_dicts]
    runner = Runner(configs, Limits.from_env(), repeat=repeat)
    runner.start()
    # The machine the runs ran on, for the runs JSON; a dict, not an event.
    batch: list[Any] = [{"machine": engine.machine_info()}]
    last = time.monotonic()
    try:
        for ev in runner.events(timeout=beat_s):
            if ev is not None:
                batch.append(ev)
            if os.path.exists(stop_path):  # Stop pressed in the page's process
                runner.stop()
            if time.monotonic() - last >= beat_s:
                yield batch  # an empty batch too: a heartbeat that lets a closed tab stop us
                batch, last = [], time.monotonic()
        if batch:
            yield batch
    finally:
        runner.stop()  # the page's process closed us (tab closed): end the run within a step


_gpu_fn: Any = None
_gpu_lock = threading.Lock()


def gpu_function() -> Any:
    """train_in_gpu, wrapped once per process by spaces.GPU on a ZeroGPU Space; itself elsewhere."""
    global _gpu_fn
    with _gpu_lock:
        if _gpu_fn is None:
            if enabled():
                import spaces

                _gpu_fn = spaces.GPU(duration=duration_s)(train_in_gpu)
            else:
                _gpu_fn = train_in_gpu
        return _gpu_fn


@on_reset
def forget_gpu_function() -> None:
    """Wrap again on next use (mpdemo.reset(): a test that switches the ZeroGPU flag)."""
    global _gpu_fn
    with _gpu_lock:
        _gpu_fn = None


def setup() -> bool:
    """While building the app on ZeroGPU: register the GPU function and stop `spaces` from
    putting every other handler on a GPU. Returns whether ZeroGPU is on."""
    if not enabled():
        return False
    import spaces

    spaces.disable_gradio_auto_wrap()
    gpu_function()
    return True


class GpuRunner(RunnerInterface):
    """The Runner's interface for a grid that runs inside the GPU call, stopped by a file."""

    def __init__(self, configs: list[RunConfig], repeat: int = 1) -> None:
        self.configs = list(configs)  # limits: the worker reads them where it runs
        self.repeat = repeat
        self.state = ComparisonState(repeated(self.configs, repeat))
        self._dir: str | None = None  # made by start()
        self.stop_path = ""  # the flag file whose existence tells the worker to stop
        self._done = threading.Event()

    def start(self) -> GpuRunner:
        """Ready the stop flag; the GPU call itself starts when events() is first read."""
        self._dir = tempfile.mkdtemp(prefix="mpdemo-zerogpu-")
        self.stop_path = str(Path(self._dir) / "stop")
        return self

    def stop(self) -> None:
        """Ask the worker to end the current run within a step and skip the rest."""
        if self._dir is not None and os.path.isdir(self._dir):
            Path(self.stop_path).touch()

    def join(self, timeout: float | None = None) -> bool:
        """Wait until the GPU call has returned; True when it has."""
        return self._done.wait(timeout) if self._dir is not None else True

    @property
    def alive(self) -> bool:
        """Whether the GPU call is still running."""
        return self._dir is not None and not self._done.is_set()

    def events(self, timeout: float | None = None) -> Iterator[Any]:
        """The worker's events, one by one; None when a beat brought nothing (a heartbeat)."""
        beat = timeout if timeout is not None else 0.5
        dicts = [c.to_dict() for c in self.configs]
        gen = gpu_function()(dicts, self.stop_path, beat, self.repeat)
        try:
            for batch in gen:
                if not batch:
                    yield None
                for ev in batch:
                    if isinstance(ev, dict):  # the worker's machine: here there is no CUDA
                        self.state.machine = ev.get("machine") or self.state.machine
                        continue
                    self.state.apply(ev)
                    yield ev
        finally:
            gen.close()  # a closed tab: spaces stops the worker's generator in turn
            self._done.set()
            if self._dir is not None:
                shutil.rmtree(self._dir, ignore_errors=True)


def make_runner(configs: list[RunConfig], repeat: int = 1) -> Runner | GpuRunner:
    """The runner for a training request: inside a GPU call on ZeroGPU, a thread elsewhere."""
    kind = GpuRunner if enabled() else Runner
    return kind(configs, repeat=repeat)
