"""The Train tab's inputs: defaults, previews under the boxes, and the controls' values as a
checked grid of RunConfigs (torch only where a function says so)."""

from __future__ import annotations

import sys
from typing import Any

from ... import engine
from ...catalog import MODELS
from ...config import WEIGHTS, Limits, RunConfig, coerce_field
from ...engine import fp8
from ...engine.cores import _cores  # the CPUs this process may run on
from ...engine.machine import machine_note
from ...messages import ConfigError, MpdemoError
from ...registry import BACKENDS, PRECISIONS
from ...runs.notes import run_speed_notes
from ...runs.runner import check_memory, grid
from .. import system
from ..context import Frame
from ..i18n import error_text, message, t
from ..text import shown
from . import controls
from .plots import scaled_labels
from .session import Session

# Seconds between plot updates: four charts drawn 5 times a second on the training's two cores
# slowed the default comparison from 5 s to 8.3 s; once a second it took 5 s.
YIELD_EVERY_S = 0.2 if _cores() > 4 else 1.0
DEFAULTS: Frame = controls.defaults()
PLOT_HEIGHT = 300


def _one_slice(spec: str, sizes: dict[str, int] | None, lang: str) -> str:
    try:
        got = system.slice_rows(spec, sizes)
    except ConfigError:
        return t("slice_bad", lang, splits=", ".join(sizes) if sizes else "?")
    if got is None:
        return t("slice_unknown", lang)
    rows, total, clamped = got
    return t("slice_rows_clamped" if clamped else "slice_rows", lang, rows=rows, total=total)


def slice_preview(lang: str, model: str, dataset: str, train_slice: str, eval_slice: str) -> str:
    """'Train: 2,000 of 4,000 rows · Eval: 500 of 800 rows' (from the bundled files, no torch)."""
    entry = MODELS.get(model or "")
    if entry is not None and entry.task == "regression":
        return t("slice_none", lang)
    sizes = system.split_sizes(dataset or "")
    train = t("slice_preview_train", lang, text=_one_slice(train_slice, sizes, lang))
    evals = t("slice_preview_eval", lang, text=_one_slice(eval_slice, sizes, lang))
    return f"{train} · {evals}"


def precision_info(lang: str, device: str | None) -> str:
    """The line under the precision boxes: what each precision does; speeds are measured, not said."""
    return t("precision_info_cpu" if system.trains_on_cpu(device) else "precision_info_gpu", lang)


def precision_note(
    lang: str, precisions: list[str] | None, device: str | None, session: Session | None = None
) -> str:
    """What this page's last comparison measured for the ticked precisions."""
    # Nothing trained in this process yet: no claim, and no torch imported for it.
    if "torch" not in sys.modules or not isinstance(session, Session):
        return ""
    try:  # measured on another device than the one picked now: no claim about this one
        here = engine.resolve_device(device or "auto").type
    except Exception:  # noqa: BLE001 - a device that cannot resolve was never measured
        return ""
    precisions = precisions or []
    ticked = [  # its runs on this device of a ticked precision, with their speed-ups
        s
        for s in (r["summary"] for r in session.runs)
        if str(s.get("device") or "cpu").split(":")[0] == here
        and (s.get("precision") == "fp32" or s.get("precision") in precisions)
    ]
    notes = [n for n in run_speed_notes(ticked) if n.args.get("precision") in precisions]
    if not notes:
        return ""
    first = next(r for r in session.runs if r["summary"].get("precision") in precisions)
    model = shown(str(first["summary"].get("model", "")))
    batch = (first.get("config") or {}).get("batch_size", "?")
    head = t("precision_note_runs", lang, model=model, batch=batch)
    return head + "\n\n" + "\n\n".join(shown(message(n.key, n.args, lang)) for n in notes)


def fp8_box(lang: str) -> Frame:
    """The fp8 box: enabled where this machine trains fp8, else off with the engine's reason
    (imports torch: a load event's)."""
    device = engine.resolve_device("auto")
    try:
        fp8.check(device)
    except MpdemoError as err:
        return {"interactive": False, "value": False, "info": error_text(err, lang)}
    name, (major, minor) = fp8.gpu(device) or ("?", (0, 0))
    version = ".".join(map(str, fp8.torchao_version() or ()))
    return {
        "interactive": True,
        "info": t("fp8_info_ok", lang, gpu=name, cc=f"{major}.{minor}", torchao=version),
    }


def with_fp8(values: Frame) -> list[str]:
    """The ticked precisions, plus fp8 when its own box is ticked."""
    precisions = list(values.get("precisions") or [])
    if values.get("fp8") and "fp8" not in precisions:
        precisions.append("fp8")
    return precisions


def machine_text(lang: str) -> str:
    """The 'This machine' line: names and instruction-set flags (torch's: a load event's)."""
    note = machine_note()
    return message(note.key, note.args, lang)


def check_inputs(values: Frame, limits: Limits | None = None) -> list[RunConfig]:
    """The grid of RunConfigs from the controls' values (by name), or the engine's ConfigError:
    each value is checked once, as the CLI's (coerce_field, preflight, check_memory), never clamped."""
    lim = limits or Limits.from_env()
    v = {**DEFAULTS, **values}
    model = coerce_field("model", v.get("model"), lim)
    fields = [n for n in controls.NAMES if n not in controls.UI_ONLY]
    for name in fields:
        v[name] = coerce_field(name, v[name], lim, model if isinstance(model, str) else None)
    axes = (("backends", BACKENDS), ("precisions", PRECISIONS), ("weights", WEIGHTS))
    for name, allowed in axes:
        got = v.get(name)  # an API caller may send 5 or [["x"]]: one line, not a traceback
        field, names = name if name == "weights" else name.removesuffix("s"), ", ".join(allowed)
        if got is not None and not (
            isinstance(got, list | tuple) and all(isinstance(x, str) for x in got)
        ):
            raise ConfigError("unknown_choice", field=field, allowed=names, value=got)
        if name == "precisions":
            got = v[name] = with_fp8(v)  # fp8: its own box (controls.py)
        if not got:
            raise ConfigError("empty_choice", field=field, allowed=names)
    base = RunConfig(**{n: v[n] for n in fields}).replace(device=v["device"] or "auto")
    # weights x backends x precisions, as a lesson's own grid (teach/lessons.py).
    configs = grid(base, v["backends"], v["precisions"], bool(v["compare_scaling"]), v["weights"])
    for cfg in configs:
        engine.preflight(cfg, lim)
    check_memory(configs)  # the runs are alive together: refused in one line before loading
    return configs


def opening_scale_empty(lang: str) -> str:
    """The loss-scale plot's place before any grid: a sentence when the default grid has no scaler."""
    return ticked_scale_empty(
        lang, DEFAULTS["precisions"], DEFAULTS["loss_scaling"], DEFAULTS["compare_scaling"]
    )


def ticked_scale_empty(lang: str, precisions: list[str] | None, scaling: Any, compare: Any) -> str:
    """The loss-scale plot's sentence for the ticked grid: empty when a run of it has a scaler."""
    probe = grid(RunConfig(loss_scaling=bool(scaling)), ["torch"], precisions or [], bool(compare))
    return "" if scaled_labels(probe) else t("scale_empty_none", lang)
