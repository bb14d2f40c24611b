"""The Train tab's controls, declared once: one `Control` per setting builds its component.

A control is a `RunConfig` field (its default is `RunConfig()`'s) or a UI-only setting: the grid
(`backends`, `precisions`, `compare_scaling`) and how the plots are drawn (`smoothing`,
`x_axis`). The Train tab lays the components out by `section`/`row`, `train()` and
`check_inputs()` take the values by name, and the API's parameters (`api_name="train"`) are these
names in this order, each with its default.

A RunConfig field with a command-line flag that the table does not lay out gets a control built
from the field itself (`from_field`: its kind from its type, its range from config.py, its label
`<name>_label`), so a field added to RunConfig reaches the CLI, the page and the API without
being listed again; the table is for where and how a control sits. Every control's label is
the locale key `<name>_label` (mpdemo/ui/labels.py), checked at import.
"""

from __future__ import annotations

import dataclasses
import re
from collections.abc import Callable
from dataclasses import dataclass

import gradio as gr

from ...catalog import DATASETS, MODELS
from ...config import MAX_REPEAT, WEIGHTS, WHOLE_FIELDS, Limits, RunConfig, cli_fields, number_range
from ...registry import BACKENDS, PRECISIONS
from ...teach.lessons import DEFAULT_LESSON, LESSONS
from .. import system
from ..context import Frame, Value
from ..i18n import DEFAULT_LANG, LOCALES, t
from ..labels import SET_BY, control_label

_FROM_CONFIG = object()  # marker: the default is RunConfig()'s value of the same name
_EN = LOCALES[DEFAULT_LANG].strings  # every key a label or info line may use


# --- choices (torch-free) --------------------------------------------------------------------


def catalog_key(prefix: str, name: str) -> str:
    """The locale key of a catalog entry's description: 'model_desc_prajjwal1_bert_tiny'."""
    return prefix + re.sub(r"[^a-z0-9]+", "_", name.lower()).strip("_")


def model_choices(lang: str, hub: bool | None = None) -> list[tuple[str, str]]:
    """Dropdown entries: 'name · description (params)', Hub entries flagged when offline.

    Built-ins show their exact parameter count (tests/test_ui.py builds them and compares);
    Hub entries, which are only counted once downloaded, an approximate one.
    """
    out = []
    for m in MODELS.values():
        n = m.approx_params
        params = (
            t("params_exact", lang, params=n)
            if m.builtin
            else t("params_approx", lang, params=system.fmt_params(n))
        )
        text = f"{m.name} · {t(catalog_key('model_desc_', m.name), lang)} ({params})"
        if not m.builtin and hub is False:
            text += f" · {t('needs_internet', lang)}"
        out.append((text, m.name))
    return out


def dataset_choices(lang: str, hub: bool | None = None) -> list[tuple[str, str]]:
    """Dropdown entries for the catalog's datasets, Hub entries flagged when offline."""
    out = []
    for d in DATASETS.values():
        text = f"{d.name} · {t(catalog_key('data_desc_', d.name), lang)}"
        if not d.builtin and hub is False:
            text += f" · {t('needs_internet', lang)}"
        out.append((text, d.name))
    return out


def backend_choices(lang: str, hub: bool | None = None) -> list[tuple[str, str]]:
    """The registry's backends, by display name."""
    return [(b.display, b.name) for b in BACKENDS.values()]


def precision_choices(lang: str, hub: bool | None = None) -> list[tuple[str, str]]:
    """The registry's precisions (a new Precision record shows up here by itself).

    One that needs a GPU generation (fp8: compute capability 8.9+) has a box of its own, which
    says whether this machine has it: a checkbox group cannot disable one of its choices.
    """
    return [(p.name, p.name) for p in PRECISIONS.values() if p.needs_compute_capability is None]


def device_choices(lang: str, hub: bool | None = None) -> list[str]:
    """auto and cpu, plus the accelerators this machine has."""
    return system.device_choices()


def weights_choices(lang: str, hub: bool | None = None) -> list[tuple[str, str]]:
    """Where the weights live (RunConfig.weights): the fp32 master copy, pure bf16, pure bf16
    with stochastic rounding; each ticked one is a run of every backend x precision."""
    return [(t(f"weights_choice_{w.replace('-', '_')}", lang), w) for w in WEIGHTS]


