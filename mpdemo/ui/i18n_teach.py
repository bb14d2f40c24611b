"""The teaching tabs' strings (Number formats, Underflow lab, Code, Why): the `[teach]` tables.

They live in mpdemo/ui/locales/<lang>.toml next to the page's `[ui]` strings; t() reads both.
Spanish follows the course's own vocabulary (seeds/000): "precisión mixta", "escalado de la
pérdida", "underflow" as is. The Code tab's explanations are comments in the backends' source
(mpdemo.listing); `code_why_<digest>` keys translate them (teach_tabs.why_key).
"""

from __future__ import annotations

from .i18n import DEFAULT_LANG, LOCALES

# The default language's teaching strings.
TEACH_EN: dict[str, str] = LOCALES[DEFAULT_LANG].sections["teach"]
