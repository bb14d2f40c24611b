"""The runs JSON every writer produces (CLI, app download, bench/gpu_check.py), read back.

Shape (version 2):

    {"version": 2,
     "machine": {...},          # mpdemo.machine.machine_info() of the machine that ran them
     "runs": [{"config": {...}, "summary": {...}, "steps": [{...}, ...], "evals": [...]}]}

Version 1 is the first round's `{"runs": [...]}` without a machine: it still loads, tagged
"recorded". A file from a newer version, one that is not JSON, or one of the wrong shape raises
`RecordingError` with one line that says which; nothing is half-loaded. No torch, no gradio: the
app reads files with this before any training was ever imported.
"""

from __future__ import annotations

import hashlib
import json
import math
import re
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from .messages import MpdemoError

FORMAT_VERSION = 2
# A visitor's upload on a public server: bound the work one file may cause.
MAX_FILE_BYTES = 32 * 2**20
MAX_RUNS = 64
MAX_STEPS_PER_RUN = 200_000
REFERENCE_DIR = Path(__file__).resolve().parent.parent / "assets" / "reference"

# Numbers a summary may carry; each must be a number or null (renderers divide by them).
_SUMMARY_NUMBERS = (
    "params",
    "steps",
    "skipped_steps",
    "final_loss",
    "eval_accuracy",
    "eval_loss",
    "mean_step_s",
    "median_step_s",
    "samples_per_s",
    "tokens_per_s",
    "peak_mem_bytes",
    "final_loss_scale",
    "elapsed_s",
)
_STEP_NUMBERS = ("loss", "loss_scale", "step_time_s", "samples_per_s", "tokens_per_s", "lr")


class RecordingError(MpdemoError):
    """A runs file that cannot be loaded: not JSON, the wrong shape, or a newer version."""


@dataclass
class Recording:
    """The runs of one runs file and the machine they ran on."""

    runs: list[dict[str, Any]]
    machine: dict[str, Any] | None
    version: int
    name: str = ""  # the file's name, for the status line
    digest: str = ""  # sha1 of the content: the same file loaded twice replaces itself
    extra: dict[str, Any] = field(default_factory=dict)  # other top-level keys, kept as they are

    @property
    def tag(self) -> str:
        """The short machine tag put after each run's label ('H200', 'EPYC 7B13')."""
        return machine_tag(self.machine)

    @property
    def date(self) -> str | None:
        """When the runs were recorded (ISO date) if the file says."""
        d = (self.machine or {}).get("date")
        return str(d)[:10] if d else None


# --- writing -----------------------------------------------------------------------------------


def runs_document(runs: list[dict[str, Any]], machine: dict[str, Any] | None = None) -> dict:
    """The JSON document for `runs`, with this machine's profile unless one is given."""
    if machine is None:
        from .machine import machine_info  # imports torch: only writers that trained call this

        machine = machine_info()
    from .summary import plain  # a run's Summary goes into the file as its JSON form

    runs = [{**r, "summary": plain(r["summary"])} for r in runs]
    return {"version": FORMAT_VERSION, "machine": machine, "runs": runs}


def write_runs(path: str | Path, runs: list[dict[str, Any]], machine: dict | None = None) -> None:
    """Write `runs` as a runs JSON file (UTF-8, indented one space like the first version)."""
    doc = runs_document(runs, machine)
    Path(path).write_text(json.dumps(doc, indent=1, default=str), encoding="utf-8")


# --- reading -----------------------------------------------------------------------------------


def read_runs(source: str | Path | bytes, name: str | None = None) -> Recording:
    """Read and check a runs file (a path or its bytes); raises RecordingError."""
    if isinstance(source, bytes):
        raw = source
        name = name or "runs.json"
    else:
        path = Path(source)
        name = name or path.name
        try:
            size = path.stat().st_size
        except OSError as err:
            raise RecordingError("runs_unreadable", name=name, detail=err.strerror or err) from None
        if size > MAX_FILE_BYTES:
            raise RecordingError(
                "runs_too_big", name=name, mb=size / 2**20, limit=MAX_FILE_BYTES // 2**20
            )
        raw = path.read_bytes()
    if len(raw) > MAX_FILE_BYTES:
        raise RecordingError(
            "runs_too_big", name=name, mb=len(raw) / 2**20, limit=MAX_FILE_BYTES // 2**20
        )
    try:
        doc = json.loads(raw.decode("utf-8-sig"))
    except (UnicodeDecodeError, json.JSONDecodeError, RecursionError):
        raise RecordingError("runs_not_json", name=name) from None
    rec = parse_document(doc, name)
    rec.digest = hashlib.sha1(raw).hexdigest()
    return rec


