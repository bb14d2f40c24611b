"""The runs file every writer produces, read back and checked (RecordingError in one line, nothing
half-loaded), and its steps as CSV. Version 2 has a "machine"; version 1 still loads."""

from __future__ import annotations

import hashlib
import json
import logging
import os
import stat
from collections.abc import Iterator
from dataclasses import dataclass
from pathlib import Path

from ..engine.machine import machine_info
from ..state import on_reset
from ..teach.formats import LOW_PRECISION
from .atomic import write_csv_atomic, write_text_atomic
from .checks import (
    FLOAT32_MAX,
    MACHINE_RULES,
    MAX_NAME,
    MAX_NUMBER,
    MAX_STEPS_PER_RUN,
    STATUSES,
    STEP_RULES,
    SUMMARY_RULES,
    RecordingError,
    _Checker,
    _config_rules,
    small,
)
from .machines import machine_tag
from .summary import plain

FORMAT_VERSION = 2
# A visitor's upload on a public server: bound the work one file may cause.
MAX_FILE_BYTES = 32 * 2**20
# Every grid the CLI or the page may write reads back: 3 backends x 5 precisions x 10 repetitions.
MAX_RUNS = 160
REFERENCE_DIR = Path(__file__).resolve().parents[1] / "assets" / "reference"
# Another folder of shipped recordings, read at each look (a test may set it late).
REFERENCE_DIR_ENV = "MPDEMO_REFERENCE_DIR"


@dataclass
class Recording:
    """The runs of one runs file and the machine they ran on."""

    runs: list[dict[str, object]]
    machine: dict[str, object] | None
    version: int
    name: str = ""  # the file's name, for the status line
    digest: str = ""  # sha1 of the content: the same file loaded twice replaces itself

    @property
    def tag(self) -> str:
        """The short machine tag put after each run's label ('H200', 'EPYC 7B13')."""
        return machine_tag(self.machine)

    @property
    def date(self) -> str | None:
        """When the runs were recorded (ISO date) if the file says."""
        d = (self.machine or {}).get("date")
        return str(d)[:10] if d else None


def runs_document(runs: list[dict[str, object]], machine: dict[str, object] | None = None) -> dict:
    """The JSON document for `runs`, with this machine's profile unless one is given."""
    if machine is None:
        machine = machine_info()  # imports torch: only writers that trained come here
    runs = [{**r, "summary": plain(r["summary"])} for r in runs]
    return {"version": FORMAT_VERSION, "machine": machine, "runs": runs}


def write_runs(
    path: str | Path, runs: list[dict[str, object]], machine: dict | None = None
) -> None:
    """Write `runs` as a runs JSON file, whole or not at all."""
    doc = runs_document(runs, machine)
    write_text_atomic(path, json.dumps(doc, indent=1, default=str))


# The CSV's columns: a step's own, then its run's memory and speed against fp32 (on each row).
STEP_FIELDS = [
    *("run", "backend", "precision", "step", "loss", "loss_scale", "skipped", "step_time_s"),
    *("samples_per_s", "tokens_per_s", "lr", "elapsed_s", "wall_s"),
    *("saved_activation_bytes", "peak_mem_bytes"),
    *("speedup_vs_fp32", "speedup_low", "speedup_high", "speed_verdict"),
]


def write_steps_csv(path: str | Path, runs: list[dict[str, object]]) -> None:
    """The runs file's CSV form: one row per step of every run, written whole or not at all."""

    def rows() -> Iterator[dict[str, object]]:
        for r in runs:
            s = r["summary"]
            low, high = s.get("speedup_interval") or (None, None)
            own = {k: s.get(k) for k in (*STEP_FIELDS[1:3], *STEP_FIELDS[-6:])}
            own.update(run=s["label"], speedup_low=low, speedup_high=high)
            for step in r.get("steps", []):
                yield {**step, **own}

    write_csv_atomic(path, STEP_FIELDS, rows())


def read_runs(source: str | Path | bytes, name: str | None = None) -> Recording:
    """Read and check a runs file (a path or its bytes); raises RecordingError."""
    name = name or ("runs.json" if isinstance(source, bytes) else Path(source).name)
    doc, raw = read_json(source, name)
    rec = parse_document(doc, name)
    rec.digest = hashlib.sha1(raw).hexdigest()
    return rec


def read_json(source: str | Path | bytes, name: str) -> tuple[object, bytes]:
    """A file's (or bytes') JSON document and its bytes, bounded; raises RecordingError."""
    raw, size = (source, len(source)) if isinstance(source, bytes) else read_bounded(source, name)
    if size > MAX_FILE_BYTES:
        raise RecordingError(
            "runs_too_big", name=name, mb=size / 2**20, limit=MAX_FILE_BYTES // 2**20
        )
    try:
        return json.loads(raw.decode("utf-8-sig")), raw
    # ValueError: also a number of more than 4,300 digits, which json refuses to convert.
    except (ValueError, RecursionError):
        raise RecordingError("runs_not_json", name=name) from None


