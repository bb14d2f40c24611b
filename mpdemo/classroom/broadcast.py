"""Comparisons shared between the visitors of one server: one queue, shared records, boards.

Training is one grid at a time in a process (timings must not share the cores), so a class
that presses Train together queues. Here every comparison asked for on this server is a
`Comparison`: its events are recorded as they come, and any number of `Viewer`s replay them
from the start and then follow live. A visitor who asks for the same comparison (the same
configs, repeat and time budget, the same code, this machine) as one running, waiting or
finished a few minutes ago watches that one instead of queueing the same work again; a
visitor who asks for their own run gets a private one, never joined by anyone.

`Hub` holds them: a FIFO queue run by one worker thread (each request knows its place and an
estimate of its wait from what the runs ahead measured), the index of shareable comparisons
(bounded, least recently used first out, released once nobody watches and they are old), and
the teachers' boards (a short code that follows one visitor's comparisons live).

The producer never waits on a viewer: viewers read the record under a Condition and keep only a
position in it, so a viewer that stops reading holds nothing and is dropped after a while.

The pieces live in mpdemo.classroom.keys (what makes two comparisons the same),
.comparison (one comparison and its record), .viewer (one visitor following it), .boards and
.line (the Hub); this module names them all and holds the process's hub.
"""

from __future__ import annotations

import threading

from ..state import on_reset
from .boards import (
    BOARD_ALPHABET,
    BOARD_CODE_LEN,
    BOARDS_PER_CLIENT,
    FAIL_WINDOW_S,
    FAILS_IN_ALL,
    FAILS_PER_CLIENT,
    MAX_BOARDS,
    Board,
    BoardError,
    normalize_code,
)
from .comparison import (
    ENDED,
    HEARTBEAT_S,
    KEEP_S,
    MAX_ENTRIES,
    MAX_PACE_S,
    MAX_SHARED,
    NOTIFY_S,
    PACE_STEPS,
    STALE_S,
    VIEW_COST_S,
    Comparison,
    Entry,
    RunnerFactory,
    default_runner,
)
from .keys import code_version, comparison_key, machine_key
from .line import TYPICAL_RUNS, Hub, QueueFull
from .viewer import Viewer, script_note

__all__ = [
    "BOARD_ALPHABET",
    "BOARD_CODE_LEN",
    "BOARDS_PER_CLIENT",
    "ENDED",
    "FAIL_WINDOW_S",
    "FAILS_IN_ALL",
    "FAILS_PER_CLIENT",
    "HEARTBEAT_S",
    "KEEP_S",
    "MAX_BOARDS",
    "MAX_ENTRIES",
    "MAX_PACE_S",
    "MAX_SHARED",
    "NOTIFY_S",
    "PACE_STEPS",
    "STALE_S",
    "TYPICAL_RUNS",
    "VIEW_COST_S",
    "Board",
    "BoardError",
    "Comparison",
    "Entry",
    "Hub",
    "QueueFull",
    "RunnerFactory",
    "Viewer",
    "code_version",
    "comparison_key",
    "default_runner",
    "hub",
    "machine_key",
    "normalize_code",
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
