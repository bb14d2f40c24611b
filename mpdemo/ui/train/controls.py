"""The Train tab's controls, declared once: one `Control` a setting builds its component; /train's
parameters are their names in this order (a RunConfig field not laid out here: `from_field`)."""

from __future__ import annotations

import dataclasses
import re
from collections.abc import Callable
from dataclasses import dataclass

import gradio as gr

from ...catalog import DATASETS, MODELS, DatasetEntry, ModelEntry
from ...config import MAX_REPEAT, WEIGHTS, WHOLE_FIELDS, Limits, RunConfig, cli_fields, number_range
from ...registry import BACKENDS, PRECISIONS
from ...teach.lessons import DEFAULT_LESSON, LESSONS
from .. import system
from ..context import Frame, Value
from ..i18n import DEFAULT_LANG, LOCALES, SET_BY, control_label, t

_FROM_CONFIG = object()  # marker: the default is RunConfig()'s value of the same name
_EN = LOCALES[DEFAULT_LANG].strings  # every key a label or info line may use


def catalog_key(prefix: str, name: str) -> str:
    """The locale key of a catalog entry's description: 'model_desc_prajjwal1_bert_tiny'."""
    return prefix + re.sub(r"[^a-z0-9]+", "_", name.lower()).strip("_")


def _entry_text(
    entry: ModelEntry | DatasetEntry, prefix: str, lang: str, hub: bool | None, extra: str = ""
) -> str:
    """'name · description', the Hub's entries flagged when offline."""
    text = f"{entry.name} · {t(catalog_key(prefix, entry.name), lang)}{extra}"
    return text + (f" · {t('needs_internet', lang)}" if not entry.builtin and hub is False else "")


def model_choices(lang: str, hub: bool | None = None) -> list[tuple[str, str]]:
    """'name · description (params)': exact for built-ins, approximate for the Hub's."""

    def params(m: ModelEntry) -> str:
        if m.builtin:
            return t("params_exact", lang, params=m.approx_params)
        return t("params_approx", lang, params=system.fmt_params(m.approx_params))

    return [
        (_entry_text(m, "model_desc_", lang, hub, f" ({params(m)})"), m.name)
        for m in MODELS.values()
    ]


def dataset_choices(lang: str, hub: bool | None = None) -> list[tuple[str, str]]:
    """Dropdown entries for the catalog's datasets."""
    return [(_entry_text(d, "data_desc_", lang, hub), d.name) for d in DATASETS.values()]


def precision_choices(lang: str, hub: bool | None = None) -> list[tuple[str, str]]:
    """The registry's precisions but those that need a GPU generation (fp8): a checkbox group
    cannot disable one choice, so fp8 has a box of its own that says why it is off."""
    return [(p.name, p.name) for p in PRECISIONS.values() if p.needs_compute_capability is None]


def default_precisions() -> list[str]:
    """The first lesson's precisions: the first click draws a loss-scale line, the course's point."""
    return list(LESSONS[DEFAULT_LESSON].precisions)


def device_kind() -> str:
    """'cuda' where the auto device is a CUDA GPU (the lessons train their GPU size), else 'cpu'."""
    return "cuda" if system.cuda_present() else "cpu"


def opening_fields() -> Frame:
    """The first lesson's settings on this machine's device (on a GPU its GPU size)."""
    return LESSONS[DEFAULT_LESSON].settings(device_kind())


@dataclass(frozen=True)
class Control:
    """One setting of the Train tab: its component, label keys, limits and default."""

    name: str  # a RunConfig field, or a UI-only setting (see `run`)
    kind: str  # dropdown | textbox | checkboxes | number | slider | checkbox | radio
    info: str | None = None  # i18n key; "{lo}"/"{hi}" in it are filled from the limits
    section: str = "data"  # data | grid | run | advanced | view: where the tab lays it out
    row: str | None = None  # consecutive controls with the same row share a gr.Row
    default: object = _FROM_CONFIG  # or a value, or a callable returning one
    whole: bool = False  # an int (Numbers and Sliders send floats)
    # The accepted range, shown in `info`; a RunConfig number field's is config.py's (bounds).
    lo: float | None = None
    hi: float | None = None
    step: float | None = None  # sliders only
    choices: Callable[[str, bool | None], list[Value]] | None = None
    run: bool = True  # False: how the plots are drawn, not part of a run's settings
    props: tuple[tuple[str, object], ...] = ()  # further constructor arguments

    @property
    def elem_id(self) -> str:
        """The component's elem_id: the name in kebab case."""
        return self.name.replace("_", "-")

    @property
    def label(self) -> str:
        """The i18n key of the control's label (labels.py: engine messages name fields by it too)."""
        return control_label(self.name)

    def default_value(self) -> object:
        """The value the page opens with (RunConfig()'s for a RunConfig field)."""
        if self.default is _FROM_CONFIG:
            return opening_fields().get(self.name, getattr(RunConfig(), self.name))
        return self.default() if callable(self.default) else self.default

    def bounds(self, limits: Limits) -> tuple[float | None, float | None]:
        """(lowest, highest) accepted here: config.py's for a whole-number field, else its own."""
        if self.lo is None and self.hi is None and self.name in WHOLE_FIELDS:
            return number_range(self.name, limits)
        return self.lo, self.hi