def read_bounded(path: str | Path, name: str) -> tuple[bytes, int]:
    """A regular file's bytes (none past the cap) and its size; a FIFO there must not block."""
    try:
        fd = os.open(path, os.O_RDONLY | getattr(os, "O_NONBLOCK", 0))
        with os.fdopen(fd, "rb") as f:
            st = os.fstat(f.fileno())
            if not stat.S_ISREG(st.st_mode):  # a folder, a FIFO, a device
                raise RecordingError("runs_unreadable", name=name, detail="not a regular file")
            raw = f.read(MAX_FILE_BYTES + 1) if st.st_size <= MAX_FILE_BYTES else b""
            return raw, max(st.st_size, len(raw))
    except OSError as err:
        raise RecordingError("runs_unreadable", name=name, detail=err.strerror or err) from None


def parse_document(doc: object, name: str = "runs.json") -> Recording:
    """Check an already-decoded runs document; raises RecordingError."""
    if not isinstance(doc, dict) or "runs" not in doc:
        raise RecordingError("runs_bad_shape", name=name, detail='no "runs" list at the top')
    c = _Checker(name)
    version = doc.get("version", 1)
    c.whole("version", version, 1, MAX_NUMBER)
    if version > FORMAT_VERSION:
        raise RecordingError("runs_newer", name=name, version=version, supported=FORMAT_VERSION)
    version = int(version)
    machine = doc.get("machine")
    if machine is not None:
        machine = c.fields("machine", machine, MACHINE_RULES)  # what the page reads of it
    runs = doc["runs"]
    if not isinstance(runs, list) or not runs:
        raise RecordingError("runs_bad_shape", name=name, detail='"runs" is not a list of runs')
    if len(runs) > MAX_RUNS:
        raise RecordingError(
            "runs_bad_shape", name=name, detail=f"{len(runs)} runs (at most {MAX_RUNS})"
        )
    checked = [_check_run(r, i, c) for i, r in enumerate(runs)]
    return Recording(runs=checked, machine=machine, version=version, name=name)


def _check_run(run: object, i: int, c: _Checker) -> dict[str, object]:
    """One run checked, as it stays in memory: what a renderer reads and a few small values."""
    where = f"runs[{i}]"
    s = c.obj(f"{where}.summary", c.has(where, run, "summary")["summary"])
    for key in ("backend", "precision"):
        if not isinstance(s.get(key), str) or not s[key].strip():
            c.fail(f"{where}.summary.{key}", "field_missing")
    summary = c.fields(f"{where}.summary", s, SUMMARY_RULES)
    label = s.get("label")
    if not isinstance(label, str) or not label.strip():
        label = f"{s['backend']} · {s['precision']}"
    config = run.get("config")
    if config is not None:
        config = c.fields(f"{where}.config", config, _config_rules())
    steps = []
    for j, st in enumerate(c.items(f"{where}.steps", run.get("steps"), MAX_STEPS_PER_RUN)):
        path = f"{where}.steps[{j}]"
        step = c.whole(f"{path}.step", c.has(path, st, "step")["step"], 0, 10**9)
        steps.append({"step": step, **c.fields(path, st, STEP_RULES)})
    evals = c.items(f"{where}.evals", run.get("evals"), MAX_STEPS_PER_RUN)
    out: dict[str, object] = {}
    if run.get("status") in STATUSES:
        out["status"] = run["status"]
    if isinstance(run.get("grid"), int) and not isinstance(run.get("grid"), bool):
        out["grid"] = run["grid"]
    shared = run.get("shared_from") if isinstance(run.get("shared_from"), dict) else {}
    origin = small({k: v for k, v in shared.items() if k in SHARED_FROM_KEYS})
    if origin:
        out["shared_from"] = origin
    hist = c.items(f"{where}.grad_histograms", run.get("grad_histograms"), MAX_STEPS_PER_RUN)
    if hist:
        out["grad_histograms"] = [_last_histogram(hist, where, c)]
    others = small({k: v for k, v in s.items() if k not in SUMMARY_RULES})
    return {
        **out,
        "config": config,
        "summary": {**summary, **others, "label": label},
        "steps": steps,
        "evals": [_evaluation(c.obj(f"{where}.evals[{j}]", ev)) for j, ev in enumerate(evals)],
    }


def _evaluation(ev: dict[str, object]) -> dict[str, object]:
    """An evaluation's step and its metrics (numbers under short names), nothing else."""
    out: dict[str, object] = {"step": ev["step"]} if _number(ev.get("step")) else {}
    if isinstance(ev.get("metrics"), dict):
        out["metrics"] = {k: v for k, v in small(ev["metrics"]).items() if _number(v)}
    return out


def _number(v: object) -> bool:
    return isinstance(v, (int, float)) and not isinstance(v, bool)


SHARED_FROM_KEYS = ("kind", "started_s_ago", "started_at", "live", "board")
WATCH_FORMATS = LOW_PRECISION  # what a run's gradients are watched against (engine.gradwatch)
MAX_LAYERS = 4096  # layers of one watched step (a 12-layer BERT has ~100)
MAX_BINS = 256  # log2 bins of one layer's histogram (the engine writes 61)


