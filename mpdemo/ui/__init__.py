"""The Gradio UI: the only package in mpdemo that imports gradio. `build_app()` builds it; launch it with `css=CSS`."""

from __future__ import annotations

from .app import CSS, TABS, TabContext, build_app

__all__ = ["CSS", "TABS", "TabContext", "build_app"]
