"""The lessons in a notebook: api.py (`lesson`, `compare` from a cell), figures.py (the plots),
writer.py and command.py (`python -m mpdemo notebook`). The API loads on first use.
"""

from __future__ import annotations

from typing import Any

__all__ = ["Result", "compare", "lesson", "run", "runtime"]


def __getattr__(name: str) -> Any:
    if name in __all__:
        from . import api

        return getattr(api, name)
    raise AttributeError(f"module {__name__!r} has no attribute {name!r}")