def parse_document(doc: Any, name: str = "runs.json") -> Recording:
    """Check an already-decoded runs document; raises RecordingError."""
    if not isinstance(doc, dict) or "runs" not in doc:
        raise RecordingError("runs_bad_shape", name=name, detail='no "runs" list at the top')
    version = doc.get("version", 1)
    if isinstance(version, bool) or not isinstance(version, int) or version < 1:
        raise RecordingError("runs_bad_shape", name=name, detail=f'"version" is {version!r}')
    if version > FORMAT_VERSION:
        raise RecordingError("runs_newer", name=name, version=version, supported=FORMAT_VERSION)
    machine = doc.get("machine")
    if machine is not None and not isinstance(machine, dict):
        raise RecordingError("runs_bad_shape", name=name, detail='"machine" is not an object')
    runs = doc["runs"]
    if not isinstance(runs, list) or not runs:
        raise RecordingError("runs_bad_shape", name=name, detail='"runs" is not a list of runs')
    if len(runs) > MAX_RUNS:
        raise RecordingError(
            "runs_bad_shape", name=name, detail=f"{len(runs)} runs (at most {MAX_RUNS})"
        )
    checked = [_check_run(r, i, name) for i, r in enumerate(runs)]
    extra = {k: v for k, v in doc.items() if k not in ("version", "machine", "runs")}
    return Recording(runs=checked, machine=machine, version=version, name=name, extra=extra)


def _bad(name: str, where: str, what: str) -> RecordingError:
    return RecordingError("runs_bad_shape", name=name, detail=f"{where}: {what}")


def _number_or_none(v: Any) -> bool:
    return v is None or (isinstance(v, (int, float)) and not isinstance(v, bool))


def _check_run(run: Any, i: int, name: str) -> dict[str, Any]:
    where = f"run {i + 1}"
    if not isinstance(run, dict) or not isinstance(run.get("summary"), dict):
        raise _bad(name, where, 'no "summary" object')
    s = run["summary"]
    for key in ("backend", "precision"):
        if not isinstance(s.get(key), str) or not s[key]:
            raise _bad(name, where, f'summary has no "{key}"')
    for key in _SUMMARY_NUMBERS:
        if not _number_or_none(s.get(key)):
            raise _bad(name, where, f'summary "{key}" is not a number')
    label = s.get("label")
    if not isinstance(label, str) or not label.strip():
        label = f"{s['backend']} · {s['precision']}"
    config = run.get("config")
    if config is not None and not isinstance(config, dict):
        raise _bad(name, where, '"config" is not an object')
    steps = run.get("steps", [])
    if not isinstance(steps, list):
        raise _bad(name, where, '"steps" is not a list')
    if len(steps) > MAX_STEPS_PER_RUN:
        raise _bad(name, where, f"{len(steps)} steps (at most {MAX_STEPS_PER_RUN})")
    for j, st in enumerate(steps):
        if not isinstance(st, dict):
            raise _bad(name, f"{where}, step {j + 1}", "not an object")
        n = st.get("step")
        if isinstance(n, bool) or not isinstance(n, int):
            raise _bad(name, f"{where}, step {j + 1}", '"step" is not a whole number')
        for key in _STEP_NUMBERS:
            if not _number_or_none(st.get(key)):
                raise _bad(name, f"{where}, step {j + 1}", f'"{key}" is not a number')
        if not isinstance(st.get("skipped", False), bool):
            raise _bad(name, f"{where}, step {j + 1}", '"skipped" is not true or false')
    evals = run.get("evals", [])
    if not isinstance(evals, list):
        raise _bad(name, where, '"evals" is not a list')
    # JSON may carry NaN/Infinity (Python writes them for a diverged loss): kept as floats.
    return {
        **run,
        "config": config,
        "summary": {**s, "label": label},
        "steps": steps,
        "evals": evals,
    }


