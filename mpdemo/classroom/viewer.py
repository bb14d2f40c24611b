"""One visitor's view of a shared comparison: only a position in its record, so one that stops
reading holds nothing."""

from __future__ import annotations

import bisect
import threading
import time
import weakref
from collections.abc import Callable, Iterator
from dataclasses import dataclass
from typing import TYPE_CHECKING, NotRequired, Protocol, TypedDict

from ..config import RunConfig
from ..runs.runner import RunnerInterface
from ..runs.state import ComparisonState

if TYPE_CHECKING:
    from ..events import Event


@dataclass
class Entry:
    """One recorded event: its sequence number (never reused) and when it came (monotonic)."""

    seq: int
    at: float
    event: Event


class SharedFrom(TypedDict):
    """Where a watched run came from, as its files say (runs JSON's `shared_from`)."""

    kind: str  # shared | board
    started_s_ago: float
    started_at: str  # UTC, ISO 8601
    live: bool  # it was still running when this page began watching
    board: NotRequired[str]


class Line(Protocol):
    """What a viewer asks of the server's line: its clock, the live pace, a comparison's place."""

    clock: Callable[[], float]

    def pace_s(self) -> float: ...
    def place(self, c: Watched) -> tuple[int, float | None] | None: ...


class Watched(Protocol):
    """What a viewer reads of its comparison (mpdemo.classroom.comparison.Comparison)."""

    hub: Line
    configs: list[RunConfig]
    cond: threading.Condition
    entries: list[Entry]
    _seqs: list[int]
    derived: ComparisonState
    viewers: set[Viewer]
    created_at: float
    created_wall: float
    started_at: float | None
    started_wall: float | None

    @property
    def ended(self) -> bool: ...
    def stop(self) -> None: ...
    def leave(self, viewer: Viewer) -> None: ...


class Viewer(RunnerInterface):
    """One visitor's view of a comparison, read by the Train tab as it reads a Runner."""

    def __init__(self, comparison: Watched, kind: str, board: str | None = None) -> None:
        self.comparison = comparison
        self.kind = kind  # own | shared | board
        self.board = board
        self.configs = comparison.configs
        self.joined_at = comparison.hub.clock()
        self.last_read = self.joined_at
        self.cursor = -1  # the seq of the last event handed on
        self.closed = False  # this view was stopped: no more events
        self.dropped = False  # it stopped reading while the run went on: the hub let it go
        self._done = threading.Event()
        self._holds: list[Callable[[], None]] = []

    def hold(self, release: Callable[[], None]) -> None:
        """Give `release` back (a page's share of the server) when this view ends or stops."""
        self._holds.append(release)
        weakref.finalize(self, release)  # a view dropped unread gives it back too

    def _let_go(self) -> None:
        holds, self._holds = self._holds, []
        for release in holds:
            release()

    def start(self) -> Viewer:
        """Nothing to start: the hub runs the comparison in its turn."""
        return self

    def stop(self) -> None:
        """Stop: a starter watching alone stops the run; anyone else only stops watching."""
        c = self.comparison
        self._let_go()  # its page stops watching: its handler ends within the last events
        with c.cond:
            alone = self.viewers_besides() == 0
        if self.kind == "own" and alone and not c.ended:
            c.stop()  # keep reading: the stopped run's last events still come
            return
        self.close()

    def close(self) -> None:
        """This view ends now (the comparison goes on for the others)."""
        c = self.comparison
        with c.cond:
            self.closed = True
            c.cond.notify_all()
        c.leave(self)
        self._done.set()
        self._let_go()

    def viewers_besides(self) -> int:
        """How many others watch the same comparison."""
        return len(self.comparison.viewers - {self})

    def join(self, timeout: float | None = None) -> bool:
        """Wait until this view has handed on its last event; True when it has."""
        return self._done.wait(timeout)

    @property
    def alive(self) -> bool:
        """Whether events may still come to this view."""
        return not self._done.is_set()

    @property
    def state(self) -> ComparisonState:  # type: ignore[override]
        """The comparison's state (every viewer reads the same one, folded once)."""
        return self.comparison.derived

    def events(self, timeout: float | None = None) -> Iterator[Event | None]:
        """The comparison's events from the first (None: a heartbeat): live ones in batches
        further apart the more pages follow (pace_s)."""
        c = self.comparison
        beat = timeout if timeout is not None else 1.0
        last_take = last_beat = time.monotonic()
        try:
            while True:
                with c.cond:
                    while True:
                        if self.closed or self.dropped:
                            return
                        pending = c.entries[bisect.bisect_right(c._seqs, self.cursor) :]
                        nxt = pending[0] if pending else None
                        if nxt is None and c.ended:
                            return
                        now = time.monotonic()
                        pace = 0.0 if c.ended else c.hub.pace_s()
                        recorded_before = nxt is not None and nxt.at <= self.joined_at
                        ready = nxt is not None and (recorded_before or now >= last_take + pace)
                        quiet_until = last_beat + max(beat, pace)
                        if ready or now >= quiet_until:
                            break
                        until = quiet_until if nxt is None else min(quiet_until, last_take + pace)
                        c.cond.wait(max(0.01, until - now))
                    batch = pending if ready else []
                    self.last_read = c.hub.clock()
                    last_beat = now
                    if batch:
                        last_take = now
                if not batch:
                    yield None  # a heartbeat: the page says its place in line meanwhile
                    continue
                for entry in batch:
                    if self.closed:
                        return
                    self.cursor = entry.seq
                    yield entry.event
        finally:
            self._done.set()
            self._let_go()
            if not self.closed:
                self.closed = True
                c.leave(self)

    def place(self) -> tuple[int, float | None] | None:
        """(place in line, seconds until it starts) while it waits; None once it runs."""
        return self.comparison.hub.place(self.comparison)

    def shared_from(self) -> SharedFrom | None:
        """Where the runs came from, for the files: None for one's own comparison."""
        if self.kind == "own":
            return None
        c = self.comparison
        began = c.started_at if c.started_at is not None else c.created_at
        began_wall = c.started_wall if c.started_wall is not None else c.created_wall
        out: SharedFrom = {
            "kind": self.kind,
            "started_s_ago": round(max(0.0, self.joined_at - began), 1),
            "started_at": time.strftime("%Y-%m-%dT%H:%M:%SZ", time.gmtime(began_wall)),
            "live": not c.ended,
        }
        if self.board:
            out["board"] = self.board
        return out


def script_note(shared_from: SharedFrom | None) -> str:
    """The comment a reproduce script starts with when its run was not the visitor's own."""
    if not shared_from:
        return ""
    who = "the teacher's board" if shared_from.get("kind") == "board" else "another visitor"
    return (
        f"# The run this script reproduces was not trained by you: {who} started it on this\n"
        f"# server at {shared_from.get('started_at')} ({shared_from.get('started_s_ago')} s before "
        "you watched it).\n# Running this script trains it yourself, on your machine.\n"
    )
