"""Comparisons shared between the visitors of one server: one queue, shared records, boards.

Training is one grid at a time in a process (timings must not share the cores), so a class
that presses Train together queues. Here every comparison asked for on this server is a
`Comparison`: its events are recorded as they come, and any number of `Viewer`s replay them
from the start and then follow live. A visitor who asks for the same comparison (the same
configs, repeat and time budget, the same code, this machine) as one running, waiting or
finished a few minutes ago watches that one instead of queueing the same work again; a
visitor who asks for their own run gets a private one, never joined by anyone.

`Hub` holds them: a FIFO queue run by one worker thread (each request knows its place and an
estimate of its wait from what the runs ahead measured), the index of shareable comparisons
(bounded, least recently used first out, released once nobody watches and they are old), and
the teachers' boards (a short code that follows one visitor's comparisons live).

The producer never waits on a viewer: viewers read the record under a Condition and keep only a
position in it, so a viewer that stops reading holds nothing and is dropped after a while.
"""

from __future__ import annotations

import bisect
import collections
import contextvars
import functools
import hashlib
import importlib.metadata
import json
import logging
import secrets
import sys
import threading
import time
from collections.abc import Callable, Iterator
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from ..config import Limits, RunConfig
from ..files.recorded import thin_steps
from ..messages import MpdemoError
from ..runs.fold import RunFold
from ..runs.runner import RunnerInterface, repeated

# A finished comparison stays shareable this long (a class presses Train over a few minutes).
KEEP_S = 600.0
MAX_SHARED = 8  # finished comparisons kept for sharing; the least recently used goes first
MAX_ENTRIES = 6000  # events one comparison keeps; past it, older step events are thinned
STALE_S = 90.0  # a viewer that has not read for this long (a live run) is dropped
HEARTBEAT_S = 0.5  # how often the worker checks that someone still watches
NOTIFY_S = 0.25  # step events wake the viewers at most this often
# Each page that follows a live run costs the training's cores a frame (plots rebuilt,
# serialised, diffed) each time it draws: with more viewers on the server each draws less
# often, VIEW_COST_S more per viewer, at most every MAX_PACE_S.
VIEW_COST_S = 0.2
MAX_PACE_S = 8.0
# Boards: codes from letters nobody misreads (no B/8, I/1, O/0, S/5, Z/2), 21**4 = 194,481.
BOARD_ALPHABET = "ACDEFGHJKLMNPQRTUVWXY"
BOARD_CODE_LEN = 4
MAX_BOARDS = 32
# Failed board lookups: per client (a class behind one address types codes wrong too) and in
# all; past either, that client's lookups are refused for a minute. At 60 wrong codes a minute
# in all, finding one board of 194,481 codes takes about a day.
FAIL_WINDOW_S = 60.0
FAILS_PER_CLIENT = 20
FAILS_IN_ALL = 60
TYPICAL_RUNS = 20  # finished comparisons whose wall time gives the typical duration

_log = logging.getLogger("mpdemo.classroom.broadcast")
ENDED = ("finished", "stopped", "failed", "cancelled")


class QueueFull(MpdemoError):
    """The server's queue of comparisons is at its cap."""


class BoardError(MpdemoError):
    """A board code that is unknown, malformed, or looked up too often in vain."""


# --- what makes two comparisons the same ---------------------------------------------------------


@functools.cache
def code_version() -> str:
    """mpdemo's version and a hash of its source files: a changed line is another comparison."""
    try:
        version = importlib.metadata.version("mpdemo")
    except importlib.metadata.PackageNotFoundError:
        version = "0"
    root = Path(__file__).resolve().parents[1]  # the whole package
    digest = hashlib.sha256()
    for path in sorted(root.rglob("*.py")):
        digest.update(str(path.relative_to(root)).encode())
        digest.update(path.read_bytes())
    return f"{version}+{digest.hexdigest()[:12]}"


@functools.cache
def machine_key() -> str:
    """This machine, the same all the process long (torch loaded or not): host, CPU, cores.

    Every comparison of one server runs in its process, so this only tells servers apart.
    """
    import os
    import platform

    info = [platform.node(), platform.machine(), platform.processor(), os.cpu_count()]
    return hashlib.sha256(json.dumps(info, default=str).encode()).hexdigest()[:16]


