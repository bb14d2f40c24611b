"""The page's words in its language (mpdemo/ui/locales/<code>.toml, one file a language, read by
mpdemo.languages): `t(key, lang)` a UI string, `message(key, args, lang)` an engine message,
numbers and plurals the language's way (mpdemo.wording)."""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

from ..config import cli_fields
from ..languages import (  # noqa: F401 - the page's modules and tests name these here
    DEFAULT_LANG,
    LANG_CHOICES,
    LANGS,
    LOCALES,
    engine_text,
    norm_lang,
    t,
)
from ..messages import MpdemoError

# A control `name` is labelled by the key `<name>_label`: train/controls.py labels its components
# by this rule and field_label names a refused field by it. RunConfig fields set by a control of
# another name (each run takes one of the ticked boxes):
SET_BY = {"backend": "backends", "precision": "precisions"}
# What a refusal may name that a Train-tab control sets: RunConfig's flags and the page's Repeat.
_NAMED = frozenset({f.name for f in cli_fields()} | {"repeat"})


def control_label(name: str) -> str:
    """The locale key of the label of the Train-tab control `name`: '<name>_label'."""
    return f"{name}_label"


def label_key(field: str) -> str | None:
    """The i18n key of the label of the control that sets `field` (None: no control does)."""
    return control_label(SET_BY.get(field, field)) if field in _NAMED else None


def number(value: Any, lang: str | None = DEFAULT_LANG, spec: str = "") -> str:
    """A number formatted with `spec` the way `lang` writes numbers ("2.000", "0,69" in es)."""
    return LOCALES[norm_lang(lang)].style.number(value, spec)


def field_label(field: str, lang: str | None = DEFAULT_LANG) -> str:
    """How the page names an engine field ("steps"): its control's label ("Pasos") or the name."""
    key = label_key(field)
    return t(key, lang) if key is not None else field


def message(key: str, args: Mapping[str, object], lang: str | None = DEFAULT_LANG) -> str:
    """An engine message in `lang`; a `field` argument is named by its control's label."""
    if isinstance(args.get("field"), str):
        args = {**args, "field": field_label(args["field"], lang)}
    return engine_text(key, dict(args), lang)


def error_text(err: BaseException, lang: str | None = DEFAULT_LANG) -> str:
    """The translated text of an MpdemoError (or str(err) for anything else)."""
    if not isinstance(err, MpdemoError):
        return str(err)
    return message(err.note.key, dict(err.note.args), lang)


def lang_from_header(accept_language: str | None) -> str:
    """The best supported language in an Accept-Language header (q-weighted)."""
    best, best_q = DEFAULT_LANG, -1.0
    for i, part in enumerate((accept_language or "").split(",")):
        tag, _, params = part.strip().partition(";")
        code = tag.strip().lower().split("-")[0]
        q = 1.0
        for p in params.split(";"):
            name, _, value = p.strip().partition("=")
            if name == "q":
                try:
                    q = float(value)
                except ValueError:
                    q = 0.0
        q -= i * 1e-6  # equal weights: earlier wins
        if code in LOCALES and q > best_q:
            best, best_q = code, q
    return best
