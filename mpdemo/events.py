"""The events a run emits; renderers (UI, CLI, tests) only ever see these."""

from __future__ import annotations

import dataclasses
import queue
import threading
from collections.abc import Callable, Iterator
from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Any, Literal

from .files.summary import plain
from .messages import MpdemoError

if TYPE_CHECKING:
    from .files.summary import Summary

STATUSES = ("completed", "stopped", "diverged", "failed")


@dataclass
class _Event:
    def to_dict(self) -> dict[str, Any]:
        """JSON-ready form."""
        return dataclasses.asdict(self)


@dataclass
class RunStarted(_Event):
    """A run began: its config, what it will measure, warnings known up front."""

    run_id: str
    label: str
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
class StepEvent(_Event):
    """One optimizer step (or skipped step) with its timing."""

    run_id: str
    label: str
    step: int
    loss: float
    loss_scale: float | None
    skipped: bool
    step_time_s: float
    samples_per_s: float
    tokens_per_s: float | None
    lr: float
    elapsed_s: float
    # Seconds since the comparison started (the run's own start when it runs alone): the runs
    # of a comparison take turns, and the files show it.
    wall_s: float | None = None
    kind: Literal["step"] = "step"
    # Pure 16-bit weights (or --lost-updates on): share of the weight elements this step's
    # update should have changed that kept their value (mpdemo/engine/master.py).
    lost_update_share: float | None = None


@dataclass
class EvalEvent(_Event):
    """Evaluation on the validation slice."""

    run_id: str
    label: str
    step: int
    metrics: dict[str, float]
    kind: Literal["eval"] = "eval"


@dataclass
class RunFinished(_Event):
    """A run ended; `summary` (mpdemo.files.summary.Summary) carries the DESIGN.md summary keys."""

    run_id: str
    label: str
    status: str
    summary: Summary
    kind: Literal["end"] = "end"

    def to_dict(self) -> dict[str, Any]:
        """JSON-ready form: the summary as its JSON form, not as a dataclass's fields."""
        return {
            "run_id": self.run_id,
            "label": self.label,
            "status": self.status,
            "summary": plain(self.summary),
            "kind": self.kind,
        }


@dataclass
class GridPlanned(_Event):
    """Before a grid's first run: this machine, and what to expect.

    Renderers that do not know it skip it (every consumer keys on `kind`).
    """

    machine: dict[str, Any]
    notes: list[dict[str, Any]] = field(default_factory=list)  # sentences: {"key", "args", "text"}
    # The runs take turns step by step (mpdemo.runs.together): their own steps are the
    # measurement, and the estimate counts rounds, not runs one after another.
    interleaved: bool = False
    kind: Literal["plan"] = "plan"


@dataclass
class GradHistograms(_Event):
    """Every N steps (--watch-grads N): each layer's gradient magnitudes against a format.

    `scale` is the loss scale the gradients carried (1 without a scaler); each layer is
    {"name", "bin_edges_log2", "counts", "elements", "nonzero", "flushed", "subnormal",
    "overflow"} (mpdemo/engine/gradwatch.py). The runs JSON keeps them as the run's `grad_histograms`.
    """

    run_id: str
    label: str
    step: int
    scale: float | None
    format: str
    layers: list[dict[str, Any]]
    windows: dict[str, dict[str, float]] = field(default_factory=dict)
    kind: Literal["grads"] = "grads"


Event = RunStarted | StepEvent | EvalEvent | RunFinished | GridPlanned | GradHistograms


# What a run hands its events to (the runner's queue, a test's list.append).
Emit = Callable[[Event], None]


_DONE = object()


def stream(work: Callable[[Emit], None], stop: threading.Event, name: str) -> Iterator[Any]:
    """Run work(emit) in a daemon thread of its own and yield what it emits, as it comes.

    An MpdemoError the work raises (bad input found while preparing) is raised here, in the
    caller's thread. Closing the iterator early sets `stop` and waits for the worker.
    """
    q: queue.Queue[Any] = queue.Queue()

    def run() -> None:
        from .engine.cores import mark_thread

        mark_thread()  # its threads are the training's: the load note counts the others
        try:
            work(q.put)
        except MpdemoError as err:
            q.put(err)
        finally:
            q.put(_DONE)

    worker = threading.Thread(target=run, name=name, daemon=True)
    worker.start()
    try:
        while (item := q.get()) is not _DONE:
            if isinstance(item, MpdemoError):
                raise item
            yield item
    finally:
        stop.set()
        worker.join()
