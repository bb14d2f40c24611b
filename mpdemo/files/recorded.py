"""The runs JSON every writer produces (CLI, app download, bench/gpu_check.py), read back.

Shape (version 2):

    {"version": 2,
     "machine": {...},          # mpdemo.engine.machine.machine_info() of the machine that ran them
     "runs": [{"config": {...}, "summary": {...}, "steps": [{...}, ...], "evals": [...]}]}

Version 1 is the first round's `{"runs": [...]}` without a machine: it still loads, tagged
"recorded". A file from a newer version, one that is not JSON, or one of the wrong shape raises
`RecordingError` with one line that says which; nothing is half-loaded. No torch, no gradio: the
app reads files with this before any training was ever imported.
"""

from __future__ import annotations

import contextlib
import functools
import hashlib
import json
import math
import re
import string
import unicodedata
from collections.abc import Callable
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, NoReturn

from ..messages import EN, MpdemoError, render
from ..wording import ENGLISH, is_plural_spec
from .atomic import write_text_atomic

FORMAT_VERSION = 2
# A visitor's upload on a public server: bound the work one file may cause.
MAX_FILE_BYTES = 32 * 2**20
MAX_RUNS = 64
MAX_STEPS_PER_RUN = 200_000
REFERENCE_DIR = Path(__file__).resolve().parents[1] / "assets" / "reference"

# What a renderer may rely on once a file is read: a whole number converts to float and int
# without overflow (10**400 did not), a name fits a table cell and the one-line status.
MAX_PARAMS = 10**13
MAX_NUMBER = 10**15  # any whole number a file carries, and every bound below
FLOAT32_MAX = 3.4028234663852886e38  # a loss and a loss scale are fp32: any finite one fits
MAX_NAME = 200  # a label, backend, device, machine or version name
MAX_SOURCE = 1024  # a model or dataset: a Hub id or a folder
MAX_TEXT = 4000  # one warning or error sentence
MAX_DETAIL = 20_000  # a traceback
MAX_NOTES = 64  # warnings (and warning_keys) of one run
MAX_NOTE_ARGS = 32
STATUSES = ("completed", "stopped", "diverged", "failed")  # mpdemo.events.STATUSES
SPEED_VERDICTS = ("faster", "slower", "same", "unsure")
_NOTE_KEY = re.compile(r"[A-Za-z0-9_]{1,64}")
# A whole-number placeholder may be written "{n}", "{n:,}" or "{n:plural(...)}" in another
# language (tests/test_locales.py allows the swap): an argument must render under each.
_WHOLE_SPECS = ("", ",", "d", ",d", "plural(#|#)")


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
        from ..engine.machine import (
            machine_info,  # imports torch: only writers that trained call this
        )

        machine = machine_info()
    from .summary import plain  # a run's Summary goes into the file as its JSON form

    runs = [{**r, "summary": plain(r["summary"])} for r in runs]
    return {"version": FORMAT_VERSION, "machine": machine, "runs": runs}


def write_runs(path: str | Path, runs: list[dict[str, Any]], machine: dict | None = None) -> None:
    """Write `runs` as a runs JSON file (UTF-8, indented one space like the first version),
    whole or not at all: a reader never sees half a file, a failed write leaves the old one."""
    doc = runs_document(runs, machine)
    write_text_atomic(path, json.dumps(doc, indent=1, default=str))


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
    # ValueError: also a number of more than 4,300 digits, which json refuses to convert.
    except (ValueError, RecursionError):
        raise RecordingError("runs_not_json", name=name) from None
    rec = parse_document(doc, name)
    rec.digest = hashlib.sha1(raw).hexdigest()
    return rec


def parse_document(doc: Any, name: str = "runs.json") -> Recording:
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
        c.fields("machine", c.obj("machine", machine), MACHINE_RULES)
    runs = doc["runs"]
    if not isinstance(runs, list) or not runs:
        raise RecordingError("runs_bad_shape", name=name, detail='"runs" is not a list of runs')
    if len(runs) > MAX_RUNS:
        raise RecordingError(
            "runs_bad_shape", name=name, detail=f"{len(runs)} runs (at most {MAX_RUNS})"
        )
    checked = [_check_run(r, i, c) for i, r in enumerate(runs)]
    extra = {k: v for k, v in doc.items() if k not in ("version", "machine", "runs")}
    return Recording(runs=checked, machine=machine, version=version, name=name, extra=extra)


