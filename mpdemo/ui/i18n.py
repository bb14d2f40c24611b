"""The UI's languages, read from mpdemo/ui/locales/<code>.toml (one file per language).

`t(key, lang, **args)` renders a UI string; `message(key, args, lang)` renders an engine message
key (mpdemo/messages/) in the page's language. Adding a language is adding its file: its
`[meta]` names it and says how it writes numbers, `[ui]` and `[teach]` hold the page's strings,
`[messages]` the engine's. The default language's engine messages are mpdemo.messages.EN itself
(the engine's own words, which the CLI prints), so its file has no `[messages]` table.

Templates are filled by mpdemo.wording: numbers come out the language's way (`{n:,}` is
"2.000" in Spanish, `{x:.2f}` is "0,69"), and `{n:plural(# ejecución|# ejecuciones)}` says a
count with the form it takes in that language.
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

from ..languages import (  # noqa: F401 - the page's modules and tests name these here
    DEFAULT_LANG,
    LANG_CHOICES,
    LANGS,
    LOCALES,
    LOCALES_DIR,
    UI_SECTIONS,
    Locale,
    load_locale,
    load_locales,
    norm_lang,
    t,
)
from ..messages import MpdemoError, render
from .labels import label_key


def number(value: Any, lang: str | None = DEFAULT_LANG, spec: str = "") -> str:
    """A number formatted with `spec` the way `lang` writes numbers ("2.000", "0,69" in es)."""
    return LOCALES[norm_lang(lang)].style.number(value, spec)


def field_label(field: str, lang: str | None = DEFAULT_LANG) -> str:
    """How the page names an engine field: the label of the control that sets it, else the name.

    The engine names a field as the CLI's flag does ("steps"); the page says "Pasos".
    """
    key = label_key(field)
    return t(key, lang) if key is not None else field


def message(key: str, args: Mapping[str, object], lang: str | None = DEFAULT_LANG) -> str:
    """An engine message key rendered in `lang`, numbers and plurals the language's way.

    A `field` argument (bad input) is named by its control's label in `lang`.
    """
    loc = LOCALES[norm_lang(lang)]
    if isinstance(args.get("field"), str):
        args = {**args, "field": field_label(args["field"], lang)}
    return render(key, args, loc.messages, loc.style)


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
