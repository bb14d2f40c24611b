"""The runs file's field checker: rule tables say what each field a renderer reads may hold, and
keep only that (twelve open 20 MiB files of unread keys took a server from 229 to 3,801 MiB)."""

from __future__ import annotations

import contextlib
import functools
import math
import re
import string
import unicodedata
from collections.abc import Callable
from dataclasses import fields
from typing import Any, NoReturn

from ..config import RunConfig
from ..engine.machine import CPU_FLAGS
from ..messages import EN, MpdemoError, render
from ..runs.timing import VERDICTS
from ..wording import ENGLISH, is_plural_spec

MAX_STEPS_PER_RUN = 200_000
# What a renderer may rely on: a number converts without overflow (10**400 did not), a name fits.
MAX_PARAMS = 10**13
MAX_NUMBER = 10**15  # any whole number a file carries, and every bound below
FLOAT32_MAX = 3.4028234663852886e38  # a loss and a loss scale are fp32: any finite one fits
MAX_NAME = 200  # a label, backend, device, machine or version name
MAX_SOURCE = 1024  # a model or dataset: a Hub id or a folder
MAX_TEXT = 4000  # one warning or error sentence
MAX_DETAIL = 20_000  # a traceback
MAX_NOTES = 64  # warnings (and warning_keys) of one run
MAX_NOTE_ARGS = 32
STATUSES = ("completed", "stopped", "diverged", "failed")  # a RunFinished's status
_NOTE_KEY = re.compile(r"[A-Za-z0-9_]{1,64}")
# Another language may write a whole-number placeholder any of these ways: each must render.
_WHOLE_SPECS = ("", ",", "d", ",d", "plural(#|#)")


def scalar(v: object) -> bool:
    """None, a bool, a number or a name-long string: what may stay of another writer's figures."""
    return (
        v is None
        or isinstance(v, (bool, int, float))
        or (isinstance(v, str) and len(v) <= MAX_NAME)
    )


def small(data: object, limit: int = 16) -> dict[str, object]:
    """At most `limit` of a dict's keys that hold a scalar (another writer's own figures)."""
    if not isinstance(data, dict):
        return {}
    items = ((k, v) for k, v in data.items() if isinstance(k, str) and len(k) <= MAX_NAME)
    return dict([(k, v) for k, v in items if scalar(v)][:limit])


class RecordingError(MpdemoError):
    """A runs file that cannot be loaded: not JSON, the wrong shape, or a newer version."""


class _Checker:
    """Checks one document's fields; the first bad one raises a RecordingError naming it."""

    def __init__(self, name: str) -> None:
        self.name = name

    def fail(self, path: str, problem: str, **args: object) -> NoReturn:
        """Raise 'name: runs[0].summary.steps is NaN' (the problem a nested, translated key)."""
        raise RecordingError(
            "runs_bad_field", name=self.name, path=path, problem={"key": problem, "args": args}
        )

    def obj(self, path: str, v: object) -> dict[str, object]:
        if not isinstance(v, dict):
            self.fail(path, "field_not_object")
        return v

    def has(self, path: str, v: object, *keys: str) -> dict[str, object]:
        """An object with each of `keys`."""
        for key in keys:
            if key not in self.obj(path, v):
                self.fail(f"{path}.{key}", "field_missing")
        return self.obj(path, v)

    def items(self, path: str, v: object, limit: int) -> list[object]:
        """A list of at most `limit` entries, or none (null)."""
        return [] if v is None else self.seq(path, v, limit)

    def seq(self, path: str, v: object, limit: int) -> list[Any]:
        if not isinstance(v, list):
            self.fail(path, "field_not_list")
        if len(v) > limit:
            self.fail(path, "field_too_many", count=len(v), limit=limit)
        return v

    def number(self, path: str, v: Any, lo: float, hi: float, finite: bool = True) -> Any:
        """A number (never a bool) within [lo, hi]; NaN and ±inf only where `finite` is False."""
        if isinstance(v, bool) or not isinstance(v, (int, float)):
            self.fail(path, "field_not_number")
        if isinstance(v, float) and not math.isfinite(v):
            if finite:
                self.fail(path, "field_nan" if math.isnan(v) else "field_infinite")
        elif not lo <= v <= hi:  # int vs float compares exactly, however many digits
            self.fail(path, "field_out_of_range", lo=lo, hi=hi)
        return v

    def whole(self, path: str, v: Any, lo: int, hi: int) -> Any:
        """A whole number within [lo, hi] (100.0 counts: another writer may put it so)."""
        self.number(path, v, lo, hi)
        if isinstance(v, float) and not v.is_integer():
            self.fail(path, "field_not_whole")
        return v

    def text(self, path: str, v: Any, limit: int, one_line: bool = False) -> Any:
        """A str of at most `limit` characters; a name (`one_line`) has no control characters."""
        if not isinstance(v, str):
            self.fail(path, "field_not_text")
        if len(v) > limit:
            self.fail(path, "field_too_long", length=len(v), limit=limit)
        if one_line and any(unicodedata.category(ch) == "Cc" for ch in v):
            self.fail(path, "field_control_chars")
        return v

    def flag(self, path: str, v: Any) -> Any:
        if not isinstance(v, bool):
            self.fail(path, "field_not_bool")
        return v

    def choice(self, path: str, v: Any, allowed: tuple[str, ...]) -> Any:
        if not isinstance(v, str) or v not in allowed:
            self.fail(path, "field_not_choice", allowed=", ".join(allowed))
        return v

    def fields(self, path: str, data: object, rules: dict[str, _Rule]) -> dict[str, Any]:
        """The keys of `rules` that `data` has, each null or what its rule keeps; no other key."""
        data = self.obj(path, data)
        return {
            k: None if v is None else rules[k](self, f"{path}.{k}", v)
            for k, v in data.items()
            if k in rules
        }

    def note(self, path: str, v: object, depth: int = 0) -> dict[str, Any]:
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
        kept = dict(args)
        for k, a in args.items():
            where = f"{path}.args.{k}"
            if isinstance(a, dict) and depth < 2:
                kept[k] = self.note(where, a, depth + 1)  # a nested message: a speed note's "why"
            elif isinstance(a, str):
                self.text(where, a, MAX_TEXT)
            elif isinstance(a, (int, float)) and not isinstance(a, bool):
                self.number(where, a, -MAX_NUMBER, MAX_NUMBER, finite=False)
            elif a is not None and not isinstance(a, bool):
                self.fail(where, "field_not_value")
        if not _renders(key, args):
            self.fail(path, "field_not_shown")
        out = {k: note[k] for k in ("key", "args", "text") if k in note}
        if isinstance(out.get("args"), dict):
            out["args"] = kept
        return out


