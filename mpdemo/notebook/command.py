"""`python -m mpdemo notebook [LESSON…] --out F.ipynb [--lang CODE]`: the lessons as a notebook."""

from __future__ import annotations

import argparse

from ..files.atomic import check_output_paths
from ..languages import DEFAULT_LANG, LANGS


def add_notebook_parser(
    sub: argparse._SubParsersAction[argparse.ArgumentParser],
) -> argparse.ArgumentParser:
    """The `notebook` subcommand's flags."""
    p = sub.add_parser(
        "notebook",
        help="write the lessons as a Jupyter notebook (for a Colab, Kaggle or JupyterHub GPU)",
    )
    p.add_argument(
        "lessons",
        nargs="*",
        metavar="LESSON",
        help="the lessons, in this order (default: every lesson but the size sweep, in the course's order)",
    )
    p.add_argument("--out", required=True, help="the .ipynb file to write")
    p.add_argument(
        "--lang", choices=LANGS, default=DEFAULT_LANG, help="the page's language for its text"
    )
    return p


def notebook_main(args: argparse.Namespace) -> int:
    """Write the notebook; an unknown lesson is ConfigError (exit 2, the lessons named)."""
    from .writer import lessons_notebook, write_notebook

    check_output_paths([("--out", args.out)])
    doc = lessons_notebook(args.lessons, args.lang)  # checks every name before writing
    path = write_notebook(args.out, doc)
    print(f"wrote {path}: open it in Jupyter, Colab or Kaggle (mpdemo.notebook runs each lesson)")
    return 0
