"""The lessons in a notebook: api.py (`lesson`, `compare`: a comparison from a cell, DataFrames,
the page's plots inline, its verdict, its runs JSON), figures.py (the plots, matplotlib),
writer.py (the notebook itself, `python -m mpdemo notebook`), command.py (that subcommand).

The API's names are loaded on first use: the CLI's parser imports command.py only.
"""

from __future__ import annotations

from typing import Any

__all__ = ["Result", "compare", "lesson", "run", "runtime"]


def __getattr__(name: str) -> Any:
    if name in __all__:
        from . import api

        return getattr(api, name)
    raise AttributeError(f"module {__name__!r} has no attribute {name!r}")
