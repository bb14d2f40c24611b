"""What the teaching tabs share: their strings, HTML escaping, and the low-precision formats
they name (the Number formats tab and the Underflow lab show the same ones)."""

from __future__ import annotations

from typing import Any

from ...teach.formats import LOW_PRECISION
from ..histogram import FORMAT_NAMES  # noqa: F401 - the tabs name formats as the figures do
from ..i18n import t
from ..text import esc  # noqa: F401 - the tabs' HTML escaping: one helper for the whole UI

SCALE_FORMATS = LOW_PRECISION  # mpdemo.teach.formats imports no torch
FORMAT_CHOICES = [(FORMAT_NAMES[f], f) for f in SCALE_FORMATS]
SCALE_K_DEFAULT = 16  # both tabs' scale sliders open at S = 2^16, GradScaler's init_scale


def tt(key: str, lang: str | None, **args: Any) -> str:
    """A teaching string in lang: the same tables as t() (every locale file has every key)."""
    return t(key, lang, **args)
