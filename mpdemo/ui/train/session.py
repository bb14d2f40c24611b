"""One browser session's training: its Runner, the runs it measured, and their downloads.

A `Session` lives in a `gr.State` (never a module global), so no session sees another's
lines. It only ever holds events and summaries, never torch objects. What one session may hold
is bounded (opened files are thinned on load, at most RECORDED_POINTS_CAP of their steps in
all), and its files live in a folder of this process that goes with the session (`close`) and,
for processes that died, at the next start (`sweep_session_dirs`).
"""

from __future__ import annotations

import functools
import json
import math
import os
import shutil
import tempfile
import threading
import time
import weakref
from collections.abc import Mapping
from dataclasses import dataclass, field
from pathlib import Path
from typing import TYPE_CHECKING, Any

import pandas as pd

from ...config import RunConfig
from ...files.recorded import Recording, compact, parse_document, thin_steps, write_runs
from ...files.summary import Summary, scale_text, typical_step_s, with_speedups, write_csv
from ...messages import MpdemoError
from ...runs.fold import RunFold
from ..i18n import message, t
from .plots import Series

if TYPE_CHECKING:
    from pandas.io.formats.style import Styler

# What a browser keeps of a visitor's runs (gr.BrowserState, localStorage): thinned steps, and
# at most about this many characters of JSON (localStorage holds ~5 MB per site, encrypted and
# base64-encoded on top); the oldest trainings and recordings go first.
MAX_STORED_CHARS = 1_500_000
STORED_POINTS = 500  # per run: the plots draw at most 500 points a line
MAX_RECORDINGS = 12  # files open at once in one session; the oldest is closed for a new one
# What one session holds of opened files: each run thinned to the points a plot line draws, and
# at most this many steps over every file (the oldest files close first). A 29.5 MB file of
# 10 runs x 200,000 steps held ~630 MB as read; thinned, its 5,000 points are a few MB.
RECORDED_POINTS = STORED_POINTS
RECORDED_POINTS_CAP = 64 * RECORDED_POINTS  # one file of the most runs a file may have
BIG_PARSE_STEPS = 50_000  # a file of more steps than this: the heap is trimmed once it is thinned
# Every session's files (downloads, scripts) under one folder per process, so a start-up can
# delete what a process that died left behind without touching a live one's.
SESSIONS_ROOT = Path(tempfile.gettempdir()) / "mpdemo-sessions"


def recording_source(rec: Recording) -> str:
    """'runs.json 2026-11-30': a runs file's name and the date it was recorded."""
    return " ".join(p for p in (rec.name, rec.date) if p) or "runs.json"


@dataclass
class Recorded:
    """A loaded runs file: its runs under labels that name the machine, and their series."""

    recording: Recording
    labels: list[str]  # one per run: '<label> · <machine tag>', unique on the page
    series: dict[str, Series]

    @property
    def source(self) -> str:
        """What tells this file apart from another of the same machine: its name and date."""
        return recording_source(self.recording)

    @property
    def points(self) -> int:
        """The steps this file holds in the session, over all its runs."""
        return sum(len(r.get("steps") or []) for r in self.recording.runs)