_LAID_OUT: tuple[Control, ...] = (
    Control(
        "model",
        "dropdown",
        "model_info",
        choices=model_choices,
        props=(("allow_custom_value", True),),
    ),
    Control(
        "dataset",
        "dropdown",
        "dataset_info",
        choices=dataset_choices,
        props=(("allow_custom_value", True),),
    ),
    Control("train_slice", "textbox", row="slices"),
    Control("eval_slice", "textbox", row="slices"),
    Control(
        "backends",
        "checkboxes",
        "backends_info",
        section="grid",
        default=lambda: ["torch"],
        choices=lambda lang, hub=None: [(b.display, b.name) for b in BACKENDS.values()],
    ),
    Control(
        "precisions",
        "checkboxes",
        section="grid",  # its info line is the CPU/GPU note, set by the tab
        default=default_precisions,
        choices=precision_choices,
    ),
    # fp8's own box: built disabled; the page's load enables it, or says why not (inputs.fp8_box).
    Control(
        "fp8",
        "checkbox",
        "fp8_info",
        section="grid",
        default=False,
        props=(("interactive", False),),
    ),
    Control(
        "device",
        "dropdown",
        "device_info",
        section="run",
        choices=lambda lang, hub=None: system.device_choices(),
    ),
    # Numbers, not sliders: a slider clamped what was typed (0 became 1 without a word).
    Control("steps", "number", "range_info", section="run", row="size", whole=True),
    Control("batch_size", "number", "range_info", section="run", row="size", whole=True),
    # The whole comparison N times (runs.runner.repeated): a table shows how far figures moved.
    Control(
        "repeat", "number", "repeat_info", section="run", default=1, whole=True, lo=1, hi=MAX_REPEAT
    ),
    Control("lr", "number", section="run", row="opt"),
    Control("seed", "number", section="run", row="opt", whole=True),
    Control("loss_scaling", "checkbox", "loss_scaling_info", section="advanced"),
    Control("init_scale", "number", section="advanced"),
    Control("growth_interval", "number", "growth_interval_info", section="advanced", whole=True),
    # Every N steps each layer's gradients against the format's range (RunConfig.watch_grads).
    Control("watch_grads", "number", "watch_grads_info", section="advanced", whole=True),
    # Tokens a sequence: the lessons set 32 (it halves a 16-bit step on a CPU).
    Control("max_length", "number", "max_length_info", section="advanced", whole=True),
    Control(
        "compare_scaling", "checkbox", "compare_scaling_info", section="advanced", default=False
    ),
    # The master-weights lesson's axis (pure bf16 needs bf16 and torch: validate says so).
    Control(
        "weights",
        "checkboxes",
        "weights_info",
        section="advanced",
        default=lambda: ["fp32"],
        choices=lambda lang, hub=None: [
            (t(f"weights_choice_{w.replace('-', '_')}", lang), w) for w in WEIGHTS
        ],
    ),
    # Each step's share of updates that rounded away (on by itself for bf16 weights).
    Control("lost_updates", "checkbox", "lost_updates_info", section="advanced"),
    # How the plots are drawn: changing them redraws what is on screen, mid-run too.
    Control(
        "smoothing",
        "slider",
        section="view",
        default=0.6,  # TensorBoard's default weight; W&B and Trackio smooth by default too
        lo=0.0,
        hi=0.95,
        step=0.05,
        run=False,
    ),
    Control(
        "x_axis",
        "radio",
        section="view",
        default="step",
        choices=lambda lang, hub=None: [(t(f"x_axis_{x}", lang), x) for x in ("step", "time")],
        run=False,
    ),
)


