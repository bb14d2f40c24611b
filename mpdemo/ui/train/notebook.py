"""The Train tab's notebook download, beside the Python script: the current comparison as a
Jupyter notebook in the page's language (mpdemo.notebook.writer), to run where a GPU is."""

from __future__ import annotations

from typing import Any

import gradio as gr

from ...notebook.writer import comparison_notebook, lesson_of, write_notebook
from ..context import QUIET, Component, TabContext
from ..i18n import norm_lang
from .session import Session


def notebook_update(session: Session | None, lang: str) -> Any:
    """The notebook of the session's comparison, written to its folder, as the button's file."""
    configs = list(session.configs) if session is not None else []
    if not configs:
        return gr.update(value=None, interactive=False)
    name = lesson_of([c.replace(trial=0) for c in configs if c.trial <= 1])
    path = session.folder() / f"mpdemo-{name or 'comparison'}.ipynb"
    try:
        write_notebook(path, comparison_notebook(configs, norm_lang(lang)))
    except OSError:  # no room to write it: the button stays off, the page goes on
        return gr.update(value=None, interactive=False)
    return gr.update(value=str(path), interactive=True)


def wire(ctx: TabContext, comps: dict[str, Component], session: Any) -> None:
    """Write it again when the runs or the page's language change."""
    for comp in (comps["summary"], comps["script_run"]):
        comp.change(notebook_update, [session, ctx.lang], [comps["notebook_btn"]], **QUIET)
    ctx.on_language(
        lambda lang, sess: notebook_update(sess, lang), [session], [comps["notebook_btn"]]
    )
