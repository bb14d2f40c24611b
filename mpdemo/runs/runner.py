"""The runner: a comparison's grid, its memory check, and the one runner interface (a thread here)."""

from __future__ import annotations

import contextlib
import itertools
import os
import threading
from collections.abc import Callable, Iterable, Iterator
from functools import partial
from typing import Any, Protocol

from .. import engine
from ..catalog import MODELS
from ..config import MAX_REPEAT, Limits, RunConfig, env_int
from ..events import Event, Pump
from ..messages import ConfigError
from ..registry import PRECISION_NAMES, PRECISIONS
from .state import ComparisonState
from .together import Together

RUN_LOCK = threading.Lock()  # one comparison at a time here: timings must not share the cores
# Per parameter in training: fp32 weights, gradients, AdamW's two moments (4 + 4 + 8 bytes).
BYTES_PER_PARAM = 16
# Without MPDEMO_MAX_MEMORY_MB, the runs (a sweep's point too) may take this share of memory now.
MEMORY_SHARE = 0.8


def grid(
    base: RunConfig,
    backends: Iterable[str],
    precisions: Iterable[str],
    compare_scaling: bool = False,
    weights: Iterable[str] | None = None,
) -> list[RunConfig]:
    """Every weights x backend x precision (fp32 first); compare_scaling: fp16 with and without."""
    order = {name: i for i, name in enumerate(PRECISION_NAMES)}  # the registry's: fp32 first
    precs = sorted(dict.fromkeys(precisions), key=lambda p: order.get(p, len(order)))
    recipes = dict.fromkeys(weights) if weights is not None else [base.weights]
    out = []
    for w, b, p in itertools.product(recipes, dict.fromkeys(backends), precs):
        cfg = base.replace(weights=w, backend=b, precision=p)
        if compare_scaling and PRECISIONS[p].needs_scaler:
            out += [cfg.replace(loss_scaling=True), cfg.replace(loss_scaling=False)]
        else:
            out.append(cfg)
    return out


def repeated(configs: list[RunConfig], repeat: int) -> list[RunConfig]:
    """The grid `repeat` times over, each copy's runs numbered (trial 1..repeat; 0 when once)."""
    if repeat <= 1:
        return list(configs)
    return [c.replace(trial=r) for r in range(1, repeat + 1) for c in configs]


def check_repeat(value: object) -> int:
    """A comparison's repeat count (--repeat, the page's Repeat box) as a whole number, or the keyed refusal."""
    n = int(value) if isinstance(value, float) and value.is_integer() else value
    if isinstance(n, bool) or not isinstance(n, int) or not 1 <= n <= MAX_REPEAT:
        rule = {"key": "rule_whole", "args": {"lo": 1, "hi": MAX_REPEAT}}
        raise ConfigError("bad_number", field="repeat", rule=rule, value=value)
    return n


def available_bytes() -> int | None:
    """The machine's memory available now; None without psutil or a figure (no check then)."""
    try:
        import psutil

        return int(psutil.virtual_memory().available)
    except Exception:  # noqa: BLE001 - the other caps still hold
        return None


def memory_cap() -> tuple[int, dict[str, Any]] | None:
    """The bytes a comparison's runs may take together, and why (a nested message); None: no cap."""
    raw = os.environ.get("MPDEMO_MAX_MEMORY_MB", "")
    with contextlib.suppress(ValueError):  # unset or not a number: a share of what is free
        return int(float(raw) * 2**20), {"key": "mem_cap_env", "args": {}}
    free = available_bytes()
    if free is None:
        return None
    pct = round(MEMORY_SHARE * 100)
    return int(free * MEMORY_SHARE), {"key": "mem_cap_free", "args": {"pct": pct}}


def check_memory(configs: list[RunConfig]) -> None:
    """Raise ConfigError before anything loads when runs alive together would not fit in memory."""
    if not side_by_side(configs):  # one run at a time: Limits.max_params is its cap
        return
    n = len(configs)
    sizes = [MODELS[c.model].approx_params for c in configs if c.model in MODELS]
    if not sizes:
        return
    params = max(sizes)
    need = n * params * BYTES_PER_PARAM
    cap = memory_cap()
    if cap is not None and need > cap[0]:
        raise ConfigError(
            "comparison_too_big",
            runs=n,
            params=params,
            need_mb=need / 2**20,
            cap_mb=cap[0] / 2**20,
            why=cap[1],
        )


def side_by_side(configs: list[RunConfig]) -> bool:
    """Whether the runs take turns: not under `accelerate launch`, whose collectives must meet
    in the same order in every process."""
    return len(configs) > 1 and env_int("WORLD_SIZE", 1) == 1


def run_grid(
    configs: list[RunConfig],
    emit: Callable[[Event], None],
    stop: threading.Event,
    limits: Limits | None = None,
    repeat: int = 1,
) -> None:
    """Run a comparison `repeat` times, emitting events; its runs take turns where they can."""
    runs = repeated(configs, repeat)
    per = max(1, len(configs))
    if side_by_side(configs):
        for i in range(0, len(runs), per):
            if stop.is_set():
                break
            with RUN_LOCK:
                Together(runs[i : i + per], emit, stop, limits, i, len(runs)).run()
            engine.collect_garbage()
        return
    for i, cfg in enumerate(runs):  # one after another (several processes, or a single run)
        with RUN_LOCK:
            if stop.is_set():
                break
            try:
                prep = engine.prepare(cfg, limits)
            except Exception as err:  # noqa: BLE001 - reported as a failed run
                emit(engine.failed_event(cfg, err, i))
                continue
            engine.execute(prep, emit, stop, index=i, total=len(runs))
            del prep  # free the model before the next run is built
            # Collected after each run: left to the exit, a 2-process gloo run's Accelerator
            # cycles were torn down after the process group and rank 1 aborted (SIGABRT).
            engine.collect_garbage()


class RunnerInterface(Protocol):
    """What the Train tab, the classroom and the CLI drive (Runner, GpuRunner, Viewer)."""

    configs: list[RunConfig]  # the comparison's runs (one repetition)
    state: ComparisonState  # what its events add up to, folded once (mpdemo.runs.state)

    def start(self) -> RunnerInterface:
        """Start it (the events may only begin when read)."""

    def stop(self) -> None:
        """End every run within a step; keep what they trained."""

    def join(self, timeout: float | None = None) -> bool:
        """Wait for its end; True when it has ended."""

    @property
    def alive(self) -> bool:
        """Whether events may still come."""

    def events(self, timeout: float | None = None) -> Iterator[Event | None]:
        """Its events as they come; None when `timeout` passed with none (a heartbeat)."""


class Runner(Pump, RunnerInterface):
    """One comparison in a thread of its own (a Pump: stop, join, events); its runs take turns."""

    def __init__(
        self, configs: list[RunConfig], limits: Limits | None = None, repeat: int = 1
    ) -> None:
        self.configs = list(configs)
        check_memory(self.configs)  # refused here, in the caller's thread, before anything loads
        self.limits = limits or Limits.from_env()
        self.state = ComparisonState(repeated(self.configs, repeat))
        work = partial(run_grid, self.configs, limits=self.limits, repeat=repeat)
        super().__init__(lambda emit: work(emit, self.stop_event), "mpdemo-runner")

    def emit(self, item: Event) -> None:
        """Fold the event into the state (once, here: every reader reads it), then hand it on."""
        self.state.apply(item)
        self.queue.put(item)