_Rule = Callable[[_Checker, str, Any], Any]


def _whole(lo: int, hi: int) -> _Rule:
    return lambda c, p, v: c.whole(p, v, lo, hi)


def _number(lo: float, hi: float, finite: bool = True) -> _Rule:
    return lambda c, p, v: c.number(p, v, lo, hi, finite)


def _name(limit: int = MAX_NAME) -> _Rule:
    return lambda c, p, v: c.text(p, v, limit, one_line=True)


def _text(limit: int) -> _Rule:
    return lambda c, p, v: c.text(p, v, limit)


def _each(rule: _Rule) -> _Rule:
    return lambda c, p, v: [rule(c, f"{p}[{i}]", w) for i, w in enumerate(c.seq(p, v, MAX_NOTES))]


def _interval(c: _Checker, p: str, v: object) -> list[float]:
    pair = c.seq(p, v, 2)
    if len(pair) != 2:
        c.fail(p, "field_not_pair")
    return [c.number(f"{p}[{i}]", x, 0, 10**6) for i, x in enumerate(pair)]


_LOSS = _number(-FLOAT32_MAX, FLOAT32_MAX, finite=False)  # a diverged run's loss is NaN or inf
_SCALE = _number(0, FLOAT32_MAX, finite=False)
_SECONDS = _number(0, 10**7)
_RATE = _number(0, 10**12)
_BYTES = _number(0, 10**18)


# Every Summary field a renderer reads (tests/test_hostile_files.py checks none is missing).
SUMMARY_RULES: dict[str, _Rule] = {
    **dict.fromkeys(("label", "backend", "precision", "device", "machine"), _name()),
    **dict.fromkeys(
        ("requested_dtype", "effective_dtype", "peak_mem_kind", "speed_reason"), _name()
    ),
    **dict.fromkeys(("model", "dataset"), _name(MAX_SOURCE)),
    **dict.fromkeys(("steps", "skipped_steps"), _whole(0, MAX_STEPS_PER_RUN)),
    **dict.fromkeys(("train_rows", "eval_rows"), _whole(0, MAX_NUMBER)),
    **dict.fromkeys(("final_loss", "eval_loss"), _LOSS),
    **dict.fromkeys(("mean_step_s", "median_step_s", "elapsed_s"), _SECONDS),
    **dict.fromkeys(("samples_per_s", "tokens_per_s"), _RATE),
    **dict.fromkeys(("step_time_cv", "step_time_mad", "speedup_vs_fp32"), _number(0, 10**6)),
    **dict.fromkeys(("saved_activation_bytes", "peak_mem_bytes"), _BYTES),
    "params": _whole(0, MAX_PARAMS),
    "processes": _whole(0, 10**6),
    "final_loss_scale": _SCALE,
    "status": lambda c, p, v: c.choice(p, v, STATUSES),
    "warnings": _each(_text(MAX_TEXT)),
    "warning_keys": _each(_Checker.note),
    "eval_accuracy": _number(0, 1),
    "error": _text(MAX_TEXT),
    "error_detail": _text(MAX_DETAIL),
    "fp8_audit": lambda c, p, v: c.fields(p, v, FP8_AUDIT_RULES),
    "speedup_same_maths": _Checker.flag,
    "speedup_interval": _interval,
    "speed_verdict": lambda c, p, v: c.choice(p, v, VERDICTS),
    "speed_check": lambda c, p, v: _speed_check(c, p, v),
}
_RATIO = _number(1e-9, 10**6)  # a speed-up and its interval's ends: the slowdown is 1 / it
# mpdemo.runs.timing.SpeedCheck's fields, as a summary's speed_check carries them.
SPEED_CHECK_RULES: dict[str, _Rule] = {
    **dict.fromkeys(("precision", "baseline", "reason"), _name()),
    **dict.fromkeys(("speedup", "low", "high"), _RATIO),
    **dict.fromkeys(("rounds", "block"), _whole(0, 10**9)),
    **dict.fromkeys(("step_s", "baseline_step_s"), _SECONDS),
    **dict.fromkeys(("others_cpu", "steal"), _number(0, 1)),
    "spread": _number(0, 10**6),
    "verdict": lambda c, p, v: c.choice(p, v, VERDICTS),
}


