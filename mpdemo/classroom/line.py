"""The line (one comparison at a time, first come first served), the index of shareable comparisons
(bounded, least recently used out first) and the boards: the server's `Hub`."""

from __future__ import annotations

import collections
import itertools
import logging
import secrets
import threading
import time
from collections.abc import Callable

from ..config import Limits, RunConfig
from ..messages import MpdemoError
from ..runs.runner import RunnerInterface
from . import caps
from .boards import Board, Boards, _Fails
from .comparison import Comparison, RunnerFactory, comparison_key, default_runner
from .viewer import Viewer

KEEP_S = 600.0  # a finished comparison stays shareable: a class presses Train over minutes
MAX_SHARED = 8  # finished comparisons kept for sharing; the least recently used goes first
MAX_ENTRIES = 6000  # events one comparison keeps; past it, older step events are thinned
STALE_S = 90.0  # a viewer that has not read for this long (a live run) is dropped
# Each page following a live run costs the training's cores a frame each time it draws: with
# more viewers each draws less often, VIEW_COST_S more per viewer, at most every MAX_PACE_S.
VIEW_COST_S = 0.2
MAX_PACE_S = 8.0
TYPICAL_RUNS = 20  # finished comparisons whose wall time gives the typical duration
# One address's new comparisons waiting at once: a fifth of the line (4 of a hosted server's
# 20); half let one address put 150 min before the next visitor.
LINE_SHARE_DIVISOR = 5

_log = logging.getLogger("mpdemo.classroom")


class QueueFull(MpdemoError):
    """The server's queue of comparisons is at its cap."""


