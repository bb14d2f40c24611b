"""The Why tab: short explanations, and the teacher's Presets menu, which loads a preset's
settings into the Train tab (mpdemo/ui/app.py wires that across the tabs)."""

from __future__ import annotations

import gradio as gr

from ...config import RunConfig
from ...runs.runner import grid
from ..context import QUIET, Frame, TabContext, Value
from ..i18n import DEFAULT_LANG, t

# Presets: RunConfig fields plus the Train tab's `backends`, `precisions` and `compare_scaling`
# (each fp16 run also unscaled).
PRESET_EXTRA_KEYS = ("backends", "precisions", "compare_scaling")
PRESETS: dict[str, dict[str, object]] = {
    "fp16_vs_fp32_gpu": {
        "model": "small-bert",
        "device": "cuda",
        "batch_size": 64,
        "steps": 100,
        "loss_scaling": True,
        "backends": ["torch"],
        "precisions": ["fp32", "fp16"],
    },
    "bf16_cpu": {
        "model": "small-bert",
        "device": "cpu",
        "batch_size": 32,
        "steps": 30,
        "backends": ["torch"],
        "precisions": ["fp32", "bf16"],
    },
    "underflow_no_scaling": {
        "model": "tiny-bert",
        "device": "auto",
        "steps": 100,
        "loss_scaling": True,
        "compare_scaling": True,  # fp16 scaled and unscaled, side by side
        "backends": ["torch"],
        "precisions": ["fp32", "fp16"],
    },
    "scale_moves": {
        "model": "tiny-bert",
        "device": "auto",
        "steps": 100,
        "loss_scaling": True,
        "init_scale": 65536.0,
        "growth_interval": 10,
        "backends": ["torch"],
        "precisions": ["fp16"],
    },
}


def preset_configs(preset_id: str) -> list[RunConfig]:
    """Every run a preset asks for, in order: the Train tab's own grid of its settings."""
    p = PRESETS[preset_id]
    base = RunConfig(**{k: v for k, v in p.items() if k not in PRESET_EXTRA_KEYS})
    return grid(base, p["backends"], p["precisions"], p.get("compare_scaling", False))


def _preset_settings(preset_id: str) -> str:
    return ", ".join(
        f"`{k}={', '.join(v) if isinstance(v, list) else v}`"
        for k, v in PRESETS[preset_id].items()
        if k != "compare_scaling"
    )


def preset_load(
    lang: str, preset_id: str | None, defaults: Frame, devices: list[str]
) -> tuple[Frame, str]:
    """(the Train tab's control values, the tab's defaults where the preset is silent, and the
    status line saying what was loaded); a device this machine lacks loads as auto, said so."""
    if not preset_id or preset_id not in PRESETS or not defaults:
        return {}, ""
    values = {name: PRESETS[preset_id].get(name, default) for name, default in defaults.items()}
    name, settings = t(f"preset_{preset_id}", lang), _preset_settings(preset_id)
    lines = [t("status_preset", lang, name=name, settings=settings)]
    if values.get("device") not in devices:
        values["device"] = "auto"
        lines.append(t("status_preset_no_gpu", lang))
    return values, "\n\n".join(lines)


def preset_choices(lang: str) -> list[tuple[str, str]]:
    """Dropdown entries (translated name, preset id)."""
    return [(t(f"preset_{pid}", lang), pid) for pid in PRESETS]


def preset_view(lang: str, preset_id: str | None) -> str:
    """A preset's description, the settings it loads and the runs it makes."""
    if not preset_id or preset_id not in PRESETS:
        return t("preset_none", lang)
    settings = _preset_settings(preset_id)
    runs = ", ".join(
        cfg.label + (" (loss_scaling=off)" if cfg.unscaled else "")
        for cfg in preset_configs(preset_id)
    )
    sets, runs = t("preset_sets", lang, settings=settings), t("preset_runs", lang, runs=runs)
    return f"{t(f'preset_{preset_id}_desc', lang)}\n\n{sets}\n\n{runs}"


WHY_KEYS = ("why_autocast", "why_scale", "why_speed", "why_bf16", "why_fp8")


def build_why_tab(ctx: TabContext) -> None:
    """Why: short explanations, and the teacher's Presets menu with a description."""
    with ctx.i18n(gr.Tab(id="why", elem_id="why-tab"), label="tab_why"):
        ctx.i18n(gr.Markdown(), value="why_presets_title")
        with gr.Row(equal_height=True):
            choices = preset_choices(DEFAULT_LANG)
            preset = ctx.i18n(
                gr.Dropdown(choices, value=None, elem_id="preset", scale=1), label="preset_label"
            )
            desc = gr.Markdown(t("preset_none", DEFAULT_LANG), elem_id="preset-desc")
        for key in WHY_KEYS:
            ctx.i18n(gr.Markdown(elem_id=key.replace("_", "-")), value=key)
    ctx.preset = preset  # app.py loads a pick into the Train tab
    # A person's pick only: the language hook below re-sets the value and draws the text itself.
    preset.input(preset_view, [ctx.lang, preset], [desc], **QUIET)

    def on_lang(lang: str, p: str | None) -> list[Value]:
        return [gr.update(choices=preset_choices(lang), value=p), preset_view(lang, p)]

    ctx.on_language(on_lang, [preset], [preset, desc])
