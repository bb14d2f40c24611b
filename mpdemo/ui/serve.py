"""The server's lifetime: its queue's settings, which sessions it may forget, and a clean stop
(on Ctrl-C or SIGTERM the runs stop and their files are written whole before the process exits,
rather than the interpreter tearing torch's threads down mid-step)."""

from __future__ import annotations

import inspect
import logging
import os
import signal
import threading
import warnings
from typing import Any

import gradio as gr
from gradio.helpers import special_args

from ..classroom import broadcast
from .train import classroom
from .train.session import Session

STOP_WAIT_S = 30.0  # how long a stopped run may take to end its step and write its files
_log = logging.getLogger("mpdemo.ui.serve")


def queue_options() -> dict[str, object]:
    """demo.queue's settings: one at a time unless an event says otherwise; no global size cap
    (it counted a Stop's event too: the classroom's line bounds training)."""
    # gradio 6.31 rebuilds a pandas summary of its last 10,000 events after every event for a
    # dashboard this app never shows (18-32 ms of CPU an event on a 2-core EPYC, holding the GIL).
    os.environ.setdefault("GRADIO_ANALYTICS_CACHE_FREQUENCY", str(2**62))
    return {"default_concurrency_limit": 1, "max_size": None}


# gradio 6.31's queue polls every 1 ms on Linux: an idle app used 9 % of a core of a 2-core EPYC
# (1 % at 50 ms). 20 ms adds 10 ms to an event's start on average.
QUEUE_POLL_S = 0.02
PROGRESS_POLL_S = 0.1  # this app sends no gr.Progress; gradio's Windows value


def poll_gently() -> None:
    """Every gradio queue made in this process polls every QUEUE_POLL_S, not every millisecond."""
    from gradio.queueing import Queue

    if getattr(Queue.__init__, "_mpdemo", False):
        return
    init = Queue.__init__

    def __init__(self: Any, *args: object, **kwargs: object) -> None:
        init(self, *args, **kwargs)
        self.sleep_when_free = max(self.sleep_when_free, QUEUE_POLL_S)
        self.progress_update_sleep_when_free = max(
            self.progress_update_sleep_when_free, PROGRESS_POLL_S
        )

    __init__._mpdemo = True  # type: ignore[attr-defined]
    Queue.__init__ = __init__  # type: ignore[method-assign]


def busy(value: Any) -> bool:
    """Whether a session's state holds a run in progress or a published board."""
    return isinstance(value, Session) and (value.running or classroom.board_code(value) is not None)


def keep_busy_sessions() -> None:
    """gradio's session store evicts the oldest session that is not busy: a stranger's 401 sessions
    made a visitor's Stop say "Nothing is running" and changed a teacher's board code."""
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


def special_params(fn: Any) -> dict[str, str]:
    """A handler's parameters that ask gradio for the request or the event data, by their
    annotation as written (a string under `from __future__ import annotations`): name -> kind."""
    try:
        params = inspect.signature(fn).parameters.values()
    except (TypeError, ValueError):
        return {}
    out = {}
    for p in params:
        ann = p.annotation if isinstance(p.annotation, str) else repr(p.annotation)
        if "EventData" in ann:
            out[p.name] = "event"
        elif "Request" in ann or p.name == "request":
            out[p.name] = "request"
    return out


def unserved_special_args(demo: gr.Blocks) -> list[str]:
    """Every handler parameter asking for the request or event data that gradio's own
    special_args would fill with None (a hint it cannot resolve, e.g. a TYPE_CHECKING import:
    every visitor looked like one client, issue 52)."""
    marker = object()
    missing = []
    for block_fn in demo.fns.values():
        fn = block_fn.fn
        wanted = special_params(fn) if fn is not None else {}
        if not wanted:
            continue
        kinds = (inspect.Parameter.POSITIONAL_ONLY, inspect.Parameter.POSITIONAL_OR_KEYWORD)
        positional = [p.name for p in inspect.signature(fn).parameters.values() if p.kind in kinds]
        inputs = [object() for name in positional if name not in wanted]
        with warnings.catch_warnings():
            warnings.simplefilter("ignore")  # "Unexpected argument": what this check reports
            filled, _, event_index, _ = special_args(fn, inputs, request=marker)  # type: ignore[arg-type]
        for name, kind in wanted.items():
            i = positional.index(name) if name in positional else -1
            served = (
                event_index == i if kind == "event" else i < len(filled) and filled[i] is marker
            )
            if i < 0 or not served:
                missing.append(f"{block_fn.name}({name})")
    return missing


def check_special_args(demo: gr.Blocks) -> None:
    """Refuse to serve a handler that asks for the request (or event data) and would get None."""
    missing = unserved_special_args(demo)
    if missing:
        raise RuntimeError(
            "gradio would pass None to these handlers' request / event-data parameters (an "
            "annotation it cannot resolve): " + ", ".join(sorted(set(missing)))
        )


def serve(demo: gr.Blocks, **launch: object) -> int:
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
    was_busy = broadcast.hub().stop_all(STOP_WAIT_S)  # running and waiting comparisons
    demo.close()
    signum = got[0] if got else signal.SIGINT
    code = 128 + int(signum) if was_busy else 0
    _log.info("stopped by signal %s; exit %s", signum, code)
    return code


def exit_now(code: int) -> None:
    """Leave without the interpreter's teardown of torch's thread pools (see the module)."""
    logging.shutdown()
    os._exit(code)