class Hub(Boards):
    """This server's comparisons: the FIFO queue and its worker, the shareable index, boards."""

    def __init__(
        self,
        make_runner: RunnerFactory = default_runner,
        max_queue: int | None = None,
        max_shared: int = MAX_SHARED,
        max_entries: int = MAX_ENTRIES,
        stale_s: float = STALE_S,
        clock: Callable[[], float] = time.monotonic,
        max_comparison_s: float | None = None,
    ) -> None:
        self.make_runner = make_runner
        # None reads MPDEMO_MAX_COMPARISON_S (caps.py); 0 is no cap.
        cap = caps.cap_s() if max_comparison_s is None else max_comparison_s
        self.max_comparison_s: float | None = cap if cap and cap > 0 else None
        self.max_queue = max_queue if max_queue is not None else Limits.from_env().max_queue
        self.keep_s, self.max_shared, self.max_entries = KEEP_S, max_shared, max_entries
        self.stale_s = stale_s
        self.clock = clock
        self.lock = threading.RLock()
        self.index: collections.OrderedDict[str, Comparison] = collections.OrderedDict()
        self.waiting: collections.deque[Comparison] = collections.deque()
        self.current: Comparison | None = None
        self.worker: threading.Thread | None = None
        self.durations: collections.deque[float] = collections.deque(maxlen=TYPICAL_RUNS)
        self.boards: dict[str, Board] = {}
        self.board_of: dict[str, str] = {}  # owner token -> code
        self._fails = _Fails()
        self.page_gone: Callable[[str, float], bool] | None = None  # boards.Boards.page_gone
        self.shares = caps.Shares()  # each address's pages watching or following
        self._count_lock = threading.Lock()  # a leaf lock: taken under any other
        # Comparisons (by key) found over the cap as they ran: asked again, refused at once.
        self.too_long: collections.OrderedDict[str, MpdemoError] = collections.OrderedDict()
        self.viewer_count = 0

    def count_viewers(self, change: int) -> None:
        """Viewers on this server, all comparisons together (their pages share the cores)."""
        with self._count_lock:
            self.viewer_count = max(0, self.viewer_count + change)

    def pace_s(self) -> float:
        """How far apart a page following a live run gets its batches of events."""
        return min(MAX_PACE_S, VIEW_COST_S * self.viewer_count)

    def watch(
        self,
        configs: list[RunConfig],
        repeat: int = 1,
        own: bool = False,
        make_runner: RunnerFactory | None = None,
        client: str = "",
    ) -> Viewer:
        """A view of this comparison: a shared one with the same key, else a new one in line
        (own: a private one); QueueFull or caps.TooLong when refused."""
        key = comparison_key(configs, repeat)
        with self.lock:
            self.sweep()
            if not own:
                c = self.index.get(key)
                if c is not None and c.joinable(self.clock()):
                    self.index.move_to_end(key)
                    return c.view("shared")
            self._admit(client)
            if self.max_comparison_s is not None and key in self.too_long:
                raise self.too_long[key]  # measured here already: the same refusal, at once
            c = Comparison(
                self,
                configs,
                repeat,
                key,
                shared=not own,
                make_runner=make_runner or self.make_runner,
            )
            if not own:
                self.index[key] = c
                self.index.move_to_end(key)
            return self._line(c, client)

    def remember_too_long(self, key: str, refusal: MpdemoError) -> None:
        """A comparison over the cap, measured as it ran (the last MAX_SHARED * 8 kept)."""
        with self.lock:
            self.too_long[key] = refusal
            self.too_long.move_to_end(key)
            while len(self.too_long) > self.max_shared * 8:
                self.too_long.popitem(last=False)

    def line_up(
        self, make_runner: Callable[[], RunnerInterface], duration_s: float, client: str = ""
    ) -> Viewer:
        """A private job that is no grid (a size sweep) in the same line, duration_s its length."""
        with self.lock:
            self.sweep()
            self._admit(client)
            c = Comparison(
                self,
                [],
                1,
                f"job:{secrets.token_hex(8)}",
                shared=False,
                make_runner=lambda *_: make_runner(),
            )
            c.duration_s = duration_s
            return self._line(c, client)

    def _line(self, c: Comparison, client: str) -> Viewer:
        """c, asked for by client, at the end of the line; its starter's view (lock held)."""
        c.client = client
        viewer = c.view("own")
        self.waiting.append(c)
        self._wake()
        return viewer

    def _admit(self, client: str) -> None:
        """Raise QueueFull when the line, or this client's share of it, is full (lock held)."""
        if len(self.waiting) >= self.max_queue:
            raise QueueFull("queue_full", limit=self.max_queue)
        share = max(1, self.max_queue // LINE_SHARE_DIVISOR)
        if client and sum(1 for w in self.waiting if w.client == client) >= share:
            raise QueueFull("queue_full_client", limit=share)

    def _wake(self) -> None:
        if self.worker is None or not self.worker.is_alive():
            self.worker = threading.Thread(target=self._work, name="mpdemo-queue", daemon=True)
            self.worker.start()

    def _work(self) -> None:
        """One comparison after another, first come first served, until the line is empty."""
        while True:
            with self.lock:
                while self.waiting and self.waiting[0].ended:
                    self.waiting.popleft()
                if not self.waiting:
                    self.current = None
                    self.worker = None
                    return
                c = self.waiting.popleft()
                self.current = c
            try:
                c.context.run(c.run)
            except Exception:  # noqa: BLE001 - its viewers see it failed; the next one runs
                _log.exception("comparison %s failed", c.id)
            with self.lock:
                if (
                    c.state == "finished"
                    and c.duration_s is None  # a sweep's length says nothing of a grid's
                    and c.started_at is not None
                    and c.finished_at is not None
                ):
                    self.durations.append(c.finished_at - c.started_at)
                self.current = None
                self.sweep()

    def cancel(self, c: Comparison) -> None:
        """A comparison stopped: out of the line if it waited, never joined again."""
        with self.lock:
            if c in self.waiting:
                self.waiting.remove(c)
                with c.cond:
                    c.state = "cancelled"
                    c.finished_at = self.clock()
                    c.cond.notify_all()
            if self.index.get(c.key) is c and not c.joinable(self.clock()):
                del self.index[c.key]

    def stop_all(self, wait_s: float) -> bool:
        """Stop every comparison and wait for the worker; True when one was running."""
        with self.lock:
            running = self.current if self.current is not None and not self.current.ended else None
            todo = [*self.waiting, *([running] if running else [])]
            worker = self.worker
        for c in todo:
            c.stop()
        if worker is not None:
            worker.join(wait_s)
        return running is not None

    def place(self, c: Comparison) -> tuple[int, float | None] | None:
        """(place in line, the running one 1st; seconds until c starts, None where nothing
        measured a comparison ahead) while c waits."""
        with self.lock:
            if c not in self.waiting:
                return None
            ahead: list[Comparison] = []
            if self.current is not None and not self.current.ended:
                ahead.append(self.current)
            ahead += itertools.takewhile(lambda w: w is not c, self.waiting)
        wait = 0.0
        for a in ahead:
            # A queued comparison nothing has timed has no known length (not the typical one).
            left = None if a.state == "queued" and a.duration_s is None else a.remaining_s()
            if left is None:
                return len(ahead) + 1, None
            wait += left
        return len(ahead) + 1, wait

    def typical_s(self) -> float | None:
        """The median wall time of the comparisons finished here lately (None before any)."""
        with self.lock:
            done = sorted(self.durations)
        return done[len(done) // 2] if done else None

    def sweep(self) -> None:
        """Release what nobody watches: ended comparisons past keep_s, then the oldest past N."""
        now = self.clock()
        with self.lock:
            for key, c in list(self.index.items()):
                if c.ended and not c.joinable(now) and c.watching(now) == 0:
                    del self.index[key]
            ended = [k for k, c in self.index.items() if c.ended]
            for key in ended[: max(0, len(ended) - self.max_shared)]:
                if self.index[key].watching(now) == 0:
                    del self.index[key]
