"""Running a sweep: each point's precisions timed interleaved on the same batches, one point at a time."""

from __future__ import annotations

import contextlib
import itertools
import statistics
import threading
import time
from collections.abc import Callable, Iterable, Iterator, Sequence
from typing import Any

import torch

from ..config import RunConfig
from ..engine.core import collect_garbage, prepare
from ..engine.machine import machine_info
from ..engine.memory import accelerate_estimate, anatomy_notes, measure
from ..engine.precision import timed_step
from ..events import Pump
from ..messages import ConfigError, MpdemoError, Note
from ..runs.runner import RUN_LOCK
from ..runs.state import ComparisonState
from ..runs.timing import compare, interleave
from .events import SweepEvent, SweepFinished, SweepMemory, SweepPlanned, SweepPoint
from .notes import crossover_notes
from .plan import BATCHES_PER_POINT, build_model, peak_tflops
from .spec import POINT_CAP_S, PointPlan, SweepPlan, SweepSpec, step_flops


def _point_event(
    plan: SweepPlan, index: int, pp: PointPlan, times: Any, load: Any, wall: float, gpu: str | None
) -> SweepPoint:
    checks = compare(times, load)
    step_s = {p: statistics.median(t for b in ts for t in b) for p, ts in times.items() if ts}
    seq = plan.spec.base.max_length
    flops = step_flops(pp.params, pp.batch_size, seq)
    peaks = {p: peak_tflops(gpu, p) if plan.device.type == "cuda" else None for p in step_s}
    tflops = {p: flops / s / 1e12 for p, s in step_s.items()}
    return SweepPoint(
        index=index,
        total=len(plan.points),
        model=pp.size.model,
        hidden=pp.size.hidden,
        layers=pp.size.layers,
        params=pp.params,
        batch_size=pp.batch_size,
        seq=seq,
        device=plan.device.type,
        step_s=step_s,
        checks={p: c.to_dict() for p, c in checks.items()},
        samples_per_s={p: pp.batch_size / s for p, s in step_s.items()},
        tflops=tflops,
        mfu={p: (tflops[p] / pk[1] if pk else None) for p, pk in peaks.items()},
        peak={p: list(pk) if pk else None for p, pk in peaks.items()},
        load=load,
        wall_s=wall,
    )


def steppers(
    model: torch.nn.Module,
    optimizer: torch.optim.Optimizer,
    device: torch.device,
    cfg: RunConfig,
    batches: Sequence[Any],
    precisions: Iterable[str],
) -> dict[str, Callable[[], float]]:
    """A timed training step per precision on one model, each on the same batches in order."""

    def one(precision: str) -> Callable[[], float]:
        cursor = itertools.count()
        return timed_step(
            model, optimizer, device, precision, cfg,
            lambda: batches[next(cursor) % len(batches)],
        )  # fmt: skip

    return {p: one(p) for p in precisions}


@contextlib.contextmanager
def exclusive(stop: threading.Event) -> Iterator[bool]:
    """Hold this process's run lock for one point (the load meter sees other processes only);
    False if Stop came while waiting."""
    while not RUN_LOCK.acquire(timeout=0.2):
        if stop.is_set():
            yield False
            return
    try:
        yield True
    finally:
        RUN_LOCK.release()


