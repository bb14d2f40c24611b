"""How the page names each setting: the locale key of its Train-tab control's label, by rule.

A control named `name` is labelled by the locale key `<name>_label` (every language's file has
it; tests/test_locales.py checks). One rule for both sides of the page's words:
mpdemo/ui/train/controls.py labels its components with it, and mpdemo/ui/i18n.py names a
refused engine field by it ("Pasos", not "steps"). It sits below both so that neither imports
the other, and a RunConfig field added with a command-line flag is named without a table.
"""

from __future__ import annotations

from ..config import cli_fields

# RunConfig fields set by a control of another name: each run of the grid takes one backend
# and one precision from the ticked boxes.
_SET_BY = {"backend": "backends", "precision": "precisions"}
# Settings a refusal may name that are the page's own, not RunConfig fields.
_PAGE_SETTINGS = frozenset({"repeat"})


def control_label(name: str) -> str:
    """The locale key of the label of the Train-tab control `name`: '<name>_label'."""
    return f"{name}_label"


def label_key(field: str) -> str | None:
    """The i18n key of the label of the control that sets `field` (None: no control does)."""
    if field in _SET_BY or field in _PAGE_SETTINGS or field in {f.name for f in cli_fields()}:
        return control_label(_SET_BY.get(field, field))
    return None
