"""The Gradio UI: the only package in mpdemo that imports gradio. `build_app()` builds it."""

from __future__ import annotations

from .app import TABS, TabContext, build_app

__all__ = ["TABS", "TabContext", "build_app"]
