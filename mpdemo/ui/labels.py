"""How the page names each setting: the locale key of its Train-tab control's label, by name.

One table read by both sides of the page's words: mpdemo/ui/train/controls.py labels its components
with it, and mpdemo/ui/i18n.py names a refused engine field by it ("Pasos", not "steps"). It
sits below both so that neither imports the other.
"""

from __future__ import annotations

# Every control of controls.CONTROLS, by its name (controls.py checks that none is missing).
LABELS: dict[str, str] = {
    "model": "model_label",
    "dataset": "dataset_label",
    "train_slice": "train_slice_label",
    "eval_slice": "eval_slice_label",
    "backends": "backends_label",
    "precisions": "precisions_label",
    "fp8": "fp8_label",
    "device": "device_label",
    "steps": "steps_label",
    "batch_size": "batch_label",
    "repeat": "repeat_label",
    "lr": "lr_label",
    "seed": "seed_label",
    "loss_scaling": "loss_scaling_label",
    "init_scale": "init_scale_label",
    "growth_interval": "growth_interval_label",
    "max_length": "max_length_label",
    "watch_grads": "watch_grads_label",
    "compare_scaling": "compare_scaling_label",
    "weights": "weights_label",
    "lost_updates": "lost_updates_label",
    "smoothing": "smoothing_label",
    "x_axis": "x_axis_label",
}

# RunConfig fields set by a control of another name: each run of the grid takes one backend
# and one precision from the ticked boxes.
_SET_BY = {"backend": "backends", "precision": "precisions"}


def label_key(field: str) -> str | None:
    """The i18n key of the label of the control that sets `field` (None: no control does)."""
    return LABELS.get(_SET_BY.get(field, field))