X_AXES = ("step", "time")


def x_axis_choices(lang: str, hub: bool | None = None) -> list[tuple[str, str]]:
    """The plots' x axis: optimizer step, or seconds since the run started."""
    return [(t(f"x_axis_{x}", lang), x) for x in X_AXES]


# --- UI-level defaults -------------------------------------------------------------------------


def default_precisions() -> list[str]:
    """The precisions ticked when the page opens.

    The first lesson's (teach/lessons.py): fp32 against fp16 with its loss scaler, so the
    first click draws a loss-scale line, the course's central point.
    """
    return list(LESSONS[DEFAULT_LESSON].precisions)


def opening_fields() -> Frame:
    """The fields the opening comparison (the first lesson) sets on this machine's device: its
    own settings (a language model, whose loss falls from the first step), and on a CUDA GPU its
    size there (teach/device_sizes.py: small models are launch-bound on a GPU)."""
    return LESSONS[DEFAULT_LESSON].settings("cuda" if system.cuda_present() else "cpu")


# --- the table ---------------------------------------------------------------------------------


@dataclass(frozen=True)
class Control:
    """One setting of the Train tab: its component, label keys, limits and default."""

    name: str  # a RunConfig field, or a UI-only setting (see `run`)
    kind: str  # dropdown | textbox | checkboxes | number | slider | checkbox | radio
    elem_id: str
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
    def label(self) -> str:
        """The i18n key of the control's label (labels.py: engine messages name fields by it too)."""
        return control_label(self.name)

    def default_value(self) -> object:
        """The value the page opens with (RunConfig()'s for a RunConfig field)."""
        if self.default is _FROM_CONFIG:
            return opening_fields().get(self.name, getattr(RunConfig(), self.name))
        return self.default() if callable(self.default) else self.default

    def bounds(self, limits: Limits) -> tuple[float | None, float | None]:
        """(lowest, highest) accepted under these server limits: config.py's for a RunConfig
        whole-number field (what RunConfig.validate enforces), else the control's own."""
        if self.lo is None and self.hi is None and self.name in WHOLE_FIELDS:
            return number_range(self.name, limits)
        return self.lo, self.hi


