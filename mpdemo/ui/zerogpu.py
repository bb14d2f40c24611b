"""ZeroGPU Spaces: a training request runs inside one `@spaces.GPU(duration=...)` call.

On a ZeroGPU Space CUDA exists only inside a function decorated with `spaces.GPU`, which the
`spaces` package runs in a worker process it forks, for at most the duration the call asks for.
So there the Train tab's grid runs in `train_in_gpu` (the Runner and its thread live in that
worker) and the page's process only relays the events it yields: `GpuRunner` has the Runner's
interface, so the Train tab cannot tell the difference. Stop reaches the worker through a flag
file (the worker is a fork: it shares the file system, not our objects); a closed tab closes
the generator, which `spaces` turns into a stop of the worker's generator, whose `finally`
stops the run.

Elsewhere (no `spaces`, or the Space's flag unset) `make_runner` returns the plain Runner and
nothing here is imported by the engine.
"""

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
from ..config import Limits, RunConfig
from ..runs.runner import Runner, RunnerInterface, repeated
from ..runs.state import ComparisonState
from ..state import on_reset

# The variable the `spaces` package itself reads (spaces/config.py: Settings.zero_gpu); a
# ZeroGPU Space has it set to "true", with SPACES_ZERO_DEVICE_API_URL next to it.
FLAG = "SPACES_ZERO_GPU"
# The longest GPU call this app asks for, in seconds. ZeroGPU refuses a request above its
# maximum ("requested GPU duration is larger than the maximum allowed"); the maximum is not
# documented and depends on the visitor's plan, so the Space's owner sets it.
MAX_S_VAR = "MPDEMO_ZEROGPU_MAX_S"
DEFAULT_MAX_S = 120
MIN_S = 30  # a GPU call also starts the worker and builds the model
# Conservative per-run guesses when no measured estimate exists (the page's process has no GPU
# to calibrate on): preparing a run, and one step of a 4M-parameter model at 64 x 128 tokens.
SETUP_GUESS_S = 15.0
STEP_GUESS_S = 0.05
MARGIN = 1.5


def _flag_set() -> bool:
    # The same reading as spaces.config.boolean(): "1", "t" or "true", any case.
    return os.environ.get(FLAG, "").strip().lower() in ("1", "t", "true")


def enabled() -> bool:
    """True on a ZeroGPU Space: the `spaces` package is installed and its flag is set."""
    return _flag_set() and importlib.util.find_spec("spaces") is not None


def max_duration_s() -> int:
    """The cap on one GPU call (MPDEMO_ZEROGPU_MAX_S, default 120 s)."""
    raw = os.environ.get(MAX_S_VAR, "").strip()
    try:
        value = int(raw) if raw else DEFAULT_MAX_S
    except ValueError:
        value = DEFAULT_MAX_S
    return max(MIN_S, value)


def _guess_s(cfg: RunConfig) -> float:
    entry = MODELS.get(cfg.model)
    params = entry.approx_params if entry is not None else 100_000_000  # a Hub model: assume big
    size = max(1.0, params / 4e6) * max(1.0, cfg.batch_size * cfg.max_length / (64 * 128))
    return SETUP_GUESS_S + cfg.steps * STEP_GUESS_S * size


def estimate_s(configs: list[RunConfig]) -> float:
    """Seconds the grid should take, guessed from its models' sizes (nothing is timed before)."""
    return sum(_guess_s(c) for c in configs)


def duration_s(
    config_dicts: list[dict[str, Any]],
    stop_path: str = "",
    beat_s: float = 0.0,
    repeat: int = 1,
) -> int:
    """What the GPU call asks for: the estimate with a margin, capped to the allowed maximum.

    spaces.GPU calls this with the decorated function's own arguments (train_in_gpu's).
    """
    configs = [RunConfig.from_dict(d) for d in config_dicts]
    seconds = estimate_s(configs)
    seconds *= max(1, repeat)  # each repetition runs the grid and measures again
    want = math.ceil(seconds * MARGIN)
    return int(min(max(want, MIN_S), max_duration_s()))


def train_in_gpu(
    config_dicts: list[dict[str, Any]],
    stop_path: str,
    beat_s: float,
    repeat: int = 1,
) -> Iterator[list[Any]]:
    """The whole grid, run where the GPU is; yields the engine's events in batches every beat.

    The configs travel as dicts and the events come back pickled: both cross a process.
    """
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
    """train_in_gpu, wrapped by spaces.GPU on a ZeroGPU Space; itself elsewhere.

    Wrapped once per process (spaces registers each GPU function before the app launches).
    """
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
    """Call while building the app: on ZeroGPU, register the GPU function and wrap nothing else.

    With SPACES_GRADIO_AUTO_WRAP the `spaces` package would put every event handler (language
    switch, previews) on a GPU; only the training needs one. Returns whether ZeroGPU is on.
    """
    if not enabled():
        return False
    import spaces

    spaces.disable_gradio_auto_wrap()
    gpu_function()
    return True


class GpuRunner(RunnerInterface):
    """The runner interface (mpdemo.runs.runner.RunnerInterface) for the Train tab; the
    grid itself runs inside the GPU call, not in a thread of this process, stopped by a file."""

    def __init__(
        self,
        configs: list[RunConfig],
        limits: Limits | None = None,
        repeat: int = 1,
    ) -> None:
        self.configs = list(configs)
        self.limits = limits or Limits.from_env()
        self.repeat = repeat
        self.state = ComparisonState(repeated(self.configs, repeat))
        self._dir: str | None = None
        self._started = False
        self._done = threading.Event()

    @property
    def stop_path(self) -> str:
        """The flag file whose existence tells the worker to stop."""
        assert self._dir is not None, "start() first"
        return str(Path(self._dir) / "stop")

    def start(self) -> GpuRunner:
        """Ready the stop flag; the GPU call itself starts when events() is first read."""
        self._dir = tempfile.mkdtemp(prefix="mpdemo-zerogpu-")
        self._started = True
        return self

    def stop(self) -> None:
        """Ask the worker to end the current run within a step and skip the rest."""
        if self._dir is not None and os.path.isdir(self._dir):
            Path(self.stop_path).touch()

    def join(self, timeout: float | None = None) -> bool:
        """Wait until the GPU call has returned; True when it has."""
        return self._done.wait(timeout) if self._started else True

    @property
    def alive(self) -> bool:
        """Whether the GPU call is still running."""
        return self._started and not self._done.is_set()

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
    """The runner for a training request (the hub's factory on ZeroGPU, mpdemo.ui.visitor):
    inside a GPU call on ZeroGPU, a thread elsewhere."""
    kind = GpuRunner if enabled() else Runner
    return kind(configs, repeat=repeat)
