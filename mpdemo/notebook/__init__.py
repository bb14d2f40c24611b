"""The lessons in a notebook, from a cell or as `python -m mpdemo notebook` writes them."""

from __future__ import annotations

from typing import Any

__all__ = ["Result", "compare", "lesson", "run", "runtime"]


def __getattr__(name: str) -> Any:
    """The API loads on first use: `python -m mpdemo notebook` does not need it."""
    if name in __all__:
        from . import api

        return getattr(api, name)
    raise AttributeError(f"module {__name__!r} has no attribute {name!r}")
