"""One browser session's training: its Runner, the runs it measured, and their downloads.

A `Session` lives in a `gr.State` (never a module global), so no session sees another's
lines. It only ever holds events and summaries, never torch objects.
"""

from __future__ import annotations

import copy
import math
import shutil
import tempfile
import time
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import pandas as pd

from ..config import RunConfig
from .i18n import message, t
from .plots import Series


@dataclass
class Session:
    """Per-session state: the current grid, its live series, finished runs, files."""

    runner: Any = None  # mpdemo.runner.Runner while a grid runs
    configs: list[RunConfig] = field(default_factory=list)
    series: dict[str, Series] = field(default_factory=dict)
    runs: list[dict[str, Any]] = field(default_factory=list)  # this grid's finished runs
    history: list[dict[str, Any]] = field(default_factory=list)  # every finished run, all grids
    grid_no: int = 0
    current: dict[str, dict[str, Any]] = field(default_factory=dict)  # run_id → run in progress
    progress: dict[str, Any] = field(default_factory=dict)  # what the status line shows
    errors: list[tuple[str, dict[str, Any]]] = field(default_factory=list)  # (label, note dict)
    skip_suffix: str = "skipped"
    stop_requested: bool = False
    outdir: str | None = None
    files: dict[str, str] = field(default_factory=dict)  # csv/json → path of the last written
    writes: int = 0

    def __deepcopy__(self, memo: dict[int, Any]) -> Session:
        # gr.State deep-copies its default; a fresh session must never share a runner.
        return Session()

    # --- lifecycle ----------------------------------------------------------------------
    def begin(self, configs: list[RunConfig], skip_suffix: str) -> None:
        """Forget the live series of the previous grid (its files stay until replaced)."""
        self.stop()
        self.configs = list(configs)
        self.series = {}
        self.current = {}
        self.errors = []
        self.progress = {
            "index": 0,
            "total": len(configs),
            "phase": "preparing",
            "label": configs[0].label if configs else "",
            "t0": time.monotonic(),
        }
        self.skip_suffix = skip_suffix
        self.stop_requested = False
        self.runs = []
        self.grid_no += 1

    def stop(self) -> None:
        """Ask the worker to end the current run within a step and skip the rest."""
        if self.runner is not None:
            self.runner.stop()

    @property
    def running(self) -> bool:
        """Whether this session's worker thread is alive."""
        return self.runner is not None and self.runner.alive

    def close(self) -> None:
        """Session ended: stop the worker, delete the session's files."""
        self.stop()
        if self.outdir:
            shutil.rmtree(self.outdir, ignore_errors=True)
            self.outdir = None

    # --- events -------------------------------------------------------------------------
    def apply(self, ev: Any) -> bool:
        """Take one engine event; returns True when a run finished (the table changes)."""
        kind = ev.kind
        if kind == "start":
            self.current[ev.run_id] = {"config": ev.config, "steps": [], "evals": []}
            self.series[ev.label] = Series(ev.label)
            self.progress.update(
                index=ev.index,
                total=ev.total,
                label=ev.label,
                step=0,
                steps=ev.steps,
                phase="running",
                step_s=None,
            )
            return False
        if kind == "step":
            run = self.current.get(ev.run_id)
            if run is not None:
                run["steps"].append(ev.to_dict())
            self.series.setdefault(ev.label, Series(ev.label)).add(ev)
            s = self.series[ev.label]
            recent = s.step_ms[-20:]
            self.progress.update(
                label=ev.label,
                step=ev.step,
                step_s=sum(recent) / len(recent) / 1000.0 if recent else None,
            )
            return False
        if kind == "eval":
            run = self.current.get(ev.run_id)
            if run is not None:
                run["evals"].append(ev.to_dict())
            return False
        if kind == "end":
            run = self.current.pop(ev.run_id, None) or {"config": None, "steps": [], "evals": []}
            if run["config"] is None:  # preparation failed: no start event
                cfg = next((c for c in self.configs if c.label == ev.label), None)
                run["config"] = cfg.to_dict() if cfg else None
            run["summary"] = ev.summary
            run["status"] = ev.status
            run["grid"] = self.grid_no
            self.runs.append(run)
            self.history.append(run)  # stays downloadable until the session ends
            if ev.status == "failed":
                keys = ev.summary.get("warning_keys") or []
                note = (
                    keys[-1]
                    if keys
                    else {"key": "failed", "args": {"detail": ev.summary.get("error")}}
                )
                self.errors.append((ev.label, note))
            self.progress.update(
                last_status=ev.status, last_label=ev.label, last_step=ev.summary.get("steps", 0)
            )
            return True
        return False

    # --- renderers ----------------------------------------------------------------------
    def summaries(self) -> list[dict[str, Any]]:
        """Copies of the finished runs' summaries with speedup_vs_fp32 added."""
        from ..cli import add_speedups

        out = [copy.deepcopy(r["summary"]) for r in self.runs]
        add_speedups(out)
        return out

    def table(self, lang: str) -> pd.DataFrame:
        """The summary table in `lang`: one row per finished run."""
        return summary_table(self.summaries(), lang)

    def write_files(self) -> dict[str, str]:
        """Write every run this session finished as CSV and JSON (the CLI's formats)."""
        from ..cli import write_csv, write_json

        if not self.history:
            return {}
        if self.outdir is None:
            self.outdir = tempfile.mkdtemp(prefix="mpdemo-session-")
        # A fresh name per write: the browser caches downloads by URL.
        self.writes += 1
        base = Path(self.outdir) / f"mpdemo-runs-{time.strftime('%Y%m%d-%H%M%S')}-{self.writes}"
        several = len({r["grid"] for r in self.history}) > 1
        runs = []
        for r in self.history:
            summary = r["summary"]
            if several:  # the same label from two trainings: name the training in the files
                summary = {**summary, "label": f"#{r['grid']} {summary.get('label', '')}"}
            runs.append(
                {
                    "config": r["config"],
                    "summary": summary,
                    "steps": r["steps"],
                    "evals": r["evals"],
                }
            )
        write_csv(str(base.with_suffix(".csv")), runs)
        write_json(str(base.with_suffix(".json")), runs)
        new = {"csv": str(base.with_suffix(".csv")), "json": str(base.with_suffix(".json"))}
        for old in set(self.files.values()) - set(new.values()):
            Path(old).unlink(missing_ok=True)  # gradio has copied it to its cache already
        self.files = new
        return self.files

    def script_file(self, label: str) -> str | None:
        """Write a runnable script reproducing the run `label` of this grid; None without codegen."""
        cfg = next((c for c in self.configs if c.label == label), None)
        if cfg is None:
            return None
        try:
            from ..codegen import script_for  # the lead's module; imported only when asked

            text = script_for(cfg)
        except Exception:  # noqa: BLE001 - a missing script must never break a training
            return None
        if self.outdir is None:
            self.outdir = tempfile.mkdtemp(prefix="mpdemo-session-")
        path = Path(self.outdir) / f"mpdemo_{cfg.backend}_{cfg.precision}.py"
        path.write_text(text, encoding="utf-8")
        return str(path)


