"""A lesson's recordings, shown beside the live run: only one whose runs all completed on a GPU at
the lesson's settings there counts, so no CPU recording or older size stands in. Torch-free.
"""

from __future__ import annotations

import functools
import re
from dataclasses import dataclass
from pathlib import Path

from ..config import RunConfig
from ..files.machines import cpu_short_name, gpu_short_name
from ..files.recorded import RecordingError, read_runs, reference_dir, reference_files
from ..state import on_reset
from .lessons import LESSONS

# The devices whose recordings count, read at each look (tests widen it to take the path on a CPU).
COUNTED_DEVICES: tuple[str, ...] = ("cuda",)
PREFIX = "lesson-"


@dataclass(frozen=True)
class LessonRecording:
    """One lesson's recording: the file, the device its runs ran on, the machine's name."""

    lesson: str
    path: Path
    device: str  # "cuda" (the runs' device type)
    machine_name: str  # "NVIDIA H200": the GPU's name from the file's machine record
    date: str | None  # ISO date the runs were recorded
    tag: str  # what the page puts after each of its runs' labels ("H200")


# A file's runs' device types, machine name, date, tag and each run's (label, settings).
_Facts = tuple[tuple[str, ...], str, str | None, str, tuple[tuple[str, dict[str, object]], ...]]
# Fields a recording need not share with the lesson: how long it ran, and where (checked apart).
UNCOMPARED = ("steps", "eval_slice", "watch_grads", "device")


def slug(text: str, empty: str = "device") -> str:
    """`text` as a file name's part: "NVIDIA H200" -> "nvidia-h200"."""
    return re.sub(r"[^a-z0-9]+", "-", text.lower()).strip("-") or empty


def file_name(lesson: str, machine: dict[str, object], device: str) -> str:
    """`lesson-underflow-h200.json` for runs on an H200, `lesson-underflow-cpu-epyc.json` on CPU."""
    gpu = machine.get("gpu") or {}
    if device.split(":")[0] == "cuda" and gpu.get("name"):
        tag = gpu_short_name(str(gpu["name"]))
    else:
        cpu = machine.get("cpu") or {}
        tag = "cpu " + cpu_short_name(str(cpu.get("name") or "CPU"), cpu.get("capability"))
    return f"{PREFIX}{lesson}-{slug(tag)}.json"


def is_lesson_file(name: str) -> bool:
    """Whether a runs file's name is a lesson recording's (the page closes the last lesson's)."""
    return name.startswith(PREFIX) and name.endswith(".json")


@functools.lru_cache(maxsize=64)
def _read(path: str, mtime_ns: int, size: int) -> _Facts | None:
    """What a lookup needs of a file, or None; cached by its time and size (asked on each pick)."""
    try:
        rec = read_runs(path)
    except RecordingError:
        return None
    machine = rec.machine or {}
    if any(r["summary"].get("status") != "completed" for r in rec.runs):
        return None  # a run that failed or stopped does not show the lesson
    devices = tuple(str(r["summary"].get("device") or "").split(":")[0] for r in rec.runs)
    if "cuda" in devices:  # a GPU recording names its GPU, or does not count
        name = str((machine.get("gpu") or {}).get("name") or "")
        if not name:
            return None
    else:
        name = str((machine.get("cpu") or {}).get("name") or machine.get("device_name") or "CPU")
    try:  # each run's settings, RunConfig's defaults filling what an older file lacks
        configs = tuple(
            (str(r["summary"]["label"]), RunConfig.from_dict(dict(r.get("config") or {})).to_dict())
            for r in rec.runs
        )
    except (TypeError, ValueError):
        return None
    return devices, name, rec.date, rec.tag, configs


@on_reset
def forget_recordings() -> None:
    """Read every lesson recording again on next look (mpdemo.reset())."""
    _read.cache_clear()


def recording_for(name: str) -> LessonRecording | None:
    """The newest recording of lesson `name` whose runs all ran on COUNTED_DEVICES, or None."""
    lesson = LESSONS.get(name)
    base = reference_dir()
    if lesson is None or lesson.sweep or not base.is_dir():
        return None
    found = []
    for path in reference_files(f"{PREFIX}{name}-*.json", base):  # regular files only
        try:
            st = path.stat()
        except OSError:
            continue
        facts = _read(str(path), st.st_mtime_ns, st.st_size)
        if facts is None:
            continue
        ran_on, machine_name, date, tag, configs = facts
        if not ran_on or any(d not in COUNTED_DEVICES for d in ran_on):
            continue
        want = {c.label: c.to_dict() for c in lesson.configs(ran_on[0])}  # the lesson there
        if sorted(want) != sorted(label for label, _ in configs) or any(
            cfg.get(k) != v
            for label, cfg in configs
            for k, v in want[label].items()
            if k not in UNCOMPARED
        ):
            continue
        found.append(LessonRecording(name, path, ran_on[0], machine_name, date, tag))
    return max(found, key=lambda r: r.date or "", default=None)
