"""The runs of a comparison side by side, greenlets of one thread taking turns step by step: torch's
OpenMP pool is the computing thread's, so two threads stepped at 28.7-30.0 ms where greenlets took
19.8 ms (quiet 2-core EPYC, tiny-bert batch 32, bench/turns.py)."""

from __future__ import annotations

import dataclasses
import logging
import statistics
import threading
import time
from collections.abc import Callable
from typing import Any

from .. import engine
from ..config import Limits, RunConfig
from ..engine.cores import Cores  # torch-free: the cores' reading, not the engine
from ..events import Event, GridPlanned, RunFinished
from ..messages import Note
from ..registry import BACKENDS
from .timing import LoadMeter, SpeedCheck, ratio_of_medians_interval, speed_check
from .turns import Baton, Lane, Pace

_log = logging.getLogger(__name__)


def take_turns(baton: Baton, runs: list[Callable[[int], None]]) -> None:
    """Run runs[i](i) as greenlets of this thread, switching to whichever the baton says is due."""
    from greenlet import GreenletExit, getcurrent, greenlet

    baton.pause = getcurrent().switch  # a run that must wait hands the thread back here
    lets = [greenlet(run) for run in runs]
    started = [False] * len(lets)
    while any(not g.dead for g in lets):
        k = baton.due()
        if k is None or lets[k].dead:
            # A run waits for a turn that cannot come: end the waiting runs rather than hang.
            _log.error("no run is due among %s; ending the waiting runs", baton.training)
            for g in lets:
                if not g.dead:
                    g.throw(GreenletExit)
            return
        try:
            if started[k]:
                lets[k].switch()
            else:
                started[k] = True
                lets[k].switch(k)
        except Exception:  # noqa: BLE001 - one run's crash must not take the others down
            _log.exception("run %d of the comparison failed", k)


def paired_check(
    base: list[float], times: list[float], warmup: int, precision: str, load: dict | None = None
) -> SpeedCheck | None:
    """A run's SpeedCheck against its baseline run from their own steps, paired round by round."""
    n = min(len(base), len(times))
    pairs = [(b, t) for b, t in zip(base[warmup:n], times[warmup:n], strict=True) if t > 0]
    if not pairs:
        return None
    steps, base_steps = [t for _, t in pairs], [b for b, _ in pairs]
    t_med = statistics.median(steps)
    speedup = statistics.median(base_steps) / t_med if t_med > 0 else None
    interval = ratio_of_medians_interval(pairs)
    return speed_check(precision, speedup, interval, len(pairs), 1, steps, base_steps, load)


class StateSwap:
    """Each run's own Accelerate state, random state and torch flags, put in place at its turns."""

    def __init__(self, accelerate: bool) -> None:
        self.accelerate = accelerate
        self.saved: dict[int, dict[str, Any]] = {}
        self.baseline: Any = None  # the flags before the first turn: each run's at its start

    def restore(self) -> None:
        """Every run has ended: the process's flags as they were before the first turn."""
        if self.baseline is not None:
            engine.set_torch_flags(self.baseline)

    def _classes(self) -> list[Any]:
        from accelerate.state import AcceleratorState, GradientState, PartialState

        return [PartialState, AcceleratorState, GradientState]

    def __call__(self, leaving: int | None, coming: int) -> None:
        """Save the leaving run's state, put the coming run's in place (fresh at its first turn)."""
        import torch

        if self.baseline is None:
            self.baseline = engine.torch_flags()
        if leaving is not None:
            snap: dict[str, Any] = {"rng": torch.get_rng_state(), "flags": engine.torch_flags()}
            if self.accelerate:
                snap["acc"] = [dict(c._shared_state) for c in self._classes()]
            self.saved[leaving] = snap
        snap = self.saved.pop(coming, None)
        # A first turn starts from the flags found before the comparison (not a tf32 run's).
        engine.set_torch_flags(snap["flags"] if snap is not None else self.baseline)
        if snap is not None:
            torch.set_rng_state(snap["rng"])
        if self.accelerate:
            # In place: every instance's __dict__ *is* its class's _shared_state dict.
            for cls, kept in zip(
                self._classes(), (snap or {}).get("acc") or [{}, {}, {}], strict=True
            ):
                cls._shared_state.clear()
                cls._shared_state.update(kept)