# --- the summary table --------------------------------------------------------------------

# (header key, summary key), most telling first; the width (px) keeps headers on one line.
_COLUMNS: list[tuple[str, str, int]] = [
    ("col_run", "label", 132),
    ("col_status", "status", 100),
    ("col_speedup", "speedup_vs_fp32", 64),
    ("col_samples", "samples_per_s", 74),
    ("col_step_ms", "mean_step_s", 64),
    ("col_loss", "final_loss", 68),
    ("col_eval", "eval", 70),
    ("col_warnings", "warnings", 300),
    ("col_effective", "effective_dtype", 66),
    ("col_skipped", "skipped_steps", 76),
    ("col_scale", "final_loss_scale", 70),
    ("col_peak", "peak_mem_bytes", 76),
    ("col_backend", "backend", 92),
    ("col_precision", "precision", 86),
    ("col_requested", "requested_dtype", 86),
    ("col_device", "device", 80),
    ("col_params", "params", 86),
    ("col_steps", "steps", 60),
    ("col_tokens", "tokens_per_s", 86),
]
COLUMN_WIDTHS = [f"{w}px" for _, _, w in _COLUMNS]
TEXT_COLUMNS = {
    "label",
    "status",
    "effective_dtype",
    "warnings",
    "backend",
    "precision",
    "requested_dtype",
    "device",
}


def _num(v: Any, digits: int = 4) -> float | None:
    if v is None:
        return None
    try:
        x = float(v)
    except (TypeError, ValueError):
        return None
    if not math.isfinite(x) or x == 0:
        return x if math.isfinite(x) else None
    return float(f"{x:.{digits}g}")


def warnings_text(summary: dict[str, Any], lang: str) -> str:
    """The run's warnings in `lang`, from warning_keys (English text as a fallback)."""
    keys = summary.get("warning_keys")
    if keys:
        return "\n".join(message(w.get("key", ""), w.get("args") or {}, lang) for w in keys)
    return "\n".join(summary.get("warnings") or [])


def summary_table(summaries: list[dict[str, Any]], lang: str) -> pd.DataFrame:
    """One row per summary; numbers rounded, statuses and warnings in `lang`."""
    # Classifiers report accuracy (and a loss); LMs only a loss: one "eval" column either way.
    by_accuracy = any(s.get("eval_accuracy") is not None for s in summaries) or not summaries
    rows = []
    for s in summaries:
        row: list[Any] = []
        for _, key, _w in _COLUMNS:
            v = s.get(key)
            if key == "status":
                row.append(t(f"st_{v}", lang) if v else "")
            elif key == "warnings":
                row.append(warnings_text(s, lang))
            elif key == "eval":
                row.append(_num(s.get("eval_accuracy" if by_accuracy else "eval_loss")))
            elif key == "mean_step_s":
                row.append(_num(v * 1000.0) if v is not None else None)
            elif key == "peak_mem_bytes":
                row.append(_num(v / 2**20, 3) if v is not None else None)
            elif key == "speedup_vs_fp32":
                row.append(round(v, 2) if v is not None else None)
            elif key in ("params", "steps", "skipped_steps"):
                row.append(int(v) if v is not None else None)
            elif key in TEXT_COLUMNS:
                row.append("" if v is None else str(v))
            else:
                row.append(_num(v))
        rows.append(row)
    headers = [
        t("col_eval_acc" if by_accuracy else "col_eval_loss", lang) if key == "eval" else t(k, lang)
        for k, key, _w in _COLUMNS
    ]
    return pd.DataFrame(rows, columns=headers)
