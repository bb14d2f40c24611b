"""One record of a run, folded from its events once: the runs file's entry, with its speed-up
against its fp32 peer (with_speedups, only here: every table reads the records as they are)."""

from __future__ import annotations

import bisect
from collections.abc import Iterable
from typing import TYPE_CHECKING, Any

from ..config import RunConfig
from ..files.summary import Summary, with_speedups

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
        self._snapshots: dict[str, Snapshots] = {}  # each watched run's kept histograms

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
                snap = {k: d[k] for k in ("step", "scale", "format", "layers")}
                keeper = self._snapshots.setdefault(ev.run_id, Snapshots())
                run["grad_histograms"] = keeper.add(snap)
        elif ev.kind == "end":
            self._snapshots.pop(ev.run_id, None)
            run = self.current.pop(ev.run_id, None) or {"config": None, "steps": [], "evals": []}
            if run["config"] is None:  # preparation failed: no start event, the grid knows it
                cfg = next((c for c in self.configs if c.label == ev.label), None)
                run["config"] = cfg.to_dict() if cfg else None
            run.update(summary=ev.summary, status=ev.status)
            # Runs taking turns end in no telling order: every list keeps the grid's (fp32 first).
            head = str(ev.run_id).split(":", 1)[0]  # '3:torch · bf16'; else after the others
            place = int(head) if head.isdigit() else len(self._places)
            at = bisect.bisect_right(self._places, place)
            self._places.insert(at, place)
            self.finished.insert(at, run)
            self.by_id[ev.run_id] = run
            # A run's ratio needs its fp32 peer, which may end after it: all of them, each end.
            done = with_speedups(r["summary"] for r in self.finished)
            for r, s in zip(self.finished, done, strict=True):
                r["summary"] = s
            return run
        return None

    @property
    def summaries(self) -> list[Summary]:
        """The finished runs' summaries (with their speed-ups), in the grid's order."""
        return [r["summary"] for r in self.finished]


# Watched gradients' snapshots a run keeps, at most (--watch-grads 1, 2,000 steps x 4 runs grew
# a server by 2.8 GB): the first, the latest, and an even spread between.
MAX_SNAPSHOTS = 32


class Snapshots:
    """A run's watched steps, bounded and evenly spread: past the limit the stride doubles."""

    def __init__(self, limit: int = MAX_SNAPSHOTS) -> None:
        self.limit = max(3, limit)
        self.stride = 1
        self.kept: list[tuple[int, dict[str, Any]]] = []  # (place, snapshot), the spread
        self.latest: tuple[int, dict[str, Any]] | None = None
        self.seen = 0

    def add(self, snap: dict[str, Any]) -> list[dict[str, Any]]:
        """Take the next snapshot; the ones kept, oldest first (a new list each time)."""
        if self.latest is not None and self.latest[0] % self.stride == 0:
            self.kept.append(self.latest)
        self.latest = (self.seen, snap)
        self.seen += 1
        while len(self.kept) + 1 > self.limit:
            self.stride *= 2
            self.kept = [(i, s) for i, s in self.kept if i % self.stride == 0]
        return [s for _, s in self.kept] + [self.latest[1]]
