"""The Gradio UI: the only package in mpdemo that imports gradio. `build_app()` builds it; launch it with `**launch_options()` (the CSS and the upload cap)."""

from __future__ import annotations

from .app import CSS, TABS, TabContext, build_app, launch_options

__all__ = ["CSS", "TABS", "TabContext", "build_app", "launch_options"]
