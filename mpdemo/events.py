"""The events a run emits; renderers (UI, CLI, tests) only ever see these."""

from __future__ import annotations

import dataclasses
import queue
import threading
from collections.abc import Callable, Iterator
from dataclasses import dataclass, field
from typing import Any, Literal

from .engine.cores import mark_thread  # torch-free, like this module
from .files.summary import Summary, plain
from .messages import MpdemoError


@dataclass
class _Event:
    def to_dict(self) -> dict[str, Any]:
        """JSON-ready form."""
        return dataclasses.asdict(self)


@dataclass
class _RunEvent(_Event):
    run_id: str  # '<index in the grid>:<label>'
    label: str


@dataclass
class RunStarted(_RunEvent):
    """A run began: its config, what it will measure, warnings known up front."""

    index: int  # 0-based position in the grid
    total: int
    config: dict[str, Any]
    device: str
    params: int
    requested_dtype: str
    steps: int
    warnings: list[dict[str, Any]] = field(default_factory=list)
    kind: Literal["start"] = "start"


@dataclass
class StepEvent(_RunEvent):
    """One optimizer step (or skipped step) with its timing."""

    step: int
    loss: float
    loss_scale: float | None
    skipped: bool
    step_time_s: float
    samples_per_s: float
    tokens_per_s: float | None
    lr: float
    elapsed_s: float
    wall_s: float | None = None  # since the comparison started: its runs take turns
    kind: Literal["step"] = "step"
    # --lost-updates: the share of weights this step's update should have changed that kept theirs
    lost_update_share: float | None = None


@dataclass
class EvalEvent(_RunEvent):
    """Evaluation on the validation slice."""

    step: int
    metrics: dict[str, float]
    kind: Literal["eval"] = "eval"


@dataclass
class RunFinished(_RunEvent):
    """A run ended; `summary` (mpdemo.files.summary.Summary) carries the DESIGN.md summary keys."""

    status: str
    summary: Summary
    kind: Literal["end"] = "end"

    def to_dict(self) -> dict[str, Any]:
        """JSON-ready form: the summary as its JSON form, not as a dataclass's fields."""
        fields = {f.name: getattr(self, f.name) for f in dataclasses.fields(self)}
        return {**fields, "summary": plain(self.summary)}


@dataclass
class GridPlanned(_Event):
    """Before a grid's first run: this machine, and what to expect (renderers may skip it)."""

    machine: dict[str, Any]
    notes: list[dict[str, Any]] = field(default_factory=list)  # sentences: {"key", "args", "text"}
    # The runs take turns step by step: their own steps are the measurement.
    interleaved: bool = False
    kind: Literal["plan"] = "plan"


@dataclass
class GradHistograms(_RunEvent):
    """Every N steps (--watch-grads N): each layer's gradient magnitudes against a format."""

    step: int
    scale: float | None
    format: str
    layers: list[dict[str, Any]]
    windows: dict[str, dict[str, float]] = field(default_factory=dict)
    kind: Literal["grads"] = "grads"


Event = RunStarted | StepEvent | EvalEvent | RunFinished | GridPlanned | GradHistograms


# What a run hands its events to (the runner's queue, a test's list.append).
Emit = Callable[[Event], None]


class Pump:
    """Work in a daemon thread, its emits handed on; events() raises an MpdemoError it raised."""

    def __init__(
        self, work: Callable[[Emit], None], name: str, stop: threading.Event | None = None
    ) -> None:
        self.work, self.name = work, name
        self.stop_event = stop or threading.Event()
        self.queue: queue.Queue[Any] = queue.Queue()
        self.thread: threading.Thread | None = None

    def emit(self, item: Any) -> None:
        """Hand one event on (the work's emit)."""
        self.queue.put(item)

    def start(self) -> Pump:
        """Start the work's thread (daemon: it never keeps the process alive)."""
        self.thread = threading.Thread(target=self._run, name=self.name, daemon=True)
        self.thread.start()
        return self

    def _run(self) -> None:
        mark_thread()  # its threads are the training's: the load note counts the others
        try:
            self.work(self.emit)
        except MpdemoError as err:
            self.queue.put(err)
        finally:
            self.queue.put(_DONE)

    def stop(self) -> None:
        """End the work within the step in progress; what it did stays."""
        self.stop_event.set()

    def join(self, timeout: float | None = None) -> bool:
        """Wait for the thread; True when it has ended."""
        if self.thread is not None:
            self.thread.join(timeout)
        return not self.alive

    @property
    def alive(self) -> bool:
        """Whether the work's thread is still running."""
        return self.thread is not None and self.thread.is_alive()

    def events(self, timeout: float | None = None) -> Iterator[Any]:
        """Its events until the work ends; with a timeout, None when nothing came (a heartbeat)."""
        while True:
            try:
                item = self.queue.get(timeout=timeout)
            except queue.Empty:
                yield None  # a heartbeat for UIs that poll
                continue
            if item is _DONE:
                return
            if isinstance(item, MpdemoError):
                raise item
            yield item


_DONE = object()


def stream(work: Callable[[Emit], None], stop: threading.Event, name: str) -> Iterator[Any]:
    """Run work(emit) in a Pump and yield what it emits; closing early stops and waits for it."""
    pump = Pump(work, name, stop).start()
    try:
        yield from pump.events()
    finally:
        pump.stop()
        pump.join()
