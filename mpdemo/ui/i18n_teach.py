"""The teaching tabs' strings (Number formats, Underflow lab, Code, Why): the `[teach]` tables.

They live in mpdemo/ui/locales/<lang>.toml next to the page's `[ui]` strings; t() reads both.
Spanish follows the course's own vocabulary (seeds/000): "precisión mixta", "escalado de la
pérdida", "underflow" as is. `code_change_<backend>_<i>` keys mirror
mpdemo.codegen.CHANGES[backend][i] word for word in English; teach_tabs falls back to codegen's
English when they drift (a test catches that).
"""

from __future__ import annotations

from .i18n import DEFAULT_LANG, LOCALES

# The default language's teaching strings (the Code tab compares them with codegen's English).
TEACH_EN: dict[str, str] = LOCALES[DEFAULT_LANG].sections["teach"]
