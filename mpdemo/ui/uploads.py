"""Raw uploads bounded per address (the one the proxy saw; a session id is whatever the client
sends): gradio stores every upload before any event reads it. `BoundUploads` keeps at most
UPLOADS_PER_CLIENT files and UPLOAD_BYTES_PER_CLIENT bytes an address, its oldest deleted first:
wide enough for a class behind one address. The rest goes after 20 minutes (app.DELETE_CACHE)."""

from __future__ import annotations

import collections
import contextlib
import json
import logging
import os
import threading
import time
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any

from ..files.recorded import MAX_FILE_BYTES
from .visitor import client_of

if TYPE_CHECKING:
    from starlette.types import Receive, Scope, Send

UPLOADS_PER_CLIENT = 32
UPLOAD_BYTES_PER_CLIENT = 4 * MAX_FILE_BYTES  # 128 MB: four of the largest runs files
UPLOAD_PATH = "/gradio_api/upload"

_log = logging.getLogger("mpdemo.ui.uploads")


@dataclass
class Upload:
    """One upload request: the files gradio stored for it, the bytes it sent, when."""

    paths: list[str]
    nbytes: int
    at: float


class Ledger:
    """Each address's uploads, oldest first; past its bound the oldest are deleted."""

    def __init__(
        self, max_files: int = UPLOADS_PER_CLIENT, max_bytes: int = UPLOAD_BYTES_PER_CLIENT
    ) -> None:
        self.max_files, self.max_bytes = max_files, max_bytes
        self.lock = threading.Lock()
        self.by_client: dict[str, collections.deque[Upload]] = {}

    def add(self, client: str, paths: list[str], nbytes: int) -> list[str]:
        """Note an upload of `client`'s; delete its oldest past the bound; return what went."""
        gone: list[str] = []
        with self.lock:
            mine = self.by_client.setdefault(client, collections.deque())
            mine.append(Upload(list(paths), nbytes, time.monotonic()))
            while mine and (  # the newest too, when one request alone is past the bound
                sum(len(u.paths) for u in mine) > self.max_files
                or sum(u.nbytes for u in mine) > self.max_bytes
            ):
                old = mine.popleft()
                gone += [p for p in old.paths if not self._held(p)]
            self._forget_missing()
        for path in gone:
            _delete(path)
        return gone

    def _held(self, path: str) -> bool:
        # The same content from two visitors is one file in gradio's cache: kept while counted.
        return any(path in u.paths for q in self.by_client.values() for u in q)

    def _forget_missing(self) -> None:
        # What gradio's own cleanup deleted stops counting (a young upload's file may not be in
        # place yet), and empty addresses go.
        now = time.monotonic()
        for client, q in list(self.by_client.items()):
            kept = [u for u in q if now - u.at < 60 or any(os.path.exists(p) for p in u.paths)]
            if len(kept) != len(q):
                self.by_client[client] = collections.deque(kept)
            if not kept:
                del self.by_client[client]


def _delete(path: str) -> None:
    """Delete an upload and its folder (gradio gives each upload a folder of its own)."""
    try:
        os.remove(path)
    except FileNotFoundError:
        pass
    except OSError:
        _log.warning("could not delete the upload %s", path)
        return
    # Not empty (another file of the same content) or gone: left as it is.
    with contextlib.suppress(OSError):
        os.rmdir(os.path.dirname(path))


LEDGER = Ledger()


class BoundUploads:
    """ASGI middleware: notes each upload request's files and bytes under its client."""

    def __init__(self, app: Any) -> None:
        self.app = app

    async def __call__(self, scope: Scope, receive: Receive, send: Send) -> None:
        """Pass every request on; an upload's answer (the stored paths) is noted on its way out."""
        path = scope.get("path", "") if scope.get("type") == "http" else ""
        if scope.get("method") != "POST" or not path.endswith(UPLOAD_PATH):
            await self.app(scope, receive, send)
            return
        received = status = 0
        body: list[bytes] = []
        gone: list[str] = []

        async def counting_receive() -> Any:
            nonlocal received
            message = await receive()
            if message.get("type") == "http.request":
                received += len(message.get("body", b""))
            return message

        async def noting_send(message: Any) -> None:
            nonlocal status
            if message.get("type") == "http.response.start":
                status = int(message.get("status", 0))
            elif message.get("type") == "http.response.body":
                body.append(message.get("body", b""))
                if status == 200 and not message.get("more_body", False):
                    # Noted before the answer leaves: what went past the bound is gone already.
                    gone.extend(self._note(scope, b"".join(body), received))
            await send(message)

        await self.app(scope, counting_receive, noting_send)
        for path in gone:  # gradio moves a file into place after answering: once more then
            if os.path.exists(path):
                _delete(path)

    def _note(self, scope: Scope, body: bytes, nbytes: int) -> list[str]:
        try:
            paths = [p for p in json.loads(body) if isinstance(p, str)]
        except (ValueError, TypeError):
            return []
        from starlette.requests import Request

        # The client as the line counts it: the proxy's address.
        return LEDGER.add(client_of(Request(scope)), paths, nbytes) if paths else []
