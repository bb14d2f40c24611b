"""The lessons in a notebook: api.py (`lesson`, `compare`: a comparison from a cell, DataFrames,
the page's plots inline, its verdict, its runs JSON), figures.py (the plots, matplotlib),
writer.py (the notebook itself, `python -m mpdemo notebook`), command.py (that subcommand).
"""

from .api import Result, compare, lesson, run, runtime

__all__ = ["Result", "compare", "lesson", "run", "runtime"]
