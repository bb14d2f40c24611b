"""The threads torch computes with, fitted every second to the cores other programs leave: libgomp's
spinning threads (mpdemo/__init__.py) fight busy processes for them (tiny-bert: 19.8 ms a step
quiet, 1,316 ms beside 20 busy processes, 392 ms on one thread; `bench/turns.py --load N`)."""

from __future__ import annotations

import math
import os
import sys
import threading
import time
from collections.abc import Callable

from ..messages import Note

CHECK_S = 1.0  # how often the other programs' share is read
BUSY_CORES = 0.5  # other processes using this much (in cores) take cores from the runs
QUIET_CORES = 0.3  # below this the runs get every thread back (between: as they are)


def mark_thread() -> None:
    """Give the calling thread its Python name in the OS (Linux), before it computes anything: the
    threads it starts (torch's OpenMP pool) inherit it, so LoadMeter tells them apart."""
    main = threading.current_thread() is threading.main_thread()
    if main or not sys.platform.startswith("linux"):
        return
    try:
        import ctypes

        name = threading.current_thread().name.encode("ascii", "replace")[:15]
        ctypes.CDLL(None).prctl(15, name, 0, 0, 0)  # PR_SET_NAME
    except (OSError, AttributeError):
        pass


def _comm(path: str) -> str | None:
    """A thread's OS name from /proc, None where unreadable."""
    try:
        with open(path, encoding="utf-8", errors="replace") as f:
            return f.read().strip()
    except OSError:
        return None


_TICK_S = 1.0 / (os.sysconf("SC_CLK_TCK") if hasattr(os, "sysconf") else 100)


def _threads_cpu() -> dict[int, tuple[str, float]]:
    """This process's threads: {tid: (name, CPU seconds)} from /proc (empty elsewhere)."""
    out: dict[int, tuple[str, float]] = {}
    try:
        tids = os.listdir("/proc/self/task")
    except OSError:
        return out
    for tid in tids:
        try:
            with open(f"/proc/self/task/{tid}/stat", encoding="utf-8", errors="replace") as f:
                text = f.read()
        except OSError:
            continue  # it ended meanwhile
        head, _, rest = text.rpartition(")")
        fields = rest.split()
        if len(fields) < 13:
            continue
        name = head.partition("(")[2]
        out[int(tid)] = (name, (int(fields[11]) + int(fields[12])) * _TICK_S)  # utime, stime
    return out


class LoadMeter:
    """Share of all cores' time other processes, this process's other threads (another visitor's
    work) and a VM's steal took over a span; made in the training's thread (see mark_thread)."""

    def __init__(self) -> None:
        name = _comm("/proc/thread-self/comm")
        # The training's threads share its name; in the main thread (the CLI's own loop) or
        # where /proc is not, this process's threads cannot be told apart: all are the runs'.
        self._ours = name if name is not None and name != _comm("/proc/self/comm") else None
        self._threads = _threads_cpu() if self._ours is not None else {}
        self._start = self._read()

    def _app_s(self) -> float:
        """CPU seconds this process's other threads used since the meter started."""
        if self._ours is None:
            return 0.0
        total = 0.0
        for tid, (name, cpu) in _threads_cpu().items():
            if name == self._ours:
                continue
            before = self._threads.get(tid)
            # A thread that ended meanwhile is not counted (the share is never over-said).
            total += cpu - before[1] if before is not None and before[0] == name else cpu
        return max(0.0, total)

    @staticmethod
    def _read() -> tuple[float, float, float, float] | None:
        try:
            import psutil

            sys_t = psutil.cpu_times()
            me = psutil.Process().cpu_times()
        except Exception:  # noqa: BLE001 - no psutil, or a platform without these counters
            return None
        busy = sum(sys_t) - sys_t.idle - getattr(sys_t, "iowait", 0.0)
        # guest time is also counted in user on Linux: leave it out, it is not another process's
        busy -= getattr(sys_t, "guest", 0.0) + getattr(sys_t, "guest_nice", 0.0)
        steal = getattr(sys_t, "steal", 0.0)
        mine = me.user + me.system
        return time.monotonic(), busy - steal, steal, mine

    def read(self) -> dict[str, float] | None:
        """{"others": share, "app": share, "steal": share} of all cores' time since the meter
        started; "others" counts this process's other work ("app") too: it slows the runs alike."""
        end = self._read()
        if end is None or self._start is None:
            return None
        wall = (end[0] - self._start[0]) * (os.cpu_count() or 1)
        if wall <= 0:
            return None
        app = self._app_s()
        others = (end[1] - self._start[1]) - (end[3] - self._start[3]) + app
        steal = max(0.0, end[2] - self._start[2])
        shares = {"others": max(0.0, others), "app": app, "steal": steal}
        return {k: v / wall for k, v in shares.items()}


def _cores() -> int:
    """The CPUs this process may run on."""
    try:
        return len(os.sched_getaffinity(0))
    except (AttributeError, OSError):  # macOS and Windows have no sched_getaffinity
        return os.cpu_count() or 1


class Cores:
    """torch's thread count for a run or a comparison; close() gives torch its own count back."""

    def __init__(
        self,
        device_type: str = "cpu",
        others: Callable[[], float | None] | None = None,
        clock: Callable[[], float] = time.monotonic,
    ) -> None:
        import torch

        self.full = torch.get_num_threads()
        self.now = self.full
        self.on = device_type == "cpu" and self.full > 1
        self.clock = clock
        self._others = others or self._measured
        self._meter = LoadMeter() if others is None and self.on else None
        self._since = clock()
        self.first: Note | None = None  # what the notes say of the first time cores were given up

    def _measured(self) -> float | None:
        """Cores other processes used since the last reading."""
        share = self._meter.read() if self._meter is not None else None
        self._meter = LoadMeter()
        return None if share is None else share["others"] * (os.cpu_count() or 1)

    def want(self, others: float) -> int:
        """The threads for the next steps while other processes use `others` cores."""
        if others < QUIET_CORES:
            return self.full
        if others < BUSY_CORES:
            return self.now
        return max(1, min(self.full, _cores() - math.ceil(others - 0.25)))

    def tick(self, step: int) -> None:
        """Between steps: at most once a second, fit the threads to the free cores."""
        if not self.on or self.clock() - self._since < CHECK_S:
            return
        self._since = self.clock()
        others = self._others()
        if others is None:  # nothing to read here: leave torch's threads alone
            self.on = False
            return
        want = self.want(others)
        if want == self.now:
            return
        import torch

        torch.set_num_threads(want)
        self.now = want
        if want < self.full and self.first is None:
            args = {"step": step, "threads": want, "full": self.full}
            self.first = Note("cores_shared", {**args, "others": round(others, 1)})

    def notes(self) -> list[Note]:
        """What the runs' notes say: from which step other programs took cores, and how many."""
        return [self.first] if self.first is not None else []

    def close(self) -> None:
        """torch's own thread count back, for whatever runs next."""
        if self.now != self.full:
            import torch

            torch.set_num_threads(self.full)
            self.now = self.full