def series_from_steps(label: str, steps: list[dict[str, Any]]) -> Series:
    """A plot series rebuilt from a runs file's step dicts (the StepEvent fields)."""
    from types import SimpleNamespace

    out = Series(label)
    for st in steps:
        t_s = st.get("step_time_s")
        out.add(
            SimpleNamespace(
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


@dataclass
class Session:
    """Per-session state: the current grid, its live series, finished runs, files."""

    runner: Any = None  # mpdemo.runs.runner.Runner while a grid runs
    configs: list[RunConfig] = field(default_factory=list)
    series: dict[str, Series] = field(default_factory=dict)
    runs: list[dict[str, Any]] = field(default_factory=list)  # this grid's finished runs
    history: list[dict[str, Any]] = field(default_factory=list)  # every finished run, all grids
    grid_no: int = 0
    fold: RunFold = field(default_factory=RunFold)  # the runs in progress, by run id
    progress: dict[str, Any] = field(default_factory=dict)  # what the status line shows
    errors: list[tuple[str, dict[str, Any]]] = field(default_factory=list)  # (label, note dict)
    stop_requested: bool = False
    armed: bool = False  # a Train click is on its way (maybe queued) and has not started
    input_error: Any = None  # the MpdemoError the last click was refused with, until the next
    view: Any = None  # plots.View: how the plots are drawn (smoothing, x axis)
    plan: Any = None  # the grid's GridPlanned event: this machine, the calibrated step, sentences
    estimate: Any = None  # mpdemo.runs.plan.GridEstimate: seconds left for the whole grid
    outdir: str | None = None
    files: dict[str, str] = field(default_factory=dict)  # csv/json → path of the last written
    files_error: str | None = None  # why the last write of the downloads failed, if it did
    writes: int = 0
    recordings: list[Recorded] = field(default_factory=list)  # loaded runs files, oldest first

    def __deepcopy__(self, memo: dict[int, Any]) -> Session:
        # gr.State deep-copies its default; a fresh session must never share a runner.
        return Session()

    # --- lifecycle ----------------------------------------------------------------------
    def begin(self, configs: list[RunConfig]) -> None:
        """Forget the live series of the previous grid (its files stay until replaced)."""
        self.stop()
        self.configs = list(configs)
        self.series = {}
        self.fold = RunFold()
        self.errors = []
        self.progress = {
            "index": 0,
            "total": len(configs),
            "phase": "preparing",
            "label": configs[0].label if configs else "",
            "t0": time.monotonic(),
        }
        self.plan = None
        self.estimate = None
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
        """Session ended (tab closed, or its state expired): stop the worker, let go of every
        run and opened file, and delete the session's folder."""
        self.stop()
        self.configs, self.series, self.fold, self.errors = [], {}, RunFold(), []
        self.runs, self.history, self.recordings = [], [], []
        self.progress, self.plan, self.estimate = {}, None, None
        self.files = {}
        if self.outdir:
            shutil.rmtree(self.outdir, ignore_errors=True)
            self.outdir = None

    def folder(self) -> Path:
        """This session's folder for downloads and scripts (made on first use)."""
        if self.outdir is None or not Path(self.outdir).is_dir():
            root = process_dir()
            root.mkdir(parents=True, exist_ok=True)
            self.outdir = tempfile.mkdtemp(prefix="session-", dir=root)
        return Path(self.outdir)

    # --- events -------------------------------------------------------------------------
    def apply(self, ev: Any) -> bool:
        """Take one engine event; returns True when a run finished (the table changes)."""
        kind = ev.kind
        self.fold.configs = self.configs  # a run that failed to start takes its config here
        finished = self.fold.apply(ev)  # the run records: mpdemo.runs.fold, as the CLI and runner
        if self.estimate is not None:
            self.estimate.update(ev)
        if kind == "plan":
            from ...runs.plan import GridEstimate, cached_calibration  # torch: a grid is running

            self.plan = ev
            if ev.steps is not None:  # fitted to about a minute: the runs do fewer steps
                self.configs = [c.replace(steps=ev.steps) for c in self.configs]
            cal = cached_calibration(self.configs[0]) if ev.calibration and self.configs else None
            # A replayed comparison's steps keep the times they were recorded at (broadcast).
            clock = getattr(self.runner, "clock", time.monotonic)
            self.estimate = GridEstimate(self.configs, cal, clock=clock)
            return False
        if kind == "start":
            origin = self.shared_from()
            if origin:  # another visitor's comparison, or a board's: the files say so
                self.fold.current[ev.run_id]["shared_from"] = origin
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
            self.series.setdefault(ev.label, Series(ev.label)).add(ev)
            s = self.series[ev.label]
            recent = s.step_ms[-20:]
            self.progress.update(
                label=ev.label,
                step=ev.step,
                step_s=sum(recent) / len(recent) / 1000.0 if recent else None,
            )
            return False
        if kind == "end" and finished is not None:
            run = finished
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
    def summaries(self) -> list[Summary]:
        """The finished runs' summaries with speedup_vs_fp32, then the loaded files' runs."""
        return with_speedups(r["summary"] for r in self.runs) + self.recorded_summaries()

    def table(self, lang: str) -> Styler:
        """The summary table as the page shows it in `lang`: one row per finished run."""
        return shown_table(summary_table(self.summaries(), lang), lang)

    def write_files(self) -> dict[str, str]:
        """Write every run this session finished as CSV and JSON (the CLI's formats).

        A write that fails (a full disk, a read-only folder) returns {} and says why in
        `files_error`: the runs, table and plots are shown all the same.
        """
        if not self.history:
            return {}
        try:
            new = self._write_files()
        except OSError as err:
            self.files_error = err.strerror or type(err).__name__
            return {}
        self.files_error = None
        for old in set(self.files.values()) - set(new.values()):
            Path(old).unlink(missing_ok=True)  # gradio has copied it to its cache already
        self.files = new
        return self.files

    def _write_files(self) -> dict[str, str]:
        # A fresh name per write: the browser caches downloads by URL.
        self.writes += 1
        base = self.folder() / f"mpdemo-runs-{time.strftime('%Y%m%d-%H%M%S')}-{self.writes}"
        several = len({r["grid"] for r in self.history}) > 1
        runs = []
        for r in self.history:
            summary = r["summary"]
            if several:  # the same label from two trainings: name the training in the files
                summary = Summary.from_dict(summary).replace(
                    label=f"#{r['grid']} {summary['label']}"
                )
            runs.append(
                {
                    "config": r["config"],
                    "summary": summary,
                    "steps": r["steps"],
                    "evals": r["evals"],
                    **({"shared_from": r["shared_from"]} if r.get("shared_from") else {}),
                }
            )
        new = {"csv": str(base.with_suffix(".csv")), "json": str(base.with_suffix(".json"))}
        try:
            write_csv(new["csv"], runs)
            write_runs(new["json"], runs, self.machine())
        except OSError:
            for path in new.values():  # never one of the pair, or half a file, offered
                Path(path).unlink(missing_ok=True)
            raise
        return new

    # --- recorded runs (runs files loaded next to the live runs) ---------------------------
    def add_recording(self, rec: Recording) -> list[str]:
        """Show a runs file's runs next to the live ones; the same file again replaces itself.

        The file is thinned first (what the plots draw of a line), and older files close until
        the session holds at most RECORDED_POINTS_CAP steps of them. Everything that can fail
        is done before the session changes: a file that cannot be drawn leaves it as it was.
        """
        # Fresh objects for what is kept, made once the parsed file is gone: the steps kept are
        # spread over the whole parse, and each would pin its piece of the heap (every piece,
        # for an even spread), so a server's memory would only grow with each file opened.
        text = json.dumps(
            [
                {**r, "evals": thin_steps(r.get("evals") or [], RECORDED_POINTS)}
                for r in compact(rec.runs, RECORDED_POINTS)
            ]
        )
        parsed = sum(len(r.get("steps") or []) for r in rec.runs)
        rec.runs = []
        if parsed > BIG_PARSE_STEPS:  # the parse held many times the file's size: give it back
            give_back_memory()
        rec.runs = json.loads(text)
        kept = [r for r in self.recordings if r.recording.digest != rec.digest]
        kept = kept[-(MAX_RECORDINGS - 1) :]
        new_points = sum(len(r.get("steps") or []) for r in rec.runs)
        while kept and sum(r.points for r in kept) + new_points > RECORDED_POINTS_CAP:
            kept = kept[1:]
        taken = set(self.live_labels()) | {lab for r in kept for lab in r.labels}
        source = recording_source(rec)
        labels = []
        for run in rec.runs:
            base = f"{run['summary']['label']} · {rec.tag}"
            label, n = base, 2
            if label in taken:  # two recordings from one machine: name the file and its date
                label = base = f"{base} · {source}"
            while label in taken:  # the same name and date: only then a number
                label, n = f"{base} ({n})", n + 1
            taken.add(label)
            labels.append(label)
        series = {
            lab: series_from_steps(lab, run.get("steps") or [])
            for lab, run in zip(labels, rec.runs, strict=True)
        }
        self.recordings = [*kept, Recorded(rec, labels, series)]
        return labels

    def live_labels(self) -> list[str]:
        """The current training's run labels, in grid order."""
        return [c.label for c in self.configs]

    def recorded_labels(self) -> list[str]:
        """Every loaded run's label, in loading order."""
        return [lab for r in self.recordings for lab in r.labels]

    def plot_labels(self) -> list[str]:
        """What the plots draw: the current training's runs, then the recorded ones."""
        return self.live_labels() + self.recorded_labels()

    def plot_series(self) -> dict[str, Series]:
        """label → series for every line the plots draw."""
        out = dict(self.series)
        for r in self.recordings:
            out.update(r.series)
        return out

    def plot_configs(self) -> list[Any]:
        """What the plots read of each line's run (label, precision, loss_scaling, steps): the
        current training's configs, then a stand-in for each recorded run."""
        from types import SimpleNamespace

        out: list[Any] = list(self.configs)
        for r in self.recordings:
            for lab, run in zip(r.labels, r.recording.runs, strict=True):
                cfg, summ = run.get("config") or {}, run["summary"]
                steps = cfg.get("steps") if isinstance(cfg.get("steps"), int) else None
                out.append(
                    SimpleNamespace(
                        label=lab,
                        backend=summ["backend"],
                        precision=summ["precision"],
                        # A file without its config: a logged scale says a scaler ran.
                        loss_scaling=bool(cfg.get("loss_scaling", r.series[lab].has_scale)),
                        steps=steps or summ.get("steps") or len(run.get("steps") or []) or 1,
                    )
                )
        return out

    def recorded_summaries(self) -> list[Summary]:
        """Each loaded run's summary under its page label, with speed-ups within its own file."""
        out: list[Summary] = []
        for r in self.recordings:
            # The file's own key (summary.peers): never compared with another file of the same
            # machine, nor with this page's runs.
            key = f"{r.source} · {r.recording.digest[:12]}"
            out += with_speedups(
                Summary.from_dict({**run["summary"], "source": key}).replace(
                    label=lab, machine=r.recording.tag
                )
                for lab, run in zip(r.labels, r.recording.runs, strict=True)
            )
        return out

    def clear(self) -> None:
        """Clear runs: stop a training, forget every finished, restored and loaded run."""
        self.stop()
        self.configs, self.series, self.fold, self.errors = [], {}, RunFold(), []
        self.runs, self.history, self.recordings = [], [], []
        self.progress = {}
        for path in self.files.values():
            Path(path).unlink(missing_ok=True)
        self.files = {}
        self.files_error = None

    def shared_from(self) -> dict[str, Any] | None:
        """Where the current grid's runs come from when another visitor or a board ran them."""
        origin = getattr(self.runner, "shared_from", None)
        return origin() if callable(origin) else None

    def machine(self) -> dict[str, Any]:
        """The profile of the machine the runs ran on: the GPU worker's on ZeroGPU (its runner
        brought it back), else this process's."""
        return getattr(self.runner, "machine", None) or _machine()

    # --- what the browser keeps across a reload ---------------------------------------------
    def stored(self) -> dict[str, Any] | None:
        """The value for gr.BrowserState: finished runs and loaded files, thinned; None if none."""
        if not self.history and not self.recordings:
            return None
        from ...files.recorded import runs_document

        history = [
            {
                k: r.get(k)
                for k in ("config", "summary", "steps", "evals", "status", "grid", "shared_from")
                if k != "shared_from" or r.get(k)
            }
            for r in self.history
        ]
        recs = [
            {
                "name": r.recording.name,
                "digest": r.recording.digest,
                "version": r.recording.version,
                "machine": r.recording.machine,
                "runs": r.recording.runs,
            }
            for r in self.recordings
        ]
        points = STORED_POINTS
        while True:
            doc = runs_document(compact(history, points), self.machine() if history else {})
            doc["recordings"] = [{**r, "runs": compact(r["runs"], points)} for r in recs]
            size = len(json.dumps(doc, default=str))
            if size <= MAX_STORED_CHARS:
                return doc
            grids = sorted({r.get("grid") for r in history}, key=lambda g: g or 0)
            if len(grids) > 1:  # the oldest training goes first
                history = [r for r in history if r.get("grid") != grids[0]]
            elif recs:
                recs = recs[1:]
            elif points > 50:
                points //= 2
            else:
                return None  # one enormous run: better nothing than a broken store

    def restore(self, value: Any) -> int:
        """Take back what stored() gave the browser; returns how many runs came back (0: none).

        The value comes from the visitor's browser: it is checked like any runs file, and a
        value that fails any check restores nothing at all.
        """
        if not isinstance(value, dict) or self.running or self.history or self.recordings:
            return 0
        try:
            history: list[dict[str, Any]] = []
            if value.get("runs"):
                history = parse_document(value, "stored runs").runs
            recs = []
            items = value.get("recordings") or []
            if not isinstance(items, list) or len(items) > MAX_RECORDINGS:
                return 0
            for item in items:
                if not isinstance(item, dict):
                    return 0
                rec = parse_document(item, str(item.get("name") or "runs.json"))
                rec.digest = str(item.get("digest") or "")
                recs.append(rec)
            configs = {id(r): RunConfig.from_dict(r["config"]) for r in history if r.get("config")}
        except (MpdemoError, TypeError, ValueError):
            return 0
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
            self.progress = {"index": len(self.runs), "total": len(self.runs), "phase": "done"}
        for rec in recs:
            self.add_recording(rec)
        return len(history) + sum(len(r.runs) for r in recs)

    def script_file(self, label: str) -> str | None:
        """Write the reproduce script of the run `label` (`python -m mpdemo code`'s text)."""
        cfg = next((c for c in self.configs if c.label == label), None)
        if cfg is None:
            return None
        from ...classroom.broadcast import script_note
        from ...teach.listing import script_filename, script_for

        try:
            # A run this visitor watched but did not train says so in its first lines.
            text = script_note(self.shared_from()) + script_for(cfg)
        except MpdemoError:  # e.g. the device went away: the run itself says what happened
            return None
        try:
            path = self.folder() / script_filename(cfg)
            path.write_text(text, encoding="utf-8")
        except OSError:  # no room to write it: the button stays off, the page goes on
            return None
        return str(path)


# --- a session's lifetime ------------------------------------------------------------------------

# gradio session hash → that tab's Session, so closing the tab frees it at once (gradio keeps a
# closed tab's gr.State an hour before its delete_callback runs). Weak: the gr.State owns it, and
# nothing but `release` reads it, with the hash of the tab that closed.
_OPEN: weakref.WeakValueDictionary[str, Session] = weakref.WeakValueDictionary()
_OPEN_LOCK = threading.Lock()
_PROCESS_DIR: Path | None = None


def attach(session: Session, key: str | None) -> Session:
    """Remember that the tab `key` (gradio's session hash) holds `session`; returns it."""
    if key:
        with _OPEN_LOCK:
            _OPEN[key] = session
    return session


def release(key: str | None) -> None:
    """The tab `key` closed: stop its training and free its runs, files and folder now."""
    if not key:
        return
    with _OPEN_LOCK:
        session = _OPEN.pop(key, None)
    if session is not None:
        held = bool(session.recordings or session.history)
        session.close()
        if held:
            give_back_memory()


def give_back_memory() -> None:
    """Collect what a closed session or a parsed file left, and hand freed heap back to the OS
    (glibc keeps it otherwise: a server's RSS would only ever grow)."""
    import gc

    gc.collect()
    trim = _malloc_trim()
    if trim is not None:
        trim(0)


@functools.cache
def _malloc_trim() -> Any:
    import ctypes
    import ctypes.util

    name = ctypes.util.find_library("c")
    try:
        return ctypes.CDLL(name).malloc_trim if name else None
    except (OSError, AttributeError):  # not glibc (musl, macOS): nothing to trim
        return None


def open_sessions() -> int:
    """How many tabs' sessions are attached (for the soak benchmark and tests)."""
    return len(_OPEN)


def process_dir() -> Path:
    """This process's folder under SESSIONS_ROOT ('<pid>-<random>')."""
    global _PROCESS_DIR
    if _PROCESS_DIR is None:
        _PROCESS_DIR = SESSIONS_ROOT / f"{os.getpid()}-{os.urandom(4).hex()}"
    return _PROCESS_DIR


def _alive(pid: int) -> bool:
    try:
        os.kill(pid, 0)
    except ProcessLookupError:
        return False
    except OSError:  # it exists, owned by another user
        return True
    return True


def sweep_session_dirs(root: Path | None = None) -> int:
    """At start-up: delete the session folders of processes that are gone; returns how many.

    Earlier versions put each session's folder straight in the temporary folder
    ('mpdemo-session-*'): those older than a day go too.
    """
    root = root or SESSIONS_ROOT
    removed = 0
    if root.is_dir():
        for child in root.iterdir():
            pid_text = child.name.split("-", 1)[0]
            if child == _PROCESS_DIR or (pid_text.isdigit() and _alive(int(pid_text))):
                continue
            shutil.rmtree(child, ignore_errors=True)
            removed += 1
    cutoff = time.time() - 86400
    for old in Path(tempfile.gettempdir()).glob("mpdemo-session-*"):
        try:
            if old.is_dir() and old.stat().st_mtime < cutoff:
                shutil.rmtree(old, ignore_errors=True)
                removed += 1
        except OSError:
            continue
    return removed


def _machine() -> dict[str, Any]:
    from ...engine.machine import (
        machine_info,  # torch is loaded: a run has finished in this process
    )

    return machine_info()


# --- the summary table --------------------------------------------------------------------

# (header key, summary key), most telling first; the width (px) keeps headers on one line.
_COLUMNS: list[tuple[str, str, int]] = [
    ("col_run", "label", 132),
    ("col_status", "status", 100),
    ("col_speedup", "speedup_vs_fp32", 64),
    ("col_samples", "samples_per_s", 74),
    ("col_step_ms", "median_step_s", 64),  # the typical step (the mean in older files)
    ("col_loss", "final_loss", 68),
    ("col_eval", "eval", 70),
    # What the presets and the memory sentence are about, before the wide warnings column:
    # at 1400 px only about eight columns show without scrolling.
    ("col_saved", "saved_activation_bytes", 84),
    ("col_skipped", "skipped_steps", 76),
    ("col_scale", "final_loss_scale", 70),
    ("col_warnings", "warnings", 300),
    ("col_effective", "effective_dtype", 66),
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
    "speedup_vs_fp32",
    "final_loss_scale",
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


def speedup_cell(s: Mapping[str, Any], lang: str) -> str:
    """'1,52× [1,41–1,60] más rápido' in the locale, 'ran in fp32', or '': the CLI's cell, localized."""
    from ..i18n import number

    if s.get("speed_reason") == "ran_fp32":
        return message("same_maths", {}, lang)
    v = s.get("speedup_vs_fp32")
    if v is None:
        return ""
    if s.get("precision") == "fp32" or not v:
        return ""  # the baseline: 1× of itself says nothing
    # One notation everywhere: "N× faster" or "N× slower" with N >= 1 (0.54× read as "slower").
    slower = v < 1
    ratio = 1 / v if slower else v
    text = f"{number(ratio, lang, '.2f')}×"
    iv = s.get("speedup_interval")
    if iv and all(iv):
        lo, hi = sorted(1 / x if slower else x for x in iv)
        text += f" [{number(lo, lang, '.2f')}–{number(hi, lang, '.2f')}]"
    text += f" {t('verdict_slower' if slower else 'verdict_faster', lang)}"
    verdict = s.get("speed_verdict")
    if verdict in ("same", "unsure"):  # the interval did not decide: say so beside the figure
        text += f" ({t(f'verdict_{verdict}', lang)})"
    return text


def number_cell(value: Any, lang: str) -> str:
    """A table number as `lang` writes it: "1.523" and "0,6931" in Spanish, whole floats whole."""
    from ..i18n import number

    if isinstance(value, float) and value.is_integer() and abs(value) < 1e15:
        value = int(value)
    return number(value, lang, ",")


def shown_table(table: pd.DataFrame, lang: str) -> Styler:
    """The table with its numbers in `lang`'s digits; the cells stay numbers, so columns sort.

    gr.Dataframe (6.31) shows a pandas Styler's formatted text when it is not interactive.
    """
    numeric = [c for c in table.columns if pd.api.types.is_numeric_dtype(table[c])]
    return table.style.format(lambda v: number_cell(v, lang), subset=numeric, na_rep="")


def summary_table(summaries: list[Mapping[str, Any]], lang: str) -> pd.DataFrame:
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
            elif key == "median_step_s":
                step = typical_step_s(s)
                row.append(_num(step * 1000.0) if step is not None else None)
            elif key in ("peak_mem_bytes", "saved_activation_bytes"):
                row.append(_num(v / 2**20, 3) if v is not None else None)
            elif key == "speedup_vs_fp32":
                row.append(speedup_cell(s, lang))
            elif key == "final_loss_scale":
                row.append(scale_text(v) if v is not None else "")  # exact: 65536, 2^20, 0.5
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
