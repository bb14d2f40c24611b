"""One comparison on this server, recorded for any number of Viewers (it never waits on one), and
what makes two comparisons the same: their configs, repeat, code and machine."""

from __future__ import annotations

import contextvars
import functools
import hashlib
import importlib.metadata
import json
import os
import platform
import secrets
import threading
import time
from collections.abc import Callable
from pathlib import Path
from typing import TYPE_CHECKING, Protocol

from ..config import Limits, RunConfig
from ..events import StepEvent
from ..files.recorded import thin_steps
from ..messages import MpdemoError
from ..runs.runner import Runner, RunnerInterface, repeated
from ..runs.state import ComparisonState
from . import caps
from .viewer import Entry, Line, Viewer

if TYPE_CHECKING:
    from ..events import Event

HEARTBEAT_S = 0.5  # how often the worker checks that someone still watches
NOTIFY_S = 0.25  # step events wake the viewers at most this often
PACE_STEPS = 20  # a comparison with no plan (one run) is timed by its first steps' wall pace
# ...and refused at its second step (the first is the warm-up) when it says FAR_OVER the cap: no
# estimate before it is near enough (the sweep's FLOP rule is 1.5-6x off) to turn a run away.
FIRST_TIMED_STEP = 2
FAR_OVER = 2.0
ENDED = ("finished", "stopped", "failed", "cancelled")


def default_runner(configs: list[RunConfig], repeat: int) -> RunnerInterface:
    """The engine's Runner (the UI passes its own factory: on ZeroGPU a GPU call)."""
    return Runner(configs, Limits.from_env(), repeat=repeat)


RunnerFactory = Callable[[list[RunConfig], int], RunnerInterface]


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
    """This machine (host, CPU, cores), the same all the process long: it tells servers apart."""
    info = [platform.node(), platform.machine(), platform.processor(), os.cpu_count()]
    return hashlib.sha256(json.dumps(info, default=str).encode()).hexdigest()[:16]


def comparison_key(configs: list[RunConfig], repeat: int = 1) -> str:
    """Configs (as dicts), repeat, code version and machine, hashed."""
    doc = {
        "configs": [c.to_dict() for c in configs],
        "repeat": repeat,
        "code": code_version(),
        "machine": machine_key(),
    }
    return hashlib.sha256(json.dumps(doc, sort_keys=True, default=str).encode()).hexdigest()


class Hub(Line, Protocol):
    """What a comparison asks of the server's line (classroom.line.Hub), beyond a viewer's."""

    keep_s: float
    stale_s: float
    max_entries: int
    max_comparison_s: float | None

    def count_viewers(self, change: int) -> None: ...
    def typical_s(self) -> float | None: ...
    def remember_too_long(self, key: str, refusal: MpdemoError) -> None: ...
    def cancel(self, c: Comparison) -> None: ...


