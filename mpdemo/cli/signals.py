"""SIGINT and SIGTERM in a command: stop at the next step or point, keep what was measured."""

from __future__ import annotations

import signal
import threading
from collections.abc import Iterator
from contextlib import contextmanager
from typing import Any

EXIT_SIGNAL = 128  # stopped by a signal: 128 + its number (130 SIGINT, 143 SIGTERM), as shells do


@contextmanager
def stop_on_signals(stop: threading.Event, graceful: bool = True) -> Iterator[dict[str, int]]:
    """SIGINT and SIGTERM stop the grid: the run in progress ends at its next step (stopped),
    none after it starts, and the caller writes what finished; a second signal interrupts at once.

    Yields a dict that gets "signal" (its number) once one arrived. Several processes
    (`accelerate launch`) cannot stop at the same step, so there the first signal interrupts.
    """
    caught: dict[str, int] = {}
    if threading.current_thread() is not threading.main_thread():
        yield caught  # signal handlers belong to the main thread (the CLI called from a test)
        return

    def handler(signum: int, _frame: Any) -> None:
        first = "signal" not in caught
        caught.setdefault("signal", signum)
        stop.set()
        if not (graceful and first):
            raise KeyboardInterrupt

    previous = {sig: signal.signal(sig, handler) for sig in (signal.SIGINT, signal.SIGTERM)}
    try:
        yield caught
    finally:
        for sig, old in previous.items():
            signal.signal(sig, old)