class Together:
    """One comparison's runs trained side by side; its events go to `emit` as they come."""

    def __init__(
        self,
        configs: list[RunConfig],
        emit: Callable[[Event], None],
        stop: threading.Event,
        limits: Limits | None = None,
        first_index: int = 0,
        total: int | None = None,
    ) -> None:
        self.configs = list(configs)
        self.out = emit
        self.stop = stop
        self.limits = limits
        self.first = first_index
        self.total = total if total is not None else len(configs)
        self.lock = threading.Lock()
        self.warmup = max(c.warmup_steps for c in configs) if configs else 0
        self.times: dict[int, list[float]] = {k: [] for k in range(len(configs))}
        self.rounds = 0  # rounds every training run has stepped through
        self.training: set[int] = set(range(len(configs)))
        uses_acc = any(
            BACKENDS[c.backend].uses_accelerate for c in configs if c.backend in BACKENDS
        )
        self.swap = StateSwap(uses_acc)
        self.baton = Baton(len(configs), self.swap)
        self.pace = Pace(time.perf_counter())
        self.meter: LoadMeter | None = None

    def run(self) -> None:
        """Train every run (this thread runs the first), return when all have ended."""
        self.meter = LoadMeter()
        # Said first, before anything loads: the page leaves "measuring...".
        self.out(
            GridPlanned(
                machine=engine.machine_info(),
                notes=[Note("side_by_side", {"runs": len(self.configs)}).to_dict()],
                interleaved=True,
            )
        )
        try:
            devices = {engine.resolve_device(c.device).type for c in self.configs}
        except Exception:  # noqa: BLE001 - an unusable device fails its run in prepare()
            devices = set()
        self.pace.cores = Cores("cpu" if devices == {"cpu"} else "other")
        try:
            take_turns(self.baton, [self._one] * len(self.configs))
        finally:
            self.swap.restore()
            self.pace.cores.close()

    def _one(self, k: int) -> None:
        cfg = self.configs[k]
        lane = Lane(self.baton, k, self.pace)
        try:
            lane.take()  # each run prepares in its turn of the first round
            if self.stop.is_set():
                return
            try:
                prep = engine.prepare(cfg, self.limits)
            except Exception as err:  # noqa: BLE001 - reported as a failed run; the others go on
                self._emit(k, engine.failed_event(cfg, err, self.first + k))
                return
            engine.execute(
                prep,
                lambda ev: self._emit(k, ev),
                self.stop,
                index=self.first + k,
                total=self.total,
                lane=lane,
            )
            del prep
        finally:
            lane.finish()  # whatever happened, the others never wait for this run again

    def _emit(self, k: int, ev: Event) -> None:
        with self.lock:
            if ev.kind == "step":
                self.times[k].append(ev.step_time_s)
                done = min((len(self.times[j]) for j in self.training), default=0)
                while self.rounds < done:
                    self.rounds += 1
                    if self.pace.cores is not None:  # between rounds: both sides of a round alike
                        self.pace.cores.tick(self.rounds)
            elif ev.kind == "end":
                self.training.discard(k)
                try:
                    ev = self._with_check(k, ev)
                except Exception:  # noqa: BLE001 - the run's end must reach the page regardless
                    _log.exception("speed check of %s failed", ev.label)
        self.out(ev)

    def _with_check(self, k: int, ev: RunFinished) -> RunFinished:
        """The end event with the run's SpeedCheck against its backend's fp32 run."""
        cfg = self.configs[k]
        if cfg.precision == "fp32" or ev.status == "failed":
            return ev  # its ratio to itself, and every run's without a check: the fold's
        peer = (cfg.backend, cfg.model, "fp32")  # the same model's fp32 run on its backend
        found = (j for j, c in enumerate(self.configs) if (c.backend, c.model, c.precision) == peer)
        base = next(found, None)
        if base is None:
            return ev
        load = self.meter.read() if self.meter is not None else None
        check = paired_check(self.times[base], self.times[k], self.warmup, cfg.precision, load)
        if check is None:
            return ev
        return dataclasses.replace(ev, summary=ev.summary.replace(speed_check=check.to_dict()))