class Comparison:
    """One comparison on this server: its runner (when its turn comes) and its recorded events."""

    def __init__(
        self,
        hub: Hub,
        configs: list[RunConfig],
        repeat: int,
        key: str,
        shared: bool,
        make_runner: RunnerFactory,
    ) -> None:
        self.hub = hub
        self.id = secrets.token_hex(8)
        self.configs, self.repeat = list(configs), repeat
        self.key, self.shared = key, shared
        self.client = ""  # who asked for it (the proxy's address for them), for their share
        self.make_runner = make_runner
        self.cond = threading.Condition()
        self.entries: list[Entry] = []
        self._seqs: list[int] = []  # entries' seq numbers, for bisect
        self.next_seq = 0
        self.state = "queued"  # queued | running | finished | stopped | failed | cancelled
        now = hub.clock()
        self.created_at = now
        self.created_wall = time.time()
        self.started_at: float | None = None
        self.started_wall: float | None = None
        self.finished_at: float | None = None
        self.viewers: set[Viewer] = set()
        # What its events add up to, folded once by its runner (mpdemo.runs.state).
        self.derived = ComparisonState(repeated(self.configs, repeat), hub.clock)
        self.runner: RunnerInterface | None = None
        self.refusal: MpdemoError | None = None  # why it was stopped at its plan (too long)
        # A job that is no grid (a sweep, Hub.line_up): its whole length, from its own plan.
        self.duration_s: float | None = None
        self._within_cap = hub.max_comparison_s is None  # its length fits the server's cap
        self._paced: list[float] = []  # when its first PACE_STEPS step events came (no plan)
        self._stop = threading.Event()
        self._notified = now
        # The submitter's context: on ZeroGPU the GPU call reads the visitor's request from it.
        self.context = contextvars.copy_context()

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
        """Seconds until it ends: its estimate once running, the typical duration here before."""
        if self.ended:
            return 0.0
        if self.duration_s is not None:  # a sweep: its plan's estimate, less what has passed
            began = self.started_at if self.state == "running" else None
            passed = self.hub.clock() - began if began is not None else 0.0
            return max(1.0, self.duration_s - passed)
        if self.state == "running":
            with self.derived.lock:  # the runner updates the estimate under this lock
                est = self.derived.estimate
                left = est.remaining_s() if est is not None else None
            return left if left is not None else self._paced_left_s()
        return self.hub.typical_s()

    def record(self, ev: Event) -> None:
        """Keep one event and wake the viewers; never waits on any of them."""
        now = self.hub.clock()
        with self.cond:
            # The runner applied this event to its state already (mpdemo.runs.state).
            if (
                self.derived.estimate is None
                and ev.kind == "step"
                and len(self._paced) < PACE_STEPS
            ):
                self._paced.append(now)
            if not self._within_cap:
                with self.derived.lock:
                    self._check_cap(ev)
            if ev.kind == "grads":
                self._drop_older_grads(ev.run_id)
            self.entries.append(Entry(self.next_seq, now, ev))
            self._seqs.append(self.next_seq)
            self.next_seq += 1
            if len(self.entries) > self.hub.max_entries:
                self._thin()
            # Steps wake viewers at most every NOTIFY_S: 30 woken each 20 ms step took the cores.
            if ev.kind != "step" or now - self._notified >= NOTIFY_S:
                self._notified = now
                self.cond.notify_all()

    def _check_cap(self, ev: Event) -> None:
        """Over the server's cap for one comparison, it ends here with what would fit: by its
        estimate, else (a single run) its second step when far over, else its first steps' pace."""
        cap = self.hub.max_comparison_s
        assert cap is not None, "checked only under a cap"
        est = self.derived.estimate
        began = self.started_at if self.started_at is not None else self.hub.clock()
        runs = repeated(self.configs, self.repeat)
        paced = self._paced
        if est is None and ev.kind == "step" and len(paced) < PACE_STEPS:
            if ev.step == FIRST_TIMED_STEP and len(paced) == FIRST_TIMED_STEP:
                # Its other steps at this one's time (evaluations and data on top: a floor).
                left = ev.step_time_s * max(0, sum(c.steps for c in runs) - len(paced))
                total = left + (self.hub.clock() - began)
                if total > FAR_OVER * cap:
                    lead = paced[0] - began
                    self._refuse(caps.too_long(total, cap, ev.step_time_s, len(runs), lead))
            return
        left = est.remaining_s() if est is not None else self._paced_left_s()
        if left is None:
            return
        total = left + (self.hub.clock() - began)
        if total > cap:
            if est is None:  # what fits, at the pace its first steps went
                pace = (paced[-1] - paced[0]) / max(1, len(paced) - 1)
                self._refuse(caps.too_long(total, cap, pace, len(runs), paced[0] - began))
            else:
                self._refuse(caps.too_long(total, cap))
        self._within_cap = True

    def _refuse(self, refusal: MpdemoError) -> None:
        """End it at its measurement, saying why to everyone watching and to the next asker."""
        self.refusal = refusal
        self.hub.remember_too_long(self.key, refusal)
        self._stop.set()
        self._within_cap = True

    def _paced_left_s(self) -> float | None:
        """Seconds its steps still take at its first steps' wall pace (None before those)."""
        if len(self._paced) < PACE_STEPS:
            return None
        pace = (self._paced[-1] - self._paced[0]) / (len(self._paced) - 1)
        total = sum(c.steps for c in repeated(self.configs, self.repeat))
        return pace * max(0, total - len(self._paced))

    def _drop_older_grads(self, run_id: str) -> None:
        """Only each run's latest watched gradients stay (kept, --watch-grads 1 held gigabytes)."""
        for i in range(len(self.entries) - 1, -1, -1):
            e = self.entries[i].event
            if e.kind == "grads" and e.run_id == run_id:
                del self.entries[i]
                del self._seqs[i]
                return

    def _thin(self) -> None:
        """Halve the step events (even spread, every skipped one kept); others stay whole."""
        steps = [
            {"i": i, "skipped": e.event.skipped}
            for i, e in enumerate(self.entries)
            if isinstance(e.event, StepEvent)
        ]
        keep_steps = {s["i"] for s in thin_steps(steps, max(2, len(steps) // 2))}
        kept = [e for i, e in enumerate(self.entries) if e.event.kind != "step" or i in keep_steps]
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
            runner = self.make_runner(self.configs, self.repeat)
            self.runner = runner
            # Its runner folds the events into the state every viewer reads, on the hub's clock.
            runner.state = self.derived
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

    def view(self, kind: str, board: str | None = None) -> Viewer:
        """A new viewer of it ('own': its starter; 'shared'; 'board')."""
        v = Viewer(self, kind, board)
        with self.cond:
            self.viewers.add(v)
        self.hub.count_viewers(1)
        return v

    def leave(self, viewer: Viewer) -> None:
        """A viewer went: forget it (the worker stops a comparison nobody watches)."""
        with self.cond:
            was = viewer in self.viewers
            self.viewers.discard(viewer)
            self.cond.notify_all()
            nobody = not self.viewers
        if was:
            self.hub.count_viewers(-1)
        if nobody and self.state == "queued":
            self.stop()  # nobody waits for it: it leaves the line
