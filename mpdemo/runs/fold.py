"""One record of a run, folded from its events once, the same way for the CLI, the UI and the runner.

A run record is the runs file's entry (mpdemo/files/recorded.py writes these as they are):
`{"config": {...}, "steps": [{...}, ...], "evals": [{...}], "summary": Summary, "status": str}`.
`RunFold.apply(event)` builds it: a start event opens one, steps and evals append to it, the end
event closes it (a run whose preparation failed has no start: its config comes from the grid).
"""

from __future__ import annotations

import bisect
from collections.abc import Iterable
from typing import TYPE_CHECKING, Any

from ..config import RunConfig

if TYPE_CHECKING:
    from ..events import Event

Run = dict[str, Any]


class RunFold:
    """The runs of a grid so far: the ones in progress by run id, the finished ones in order."""

    def __init__(self, configs: Iterable[RunConfig] = ()) -> None:
        self.configs = list(configs)
        self.current: dict[str, Run] = {}
        self.finished: list[Run] = []  # in the grid's order (runs that take turns end together)
        self._places: list[int] = []  # each finished run's place in the grid, beside `finished`
        self.by_id: dict[str, Run] = {}  # every run's record, in progress or finished

    def record(self, run_id: str) -> Run | None:
        """The record of a run (in progress or finished), by its run id."""
        return self.by_id.get(run_id)

    def apply(self, ev: Event) -> Run | None:
        """Take one engine event; the run's record when this event finished it, else None."""
        if ev.kind == "start":
            self.current[ev.run_id] = {"config": ev.config, "steps": [], "evals": []}
            self.by_id[ev.run_id] = self.current[ev.run_id]
        elif ev.kind in ("step", "eval"):
            run = self.current.get(ev.run_id)
            if run is not None:
                run[ev.kind + "s"].append(ev.to_dict())
        elif ev.kind == "grads":  # --watch-grads: the run's `grad_histograms` in the runs JSON
            run = self.current.get(ev.run_id)
            if run is not None:
                d = ev.to_dict()
                run.setdefault("grad_histograms", []).append(
                    {k: d[k] for k in ("step", "scale", "format", "layers")}
                )
        elif ev.kind == "end":
            run = self.current.pop(ev.run_id, None) or {"config": None, "steps": [], "evals": []}
            if run["config"] is None:  # preparation failed: no start event, the grid knows it
                cfg = next((c for c in self.configs if c.label == ev.label), None)
                run["config"] = cfg.to_dict() if cfg else None
            run["summary"] = ev.summary
            run["status"] = ev.status
            # Runs that take turns end within a step of each other, in no telling order: files,
            # tables and the CLI list them as the grid has them (fp32 first).
            place = _place(ev.run_id, len(self._places))
            at = bisect.bisect_right(self._places, place)
            self._places.insert(at, place)
            self.finished.insert(at, run)
            self.by_id[ev.run_id] = run
            return run
        return None

    @property
    def summaries(self) -> list[Any]:
        """The finished runs' summaries, in the grid's order."""
        return [r["summary"] for r in self.finished]


def _place(run_id: str, default: int) -> int:
    """A run's place in its grid, from its run id ('3:torch · bf16'); else after the others."""
    head = str(run_id).split(":", 1)[0]
    return int(head) if head.isdigit() else default
