"""The Why tab: short explanations, and the teacher's Presets menu, which loads a preset's
settings into the Train tab (mpdemo/ui/app.py wires that across the tabs)."""

from __future__ import annotations

import gradio as gr

from ...config import RunConfig
from ...runs.runner import grid
from ..context import Frame, TabContext, Value
from ..i18n import DEFAULT_LANG
from .common import tt

# Presets: RunConfig fields plus the Train tab's `backends`, `precisions` and `compare_scaling`
# (each fp16 run also unscaled: "fp16 without scaling vs the scaled run"). preset_configs()
# turns a preset into the exact list of RunConfigs the Train tab will run.
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


def preset_fields(preset_id: str) -> dict[str, object]:
    """The RunConfig fields a preset sets (no backends/precisions/compare_scaling)."""
    return {k: v for k, v in PRESETS[preset_id].items() if k not in PRESET_EXTRA_KEYS}


def preset_configs(preset_id: str) -> list[RunConfig]:
    """Every run a preset asks for, in order: the Train tab's own grid of its settings."""
    p = PRESETS[preset_id]
    base = RunConfig(**preset_fields(preset_id))
    return grid(base, p["backends"], p["precisions"], p.get("compare_scaling", False))


def preset_values(preset_id: str | None, defaults: Frame) -> Frame:
    """The Train tab's control values a preset loads (the tab's defaults where it is silent)."""
    if not preset_id or preset_id not in PRESETS:
        return {}
    p = PRESETS[preset_id]
    return {name: p.get(name, default) for name, default in defaults.items()}


def _preset_settings(preset_id: str) -> str:
    return ", ".join(
        f"`{k}={', '.join(v) if isinstance(v, list) else v}`"
        for k, v in PRESETS[preset_id].items()
        if k != "compare_scaling"
    )


def preset_load(
    lang: str, preset_id: str | None, defaults: Frame, devices: list[str]
) -> tuple[Frame, str]:
    """(values for the Train tab's controls, the status line that says what was loaded).

    A preset asking for a device this machine lacks (the GPU preset on a laptop) loads with
    device=auto, and the status says so rather than loading silently.
    """
    values = preset_values(preset_id, defaults)
    if not values or preset_id is None:
        return {}, ""
    lines = [
        tt("status_preset", lang, name=tt(f"preset_{preset_id}", lang),
           settings=_preset_settings(preset_id))
    ]  # fmt: skip
    if values.get("device") not in devices:
        values["device"] = "auto"
        lines.append(tt("status_preset_no_gpu", lang))
    return values, "\n\n".join(lines)


def preset_choices(lang: str) -> list[tuple[str, str]]:
    """Dropdown entries (translated name, preset id)."""
    return [(tt(f"preset_{pid}", lang), pid) for pid in PRESETS]


def preset_view(lang: str, preset_id: str | None) -> str:
    """A preset's description, the settings it loads and the runs it makes."""
    if not preset_id or preset_id not in PRESETS:
        return tt("preset_none", lang)
    settings = _preset_settings(preset_id)
    runs = ", ".join(
        cfg.label + (" (loss_scaling=off)" if cfg.unscaled else "")
        for cfg in preset_configs(preset_id)
    )
    return "\n\n".join(
        [
            tt(f"preset_{preset_id}_desc", lang),
            tt("preset_sets", lang, settings=settings),
            tt("preset_runs", lang, runs=runs),
        ]
    )


WHY_KEYS = ("why_autocast", "why_scale", "why_speed", "why_bf16", "why_fp8")


def build_why_tab(ctx: TabContext) -> None:
    """Why: short explanations, and the teacher's Presets menu with a description."""
    lang0 = DEFAULT_LANG
    with ctx.i18n(gr.Tab(tt("tab_why", lang0), id="why", elem_id="why-tab"), label="tab_why"):
        ctx.i18n(gr.Markdown(tt("why_presets_title", lang0)), value="why_presets_title")
        with gr.Row(equal_height=True):
            preset = ctx.i18n(
                gr.Dropdown(preset_choices(lang0), value=None, label=tt("preset_label", lang0),
                            elem_id="preset", scale=1),
                label="preset_label",
            )  # fmt: skip
            desc = gr.Markdown(tt("preset_none", lang0), elem_id="preset-desc")
        for key in WHY_KEYS:
            ctx.i18n(gr.Markdown(tt(key, lang0), elem_id=key.replace("_", "-")), value=key)
    ctx.preset = preset  # app.py loads a pick into the Train tab
    # A person's pick only: the language hook below re-sets the value and draws the text itself
    # (on .change each switch cost chromium one more event's status passes over every component).
    preset.input(preset_view, [ctx.lang, preset], [desc], concurrency_limit=None,
                 api_visibility="undocumented", show_progress="hidden")  # fmt: skip

    def on_lang(lang: str, p: str | None) -> list[Value]:
        return [gr.update(choices=preset_choices(lang), value=p), preset_view(lang, p)]

    ctx.on_language(on_lang, [preset], [preset, desc])