def _last_histogram(hist: list[object], where: str, c: _Checker) -> dict[str, object]:
    """A run's last watched step (the page draws only the latest), checked as it is drawn."""
    p = f"{where}.grad_histograms[{len(hist) - 1}]"
    h = c.has(p, hist[-1], "step", "format", "layers")
    c.whole(f"{p}.step", h["step"], 0, 10**9)
    if h.get("scale") is not None:
        c.number(f"{p}.scale", h["scale"], 0, FLOAT32_MAX)
    c.choice(f"{p}.format", h["format"], WATCH_FORMATS)
    layers = []
    edges0: list[int] | None = None
    for k, layer in enumerate(c.seq(f"{p}.layers", h["layers"], MAX_LAYERS)):
        lp = f"{p}.layers[{k}]"
        c.has(lp, layer, "name", "bin_edges_log2", "counts", "elements", "nonzero")
        name = c.text(f"{lp}.name", layer["name"], MAX_NAME, one_line=True)
        edges = c.seq(f"{lp}.bin_edges_log2", layer["bin_edges_log2"], MAX_BINS)
        if not edges:
            c.fail(f"{lp}.bin_edges_log2", "field_missing")
        first = int(c.whole(f"{lp}.bin_edges_log2[0]", edges[0], -2000, 2000))
        # One bin a binade, and the same bins in every layer (the page adds the layers up).
        want = edges0 or list(range(first, first + len(edges)))
        if edges != want:
            c.fail(f"{lp}.bin_edges_log2", "field_not_binades")
        edges0 = want
        counts = c.seq(f"{lp}.counts", layer["counts"], MAX_BINS + 1)
        counts = [int(c.whole(f"{lp}.counts[{i}]", n, 0, MAX_NUMBER)) for i, n in enumerate(counts)]
        if len(counts) != len(edges) + 1:
            c.fail(lp, "field_histogram_bins", counts=len(counts), edges=len(edges))
        elements = int(c.whole(f"{lp}.elements", layer["elements"], 0, MAX_NUMBER))
        nonzero = int(c.whole(f"{lp}.nonzero", layer["nonzero"], 0, MAX_NUMBER))
        # Every element is in a bin, and the exact zeros in the lowest (below 2^-40).
        if nonzero > elements or sum(counts) != elements or counts[0] < elements - nonzero:
            c.fail(lp, "field_counts_mismatch", elements=layer["elements"])
        shares = {
            key: float(c.number(f"{lp}.{key}", layer.get(key, 0.0), 0.0, 1.0))
            for key in ("flushed", "subnormal", "overflow")
        }
        whole = {"elements": elements, "nonzero": nonzero}
        layers.append({"name": name, "bin_edges_log2": want, "counts": counts, **whole, **shares})
    scale = None if h.get("scale") is None else float(h["scale"])
    return {"step": int(h["step"]), "scale": scale, "format": h["format"], "layers": layers}


def thin_steps(steps: list[dict[str, object]], max_points: int) -> list[dict[str, object]]:
    """At most ~max_points steps: an even spread plus the first, the last and every skipped step."""
    n = len(steps)
    if n <= max_points:
        return list(steps)
    skipped = [i for i, s in enumerate(steps) if s.get("skipped")][: max_points // 4]
    room = max(max_points - len(skipped), 2)
    even = {round(k * (n - 1) / (room - 1)) for k in range(room)}
    keep = sorted(even | set(skipped))
    return [steps[i] for i in keep]


def compact(runs: list[dict[str, object]], max_points: int = 500) -> list[dict[str, object]]:
    """Runs with their steps thinned (the plots draw at most 500 points a line anyway)."""
    return [{**r, "steps": thin_steps(r.get("steps") or [], max_points)} for r in runs]


def reference_dir() -> Path:
    """The shipped recordings' folder: $MPDEMO_REFERENCE_DIR, else mpdemo/assets/reference/."""
    env = os.environ.get(REFERENCE_DIR_ENV, "").strip()
    return Path(env) if env else REFERENCE_DIR


def reference_files(pattern: str = "*.json", folder: Path | None = None) -> list[Path]:
    """The shipped recordings, by name: regular files only (a FIFO opened would block start-up)."""
    folder = reference_dir() if folder is None else folder
    if not folder.is_dir():
        return []
    out = []
    for path in sorted(folder.glob(pattern)):
        try:
            st = path.stat()  # stat never opens: a FIFO is seen for what it is
            ok = stat.S_ISREG(st.st_mode) and os.access(path, os.R_OK)
            why = "not a regular file" if not stat.S_ISREG(st.st_mode) else "not readable"
        except OSError as err:
            ok, why = False, err.strerror or str(err)
        if ok:
            out.append(path)
        elif (str(path), why) not in _SKIPPED:
            _SKIPPED.add((str(path), why))
            logging.getLogger("mpdemo.files").warning(
                "reference recording %s skipped: %s", path, why
            )
    return out


_SKIPPED: set[tuple[str, str]] = set()  # what reference_files() said it left out, said once


@on_reset
def forget_skipped() -> None:
    """Say again what the reference folder leaves out (tests; a folder mended meanwhile)."""
    _SKIPPED.clear()