# --- machine tags ------------------------------------------------------------------------------

_VENDOR = re.compile(r"\b(NVIDIA|GeForce|Tesla|AMD|Intel|Radeon)\b", re.IGNORECASE)
_CPU_NOISE = re.compile(
    r"\((R|TM|C)\)|\bCPU\b|\bProcessor\b|@.*$|\b\d+-Core\b|\b(Platinum|Gold|Silver|Bronze)\b",
    re.IGNORECASE,
)


def gpu_short_name(name: str) -> str:
    """'NVIDIA H200' → 'H200', 'NVIDIA A100-SXM4-80GB' → 'A100', 'NVIDIA GeForce RTX 4090' → 'RTX 4090'."""
    words = _VENDOR.sub(" ", name).split()
    if not words:
        return "GPU"
    take = 2 if words[0].upper() in ("RTX", "GTX", "QUADRO", "TITAN") and len(words) > 1 else 1
    short = " ".join(words[:take]).split("-")[0] if take == 1 else " ".join(words[:take])
    if "MIG" in (w.upper() for w in words):  # a slice of a GPU is not the whole GPU
        short += " MIG"
    return short


def cpu_short_name(name: str, capability: str | None = None) -> str:
    """'AMD EPYC 7B13 64-Core Processor' → 'EPYC 7B13'; a name with no model number gets the ISA."""
    short = " ".join(_CPU_NOISE.sub(" ", _VENDOR.sub(" ", name)).split()) or "CPU"
    if not any(ch.isdigit() for ch in short) and capability:
        short += f" {capability}"  # 'AMD EPYC' alone names three different CPUs seen here
    return short


def machine_tag(machine: dict[str, Any] | None) -> str:
    """A short, unambiguous name for the device a recording ran on."""
    if not machine:
        return "recorded"
    gpu = machine.get("gpu") or {}
    kind = machine.get("device_kind")
    if kind == "cuda" and gpu.get("name"):
        return gpu_short_name(str(gpu["name"]))
    if kind == "mps":
        return "Apple GPU"
    cpu = machine.get("cpu") or {}
    name = cpu.get("name") or machine.get("device_name") or "CPU"
    return cpu_short_name(str(name), cpu.get("capability"))


def describe_machine(machine: dict[str, Any] | None) -> str:
    """One line: 'NVIDIA H200 · torch 2.13.0 · transformers 5.24.0 · accelerate 1.15.0'."""
    if not machine:
        return "an unknown machine"
    parts = [str(machine.get("device_name") or machine_tag(machine))]
    if machine.get("device_kind") == "cuda":
        cpu = (machine.get("cpu") or {}).get("name")
        if cpu:
            parts.append(f"CPU {cpu}")
    versions = machine.get("versions") or {}
    parts += [
        f"{k} {v}"
        for k, v in versions.items()
        if k in ("torch", "transformers", "accelerate") and v
    ]
    return " · ".join(parts)


# --- compacting for the browser -----------------------------------------------------------------


def thin_steps(steps: list[dict[str, Any]], max_points: int) -> list[dict[str, Any]]:
    """At most ~max_points steps: an even spread plus the first, the last and every skipped step."""
    n = len(steps)
    if n <= max_points:
        return list(steps)
    skipped = [i for i, s in enumerate(steps) if s.get("skipped")][: max_points // 4]
    room = max(max_points - len(skipped), 2)
    even = {round(k * (n - 1) / (room - 1)) for k in range(room)}
    keep = sorted(even | set(skipped))
    return [steps[i] for i in keep]


def compact(runs: list[dict[str, Any]], max_points: int = 500) -> list[dict[str, Any]]:
    """Runs with their steps thinned (the plots draw at most 500 points a line anyway)."""
    return [{**r, "steps": thin_steps(r.get("steps") or [], max_points)} for r in runs]


def finite_or_none(x: Any) -> float | None:
    """x as a float when it is a finite number, else None (for JSON without NaN)."""
    if isinstance(x, bool) or not isinstance(x, (int, float)):
        return None
    return float(x) if math.isfinite(x) else None


def reference_files() -> list[Path]:
    """The recordings shipped in assets/reference/, by name."""
    if not REFERENCE_DIR.is_dir():
        return []
    return sorted(REFERENCE_DIR.glob("*.json"))
