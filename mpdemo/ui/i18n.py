"""The UI's languages, read from mpdemo/ui/locales/<code>.toml (one file per language).

`t(key, lang, **args)` renders a UI string; `message(key, args, lang)` renders an engine message
key (mpdemo/messages.py) in the page's language. Adding a language is adding its file: its
`[meta]` names it, `[ui]` and `[teach]` hold the page's strings, `[messages]` the engine's.
The default language's engine messages are mpdemo.messages.EN itself (the engine's own words,
which the CLI prints), so its file has no `[messages]` table.

Numbers in templates come out in the locale's format: `{n:,}` is "2,000" in English and "2.000"
in Spanish, `{x:.2f}` is "0.69" / "0,69" (the file's `decimal` and `thousands`). Counted
strings have plural variants `<key>_one` / `<key>_other`, picked by the `count` argument with
the file's `plural_one` list (the counts that take the singular: [1] for en/es, [0, 1] for
pt-BR, as CLDR has it).
"""

from __future__ import annotations

import numbers
import string
import tomllib
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from ..messages import EN as EN_MESSAGES
from ..messages import render

LOCALES_DIR = Path(__file__).with_name("locales")
DEFAULT_LANG = "en"
# The tables of a locale file that hold UI strings; t() looks a key up in all of them.
UI_SECTIONS = ("ui", "teach")


@dataclass(frozen=True)
class Locale:
    """One language: its display name, number format, plural rule and string tables."""

    code: str
    name: str
    decimal: str
    thousands: str
    plural_one: frozenset[int]
    sections: dict[str, dict[str, str]]
    messages: dict[str, str]
    strings: dict[str, str] = field(default_factory=dict)  # every UI section merged

    def number(self, value: Any, spec: str = "") -> str:
        """`format(value, spec)` with this locale's decimal mark and digit grouping."""
        text = format(value, spec)
        if isinstance(value, bool) or not isinstance(value, numbers.Real):
            return text
        if (self.decimal, self.thousands) == (".", ","):
            return text
        # One pass, so "1,234.5" becomes "1.234,5" rather than "1.234.5".
        return text.translate({ord(","): self.thousands, ord("."): self.decimal})

    def plural_form(self, count: Any) -> str:
        """ "one" or "other": which variant of a counted string `count` takes here."""
        try:
            whole = int(count) == count
        except (TypeError, ValueError):
            return "other"
        return "one" if whole and int(count) in self.plural_one else "other"

    def format(self, template: str, args: dict[str, Any]) -> str:
        """Fill `template` with `args`, numbers in this locale's format."""
        return _LocaleFormatter(self).vformat(template, (), args)


class _LocaleFormatter(string.Formatter):
    """str.format, except that numbers go through Locale.number."""

    def __init__(self, locale: Locale) -> None:
        self.locale = locale

    def format_field(self, value: Any, format_spec: str) -> str:
        return self.locale.number(value, format_spec)


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
    return Locale(
        code=code,
        name=meta.get("name", code),
        decimal=meta.get("decimal", "."),
        thousands=meta.get("thousands", ","),
        plural_one=frozenset(meta.get("plural_one", [1])),
        sections=sections,
        messages=messages,
        strings=strings,
    )


def load_locales(folder: Path = LOCALES_DIR) -> dict[str, Locale]:
    """Every locale file in `folder`, the default language first, then by code."""
    paths = sorted(folder.glob("*.toml"), key=lambda p: (p.stem != DEFAULT_LANG, p.stem))
    return {p.stem: load_locale(p) for p in paths}


LOCALES: dict[str, Locale] = load_locales()
LANGS: tuple[str, ...] = tuple(LOCALES)
LANG_CHOICES: list[tuple[str, str]] = [(loc.name, code) for code, loc in LOCALES.items()]


def norm_lang(lang: str | None) -> str:
    """A supported language code; anything else falls back to the default language."""
    return lang if lang in LOCALES else DEFAULT_LANG


def _template(loc: Locale, key: str, args: dict[str, Any]) -> str | None:
    """`key` in loc's strings, or its plural variant for args["count"]."""
    if key in loc.strings:
        return loc.strings[key]
    if "count" in args:
        form = loc.plural_form(args["count"])
        return loc.strings.get(f"{key}_{form}") or loc.strings.get(f"{key}_other")
    return None


def t(key: str, lang: str | None = DEFAULT_LANG, **args: Any) -> str:
    """A UI string in `lang` (the default language's when missing), filled with `args`.

    Numbers are formatted the locale's way; with a `count` argument a key that has
    `_one`/`_other` variants picks the one the count takes in that language.
    """
    loc = LOCALES[norm_lang(lang)]
    template = _template(loc, key, args)
    if template is None:  # a key someone has not translated yet: say it in the default language
        template = _template(LOCALES[DEFAULT_LANG], key, args) or key
    if not args:
        return template
    try:
        return loc.format(template, args)
    except (KeyError, IndexError, ValueError):
        return template


def number(value: Any, lang: str | None = DEFAULT_LANG, spec: str = "") -> str:
    """A number formatted with `spec` the way `lang` writes numbers ("2.000", "0,69" in es)."""
    return LOCALES[norm_lang(lang)].number(value, spec)


def message(key: str, args: dict[str, Any], lang: str | None = DEFAULT_LANG) -> str:
    """An engine message key rendered in `lang`, numbers in its format."""
    loc = LOCALES[norm_lang(lang)]
    # A nested message ({"key", "args"}: the hardware behind a speed) in the same language.
    args = {
        k: message(v["key"], v.get("args") or {}, lang) if isinstance(v, dict) and "key" in v else v
        for k, v in args.items()
    }
    template = loc.messages.get(key) or EN_MESSAGES.get(key)
    if template is None:
        return render(key, args)  # mpdemo.messages' own fallback (the key and its arguments)
    try:
        return loc.format(template, args)
    except (KeyError, IndexError, ValueError):
        return render(key, args, loc.messages)


def error_text(err: BaseException, lang: str | None = DEFAULT_LANG) -> str:
    """The translated text of an MpdemoError (or str(err) for anything else)."""
    note = getattr(err, "note", None)
    if note is None:
        return str(err)
    return message(note.key, dict(note.args), lang)


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
