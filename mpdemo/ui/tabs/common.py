"""What the teaching tabs share: their strings, HTML escaping, and the low-precision formats
they name (the Number formats tab and the Underflow lab show the same ones)."""

from __future__ import annotations

from typing import Any

from ..i18n import t
from ..text import esc  # noqa: F401 - the tabs' HTML escaping: one helper for the whole UI

# How the formats are named on the page: torch's fp8 dtypes as the fp8 papers name them.
FORMAT_NAMES = {"fp32": "fp32", "fp16": "fp16", "bf16": "bf16", "e4m3": "E4M3", "e5m2": "E5M2"}
SCALE_FORMATS = ("fp16", "bf16", "e4m3", "e5m2")  # formats.LOW_PRECISION, without torch
FORMAT_CHOICES = [(FORMAT_NAMES[f], f) for f in SCALE_FORMATS]
SCALE_K_DEFAULT = 16  # both tabs' scale sliders open at S = 2^16, GradScaler's init_scale


def tt(key: str, lang: str | None, **args: Any) -> str:
    """A teaching string in lang: the same tables as t() (every locale file has every key)."""
    return t(key, lang, **args)
