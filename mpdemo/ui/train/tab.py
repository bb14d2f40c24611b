"""The Train tab: controls → RunConfig grid → Runner → streamed plots, status, table, files.

Split by job: inputs.py (defaults, previews, checks), status.py (the status), handlers.py (train,
stop, redraw, legend), layout.py (the components), wiring.py (the events), lessons.py (the lesson
picker). This module names the tab's public functions in one place for the app and the tests.
"""

from __future__ import annotations

from .handlers import (
    arm,
    legend_click,
    redraw,
    scale_preview,
    settle,
    show_columns,
    stop,
    summary_update,
    train,
    train_endpoint,
)
from .inputs import (
    DEFAULTS,
    check_inputs,
    check_repeat,
    fp8_box,
    machine_text,
    precision_info,
    precision_note,
    slice_preview,
    with_fp8,
)
from .layout import build_train_tab
from .status import idle_status, status_text, stopped_text

__all__ = [
    "DEFAULTS",
    "arm",
    "build_train_tab",
    "check_inputs",
    "check_repeat",
    "fp8_box",
    "idle_status",
    "legend_click",
    "machine_text",
    "precision_info",
    "precision_note",
    "redraw",
    "scale_preview",
    "settle",
    "show_columns",
    "slice_preview",
    "status_text",
    "stop",
    "stopped_text",
    "summary_update",
    "train",
    "train_endpoint",
    "with_fp8",
]