class _Checker:
    """Checks one document's fields; the first bad one raises a RecordingError naming it."""

    def __init__(self, name: str) -> None:
        self.name = name

    def fail(self, path: str, problem: str, **args: Any) -> NoReturn:
        """Raise 'name: runs[0].summary.steps is NaN' (the problem a nested, translated key)."""
        raise RecordingError(
            "runs_bad_field", name=self.name, path=path, problem={"key": problem, "args": args}
        )

    def obj(self, path: str, v: Any) -> dict[str, Any]:
        if not isinstance(v, dict):
            self.fail(path, "field_not_object")
        return v

    def seq(self, path: str, v: Any, limit: int) -> list[Any]:
        if not isinstance(v, list):
            self.fail(path, "field_not_list")
        if len(v) > limit:
            self.fail(path, "field_too_many", count=len(v), limit=limit)
        return v

    def number(self, path: str, v: Any, lo: float, hi: float, finite: bool = True) -> None:
        """A number (never a bool) within [lo, hi]; NaN and ±inf only where `finite` is False."""
        if isinstance(v, bool) or not isinstance(v, (int, float)):
            self.fail(path, "field_not_number")
        if isinstance(v, float) and math.isnan(v):
            if finite:
                self.fail(path, "field_nan")
            return
        if isinstance(v, float) and math.isinf(v):
            if finite:
                self.fail(path, "field_infinite")
            return
        if not lo <= v <= hi:  # int vs float compares exactly, however many digits
            self.fail(path, "field_out_of_range", lo=lo, hi=hi)

    def whole(self, path: str, v: Any, lo: int, hi: int) -> None:
        """A whole number within [lo, hi] (100.0 counts: another writer may put it so)."""
        self.number(path, v, lo, hi)
        if isinstance(v, float) and not v.is_integer():
            self.fail(path, "field_not_whole")

    def text(self, path: str, v: Any, limit: int, one_line: bool = False) -> None:
        """A str of at most `limit` characters; a name (`one_line`) has no control characters."""
        if not isinstance(v, str):
            self.fail(path, "field_not_text")
        if len(v) > limit:
            self.fail(path, "field_too_long", length=len(v), limit=limit)
        if one_line and any(unicodedata.category(ch) == "Cc" for ch in v):
            self.fail(path, "field_control_chars")

    def flag(self, path: str, v: Any) -> None:
        if not isinstance(v, bool):
            self.fail(path, "field_not_bool")

    def choice(self, path: str, v: Any, allowed: tuple[str, ...]) -> None:
        if not isinstance(v, str) or v not in allowed:
            self.fail(path, "field_not_choice", allowed=", ".join(allowed))

    def fields(self, path: str, data: dict[str, Any], rules: dict[str, _Rule]) -> None:
        """Each key of `rules` that `data` has: null, or what its rule allows."""
        for key, rule in rules.items():
            v = data.get(key)
            if v is not None:
                rule(self, f"{path}.{key}", v)

    def note(self, path: str, v: Any, depth: int = 0) -> None:
        """A message as the summary keeps it ({"key", "args", "text"}) that renders in any language."""
        note = self.obj(path, v)
        key = note.get("key")
        if not isinstance(key, str) or not _NOTE_KEY.fullmatch(key):
            self.fail(f"{path}.key", "field_not_key")
        if note.get("text") is not None:
            self.text(f"{path}.text", note["text"], MAX_TEXT)
        args = note.get("args")
        args = {} if args is None else self.obj(f"{path}.args", args)
        if len(args) > MAX_NOTE_ARGS:
            self.fail(f"{path}.args", "field_too_many", count=len(args), limit=MAX_NOTE_ARGS)
        for k, a in args.items():
            where = f"{path}.args.{k}"
            if isinstance(a, dict) and depth < 2:
                self.note(where, a, depth + 1)  # a nested message: "why" in a speed note
            elif isinstance(a, str):
                self.text(where, a, MAX_TEXT)
            elif isinstance(a, (int, float)) and not isinstance(a, bool):
                self.number(where, a, -MAX_NUMBER, MAX_NUMBER, finite=False)
            elif a is not None and not isinstance(a, bool):
                self.fail(where, "field_not_value")
        if not _renders(key, args):
            self.fail(path, "field_not_shown")


_Rule = Callable[[_Checker, str, Any], None]


def _whole(lo: int, hi: int) -> _Rule:
    return lambda c, p, v: c.whole(p, v, lo, hi)


def _number(lo: float, hi: float, finite: bool = True) -> _Rule:
    return lambda c, p, v: c.number(p, v, lo, hi, finite)


def _name(limit: int = MAX_NAME) -> _Rule:
    return lambda c, p, v: c.text(p, v, limit, one_line=True)


def _text(limit: int) -> _Rule:
    return lambda c, p, v: c.text(p, v, limit)


def _texts(c: _Checker, p: str, v: Any) -> None:
    for i, w in enumerate(c.seq(p, v, MAX_NOTES)):
        c.text(f"{p}[{i}]", w, MAX_TEXT)


