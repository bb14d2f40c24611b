"""The server's lifetime: its queue's settings, which sessions it may forget, and a clean stop.

- `queue_options()`: what `demo.queue(...)` takes. Gradio's `max_size` counts every waiting
  event (a Stop's too), so four sweeps from four tabs answered everyone's Stop "Queue is full":
  the line of comparisons (mpdemo/classroom) bounds training, Stop and Publish skip the queue.
- `keep_busy_sessions()`: gradio forgets the least recently used session past its capacity; a
  stranger opening 401 sessions made a visitor's Stop say "Nothing is running" and changed the
  teacher's board code. A session with a run in progress or a board is never the one forgotten.
- `serve(demo)`: launch, and on Ctrl-C or SIGTERM stop the runs, wait for their threads (their
  files are written whole, mpdemo/files/atomic.py), and exit 130 / 143 (0 when idle) rather than
  let the interpreter tear torch's threads down mid-step (SIGABRT, "terminate called...").
"""

from __future__ import annotations

import logging
import os
import signal
import threading
from typing import Any

import gradio as gr

from ..classroom import broadcast
from .train import classroom
from .train.session import Session

STOP_WAIT_S = 30.0  # how long a stopped run may take to end its step and write its files
_log = logging.getLogger("mpdemo.ui.serve")


def queue_options() -> dict[str, Any]:
    """demo.queue's settings: one at a time unless an event says otherwise, no global size cap;
    gradio's per-event analytics summary off unless its variable is set."""
    # gradio 6.31's queue rebuilds a pandas summary of its last 10,000 events after every event
    # (queueing.py, compute_analytics_summary), read only by its monitoring dashboard, which this
    # app never enables: 18-32 ms of CPU an event on a 2-core EPYC (100 to 10,000 events held),
    # holding the GIL while a run's steps are timed in another thread, and ~3 % of the test
    # suite's CPU. Its own variable, read when demo.queue() builds the queue, says how many
    # events to wait between summaries.
    os.environ.setdefault("GRADIO_ANALYTICS_CACHE_FREQUENCY", str(2**62))
    return {"default_concurrency_limit": 1, "max_size": None}


def busy(value: Any) -> bool:
    """Whether a session's state holds a run in progress or a published board."""
    if not isinstance(value, Session):
        return False
    return value.running or classroom.board_code(value) is not None


def keep_busy_sessions() -> None:
    """Gradio's session store evicts the oldest session that is not busy (see the module)."""
    from gradio.state_holder import StateHolder

    if getattr(StateHolder.update, "_mpdemo", False):
        return

    def update(self: Any, session_id: str) -> None:
        with self.lock:
            if session_id in self.session_data:
                self.session_data.move_to_end(session_id)
            excess = len(self.session_data) - self.capacity
            for sid in list(self.session_data):  # oldest first
                if excess <= 0:
                    break
                state = self.session_data[sid]
                values = getattr(state, "state_data", {}).values()
                if sid == session_id or any(busy(v) for v in values):
                    continue
                del self.session_data[sid]
                self.time_last_used.pop(sid, None)
                excess -= 1

    update._mpdemo = True  # type: ignore[attr-defined]
    StateHolder.update = update  # type: ignore[method-assign]


def stop_everything(wait_s: float = STOP_WAIT_S) -> bool:
    """Stop every comparison (running and waiting) and wait for it; True when one was running."""
    return broadcast.hub().stop_all(wait_s)


def serve(demo: gr.Blocks, **launch: Any) -> int:
    """Launch and block until Ctrl-C or SIGTERM; then stop cleanly and return the exit code."""
    got: list[int] = []
    done = threading.Event()

    def on_signal(signum: int, _frame: Any) -> None:
        got.append(signum)
        done.set()

    previous = {s: signal.signal(s, on_signal) for s in (signal.SIGINT, signal.SIGTERM)}
    try:
        demo.launch(prevent_thread_lock=True, **launch)
        done.wait()
    finally:
        for s, handler in previous.items():
            signal.signal(s, handler)
    was_busy = stop_everything()
    demo.close()
    signum = got[0] if got else signal.SIGINT
    code = 128 + int(signum) if was_busy else 0
    _log.info("stopped by signal %s; exit %s", signum, code)
    return code


def exit_now(code: int) -> None:
    """Leave without the interpreter's teardown of torch's thread pools (see the module)."""
    logging.shutdown()
    os._exit(code)
