"""The page's languages, read from mpdemo/ui/locales/<code>.toml without gradio or torch."""

from __future__ import annotations

import tomllib
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from .messages import EN as EN_MESSAGES
from .messages import render
from .wording import NumberStyle

LOCALES_DIR = Path(__file__).with_name("ui") / "locales"
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
    strings = {k: v for table in sections.values() for k, v in table.items()}
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


def engine_text(key: str, args: dict[str, Any], lang: str | None = DEFAULT_LANG) -> str:
    """An engine message key (mpdemo/messages.py) in `lang`, numbers the language's way."""
    loc = LOCALES[norm_lang(lang)]
    return render(key, args, loc.messages, loc.style)