def from_field(f: dataclasses.Field) -> Control:
    """A control under Advanced for a RunConfig field not laid out (its kind from its type): a new
    field reaches the CLI, the page and the API without being listed again."""
    name, default = f.name, f.default
    info = f"{name}_info" if f"{name}_info" in _EN else None
    if info is None and name in WHOLE_FIELDS:
        info = "range_info"
    kind, whole_, choices = "textbox", False, None
    if isinstance(default, bool):
        kind = "checkbox"
    elif isinstance(default, int | float):
        kind, whole_ = "number", isinstance(default, int)
    elif f.metadata.get("choices"):
        allowed = tuple(f.metadata["choices"])
        kind, choices = "dropdown", (lambda lang, hub=None, allowed=allowed: list(allowed))
    return Control(name, kind, info, section="advanced", whole=whole_, choices=choices)


_SET_ELSEWHERE = {c.name for c in _LAID_OUT} | set(SET_BY)
CONTROLS: tuple[Control, ...] = _LAID_OUT + tuple(
    from_field(f) for f in cli_fields() if f.name not in _SET_ELSEWHERE
)
BY_NAME: dict[str, Control] = {c.name: c for c in CONTROLS}
NAMES: tuple[str, ...] = tuple(c.name for c in CONTROLS)
RUN_NAMES: tuple[str, ...] = tuple(c.name for c in CONTROLS if c.run)
VIEW_NAMES: tuple[str, ...] = tuple(c.name for c in CONTROLS if not c.run)
# Not one RunConfig field's value: the UI's own settings, and the grid's axes (lists of values).
UI_ONLY = tuple(
    n
    for n in NAMES
    if n not in {f.name for f in dataclasses.fields(RunConfig)} or BY_NAME[n].kind == "checkboxes"
)
# A control without its label in the English locale would show the key; say which at import.
if _unlabelled := sorted(control_label(n) for n in NAMES if control_label(n) not in _EN):
    raise RuntimeError(f"add these labels to mpdemo/ui/locales/en.toml: {_unlabelled}")


def defaults() -> Frame:
    """Every control's opening value, by name."""
    return {c.name: c.default_value() for c in CONTROLS}


def info_text(c: Control, lang: str, limits: Limits) -> str | None:
    """The control's info line in `lang`, with its accepted range filled in."""
    if c.info is None:
        return None
    lo, hi = c.bounds(limits)
    return t(c.info, lang, lo=_whole_or(lo), hi=_whole_or(hi))


def _whole_or(x: float | None) -> float | None:
    # The locale's formatter groups thousands its own way ("20,000", "20.000").
    return int(x) if x is not None and float(x).is_integer() else x


def relabel(c: Control, lang: str, limits: Limits, hub: bool | None = None) -> Frame:
    """The gr.update arguments that put the control's text in `lang`."""
    out: Frame = {"label": t(c.label, lang)}
    info = info_text(c, lang, limits)
    if info is not None:
        out["info"] = info
    if c.choices is not None:
        out["choices"] = c.choices(lang, hub)
    return out


def build(c: Control, lang: str, limits: Limits, value: object = None) -> gr.components.Component:
    """The control's component, labelled in `lang`, holding `value` (its default if None)."""
    value = c.default_value() if value is None else value
    common = {**relabel(c, lang, limits), "elem_id": c.elem_id, **dict(c.props)}
    choices = common.pop("choices", None)
    if c.kind == "dropdown":
        return gr.Dropdown(choices=choices, value=value, **common)
    if c.kind == "textbox":
        return gr.Textbox(value, max_lines=1, min_width=120, **common)
    if c.kind == "checkboxes":
        return gr.CheckboxGroup(choices, value=value, **common)
    if c.kind == "radio":
        return gr.Radio(choices, value=value, **common)
    if c.kind == "checkbox":
        return gr.Checkbox(value, **common)
    if c.kind == "number":
        # No minimum/maximum: gradio would refuse in English; check_inputs does in the page's.
        return gr.Number(value, precision=0 if c.whole else None, min_width=120, **common)
    if c.kind == "slider":
        lo, hi = c.bounds(limits)
        return gr.Slider(lo, hi, value=value, step=c.step, min_width=160, **common)
    raise ValueError(f"unknown control kind {c.kind!r}")
