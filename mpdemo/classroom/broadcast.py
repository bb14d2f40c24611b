"""Comparisons shared between one server's visitors: this process's `Hub`, the names pages read."""

from __future__ import annotations

import threading

from ..state import on_reset
from .boards import Board, BoardError
from .comparison import Comparison, comparison_key
from .line import Hub, QueueFull
from .viewer import Viewer, script_note

__all__ = [
    "Board",
    "BoardError",
    "Comparison",
    "Hub",
    "QueueFull",
    "Viewer",
    "comparison_key",
    "hub",
    "script_note",
]

_HUB: Hub | None = None
_HUB_LOCK = threading.Lock()


def hub() -> Hub:
    """This process's hub (made on first use)."""
    global _HUB
    with _HUB_LOCK:
        if _HUB is None:
            _HUB = Hub()
        return _HUB


@on_reset
def forget_hub() -> None:
    """A new, empty line on next use (mpdemo.reset(); comparisons under way keep their threads)."""
    global _HUB
    with _HUB_LOCK:
        _HUB = None