def comparison_key(configs: list[RunConfig], repeat: int = 1, fit_s: float | None = None) -> str:
    """Configs (as dicts), repeat, time budget, code version and machine, hashed."""
    doc = {
        "configs": [c.to_dict() for c in configs],
        "repeat": repeat,
        "fit_s": fit_s,
        "code": code_version(),
        "machine": machine_key(),
    }
    return hashlib.sha256(json.dumps(doc, sort_keys=True, default=str).encode()).hexdigest()


def default_runner(
    configs: list[RunConfig], calibrate: bool, fit_s: float | None, repeat: int
) -> RunnerInterface:
    """The engine's Runner (the UI passes its own factory: on ZeroGPU a GPU call)."""
    from ..runs.runner import Runner

    return Runner(configs, Limits.from_env(), calibrate=calibrate, fit_s=fit_s, repeat=repeat)


RunnerFactory = Callable[[list[RunConfig], bool, float | None, int], RunnerInterface]


# --- one comparison and its record ---------------------------------------------------------------


@dataclass
class Entry:
    """One recorded event: its sequence number (never reused) and when it came (monotonic)."""

    seq: int
    at: float
    event: Any


class Comparison:
    """One comparison on this server: its runner (when its turn comes) and its recorded events."""

    def __init__(
        self,
        hub: Hub,
        configs: list[RunConfig],
        repeat: int,
        fit_s: float | None,
        key: str,
        shared: bool,
        make_runner: RunnerFactory,
        calibrate: bool = True,
    ) -> None:
        self.hub = hub
        self.id = secrets.token_hex(8)
        self.configs, self.repeat, self.fit_s = list(configs), repeat, fit_s
        self.key, self.shared = key, shared
        self.make_runner, self.calibrate = make_runner, calibrate
        self.cond = threading.Condition()
        self.entries: list[Entry] = []
        self._seqs: list[int] = []  # entries' seq numbers, for bisect
        self.next_seq = 0
        self.thinned = 0  # step events dropped to keep the record bounded
        self.state = "queued"  # queued | running | finished | stopped | failed | cancelled
        now = hub.clock()
        self.created_at = now
        self.created_wall = time.time()
        self.started_at: float | None = None
        self.started_wall: float | None = None
        self.finished_at: float | None = None
        self.last_seen = now  # the last time anyone joined or read it (least recently used)
        self.viewers: set[Viewer] = set()
        # Its runs' records: the runner's fold once it runs (mpdemo.runs.runner.RunnerInterface).
        self.fold = RunFold(repeated(self.configs, repeat))
        self.estimate: Any = None  # mpdemo.runs.plan.GridEstimate once its plan event came
        self.machine: dict[str, Any] | None = None  # the runner's, where it says (ZeroGPU)
        self.runner: RunnerInterface | None = None
        self._stop = threading.Event()
        self._notified = now
        # The submitter's context: on ZeroGPU the GPU call reads the visitor's request from it.
        self.context = contextvars.copy_context()

    # --- state --------------------------------------------------------------------------
    @property
    def ended(self) -> bool:
        """Whether its last event is recorded (or it never ran)."""
        return self.state in ENDED

    def joinable(self, now: float) -> bool:
        """Whether a visitor asking for the same comparison may watch this one."""
        if not self.shared or self._stop.is_set():
            return False
        if not self.ended:
            return True
        done = self.finished_at if self.finished_at is not None else now
        return self.state == "finished" and now - done <= self.hub.keep_s

    def watching(self, now: float) -> int:
        """Viewers that read it lately (the stale ones are dropped first)."""
        with self.cond:
            if not self.ended:
                stale = [v for v in self.viewers if now - v.last_read > self.hub.stale_s]
                for v in stale:
                    v.dropped = True
                    self.viewers.discard(v)
                    self.hub.count_viewers(-1)
                if stale:
                    self.cond.notify_all()
            return len(self.viewers)

    def remaining_s(self) -> float | None:
        """Seconds until it ends: its GridEstimate once running, its expected duration before."""
        if self.ended:
            return 0.0
        if self.state == "running":
            with self.cond:  # the worker updates the estimate under this lock
                est = self.estimate
                left = est.remaining_s() if est is not None else None
            if left is not None:
                return left
            # Calibrating (no plan yet): the whole expected duration, less what has passed.
            full = self.expected_s()
            if full is None:
                return None
            return max(0.0, full - (self.hub.clock() - (self.started_at or self.hub.clock())))
        return self.expected_s()

    def expected_s(self) -> float | None:
        """Its whole duration: calibrated here for these configs, else the typical one here, else
        the time budget it is fitted to; None when nothing can say."""
        if "mpdemo.runs.plan" in sys.modules:  # something was calibrated in this process
            from ..runs.plan import CALIBRATION_BUDGET_S, GridEstimate, cached_calibration

            cal = cached_calibration(self.configs[0]) if self.configs else None
            if cal is not None:
                runs = repeated(self.configs, self.repeat)
                total = GridEstimate(runs, cal).remaining_s()
                if total is not None:
                    if self.fit_s:  # the runs are fitted to about fit_s a repetition
                        total = min(total, self.fit_s * self.repeat)
                    # Each repetition after the first measures again.
                    return total + CALIBRATION_BUDGET_S * max(0, self.repeat - 1)
        typical = self.hub.typical_s()
        if typical is not None:
            return typical
        return self.fit_s * self.repeat if self.fit_s else None

    # --- the producer side (the hub's worker thread) -----------------------------------
    def record(self, ev: Any) -> None:
        """Keep one event and wake the viewers; never waits on any of them."""
        now = self.hub.clock()
        with self.cond:
            if ev.kind == "plan" and (self.estimate is None or ev.interleaved):
                self._plan(ev)
            elif self.estimate is not None:
                self.estimate.update(ev)
            # The run records: the runner folded this event already (its one fold, self.fold).
            self.entries.append(Entry(self.next_seq, now, ev))
            self._seqs.append(self.next_seq)
            self.next_seq += 1
            if len(self.entries) > self.hub.max_entries:
                self._thin()
            # Steps wake the viewers at most every NOTIFY_S: thirty viewers woken for each
            # 20 ms step would take the training's cores.
            if ev.kind != "step" or now - self._notified >= NOTIFY_S:
                self._notified = now
                self.cond.notify_all()

    def _plan(self, ev: Any) -> None:
        from ..runs.plan import estimate_for  # a grid is running: torch is loaded

        configs = repeated(self.configs, self.repeat)
        if ev.steps is not None:
            configs = [c.replace(steps=ev.steps) for c in configs]
        self.estimate = estimate_for(configs, ev, self.hub.clock, self.estimate)

    def _thin(self) -> None:
        """Halve the step events (even spread, every skipped one kept); others stay whole."""
        steps = [
            {"i": i, "skipped": bool(getattr(e.event, "skipped", False))}
            for i, e in enumerate(self.entries)
            if e.event.kind == "step"
        ]
        keep_steps = {s["i"] for s in thin_steps(steps, max(2, len(steps) // 2))}
        kept = [e for i, e in enumerate(self.entries) if e.event.kind != "step" or i in keep_steps]
        self.thinned += len(self.entries) - len(kept)
        self.entries = kept
        self._seqs = [e.seq for e in kept]

    def run(self) -> None:
        """Its turn: start the runner, record every event, stop when nobody watches."""
        with self.cond:
            if self._stop.is_set():
                self.state = "cancelled"
                self.finished_at = self.hub.clock()
                self.cond.notify_all()
                return
            self.state = "running"
            self.started_at = self.hub.clock()
            self.started_wall = time.time()
            self.cond.notify_all()
        statuses: list[str] = []
        try:
            runner = self.make_runner(self.configs, self.calibrate, self.fit_s, self.repeat)
            self.runner = runner
            with self.cond:
                self.fold = runner.runs  # the one fold of its events, which its viewers read
            runner.start()
            for ev in runner.events(timeout=HEARTBEAT_S):
                if ev is not None:
                    self.record(ev)
                    if ev.kind == "end":
                        statuses.append(ev.status)
                # A comparison nobody watches any more gives its cores to the next in line.
                if self._stop.is_set() or self.watching(self.hub.clock()) == 0:
                    self._stop.set()
                    runner.stop()
            self.machine = runner.machine
        except Exception:  # noqa: BLE001 - said to its viewers as a failed comparison
            statuses.append("failed")
            raise
        finally:
            with self.cond:
                if "failed" in statuses:
                    self.state = "failed"
                elif self._stop.is_set() or "stopped" in statuses:
                    self.state = "stopped"
                else:
                    self.state = "finished"
                self.finished_at = self.hub.clock()
                self.runner = None  # its thread is done; the record is what stays
                self.cond.notify_all()

    def stop(self) -> None:
        """End it: the run stops within a step, a waiting one never starts."""
        self._stop.set()
        runner = self.runner
        if runner is not None:
            runner.stop()
        self.hub.cancel(self)

    # --- the viewers' side ----------------------------------------------------------------
    def view(self, kind: str, board: str | None = None) -> Viewer:
        """A new viewer of it ('own': its starter; 'shared'; 'board')."""
        v = Viewer(self, kind, board)
        with self.cond:
            self.viewers.add(v)
            self.last_seen = self.hub.clock()
        self.hub.count_viewers(1)
        return v

    def leave(self, viewer: Viewer) -> None:
        """A viewer went: forget it (the worker stops a comparison nobody watches)."""
        with self.cond:
            was = viewer in self.viewers
            self.viewers.discard(viewer)
            self.last_seen = self.hub.clock()
            self.cond.notify_all()
            nobody = not self.viewers
        if was:
            self.hub.count_viewers(-1)
        if nobody and self.state == "queued":
            self.stop()  # nobody waits for it: it leaves the line


class Viewer(RunnerInterface):
    """One visitor's view of a comparison: its events from the start, then live; the runner
    interface (mpdemo.runs.runner.RunnerInterface), so the Train tab's loop reads it as it
    reads a Runner."""

    def __init__(self, comparison: Comparison, kind: str, board: str | None = None) -> None:
        self.comparison = comparison
        self.kind = kind  # own | shared | board
        self.board = board
        self.configs = comparison.configs
        self.joined_at = comparison.hub.clock()
        self.joined_wall = time.time()
        self.last_read = self.joined_at
        self.cursor = -1  # the seq of the last event handed on
        self.at = self.joined_at  # when the last event handed on was recorded
        self.closed = False  # this view was stopped: no more events
        self.dropped = False  # it stopped reading while the run went on: the hub let it go
        self._done = threading.Event()

    # --- Runner's interface -------------------------------------------------------------
    def start(self) -> Viewer:
        """Nothing to start: the hub runs the comparison in its turn."""
        return self

    def stop(self) -> None:
        """Stop: a starter watching alone stops the run; anyone else only stops watching."""
        c = self.comparison
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
    def runs(self) -> RunFold:
        """The comparison's one fold of its events (every viewer reads the same records)."""
        return self.comparison.fold

    @property
    def summaries(self) -> list[Any]:
        """The finished runs' summaries of the comparison."""
        return self.runs.summaries

    @property
    def machine(self) -> dict[str, Any] | None:
        """The machine the runs ran on, where the runner said (the GPU worker's)."""
        return self.comparison.machine

    def clock(self) -> float:
        """When the event last handed on happened: a replayed step keeps its own time."""
        return self.at

    def events(self, timeout: float | None = None) -> Iterator[Any]:
        """The comparison's events from the first; None when `timeout` passed with none.

        What was recorded before this view joined comes at once; live events come in batches,
        further apart the more pages follow live runs on this server (Hub.pace_s).
        """
        c = self.comparison
        beat = timeout if timeout is not None else 1.0
        last_take = last_beat = time.monotonic()
        try:
            while True:
                with c.cond:
                    while True:
                        if self.closed or self.dropped:
                            return
                        nxt = self._next()
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
                    batch = self._take() if ready else []
                    self.last_read = c.last_seen = c.hub.clock()
                    last_beat = now
                    if batch:
                        last_take = now
                if not batch:
                    yield None  # a heartbeat: the page says its place in line meanwhile
                    continue
                for entry in batch:
                    if self.closed:
                        return
                    self.cursor, self.at = entry.seq, entry.at
                    yield entry.event
        finally:
            self._done.set()
            if not self.closed:
                self.closed = True
                c.leave(self)

    def _next(self) -> Entry | None:
        c = self.comparison
        i = bisect.bisect_right(c._seqs, self.cursor)
        return c.entries[i] if i < len(c.entries) else None

    def _take(self) -> list[Entry]:
        c = self.comparison
        i = bisect.bisect_right(c._seqs, self.cursor)
        return c.entries[i:]

    # --- what the page says about it ------------------------------------------------------
    def place(self) -> tuple[int, float | None] | None:
        """(place in line, seconds until it starts) while it waits; None once it runs."""
        return self.comparison.hub.place(self.comparison)

    def shared_from(self) -> dict[str, Any] | None:
        """Where the runs came from, for the files: None for one's own comparison."""
        if self.kind == "own":
            return None
        c = self.comparison
        began = c.started_at if c.started_at is not None else c.created_at
        began_wall = c.started_wall if c.started_wall is not None else c.created_wall
        out: dict[str, Any] = {
            "kind": self.kind,
            "started_s_ago": round(max(0.0, self.joined_at - began), 1),
            "started_at": time.strftime("%Y-%m-%dT%H:%M:%SZ", time.gmtime(began_wall)),
            "live": not c.ended,
        }
        if self.board:
            out["board"] = self.board
        return out


# --- the teacher's board --------------------------------------------------------------------------


@dataclass
class Board:
    """A short code that follows one visitor's comparisons: the latest one they watch or run."""

    code: str
    owner: str
    comparison: Comparison | None = None
    version: int = 0  # +1 each time it shows another comparison
    created_at: float = 0.0


# --- the hub: queue, index, boards ---------------------------------------------------------------


@dataclass
class _Fails:
    by_client: dict[str, collections.deque[float]] = field(default_factory=dict)
    all: collections.deque[float] = field(default_factory=collections.deque)


class Hub:
    """This server's comparisons: the FIFO queue and its worker, the shareable index, boards."""

    def __init__(
        self,
        make_runner: RunnerFactory = default_runner,
        max_queue: int | None = None,
        keep_s: float = KEEP_S,
        max_shared: int = MAX_SHARED,
        max_entries: int = MAX_ENTRIES,
        stale_s: float = STALE_S,
        clock: Callable[[], float] = time.monotonic,
    ) -> None:
        self.make_runner = make_runner
        self.max_queue = max_queue if max_queue is not None else Limits.from_env().max_queue
        self.keep_s, self.max_shared, self.max_entries = keep_s, max_shared, max_entries
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
        self._count_lock = threading.Lock()  # a leaf lock: taken under any other
        self.viewer_count = 0

    def count_viewers(self, change: int) -> None:
        """Viewers on this server, all comparisons together (their pages share the cores)."""
        with self._count_lock:
            self.viewer_count = max(0, self.viewer_count + change)

    def pace_s(self) -> float:
        """How far apart a page following a live run gets its batches of events."""
        return min(MAX_PACE_S, VIEW_COST_S * self.viewer_count)

    # --- asking for a comparison ----------------------------------------------------------
    def watch(
        self,
        configs: list[RunConfig],
        repeat: int = 1,
        fit_s: float | None = None,
        own: bool = False,
        make_runner: RunnerFactory | None = None,
        calibrate: bool = True,
    ) -> Viewer:
        """A view of this comparison: a shared one with the same key, else a new one in line.

        own: always a new comparison, private (nobody else is ever shown it but by a board).
        Raises QueueFull when the line is at its cap.
        """
        key = comparison_key(configs, repeat, fit_s)
        with self.lock:
            self.sweep()
            if not own:
                c = self.index.get(key)
                if c is not None and c.joinable(self.clock()):
                    self.index.move_to_end(key)
                    return c.view("shared")
            if len(self.waiting) >= self.max_queue:
                raise QueueFull("queue_full", limit=self.max_queue)
            c = Comparison(
                self,
                configs,
                repeat,
                fit_s,
                key,
                shared=not own,
                make_runner=make_runner or self.make_runner,
                calibrate=calibrate,
            )
            viewer = c.view("own")
            if not own:
                self.index[key] = c
                self.index.move_to_end(key)
            self.waiting.append(c)
            self._wake()
            return viewer

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
                if c.state == "finished" and c.started_at is not None and c.finished_at is not None:
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

    # --- the line --------------------------------------------------------------------------
    def place(self, c: Comparison) -> tuple[int, float | None] | None:
        """(place in line counting the one running as 1st, seconds until c starts) while c waits."""
        with self.lock:
            if c not in self.waiting:
                return None
            ahead: list[Comparison] = []
            if self.current is not None and not self.current.ended:
                ahead.append(self.current)
            ahead += list(_before(self.waiting, c))
        wait = 0.0
        for a in ahead:
            left = a.remaining_s()
            if left is None:
                return len(ahead) + 1, None
            wait += left
        return len(ahead) + 1, wait

    def queue_length(self) -> int:
        """Comparisons waiting for their turn (the running one not counted)."""
        with self.lock:
            return len(self.waiting)

    def typical_s(self) -> float | None:
        """The median wall time of the comparisons finished here lately (None before any)."""
        with self.lock:
            done = sorted(self.durations)
        return done[len(done) // 2] if done else None

    # --- memory ----------------------------------------------------------------------------
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

    def shared_count(self) -> int:
        """Comparisons in the shareable index (live ones included)."""
        with self.lock:
            return len(self.index)

    # --- boards ----------------------------------------------------------------------------
    def publish(self, owner: str, comparison: Comparison | None) -> str:
        """The owner's board code (made on first publish); it shows `comparison` from now on."""
        with self.lock:
            code = self.board_of.get(owner)
            if code is None or code not in self.boards:
                if len(self.boards) >= MAX_BOARDS:  # the oldest board goes
                    oldest = min(self.boards.values(), key=lambda b: b.created_at)
                    self.unpublish(oldest.owner)
                code = self._new_code()
                self.boards[code] = Board(code, owner, created_at=self.clock())
                self.board_of[owner] = code
            board = self.boards[code]
            if comparison is not None and board.comparison is not comparison:
                board.comparison = comparison
                board.version += 1
            return code

    def show(self, owner: str, comparison: Comparison) -> None:
        """The owner started or joined another comparison: their board, if any, shows it."""
        with self.lock:
            code = self.board_of.get(owner)
            if code is not None and code in self.boards:
                self.publish(owner, comparison)

    def unpublish(self, owner: str) -> None:
        """The owner's board goes (their tab closed)."""
        with self.lock:
            code = self.board_of.pop(owner, None)
            if code is not None:
                self.boards.pop(code, None)

    def board(self, code: Any, client: str = "") -> Board:
        """The board a code names; BoardError when unknown or this client failed too often."""
        now = self.clock()
        with self.lock:
            self._forget_fails(now)
            mine = self._fails.by_client.get(client) or ()
            if len(mine) >= FAILS_PER_CLIENT or (len(self._fails.all) >= FAILS_IN_ALL and mine):
                raise BoardError("board_too_many", wait=int(FAIL_WINDOW_S))
            text = normalize_code(code)
            board = self.boards.get(text) if text else None
            if board is None:
                self._fails.by_client.setdefault(client, collections.deque()).append(now)
                self._fails.all.append(now)
                raise BoardError("board_unknown", length=BOARD_CODE_LEN)
            return board

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


def _before(items: Any, stop_at: Any) -> Iterator[Any]:
    """The items before `stop_at`."""
    for item in items:
        if item is stop_at:
            return
        yield item


def normalize_code(code: Any) -> str | None:
    """A typed board code as stored ('abcd ' → 'ABCD'); None when it cannot be one."""
    if not isinstance(code, str):
        return None
    text = "".join(code.split()).upper()
    if len(text) != BOARD_CODE_LEN or any(ch not in BOARD_ALPHABET for ch in text):
        return None
    return text


def script_note(shared_from: dict[str, Any] | None) -> str:
    """The comment a reproduce script starts with when its run was not the visitor's own."""
    if not shared_from:
        return ""
    who = "the teacher's board" if shared_from.get("kind") == "board" else "another visitor"
    return (
        f"# The run this script reproduces was not trained by you: {who} started it on this\n"
        f"# server at {shared_from.get('started_at')} ({shared_from.get('started_s_ago')} s before "
        "you watched it).\n# Running this script trains it yourself, on your machine.\n"
    )


_HUB: Hub | None = None
_HUB_LOCK = threading.Lock()


def hub() -> Hub:
    """This process's hub (made on first use)."""
    global _HUB
    with _HUB_LOCK:
        if _HUB is None:
            _HUB = Hub()
        return _HUB
