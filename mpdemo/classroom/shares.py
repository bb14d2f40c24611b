"""Each address's share of gradio's server-wide slots: one stranger's 64 silent followers of a
board left nobody else one."""

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
        """One more `kind` for `client`, and its release; ShareFull when it holds `limit`."""
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
