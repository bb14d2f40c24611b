"""The locale files: every language has every key, with the same placeholders."""

from __future__ import annotations

import string
import tomllib

import pytest

from mpdemo.messages import EN as EN_MESSAGES
from mpdemo.ui import i18n

LOCALE_FILES = sorted(i18n.LOCALES_DIR.glob("*.toml"))
CODES = [p.stem for p in LOCALE_FILES]


def placeholders(template: str) -> set[tuple[str, str | None, str]]:
    """Each `{name!conv:spec}` of a template: renaming or dropping one breaks a translation."""
    return {
        (name, conv, spec)
        for _, name, spec, conv in string.Formatter().parse(template)
        if name is not None
    }


def test_languages_are_the_files_in_the_folder() -> None:
    assert {"en", "es"} <= set(CODES)
    assert i18n.LANGS[0] == i18n.DEFAULT_LANG
    assert [code for _, code in i18n.LANG_CHOICES] == list(i18n.LANGS)
    assert set(i18n.LANGS) == set(CODES)


@pytest.mark.parametrize("path", LOCALE_FILES, ids=CODES)
def test_every_file_parses_and_names_its_language(path) -> None:
    data = tomllib.loads(path.read_text(encoding="utf-8"))
    meta = data["meta"]
    assert meta["name"].strip()
    assert meta["decimal"] != meta["thousands"]
    assert set(data) <= {"meta", "messages", *i18n.UI_SECTIONS}, set(data)


@pytest.mark.parametrize("code", [c for c in CODES if c != i18n.DEFAULT_LANG])
def test_same_keys_and_placeholders_as_the_default_language(code: str) -> None:
    base, loc = i18n.LOCALES[i18n.DEFAULT_LANG], i18n.LOCALES[code]
    for section in i18n.UI_SECTIONS:
        ours, theirs = set(loc.sections[section]), set(base.sections[section])
        assert ours == theirs, (section, "missing", theirs - ours, "extra", ours - theirs)
        for key, template in base.sections[section].items():
            assert placeholders(loc.sections[section][key]) == placeholders(template), key
    # The engine's messages: mpdemo/messages.py holds the keys and the English.
    assert set(loc.messages) == set(EN_MESSAGES), set(EN_MESSAGES) ^ set(loc.messages)
    for key, template in EN_MESSAGES.items():
        assert placeholders(loc.messages[key]) == placeholders(template), key


def test_no_key_is_in_two_sections() -> None:
    for loc in i18n.LOCALES.values():
        ui, teach = loc.sections["ui"], loc.sections["teach"]
        assert not set(ui) & set(teach), set(ui) & set(teach)


def test_no_translation_is_left_empty() -> None:
    for code, loc in i18n.LOCALES.items():
        for table in (loc.strings, loc.messages):
            empty = [k for k, v in table.items() if not v.strip()]
            assert not empty, (code, empty)