_LAID_OUT: tuple[Control, ...] = (
    Control(
        "model",
        "dropdown",
        "model",
        "model_info",
        choices=model_choices,
        props=(("allow_custom_value", True),),
    ),
    Control(
        "dataset",
        "dropdown",
        "dataset",
        "dataset_info",
        choices=dataset_choices,
        props=(("allow_custom_value", True),),
    ),
    Control("train_slice", "textbox", "train-slice", row="slices"),
    Control("eval_slice", "textbox", "eval-slice", row="slices"),
    Control(
        "backends",
        "checkboxes",
        "backends",
        "backends_info",
        section="grid",
        default=lambda: ["torch"],
        choices=backend_choices,
    ),
    Control(
        "precisions",
        "checkboxes",
        "precisions",
        section="grid",  # its info line is the CPU/GPU note, set by the tab
        default=default_precisions,
        choices=precision_choices,
    ),
    # fp8's own box (mpdemo/engine/fp8.py): built disabled, then enabled at page load where this machine
    # trains fp8, or left disabled with the reason (what torch sees) as its info line.
    Control(
        "fp8",
        "checkbox",
        "fp8",
        "fp8_info",
        section="grid",
        default=False,
        props=(("interactive", False),),
    ),
    Control("device", "dropdown", "device", "device_info", section="run", choices=device_choices),
    # Numbers, not sliders: a slider clamps what is typed (0 became 1 without a word) and
    # cut its max label off in a narrow column. Out-of-range values are refused by
    # RunConfig.validate with the CLI's message.
    Control("steps", "number", "steps", "range_info", section="run", row="size", whole=True),
    Control(
        "batch_size", "number", "batch-size", "range_info", section="run", row="size", whole=True
    ),
    # The whole comparison N times, each repetition measured anew (mpdemo.runs.runner.repeated):
    # the table under the summary shows how far each figure moved. 1 to the CLI's --repeat cap.
    Control(
        "repeat",
        "number",
        "repeat",
        "repeat_info",
        section="run",
        default=1,
        whole=True,
        lo=1,
        hi=MAX_REPEAT,
    ),
    Control("lr", "number", "lr", section="run", row="opt"),
    Control("seed", "number", "seed", section="run", row="opt", whole=True),
    Control("loss_scaling", "checkbox", "loss-scaling", "loss_scaling_info", section="advanced"),
    Control("init_scale", "number", "init-scale", section="advanced"),
    Control(
        "growth_interval",
        "number",
        "growth-interval",
        "growth_interval_info",
        section="advanced",
        whole=True,
    ),
    # Every N steps each layer's gradients against the format's range (RunConfig.watch_grads,
    # mpdemo/engine/gradwatch.py): the runs JSON download carries them as grad_histograms.
    Control(
        "watch_grads", "number", "watch-grads", "watch_grads_info", section="advanced", whole=True
    ),
    # Tokens a sequence: the lessons set it (32 halves a 16-bit step on a CPU; their point is
    # the gradients' magnitudes, not the length).
    Control(
        "max_length", "number", "max-length", "max_length_info", section="advanced", whole=True
    ),
    Control(
        "compare_scaling",
        "checkbox",
        "compare-scaling",
        "compare_scaling_info",
        section="advanced",
        default=False,
    ),
    # The master-weights lesson's axis: pure bf16 weights (with or without stochastic rounding)
    # beside the fp32 master copy. Pure bf16 needs precision bf16 and the torch backend:
    # RunConfig.validate refuses the other runs of such a grid in one line.
    Control(
        "weights",
        "checkboxes",
        "weights",
        "weights_info",
        section="advanced",
        default=lambda: ["fp32"],
        choices=weights_choices,
    ),
    # Each step's share of updates that rounded away, for fp32 weights too (the lesson's
    # baseline); on by itself for bf16 weights.
    Control("lost_updates", "checkbox", "lost-updates", "lost_updates_info", section="advanced"),
    # How the plots are drawn: changing them redraws what is on screen, mid-run too.
    Control(
        "smoothing",
        "slider",
        "smoothing",
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
        "x-axis",
        section="view",
        default="step",
        choices=x_axis_choices,
        run=False,
    ),
)


def from_field(f: dataclasses.Field) -> Control:
    """A control for a RunConfig field the table does not lay out, from the field alone: a
    checkbox for on/off, a number box for a number (its range from config.py), a dropdown of its
    flag's choices, else a text box; under Advanced, after the others."""
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
    return Control(
        name, kind, name.replace("_", "-"), info, section="advanced", whole=whole_, choices=choices
    )


_SET_ELSEWHERE = {c.name for c in _LAID_OUT} | set(SET_BY)
CONTROLS: tuple[Control, ...] = _LAID_OUT + tuple(
    from_field(f) for f in cli_fields() if f.name not in _SET_ELSEWHERE
)
BY_NAME: dict[str, Control] = {c.name: c for c in CONTROLS}
NAMES: tuple[str, ...] = tuple(c.name for c in CONTROLS)
RUN_NAMES: tuple[str, ...] = tuple(c.name for c in CONTROLS if c.run)
VIEW_NAMES: tuple[str, ...] = tuple(c.name for c in CONTROLS if not c.run)
# Not one RunConfig field's value: the UI's own settings, and the grid's axes (a checkbox group
# is a list of values, each run takes one: backends, precisions, weights).
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
    common: dict[str, object] = {"label": t(c.label, lang), "elem_id": c.elem_id, **dict(c.props)}
    info = info_text(c, lang, limits)
    if info is not None:
        common["info"] = info
    choices = c.choices(lang, None) if c.choices is not None else None
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
        # No minimum/maximum here: gradio would refuse out-of-range input in English;
        # check_inputs refuses it in the page's language instead.
        return gr.Number(value, precision=0 if c.whole else None, min_width=120, **common)
    if c.kind == "slider":
        lo, hi = c.bounds(limits)
        return gr.Slider(lo, hi, value=value, step=c.step, min_width=160, **common)
    raise ValueError(f"unknown control kind {c.kind!r}")
