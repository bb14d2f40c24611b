"""Each address's share of what gradio bounds for the whole server: the pages that watch a
comparison (Train's events) and the pages that follow a board hold one of gradio's slots each
(its concurrency limit is global), so one stranger's 64 silent followers left nobody else one.

`Shares` counts what each address holds now; a hold is given back when its page's handler ends.
Per address (the one the hosting proxy saw, never what the client wrote), half of each limit: a
class behind one address keeps half, a stranger cannot take the other half.
"""

from __future__ import annotations

import collections
import threading
from collections.abc import Callable

from ..messages import MpdemoError


class ShareFull(MpdemoError):
    """This address holds its share of one kind of slot already."""


def per_address(limit: int) -> int:
    """One address's share of a server-wide limit: half of it, at least one."""
    return max(1, limit // 2)


class Shares:
    """What each address holds now, by kind ('viewer', 'follower')."""

    def __init__(self) -> None:
        self._lock = threading.Lock()
        self._held: collections.Counter[tuple[str, str]] = collections.Counter()

    def take(self, kind: str, client: str, limit: int, key: str) -> Callable[[], None]:
        """One more `kind` for `client`; its release (once is enough, twice is harmless).

        Raises ShareFull(key, limit=limit) when the client holds `limit` already. The client ''
        (a direct call, no request) is not bounded here.
        """
        if not client:
            return lambda: None
        with self._lock:
            if self._held[kind, client] >= limit:
                raise ShareFull(key, limit=limit)
            self._held[kind, client] += 1
        done: list[bool] = []

        def release() -> None:
            with self._lock:
                if done:
                    return
                done.append(True)
                self._held[kind, client] -= 1
                if self._held[kind, client] <= 0:
                    del self._held[kind, client]

        return release

    def held(self, kind: str, client: str) -> int:
        """How many `kind` the client holds now."""
        with self._lock:
            return self._held.get((kind, client), 0)
