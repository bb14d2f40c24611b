"""What the browser keeps of a visitor's runs across a reload (gr.BrowserState), and taking it
back: each run is checked as a runs file's, and one that fails is dropped alone."""

from __future__ import annotations

import json
import math
from typing import Any

from ...config import RunConfig
from ...files.recorded import MAX_RUNS, compact, parse_document, runs_document
from ...files.summary import with_speedups
from ...messages import MpdemoError
from ...runs.state import ComparisonState
from .gradwatch import from_record
from .plots import Series, StepPoint

# localStorage holds ~5 MB a site, and gradio encrypts and base64-encodes the JSON on top.
MAX_STORED_CHARS = 1_500_000
STORED_POINTS = 500  # per run: the plots draw at most 500 points a line
MAX_RECORDINGS = 12  # files open at once in one session; the oldest is closed for a new one


class StoredRuns:
    """Session's stored() and restore() (a mixin: it reads the Session's fields through self)."""

    __slots__ = ()  # Session is a slotted dataclass: no per-instance __dict__ from here

    def stored(self) -> dict[str, Any] | None:
        """The value for gr.BrowserState: finished runs and loaded files, thinned; None if none."""
        if not self.history and not self.recordings:
            return None
        history = [
            {
                k: r.get(k)
                for k in ("config", "summary", "steps", "evals", "status", "grid", "shared_from")
                if k != "shared_from" or r.get(k)
            }
            # The page draws a watched run's last histogram: that one comes back after a reload.
            | ({"grad_histograms": r["grad_histograms"][-1:]} if r.get("grad_histograms") else {})
            for r in self.history
        ]
        kept = ("name", "digest", "version", "machine", "runs")
        recs = [{k: getattr(r.recording, k) for k in kept} for r in self.recordings]
        history = history[-MAX_RUNS:]  # what is stored reads back: the newest runs
        points = STORED_POINTS
        while True:
            doc = runs_document(compact(history, points), self.machine() if history else {})
            doc["recordings"] = [{**r, "runs": compact(r["runs"], points)} for r in recs]
            if len(json.dumps(doc, default=str)) <= MAX_STORED_CHARS:
                return doc
            grids = sorted({r.get("grid") for r in history}, key=lambda g: g or 0)
            if any(
                r.get("grad_histograms") for r in [*history, *(x for c in recs for x in c["runs"])]
            ):
                # The watched gradients' picture goes before any run: the runs are what was asked.
                history = [_without_grads(r) for r in history]
                recs = [{**rec, "runs": [_without_grads(x) for x in rec["runs"]]} for rec in recs]
            elif len(grids) > 1:  # the oldest training goes first
                history = [r for r in history if r.get("grid") != grids[0]]
            elif recs:
                recs = recs[1:]
            elif points > 50:
                points //= 2
            else:
                return None  # one enormous run: better nothing than a broken store

    def restore(self, value: Any) -> int:
        """Take back what stored() gave the browser (JSON text, or an object from before 2026-12);
        returns how many runs came back."""
        if isinstance(value, str) and len(value) <= 2 * MAX_STORED_CHARS:
            try:
                value = json.loads(value)
            except ValueError:
                return 0
        if not isinstance(value, dict) or self.running or self.history or self.recordings:
            return 0
        history: list[dict[str, Any]] = []
        configs: dict[int, RunConfig] = {}
        runs = value.get("runs")
        for run in runs[-MAX_RUNS:] if isinstance(runs, list) else []:
            try:
                (checked,) = parse_document({**value, "runs": [run]}, "stored runs").runs
                if checked.get("config"):
                    configs[id(checked)] = RunConfig.from_dict(checked["config"])
            except (MpdemoError, TypeError, ValueError):
                continue  # this run alone: a control character, a field out of range
            history.append(checked)
        recs = []
        items = value.get("recordings")
        for item in items[-MAX_RECORDINGS:] if isinstance(items, list) else []:
            if not isinstance(item, dict):
                continue
            try:
                rec = parse_document(item, str(item.get("name") or "runs.json"))
            except (MpdemoError, TypeError, ValueError):
                continue
            rec.digest = str(item.get("digest") or "")
            recs.append(rec)
        for r in history:
            r["status"] = r.get("status") or r["summary"].get("status")
            g = r.get("grid")
            r["grid"] = g if isinstance(g, int) and not isinstance(g, bool) else 0
        if history:
            self.grid_no = max(r["grid"] for r in history)
            self.history = history
            self.runs = [r for r in history if r["grid"] == self.grid_no]
            self.configs = [configs[id(r)] for r in self.runs if id(r) in configs]
            self.series = {
                r["summary"]["label"]: series_from_steps(r["summary"]["label"], r["steps"])
                for r in self.runs
            }
            # Stored before the fold gave every run its speed-up: those that lack one get it here.
            for r, s in zip(self.runs, with_speedups(r["summary"] for r in self.runs), strict=True):
                r["summary"] = s
            self.state = ComparisonState(self.configs)
            self.state.progress = {
                "index": len(self.runs),
                "total": len(self.runs),
                "phase": "done",
            }
            # The watched gradients as the last training left them.
            self.state.grads = {
                ev.label: ev
                for ev in (from_record(r["summary"]["label"], r) for r in self.runs)
                if ev is not None
            }
        for rec in recs:
            self.add_recording(rec)
        return len(history) + sum(len(r.runs) for r in recs)


def _without_grads(run: dict[str, Any]) -> dict[str, Any]:
    return {k: v for k, v in run.items() if k != "grad_histograms"}


def series_from_steps(label: str, steps: list[dict[str, Any]]) -> Series:
    """A plot series rebuilt from a runs file's step dicts (the StepEvent fields)."""
    out = Series(label)
    for st in steps:
        t_s = st.get("step_time_s")
        out.add(
            StepPoint(
                step=st["step"],
                elapsed_s=st.get("elapsed_s"),
                loss=st.get("loss"),
                loss_scale=st.get("loss_scale"),
                skipped=bool(st.get("skipped", False)),
                step_time_s=math.nan if t_s is None else t_s,
                samples_per_s=st.get("samples_per_s"),
            )
        )
    return out