FP8_TENSORS = ("input", "weight", "grad_output")  # the casts an audit names a format for
MAX_KEPT_LAYERS = 64
# mpdemo.engine.fp8.audit's fields, kept as the engine writes them but for MAX_KEPT_LAYERS names.
FP8_AUDIT_RULES: dict[str, _Rule] = {
    "float8_layers": _whole(0, MAX_NUMBER),
    "linear_layers": _whole(0, MAX_NUMBER),
    "kept": lambda c, p, v: [
        n
        for n in c.seq(p, v, MAX_STEPS_PER_RUN)[:MAX_KEPT_LAYERS]
        if isinstance(n, str) and len(n) <= MAX_NAME
    ],
    "formats": lambda c, p, v: {
        k: x for k, x in c.obj(p, v).items() if k in FP8_TENSORS and scalar(x)
    },
}


def _speed_check(c: _Checker, p: str, v: object) -> dict[str, Any]:
    check = c.fields(p, v, SPEED_CHECK_RULES)
    if not isinstance(check.get("precision"), str):
        c.fail(f"{p}.precision", "field_missing")
    if check.get("verdict") == "slower":  # "1.9x slower (1.7-2.2x)" divides by all three
        for key in ("speedup", "low", "high"):
            if check.get(key) is None:
                c.fail(f"{p}.{key}", "field_missing")
    return check


STEP_RULES: dict[str, _Rule] = {
    "loss": _LOSS,
    "loss_scale": _SCALE,
    # wall_s: seconds since the comparison started (its runs take turns)
    **dict.fromkeys(("step_time_s", "elapsed_s", "wall_s"), _SECONDS),
    **dict.fromkeys(("samples_per_s", "tokens_per_s"), _RATE),
    "lr": _number(0, MAX_NUMBER),
    "skipped": _Checker.flag,
    # pure 16-bit weights: the share of weight elements the step's update left unchanged
    "lost_update_share": _number(0, 1),
}
_CPU_RULES: dict[str, _Rule] = {
    **dict.fromkeys(("name", "capability"), _name()),
    "flags": lambda c, p, v: {
        k: x for k, x in c.obj(p, v).items() if k in CPU_FLAGS and isinstance(x, bool)
    },
    "cores": _whole(0, 10**6),
}
_GPU_RULES: dict[str, _Rule] = {
    **dict.fromkeys(("kind", "name", "capability"), _name()),
    "bf16": _Checker.flag,
    "memory_bytes": _BYTES,
    "count": _whole(0, 10**6),
}


def _versions(c: _Checker, p: str, v: object) -> dict[str, Any]:
    versions = c.obj(p, v)
    if len(versions) > MAX_NOTE_ARGS:
        c.fail(p, "field_too_many", count=len(versions), limit=MAX_NOTE_ARGS)
    for k, x in versions.items():
        c.text(p, k, MAX_NAME, one_line=True)
        if x is not None:
            c.text(f"{p}.{k}", x, MAX_NAME, one_line=True)
    return versions


MACHINE_RULES: dict[str, _Rule] = {
    **dict.fromkeys(("device_kind", "device_name", "python", "platform"), _name()),
    "cpu": lambda c, p, v: c.fields(p, v, _CPU_RULES),
    "gpu": lambda c, p, v: c.fields(p, v, _GPU_RULES),
    "versions": _versions,
    "torch_threads": _whole(0, 10**6),
    "date": _name(64),
}


def _config_rule(default: object) -> _Rule:
    # A run's settings as RunConfig declares them: a reload rebuilds a RunConfig from them.
    if isinstance(default, bool):
        return _Checker.flag
    if isinstance(default, int):
        return _whole(0, 2**32)
    if isinstance(default, float):
        return _number(0, 2.0**64)
    return _name(MAX_SOURCE)


@functools.cache
def _config_rules() -> dict[str, _Rule]:
    rules = {f.name: _config_rule(f.default) for f in fields(RunConfig)}
    rules["steps"] = _whole(0, MAX_STEPS_PER_RUN)
    return rules


def _renders(key: str, args: dict[str, object]) -> bool:
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
