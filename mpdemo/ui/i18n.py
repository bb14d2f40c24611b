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

import tomllib
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from ..messages import EN as EN_MESSAGES
from ..messages import MpdemoError, render
from ..wording import NumberStyle
from .labels import label_key

LOCALES_DIR = Path(__file__).with_name("locales")
DEFAULT_LANG = "en"
# The tables of a locale file that hold UI strings; t() looks a key up in all of them.
UI_SECTIONS = ("ui", "teach")


@dataclass(frozen=True)
class Locale:
    """One language: its display name, number style and string tables."""

    code: str
    name: str
    style: NumberStyle
    sections: dict[str, dict[str, str]]
    messages: dict[str, str]
    strings: dict[str, str]  # every UI section merged


def load_locale(path: Path) -> Locale:
    """Read one locale file."""
    data = tomllib.loads(path.read_text(encoding="utf-8"))
    meta = data.get("meta", {})
    code = path.stem
    sections = {name: dict(data.get(name, {})) for name in UI_SECTIONS}
    strings: dict[str, str] = {}
    for table in sections.values():
        strings.update(table)
    messages = dict(data.get("messages", {}))
    if code == DEFAULT_LANG and not messages:
        messages = EN_MESSAGES  # the engine's own language: the same dict, never a copy
    style = NumberStyle(
        decimal=meta.get("decimal", "."),
        thousands=meta.get("thousands", ","),
        plural_one=frozenset(meta.get("plural_one", [1])),
    )
    return Locale(code, meta.get("name", code), style, sections, messages, strings)


def load_locales(folder: Path = LOCALES_DIR) -> dict[str, Locale]:
    """Every locale file in `folder`, the default language first, then by code."""
    paths = sorted(folder.glob("*.toml"), key=lambda p: (p.stem != DEFAULT_LANG, p.stem))
    return {p.stem: load_locale(p) for p in paths}


LOCALES: dict[str, Locale] = load_locales()
LANGS: tuple[str, ...] = tuple(LOCALES)
LANG_CHOICES: list[tuple[str, str]] = [(loc.name, code) for code, loc in LOCALES.items()]


def norm_lang(lang: Any) -> str:
    """A supported language code; anything else (a list an API caller sent) is the default."""
    return lang if isinstance(lang, str) and lang in LOCALES else DEFAULT_LANG


def t(key: str, lang: str | None = DEFAULT_LANG, **args: Any) -> str:
    """A UI string in `lang` (the default language's when missing), filled with `args`."""
    loc = LOCALES[norm_lang(lang)]
    # A key someone has not translated yet is said in the default language.
    template = loc.strings.get(key) or LOCALES[DEFAULT_LANG].strings.get(key) or key
    if not args:
        return template
    try:
        return loc.style.format(template, args)
    except (KeyError, IndexError, ValueError):
        return template


def number(value: Any, lang: str | None = DEFAULT_LANG, spec: str = "") -> str:
    """A number formatted with `spec` the way `lang` writes numbers ("2.000", "0,69" in es)."""
    return LOCALES[norm_lang(lang)].style.number(value, spec)


def field_label(field: str, lang: str | None = DEFAULT_LANG) -> str:
    """How the page names an engine field: the label of the control that sets it, else the name.

    The engine names a field as the CLI's flag does ("steps"); the page says "Pasos".
    """
    key = label_key(field)
    return t(key, lang) if key is not None else field


def message(key: str, args: dict[str, Any], lang: str | None = DEFAULT_LANG) -> str:
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
