"""One browser session's training (in a gr.State, never a global): its runner, the runs it
measured, its opened files (bounded: RECORDED_POINTS_CAP) and its downloads' folder."""

from __future__ import annotations

import json
import shutil
import tempfile
import time
from dataclasses import dataclass, field
from pathlib import Path
from typing import TYPE_CHECKING, Any

from ... import engine
from ...classroom.viewer import SharedFrom, Viewer, script_note
from ...config import RunConfig
from ...events import Event
from ...files.recorded import Recording, compact, thin_steps, write_runs, write_steps_csv
from ...files.summary import Summary, with_speedups
from ...messages import MpdemoError
from ...notebook.writer import comparison_notebook, write_notebook
from ...runs.runner import RunnerInterface
from ...runs.state import ComparisonState
from ...teach.lessons import lesson_of
from ...teach.listing import script_filename, script_for
from .plots import PlotRun, Series, View
from .session_life import give_back_memory, process_dir
from .session_store import MAX_RECORDINGS, STORED_POINTS, StoredRuns, series_from_steps
from .session_table import shown_table, summary_table

if TYPE_CHECKING:
    from pandas.io.formats.style import Styler

# Opened files' runs are thinned to what a line draws, at most this many steps in all (a 29.5 MB
# file of 10 runs x 200,000 steps held ~630 MB as read; thinned, a few MB).
RECORDED_POINTS = STORED_POINTS
RECORDED_POINTS_CAP = 64 * RECORDED_POINTS  # one file of the most runs a file may have
BIG_PARSE_STEPS = 50_000  # a file of more steps than this: the heap is trimmed once it is thinned


def recording_source(rec: Recording) -> str:
    """'runs.json 2026-11-30': a runs file's name and the date it was recorded."""
    return " ".join(p for p in (rec.name, rec.date) if p) or "runs.json"


@dataclass(slots=True)
class Recorded:
    """A loaded runs file: its runs under labels that name the machine, and their series."""

    recording: Recording
    labels: list[str]  # one per run: '<label> · <machine tag>', unique on the page
    series: dict[str, Series]

    @property
    def points(self) -> int:
        """The steps this file holds in the session, over all its runs."""
        return sum(len(r.get("steps") or []) for r in self.recording.runs)