def _notes(c: _Checker, p: str, v: Any) -> None:
    for i, w in enumerate(c.seq(p, v, MAX_NOTES)):
        c.note(f"{p}[{i}]", w)


def _interval(c: _Checker, p: str, v: Any) -> None:
    pair = c.seq(p, v, 2)
    if len(pair) != 2:
        c.fail(p, "field_not_pair")
    for i, x in enumerate(pair):
        c.number(f"{p}[{i}]", x, 0, 10**6)


def _object(c: _Checker, p: str, v: Any) -> None:
    c.obj(p, v)


_LOSS = _number(-FLOAT32_MAX, FLOAT32_MAX, finite=False)  # a diverged run's loss is NaN or inf
_SCALE = _number(0, FLOAT32_MAX, finite=False)
_SECONDS = _number(0, 10**7)
_RATE = _number(0, 10**12)
_BYTES = _number(0, 10**18)

# Every Summary field a renderer reads (tests/test_hostile_files.py checks none is missing).
SUMMARY_RULES: dict[str, _Rule] = {
    "label": _name(),
    "backend": _name(),
    "precision": _name(),
    "device": _name(),
    "model": _name(MAX_SOURCE),
    "dataset": _name(MAX_SOURCE),
    "requested_dtype": _name(),
    "effective_dtype": _name(),
    "params": _whole(0, MAX_PARAMS),
    "steps": _whole(0, MAX_STEPS_PER_RUN),
    "skipped_steps": _whole(0, MAX_STEPS_PER_RUN),
    "final_loss": _LOSS,
    "mean_step_s": _SECONDS,
    "median_step_s": _SECONDS,
    "samples_per_s": _RATE,
    "tokens_per_s": _RATE,
    "step_time_cv": _number(0, 10**6),
    "step_time_mad": _number(0, 10**6),
    "saved_activation_bytes": _BYTES,
    "peak_mem_bytes": _BYTES,
    "peak_mem_kind": _name(),
    "final_loss_scale": _SCALE,
    "status": lambda c, p, v: c.choice(p, v, STATUSES),
    "train_rows": _whole(0, MAX_NUMBER),
    "eval_rows": _whole(0, MAX_NUMBER),
    "processes": _whole(0, 10**6),
    "elapsed_s": _SECONDS,
    "warnings": _texts,
    "warning_keys": _notes,
    "eval_loss": _LOSS,
    "eval_accuracy": _number(0, 1),
    "error": _text(MAX_TEXT),
    "error_detail": _text(MAX_DETAIL),
    "fp8_audit": _object,
    "speedup_vs_fp32": _number(0, 10**6),
    "speedup_same_maths": lambda c, p, v: c.flag(p, v),
    "speedup_interval": _interval,
    "speed_verdict": lambda c, p, v: c.choice(p, v, SPEED_VERDICTS),
    "speed_reason": _name(),
    "speed_check": lambda c, p, v: _speed_check(c, p, v),
    "machine": _name(),
}
_RATIO = _number(1e-9, 10**6)  # a speed-up and its interval's ends: the slowdown is 1 / it
# mpdemo.runs.timing.SpeedCheck's fields, as a summary's speed_check carries them (its sentence is
# rendered from them: plan.check_note).
SPEED_CHECK_RULES: dict[str, _Rule] = {
    "precision": _name(),
    "baseline": _name(),
    "speedup": _RATIO,
    "low": _RATIO,
    "high": _RATIO,
    "rounds": _whole(0, 10**9),
    "block": _whole(0, 10**9),
    "step_s": _SECONDS,
    "baseline_step_s": _SECONDS,
    "spread": _number(0, 10**6),
    "others_cpu": _number(0, 1),
    "steal": _number(0, 1),
    "verdict": lambda c, p, v: c.choice(p, v, SPEED_VERDICTS),
    "reason": _name(),
}


def _speed_check(c: _Checker, p: str, v: Any) -> None:
    check = c.obj(p, v)
    c.fields(p, check, SPEED_CHECK_RULES)
    if not isinstance(check.get("precision"), str):
        c.fail(f"{p}.precision", "field_missing")
    if check.get("verdict") == "slower":  # "1.9x slower (1.7-2.2x)" divides by all three
        for key in ("speedup", "low", "high"):
            if check.get(key) is None:
                c.fail(f"{p}.{key}", "field_missing")


STEP_RULES: dict[str, _Rule] = {
    "loss": _LOSS,
    "loss_scale": _SCALE,
    "step_time_s": _SECONDS,
    "samples_per_s": _RATE,
    "tokens_per_s": _RATE,
    "lr": _number(0, MAX_NUMBER),
    "elapsed_s": _SECONDS,
    "wall_s": _SECONDS,  # seconds since the comparison started (its runs take turns)
    "skipped": lambda c, p, v: c.flag(p, v),
}
_CPU_RULES: dict[str, _Rule] = {
    "name": _name(),
    "capability": _name(),
    "flags": _object,
    "cores": _whole(0, 10**6),
}
_GPU_RULES: dict[str, _Rule] = {
    "kind": _name(),
    "name": _name(),
    "capability": _name(),
    "bf16": lambda c, p, v: c.flag(p, v),
    "memory_bytes": _BYTES,
    "count": _whole(0, 10**6),
}


