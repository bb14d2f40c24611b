"""The teachers' boards: a short code that follows one visitor's comparisons live."""

from __future__ import annotations

import collections
import secrets
import threading
from collections.abc import Callable
from dataclasses import dataclass, field
from typing import Any

from ..messages import MpdemoError
from .comparison import Comparison

# Boards: codes from letters nobody misreads (no B/8, I/1, O/0, S/5, Z/2), 21**4 = 194,481.
BOARD_ALPHABET = "ACDEFGHJKLMNPQRTUVWXY"
BOARD_CODE_LEN = 4
MAX_BOARDS = 32
BOARDS_PER_CLIENT = 3  # per address: strangers cannot take every board of a class
# Failed lookups a minute, per client (a class behind one address mistypes too) and in all: at 60
# wrong codes a minute, finding one board of 194,481 codes takes about a day.
FAIL_WINDOW_S = 60.0
FAILS_PER_CLIENT = 20
FAILS_IN_ALL = 60


class BoardError(MpdemoError):
    """A board code that is unknown, malformed, or looked up too often in vain."""


@dataclass(slots=True)
class Board:
    """A short code that follows one visitor's comparisons: the latest one they watch or run."""

    code: str
    owner: str
    comparison: Comparison | None = None
    version: int = 0  # +1 each time it shows another comparison
    created_at: float = 0.0
    client: str = ""  # who published it (the proxy's address for them), for the per-client cap
    page: str = ""  # the publishing page's session (gradio's hash), whose end ends the board


@dataclass(slots=True)
class _Fails:
    by_client: dict[str, collections.deque[float]] = field(default_factory=dict)
    all: collections.deque[float] = field(default_factory=collections.deque)


class Boards:
    """The boards of a Hub (mixed into it: they share its lock and clock)."""

    lock: threading.RLock
    clock: Callable[[], float]
    boards: dict[str, Board]
    board_of: dict[str, str]
    _fails: _Fails
    # Whether a page is gone, set by the UI where it tracks pages (None: boards stay published).
    page_gone: Callable[[str, float], bool] | None

    def publish(
        self, owner: str, comparison: Comparison | None, client: str = "", page: str = ""
    ) -> str:
        """The owner's board code (made on first publish), showing `comparison` from now on; a
        full server refuses a new one (BoardError) rather than evict a teacher's."""
        with self.lock:
            self.end_gone_boards()
            code = self.board_of.get(owner)
            if code is None or code not in self.boards:
                if len(self.boards) >= MAX_BOARDS:
                    raise BoardError("board_full", limit=MAX_BOARDS)
                held = sum(1 for b in self.boards.values() if b.client == client)
                if client and held >= BOARDS_PER_CLIENT:
                    raise BoardError("board_full_client", limit=BOARDS_PER_CLIENT)
                code = self._new_code()
                self.boards[code] = Board(
                    code, owner, created_at=self.clock(), client=client, page=page
                )
                self.board_of[owner] = code
            board = self.boards[code]
            if comparison is not None and board.comparison is not comparison:
                board.comparison = comparison
                board.version += 1
            return code

    def show(self, owner: str, comparison: Comparison) -> None:
        """The owner started or joined another comparison: their board, if any, shows it."""
        with self.lock:
            if self.board_of.get(owner) in self.boards:
                self.publish(owner, comparison)

    def end_gone_boards(self) -> None:
        """Unpublish the boards whose page is gone (see `page_gone`)."""
        gone = self.page_gone
        if gone is None:
            return
        with self.lock:
            for board in list(self.boards.values()):
                if board.page and gone(board.page, board.created_at):
                    self.unpublish(board.owner)

    def live(self, board: Board) -> bool:
        """Whether this board is still published (its page there)."""
        with self.lock:
            self.end_gone_boards()
            return self.boards.get(board.code) is board

    def code_of(self, owner: str) -> str | None:
        """The owner's board code while the board lives; None otherwise."""
        with self.lock:
            board = self.boards.get(self.board_of.get(owner, ""))
            return board.code if board is not None and self.live(board) else None

    def unpublish(self, owner: str) -> None:
        """The owner's board goes (their tab closed)."""
        with self.lock:
            self.boards.pop(self.board_of.pop(owner, ""), None)

    def board(self, code: Any, client: str = "") -> Board:
        """The board a code names; BoardError when unknown or this client failed too often (past
        FAILS_IN_ALL in all, only wrong codes are answered "too many")."""
        now = self.clock()
        with self.lock:
            self._forget_fails(now)
            self.end_gone_boards()
            mine = self._fails.by_client.get(client) or ()
            if len(mine) >= FAILS_PER_CLIENT:
                raise BoardError("board_too_many", wait=int(FAIL_WINDOW_S))
            text = normalize_code(code)
            board = self.boards.get(text) if text else None
            if board is not None:
                return board
            flood = len(self._fails.all) >= FAILS_IN_ALL
            self._fails.by_client.setdefault(client, collections.deque()).append(now)
            self._fails.all.append(now)
            if flood:
                raise BoardError("board_too_many", wait=int(FAIL_WINDOW_S))
            raise BoardError("board_unknown", length=BOARD_CODE_LEN)

    def _forget_fails(self, now: float) -> None:
        cut = now - FAIL_WINDOW_S
        while self._fails.all and self._fails.all[0] < cut:
            self._fails.all.popleft()
        for client, times in list(self._fails.by_client.items()):
            while times and times[0] < cut:
                times.popleft()
            if not times:
                del self._fails.by_client[client]

    def _new_code(self) -> str:
        while True:
            code = "".join(secrets.choice(BOARD_ALPHABET) for _ in range(BOARD_CODE_LEN))
            if code not in self.boards:
                return code


def normalize_code(code: Any) -> str | None:
    """A typed board code as stored ('abcd ' → 'ABCD'); None when it cannot be one."""
    if not isinstance(code, str):
        return None
    text = "".join(code.split()).upper()
    if len(text) != BOARD_CODE_LEN or any(ch not in BOARD_ALPHABET for ch in text):
        return None
    return text
