"""Which pages are still there: each gradio page keeps a heartbeat stream open for as long as it
lives. `Heartbeats` counts the open streams by session hash; a page is gone once it has had none
open for GRACE_S (a board and its followers end with their page). Without the middleware in the
app, nothing is gone."""

from __future__ import annotations

import os
import threading
import time
from typing import TYPE_CHECKING, Any

from ..state import on_reset

if TYPE_CHECKING:
    from starlette.types import Receive, Scope, Send

HEARTBEAT_PATH = "/gradio_api/heartbeat/"
# A page's heartbeat may reconnect (a network blip), and opens a moment after its first event.
GRACE_S = 30.0


def grace_s() -> float:
    """How long a page may be without a heartbeat stream (MPDEMO_PAGE_GRACE_S, default 30)."""
    try:
        return max(0.0, float(os.environ.get("MPDEMO_PAGE_GRACE_S", "") or GRACE_S))
    except ValueError:
        return GRACE_S


_LOCK = threading.Lock()
_OPEN: dict[str, int] = {}  # session hash -> its open heartbeat streams
_CLOSED_AT: dict[str, float] = {}  # session hash -> when its last stream closed
_MAX_CLOSED = 10_000  # closed pages remembered (the oldest forgotten first)
_tracking = False  # the middleware is in this process's app


@on_reset
def forget_pages() -> None:
    """Forget every page's heartbeat streams (tests, a server's restart); the middleware stays."""
    with _LOCK:
        _OPEN.clear()
        _CLOSED_AT.clear()


def gone(page: str | None, since: float, now: float | None = None) -> bool:
    """Whether the page (gradio's session hash) is gone, asked about since `since` (monotonic)."""
    if not _tracking or not page:
        return False
    now = time.monotonic() if now is None else now
    with _LOCK:
        if _OPEN.get(page, 0) > 0:
            return False
        closed = _CLOSED_AT.get(page)
    return now - (since if closed is None else closed) > grace_s()


def _opened(page: str) -> None:
    with _LOCK:
        _OPEN[page] = _OPEN.get(page, 0) + 1
        _CLOSED_AT.pop(page, None)


def _closed(page: str) -> None:
    with _LOCK:
        left = _OPEN.get(page, 0) - 1
        if left > 0:
            _OPEN[page] = left
            return
        _OPEN.pop(page, None)
        _CLOSED_AT[page] = time.monotonic()
        while len(_CLOSED_AT) > _MAX_CLOSED:
            del _CLOSED_AT[next(iter(_CLOSED_AT))]


class Heartbeats:
    """ASGI middleware: note each heartbeat stream's session hash while the stream is open."""

    def __init__(self, app: Any) -> None:
        global _tracking
        self.app = app
        _tracking = True

    async def __call__(self, scope: Scope, receive: Receive, send: Send) -> None:
        path = scope.get("path", "") if scope.get("type") == "http" else ""
        at = path.find(HEARTBEAT_PATH)  # behind a root path too
        if at < 0:
            await self.app(scope, receive, send)
            return
        page = path[at + len(HEARTBEAT_PATH) :].strip("/")[:128]
        _opened(page)
        try:
            await self.app(scope, receive, send)
        finally:
            _closed(page)