def _versions(c: _Checker, p: str, v: Any) -> None:
    versions = c.obj(p, v)
    if len(versions) > MAX_NOTE_ARGS:
        c.fail(p, "field_too_many", count=len(versions), limit=MAX_NOTE_ARGS)
    for k, x in versions.items():
        c.text(p, k, MAX_NAME, one_line=True)
        if x is not None:
            c.text(f"{p}.{k}", x, MAX_NAME, one_line=True)


MACHINE_RULES: dict[str, _Rule] = {
    "device_kind": _name(),
    "device_name": _name(),
    "cpu": lambda c, p, v: c.fields(p, c.obj(p, v), _CPU_RULES),
    "gpu": lambda c, p, v: c.fields(p, c.obj(p, v), _GPU_RULES),
    "versions": _versions,
    "python": _name(),
    "platform": _name(),
    "torch_threads": _whole(0, 10**6),
    "date": _name(64),
}


def _config_rule(default: Any) -> _Rule:
    # A run's settings as RunConfig declares them: a renderer reads steps and loss_scaling, a
    # reload rebuilds a RunConfig from the rest.
    if isinstance(default, bool):
        return lambda c, p, v: c.flag(p, v)
    if isinstance(default, int):
        return _whole(0, 2**32)
    if isinstance(default, float):
        return _number(0, 2.0**64)
    return _name(MAX_SOURCE)


@functools.cache
def _config_rules() -> dict[str, _Rule]:
    from dataclasses import fields

    from ..config import RunConfig  # no torch: config and catalog are plain data

    rules = {f.name: _config_rule(f.default) for f in fields(RunConfig)}
    rules["steps"] = _whole(0, MAX_STEPS_PER_RUN)
    return rules


def _renders(key: str, args: dict[str, Any]) -> bool:
    """Whether the message renders, in English and with any whole-number spec a language uses."""
    try:
        render(key, args)
        template = EN.get(key)
        if template is None:
            return True  # an unknown key is shown as the key itself
        for _, field_name, spec, conv in string.Formatter().parse(template):
            if field_name is None or field_name not in args:
                continue
            if spec in _WHOLE_SPECS[:-1] or is_plural_spec(spec):
                for variant in _WHOLE_SPECS:
                    shown = "{v" + (f"!{conv}" if conv else "") + f":{variant}}}"
                    # render() falls back to the template and its arguments on these three
                    with contextlib.suppress(KeyError, IndexError, ValueError):
                        ENGLISH.format(shown, {"v": args[field_name]})
    except Exception:  # noqa: BLE001 - whatever it raises, the page would raise it too
        return False
    return True


def _check_run(run: Any, i: int, c: _Checker) -> dict[str, Any]:
    where = f"runs[{i}]"
    c.obj(where, run)
    if "summary" not in run:
        c.fail(f"{where}.summary", "field_missing")
    s = c.obj(f"{where}.summary", run["summary"])
    for key in ("backend", "precision"):
        if not isinstance(s.get(key), str) or not s[key].strip():
            c.fail(f"{where}.summary.{key}", "field_missing")
    c.fields(f"{where}.summary", s, SUMMARY_RULES)
    label = s.get("label")
    if not isinstance(label, str) or not label.strip():
        label = f"{s['backend']} · {s['precision']}"
    config = run.get("config")
    if config is not None:
        c.fields(f"{where}.config", c.obj(f"{where}.config", config), _config_rules())
    steps = run.get("steps")
    steps = [] if steps is None else c.seq(f"{where}.steps", steps, MAX_STEPS_PER_RUN)
    for j, st in enumerate(steps):
        path = f"{where}.steps[{j}]"
        c.obj(path, st)
        if "step" not in st:
            c.fail(f"{path}.step", "field_missing")
        c.whole(f"{path}.step", st["step"], 0, 10**9)
        c.fields(path, st, STEP_RULES)
    evals = run.get("evals")
    evals = [] if evals is None else c.seq(f"{where}.evals", evals, MAX_STEPS_PER_RUN)
    for j, ev in enumerate(evals):
        c.obj(f"{where}.evals[{j}]", ev)
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


def reference_files() -> list[Path]:
    """The recordings shipped in assets/reference/, by name."""
    if not REFERENCE_DIR.is_dir():
        return []
    return sorted(REFERENCE_DIR.glob("*.json"))