# slots: a stale attribute fails loudly; weakref_slot: the open sessions' registry is weak.
@dataclass(slots=True, weakref_slot=True)
class Session(StoredRuns):
    """Per-session state: the current grid, its live series, finished runs, files."""

    runner: RunnerInterface | None = None  # while a comparison runs (a Runner, Viewer...)
    configs: list[RunConfig] = field(default_factory=list)
    series: dict[str, Series] = field(default_factory=dict)
    runs: list[dict[str, Any]] = field(default_factory=list)  # this grid's finished runs
    history: list[dict[str, Any]] = field(default_factory=list)  # every finished run, all grids
    grid_no: int = 0
    # The comparison's derived state: its runner's (folded there once), else the session's own.
    state: ComparisonState = field(default_factory=lambda: ComparisonState([]))
    origins: dict[str, Any] = field(default_factory=dict)  # run id -> shared_from, if shared
    stop_requested: bool = False
    armed: bool = False  # a Train click is on its way (maybe queued) and has not started
    input_error: MpdemoError | None = None  # why the last click was refused, until the next
    view: View = field(default_factory=View)  # how the plots are drawn (smoothing, x axis)
    all_columns: bool = False  # the "All columns" box: every frame's table draws those columns
    outdir: str | None = None
    files: dict[str, str] = field(default_factory=dict)  # csv/json → path of the last written
    files_error: str | None = None  # why the last write of the downloads failed, if it did
    writes: int = 0
    recordings: list[Recorded] = field(default_factory=list)  # loaded runs files, oldest first

    def __deepcopy__(self, memo: dict[int, Any]) -> Session:
        # gr.State deep-copies its default; a fresh session must never share a runner.
        return Session()

    def begin(self, configs: list[RunConfig], runner: RunnerInterface | None = None) -> None:
        """Follow `runner`'s comparison (every repetition's run in `configs`); its state is read."""
        self.stop()
        self.runner = runner
        self.configs = list(configs)
        self.series = {}
        self.state = runner.state if runner is not None else ComparisonState(self.configs)
        self.origins = {}
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
        """Session ended: stop the worker, let go of every run and file, delete its folder."""
        self.clear()
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

    def apply(self, ev: Event) -> bool:
        """Draw one event's step and keep a finished run; True when a run finished."""
        if self.runner is None:
            self.state.fold.configs = self.configs  # a run that failed to start: its config
            self.state.apply(ev)
        if ev.kind == "start":
            origin = self.shared_from()
            if origin:  # another visitor's comparison, or a board's: the files say so
                self.origins[ev.run_id] = origin
            self.series[ev.label] = Series(ev.label)
        elif ev.kind == "step":
            self.series.setdefault(ev.label, Series(ev.label)).add(ev)
        elif ev.kind == "end" and (finished := self.state.fold.record(ev.run_id)) is not None:
            # This session's copy: the record itself is the comparison's (shared by its viewers).
            run = {**finished, "grid": self.grid_no}
            if ev.run_id in self.origins:
                run["shared_from"] = self.origins[ev.run_id]
            self.runs.append(run)
            self.history.append(run)  # stays downloadable until the session ends
            # An fp32 run's end gives the runs before it their speed-ups (in the fold's records).
            done = {f["summary"]["label"]: f["summary"] for f in self.state.fold.finished}
            for r in self.runs:
                r["summary"] = done.get(r["summary"]["label"], r["summary"])
            return True
        return False

    def summaries(self) -> list[Summary]:
        """The finished runs' summaries with speedup_vs_fp32, then the loaded files' runs."""
        return [r["summary"] for r in self.runs] + self.recorded_summaries()

    def table(self, lang: str) -> Styler:
        """The summary table as the page shows it in `lang`: one row per finished run."""
        return shown_table(summary_table(self.summaries(), lang, self.all_columns), lang)

    def write_files(self) -> dict[str, str]:
        """Write every finished run as CSV and JSON (the CLI's formats); a failed write returns {}
        and says why in `files_error`."""
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
            run = {k: r[k] for k in ("config", "summary", "steps", "evals")}
            run.update((k, r[k]) for k in ("shared_from", "grad_histograms") if r.get(k))
            if several:  # the same label from two trainings: name the training in the files
                label = f"#{r['grid']} {r['summary']['label']}"
                run["summary"] = Summary.from_dict(r["summary"]).replace(label=label)
            runs.append(run)
        new = {"csv": str(base.with_suffix(".csv")), "json": str(base.with_suffix(".json"))}
        try:
            write_steps_csv(new["csv"], runs)
            write_runs(new["json"], runs, self.machine())
        except OSError:
            for path in new.values():  # never one of the pair, or half a file, offered
                Path(path).unlink(missing_ok=True)
            raise
        return new

    def add_recording(self, rec: Recording) -> list[str]:
        """Show a runs file's runs beside the live ones, thinned (the same file replaces itself;
        older ones close past RECORDED_POINTS_CAP); a file that cannot be drawn changes nothing."""
        # Fresh objects, made once the parse is gone: kept steps would each pin their heap piece.
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

    def plot_configs(self) -> list[RunConfig | PlotRun]:
        """What the plots read of each line's run: the configs, then a PlotRun a recorded run."""
        out: list[RunConfig | PlotRun] = list(self.configs)
        for r in self.recordings:
            for lab, run in zip(r.labels, r.recording.runs, strict=True):
                cfg, summ = run.get("config") or {}, run["summary"]
                steps = cfg.get("steps") if isinstance(cfg.get("steps"), int) else None
                steps = steps or summ.get("steps") or len(run.get("steps") or []) or 1
                # A file without its config: a logged scale says a scaler ran.
                scaled = bool(cfg.get("loss_scaling", r.series[lab].has_scale))
                out.append(PlotRun(lab, summ["backend"], summ["precision"], scaled, steps))
        return out

    def recorded_summaries(self) -> list[Summary]:
        """Each loaded run's summary under its page label, with speed-ups within its own file."""
        out: list[Summary] = []
        for r in self.recordings:
            # The file's own key (summary.peers): compared with no other file's runs, nor the page's.
            key = f"{recording_source(r.recording)} · {r.recording.digest[:12]}"
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
        self.configs, self.series, self.state = [], {}, ComparisonState([])
        self.runs, self.history, self.recordings = [], [], []
        for path in self.files.values():
            Path(path).unlink(missing_ok=True)
        self.files = {}
        self.files_error = None

    def shared_from(self) -> SharedFrom | None:
        """Where the current grid's runs come from when another visitor or a board ran them."""
        return self.runner.shared_from() if isinstance(self.runner, Viewer) else None

    def machine(self) -> dict[str, Any]:
        """The machine the runs ran on: the GPU worker's on ZeroGPU, else this process's."""
        return self.state.machine or engine.machine_info()

    def script_file(self, label: str) -> str | None:
        """Write the reproduce script of the run `label` (`python -m mpdemo code`'s text)."""
        cfg = next((c for c in self.configs if c.label == label), None)
        if cfg is None:
            return None
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

    def notebook_file(self, lang: str) -> str | None:
        """Write the comparison as a Jupyter notebook in `lang` (to run where a GPU is)."""
        if not self.configs:
            return None
        lesson = lesson_of(list(self.configs), any_device=True)
        path = self.folder() / f"mpdemo-{lesson.name if lesson else 'comparison'}.ipynb"
        try:
            write_notebook(path, comparison_notebook(list(self.configs), lang))
        except OSError:  # as the script's
            return None
        return str(path)
