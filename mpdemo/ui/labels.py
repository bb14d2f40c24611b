"""How the page names each setting: the locale key of its Train-tab control's label, by rule.

A control named `name` is labelled by the locale key `<name>_label` (controls.py checks the
English file at import; tests/test_ui.py every language's). One rule for both sides of the page's words:
mpdemo/ui/train/controls.py labels its components with it, and mpdemo/ui/i18n.py names a
refused engine field by it ("Pasos", not "steps"). It sits below both so that neither imports
the other, and a RunConfig field added with a command-line flag is named without a table.
"""

from __future__ import annotations

from ..config import cli_fields

# RunConfig fields set by a control of another name: each run of the grid takes one backend
# and one precision from the ticked boxes.
SET_BY = {"backend": "backends", "precision": "precisions"}
# What a refusal may name that a Train-tab control sets: RunConfig's flags, and the page's own
# Repeat.
_NAMED = frozenset({f.name for f in cli_fields()} | {"repeat"})


def control_label(name: str) -> str:
    """The locale key of the label of the Train-tab control `name`: '<name>_label'."""
    return f"{name}_label"


def label_key(field: str) -> str | None:
    """The i18n key of the label of the control that sets `field` (None: no control does)."""
    return control_label(SET_BY.get(field, field)) if field in _NAMED else None
