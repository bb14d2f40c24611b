"""The Gradio UI: the only package in mpdemo that imports gradio. `build_app()` builds it; launch it with `**launch_options()` (the CSS and the upload cap)."""

from __future__ import annotations

from .quick_import import skip_stub_writing

skip_stub_writing()  # before gradio's first import (two seconds of every start: see the module)

from .app import build_app, launch_options, run_app  # noqa: E402

__all__ = ["build_app", "launch_options", "run_app"]