def run_sweep(
    plan: SweepPlan, emit: Callable[[SweepEvent], None], stop: threading.Event | None = None
) -> list[SweepPoint]:
    """Measure the plan's points in this thread (torch's pool is per thread), emitting each."""
    stop = stop or threading.Event()
    t_start = time.perf_counter()
    spec, device = plan.spec, plan.device
    gpu = (machine_info().get("gpu") or {}).get("name") if device.type == "cuda" else None
    emit(
        SweepPlanned(
            machine=machine_info(),
            device=device.type,
            precisions=list(plan.precisions),
            points=[p.to_dict() for p in plan.points],
            estimate_s=plan.estimate_s,
            seq=spec.base.max_length,
        )
    )
    points: list[SweepPoint] = []
    data: dict[int, tuple[torch.nn.Module, list[Any]]] = {}
    status, error = "completed", None
    try:
        for index, pp in enumerate(plan.points):
            if stop.is_set():
                break
            t0 = time.perf_counter()
            template, batches = _data_for(spec, pp.batch_size, data)
            with exclusive(stop) as mine:
                if not mine:  # stopped while a training of this process held the cores
                    break
                model = build_model(template, pp.size, spec.base.seed, device)
                optimizer = torch.optim.AdamW(model.parameters(), lr=spec.base.lr)
                model.train()
                budget = plan.point_budget_s()
                times, load = interleave(
                    steppers(model, optimizer, device, spec.base, batches, plan.precisions),
                    budget_s=budget,
                    cap_s=max(3 * budget, POINT_CAP_S),
                    stop=stop,
                )
                del model, optimizer
            if stop.is_set():
                break
            event = _point_event(plan, index, pp, times, load, time.perf_counter() - t0, gpu)
            points.append(event)
            emit(event)
            collect_garbage()
        if status == "completed" and spec.memory_size is not None and not stop.is_set():
            with exclusive(stop) as mine:
                if mine:
                    emit(_memory_event(plan, data))
    except MpdemoError as err:
        status, error = "failed", err.note.to_dict()
    except Exception as err:  # noqa: BLE001 - a sweep that breaks reports it; its points stand
        status, error = "failed", Note("failed", {"detail": str(err)}).to_dict()
    finally:
        data.clear()
    if stop.is_set() and status == "completed":
        status = "stopped"
    notes = [n.to_dict() for n in crossover_notes(points, device.type)]
    emit(
        SweepFinished(
            status=status,
            points=len(points),
            total=len(plan.points),
            wall_s=time.perf_counter() - t_start,
            notes=notes,
            error=error,
        )
    )
    return points


def _data_for(
    spec: SweepSpec, batch: int, cache: dict[int, tuple[torch.nn.Module, list[Any]]]
) -> tuple[torch.nn.Module, list[Any]]:
    """(the built-in model prepare() made, a few batches) for a batch size, prepared once."""
    if batch not in cache:
        cfg = spec.base.replace(
            model="tiny-bert", backend="torch", precision="fp32",
            batch_size=batch, steps=BATCHES_PER_POINT,
        )  # fmt: skip
        prep = prepare(cfg)
        if prep.task != "cls":
            raise ConfigError("sweep_needs_labels", value=spec.base.dataset)
        batches = list(itertools.islice(prep.train_dataloader, BATCHES_PER_POINT))
        cache[batch] = (prep.model, batches)
    return cache[batch]


def _memory_event(plan: SweepPlan, data: dict[int, Any]) -> SweepMemory:
    spec = plan.spec
    assert spec.memory_size is not None
    size, batch = spec.memory_size, spec.memory_batch
    template, batches = _data_for(spec, batch, data)

    def build() -> tuple[torch.nn.Module, torch.optim.Optimizer]:
        model = build_model(template, size, spec.base.seed, plan.device)
        return model, torch.optim.AdamW(model.parameters(), lr=spec.base.lr)

    parts = measure(build, batches[0], plan.device, plan.precisions, spec.base)
    params = next(iter(parts.values())).params
    return SweepMemory(
        model=size.model,
        hidden=size.hidden,
        layers=size.layers,
        params=params,
        batch_size=batch,
        seq=spec.base.max_length,
        device=plan.device.type,
        parts={p: a.to_dict() for p, a in parts.items()},
        estimate={p: accelerate_estimate(params, p) for p in parts},
        notes=[n.to_dict() for n in anatomy_notes(parts)],
    )


class SweepRunner(Pump):
    """A sweep run by the classroom's line as a comparison is."""

    def __init__(self, plan: SweepPlan, stop: threading.Event | None = None) -> None:
        self.plan = plan
        self.configs: list[RunConfig] = []  # no training grid: the line's wait reads its plan
        self.state = ComparisonState([])  # no runs to fold: its machine, from its plan
        super().__init__(lambda emit: run_sweep(plan, emit, self.stop_event), "mpdemo-sweep", stop)

    def emit(self, item: SweepEvent) -> None:
        """Note the machine from the plan, then hand the event on."""
        if isinstance(item, SweepPlanned):
            self.state.machine = item.machine
        self.queue.put(item)
