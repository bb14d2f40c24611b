"""Where mixed precision pays on this machine: a sweep over model size x batch size.

For each point of a grid (the built-in BERT's width and depth x batch sizes) the real training
step of every precision is timed interleaved against fp32 on the same batches
(mpdemo.runs.timing.interleave), and compare() gives each its speed-up, 95 % interval and verdict: the
one rule. Points stream one by one; Stop keeps those measured. The crossover sentence is
rendered from the points' verdicts only, so it cannot say more than they do. The memory anatomy
of one chosen size and batch (mpdemo.engine.memory) comes last.

Grids that would run past the time or memory caps are refused in one line before anything is
timed: the estimate is 6 x parameters x tokens per step over what a Linear layer's training
step measured here for each precision (a fraction of a second), and parameters x 16 bytes plus
the activations for the memory.
"""

from __future__ import annotations

import contextlib
import copy
import functools
import itertools
import math
import os
import statistics
import threading
import time
from collections.abc import Callable, Iterable, Iterator, Mapping, Sequence
from dataclasses import asdict, dataclass, field
from typing import Any, Literal

import torch

from ..catalog import BUNDLED_TOKENIZER_DIR
from ..config import Limits, RunConfig, check_number, on_hf_space
from ..engine.core import collect_garbage, prepare
from ..engine.machine import machine_info
from ..engine.memory import Anatomy, accelerate_estimate, anatomy_notes, measure
from ..engine.models import builtin_model, count_params, load_tokenizer
from ..engine.precision import autocast, check_precision_on, resolve_device, synchronize
from ..events import stream
from ..messages import ConfigError, MpdemoError, Note
from ..registry import PRECISION_NAMES
from ..runs.plan import timed_step
from ..runs.runner import RUN_LOCK
from ..runs.timing import MIN_ROUNDS, SpeedCheck, compare, interleave
from .sizes import (
    DEFAULT_BUDGET_S,
    DEFAULT_SIZES,
    MAX_POINTS,
    SWEEP_PRECISIONS,
    Size,
    parse_batch_sizes,
    parse_sizes,
)

SWEEP_VERSION = 1
POINT_CAP_S = 60.0  # one point may go past its share of the budget until it has MIN_ROUNDS rounds
BATCHES_PER_POINT = 8  # distinct batches each precision cycles through, in the same order
# The whole sweep's cap in seconds (MPDEMO_MAX_SWEEP_S): a public Space shares 2 vCPUs.
MAX_SWEEP_S_LOCAL, MAX_SWEEP_S_HOSTED = 1800.0, 300.0
MEMORY_SHARE = 0.8  # of the memory free now, what one point may be estimated to take


def default_precisions(device: torch.device) -> tuple[str, ...]:
    """fp32 and what torch.autocast offers on the device by default: bf16 on a CPU; fp16 and
    bf16 (where the GPU has it) on CUDA; fp16 on Apple's MPS."""
    if device.type == "cuda":
        return ("fp32", "fp16", "bf16") if torch.cuda.is_bf16_supported() else ("fp32", "fp16")
    if device.type == "mps":
        return ("fp32", "fp16")
    return ("fp32", "bf16")


@dataclass(frozen=True)
class SweepSpec:
    """What a sweep measures: sizes x batch sizes x precisions, on the data and device of `base`."""

    sizes: tuple[Size, ...] = field(default_factory=lambda: parse_sizes(DEFAULT_SIZES))
    batch_sizes: tuple[int, ...] = (8, 32)
    precisions: tuple[str, ...] | None = None  # None: default_precisions(device)
    base: RunConfig = field(default_factory=RunConfig)  # dataset, device, seed, max_length...
    budget_s: float = DEFAULT_BUDGET_S  # the timing of all points together, at the least
    memory_size: Size | None = Size(64, 2)  # the memory anatomy's model; None: no anatomy
    memory_batch: int = 32

    def to_dict(self) -> dict[str, Any]:
        """JSON-ready form."""
        return {
            "sizes": [s.name for s in self.sizes],
            "batch_sizes": list(self.batch_sizes),
            "precisions": list(self.precisions) if self.precisions else None,
            "base": self.base.to_dict(),
            "budget_s": self.budget_s,
            "memory_size": self.memory_size.name if self.memory_size else None,
            "memory_batch": self.memory_batch,
        }


# --- the model at a size ------------------------------------------------------------------------


@functools.cache
def _tokenizer_ids() -> tuple[int, int, int]:
    tok = load_tokenizer(str(BUNDLED_TOKENIZER_DIR))
    eos = tok.sep_token_id if tok.sep_token_id is not None else 0
    return len(tok), tok.pad_token_id, eos


def sized_config(base: Any, size: Size) -> Any:
    """The built-in BERT's config (dropout off, vocabulary, labels) at another width and depth."""
    config = copy.deepcopy(base)
    config.hidden_size = size.hidden
    config.num_hidden_layers = size.layers
    config.num_attention_heads = size.heads
    config.intermediate_size = 4 * size.hidden
    return config


def _meta_tiny(num_labels: int = 2) -> torch.nn.Module:
    vocab, pad, eos = _tokenizer_ids()
    with torch.device("meta"):
        return builtin_model("tiny-bert", vocab, num_labels, pad, eos)


@functools.cache
def size_params(size: Size, num_labels: int = 2) -> int:
    """Parameters of the BERT at `size` (counted on the meta device: no memory, no weights)."""
    base = _meta_tiny(num_labels)
    with torch.device("meta"):
        return count_params(type(base)(sized_config(base.config, size)))


def build_model(template: torch.nn.Module, size: Size, seed: int, device: torch.device) -> Any:
    """The BERT at `size`, seeded, on the device: the built-in's class and config, resized."""
    torch.manual_seed(seed)
    return type(template)(sized_config(template.config, size)).to(device)


# --- FLOPs and the device's peak ------------------------------------------------------------------

# Dense peaks in TFLOP/s (the vendors' data sheets without sparsity, as Composer's SpeedMonitor
# keeps them). Matched on the CUDA device's name in this order; unknown GPUs get no MFU.
PEAK_TFLOPS: tuple[tuple[str, tuple[str, ...], dict[str, float]], ...] = (
    ("H100", ("PCIe", "NVL"), {"fp32": 67, "tf32": 494.5, "fp16": 989, "bf16": 989, "fp8": 1979}),
    ("H200", ("NVL",), {"fp32": 67, "tf32": 494.5, "fp16": 989, "bf16": 989, "fp8": 1979}),
    ("H100 PCIe", (), {"fp32": 51, "tf32": 378, "fp16": 756, "bf16": 756, "fp8": 1513}),
    ("A100", (), {"fp32": 19.5, "tf32": 156, "fp16": 312, "bf16": 312}),
)
FLOPS_RULE = "6 x parameters x tokens per step"  # forward 2, backward 4 (Kaplan et al. 2020)


def step_flops(params: int, batch_size: int, seq: int) -> float:
    """Model FLOPs of one training step by the rule: 6 x parameters x tokens (all parameters)."""
    return 6.0 * params * batch_size * seq


def peak_tflops(device_name: str | None, precision: str) -> tuple[str, float] | None:
    """(the peak's precision, its dense TFLOP/s) for a CUDA device; None when not in the table.

    fp32 matmuls on CUDA run as TF32 when torch allows it: then TF32's peak is the one.
    """
    if not device_name:
        return None
    kind = precision
    if precision == "fp32" and torch.backends.cuda.matmul.allow_tf32:
        kind = "tf32"
    for needle, excluded, table in PEAK_TFLOPS:
        if needle in device_name and not any(x in device_name for x in excluded):
            return (kind, float(table[kind])) if kind in table else None
    return None


# --- refusing what would not fit, before anything runs ------------------------------------------


def max_sweep_s() -> float:
    """The sweep's cap in seconds: MPDEMO_MAX_SWEEP_S, else 300 s hosted and 1800 s elsewhere."""
    raw = os.environ.get("MPDEMO_MAX_SWEEP_S", "").strip()
    try:
        if raw:
            return float(raw)
    except ValueError:
        pass
    hosted = Limits.from_env().hosted or on_hf_space()
    return MAX_SWEEP_S_HOSTED if hosted else MAX_SWEEP_S_LOCAL


def activation_bytes(size: Size, batch: int, seq: int, bytes_per_value: int) -> int:
    """Activations a BERT saves for backward, by Korthikanti et al. (2022): per layer
    s*b*h*(34 + 5*a*s/h) bytes at 2 bytes a value, scaled to `bytes_per_value`."""
    h, a = size.hidden, size.heads
    per_layer = seq * batch * h * (34 + 5 * a * seq / h)
    return int(size.layers * per_layer * bytes_per_value / 2)


def memory_estimate(params: int, size: Size, batch: int, seq: int) -> int:
    """Bytes one fp32 step may hold: 16 a parameter (weights, gradients, AdamW's two moments)
    and its activations in fp32 (the largest of the precisions)."""
    return 16 * params + activation_bytes(size, batch, seq, 4)


def free_memory_bytes(device: torch.device) -> int | None:
    """Memory free now on the device (the GPU's, or the machine's RAM for a CPU)."""
    if device.type == "cuda":
        return int(torch.cuda.mem_get_info(device)[0])
    try:
        import psutil

        return int(psutil.virtual_memory().available)
    except Exception:  # noqa: BLE001 - no psutil: no memory check, the caps still hold
        return None


PROBE_TOKENS = 1024  # rows of the probe's Linear layer: small shapes run far below the rate
PROBE_S = 0.25  # timed calls per precision stop after this long (at least one after the warm-up)


def probe_rates(
    device: torch.device, precisions: Iterable[str], seq: int = PROBE_TOKENS
) -> dict[str, float]:
    """FLOP/s of one Linear(256 -> 1024) layer's training step (forward and backward) on `seq`
    rows under each precision's autocast: the rate the time estimate uses.

    The fastest of up to 5 calls after a warm-up, for about PROBE_S each: a refusal must not
    come from another process's burst. At 256 rows the rate came out 1.5-6x below what the
    model's own steps reach (160 GFLOP/s fp32 for small-bert here); at 1024 it is near it.
    """
    width, out_width = 256, 1024
    torch.manual_seed(0)
    layer = torch.nn.Linear(width, out_width).to(device)
    x = torch.randn(seq, width, device=device)
    flops = 3 * 2.0 * seq * width * out_width
    rates: dict[str, float] = {}
    for precision in precisions:
        times: list[float] = []
        began = time.perf_counter()
        for i in range(6):
            synchronize(device)
            t0 = time.perf_counter()
            with autocast(device, precision):
                y = layer(x)
            y.float().sum().backward()
            synchronize(device)
            if i > 0:  # the first call selects kernels and allocates: not the rate
                times.append(time.perf_counter() - t0)
                if time.perf_counter() - began > PROBE_S:
                    break
        layer.zero_grad(set_to_none=True)
        rates[precision] = flops / max(min(times), 1e-9)
    return rates


@dataclass(frozen=True)
class PointPlan:
    """One point before it runs: size, batch, parameters and what it is estimated to take."""

    size: Size
    batch_size: int
    params: int
    estimate_s: float
    memory_bytes: int

    def to_dict(self) -> dict[str, Any]:
        """JSON-ready form."""
        return {
            "model": self.size.model,
            "hidden": self.size.hidden,
            "layers": self.size.layers,
            "params": self.params,
            "batch_size": self.batch_size,
            "estimate_s": self.estimate_s,
            "memory_bytes": self.memory_bytes,
        }


@dataclass(frozen=True)
class SweepPlan:
    """A checked sweep: its points in the order they run, the precisions, the estimate."""

    spec: SweepSpec
    device: torch.device
    precisions: tuple[str, ...]
    points: tuple[PointPlan, ...]
    rates: dict[str, float]  # FLOP/s the probe measured per precision
    estimate_s: float
    cap_s: float

    def point_budget_s(self) -> float:
        """Each point's share of the timing budget (it may go on to MIN_ROUNDS rounds)."""
        return self.spec.budget_s / max(1, len(self.points))


def _point_estimate(
    params: int, batch: int, seq: int, rates: Mapping[str, float], budget: float
) -> float:
    # One warm-up step each, then rounds until the budget and MIN_ROUNDS rounds are in, up to
    # the point's cap (interleave's rule); plus building the model (~the warm-up again).
    steps = {p: step_flops(params, batch, seq) / max(r, 1.0) for p, r in rates.items()}
    one_round = sum(steps.values())
    rounds_s = min(max(budget, MIN_ROUNDS * one_round), max(3 * budget, POINT_CAP_S) + one_round)
    return 2 * one_round + rounds_s


def plan_sweep(
    spec: SweepSpec, limits: Limits | None = None, rates: Mapping[str, float] | None = None
) -> SweepPlan:
    """Check every size, batch and precision, estimate time and memory; one ConfigError if not.

    Nothing is trained: parameters are counted on the meta device, and the time estimate's rate
    is a Linear layer's step (probe_rates) unless `rates` are given.
    """
    lim = limits or Limits.from_env()
    base = spec.base
    for name in ("seed", "max_length", "lr", "init_scale", "growth_interval"):
        check_number(name, getattr(base, name), lim, "tiny-bert")
    if not spec.sizes:
        raise ConfigError("sweep_bad_sizes", value="")
    if not spec.batch_sizes:
        raise ConfigError("sweep_bad_batch_sizes", value="")
    for b in spec.batch_sizes:
        check_number("batch_size", b, lim)
    device = resolve_device(base.device)
    precisions = spec.precisions or default_precisions(device)
    bad = [p for p in precisions if p not in SWEEP_PRECISIONS]
    if bad:
        raise ConfigError("sweep_precision", value=bad[0], allowed=", ".join(SWEEP_PRECISIONS))
    # fp32 is the baseline every speed-up is against: always timed, always first.
    precisions = tuple(p for p in PRECISION_NAMES if p in {"fp32", *precisions})
    if len(precisions) < 2:
        raise ConfigError("sweep_one_precision", allowed=", ".join(SWEEP_PRECISIONS[1:]))
    for p in precisions:
        check_precision_on(device, p)
    n = len(spec.sizes) * len(spec.batch_sizes)
    if n > MAX_POINTS:
        raise ConfigError("sweep_too_many_points", points=n, limit=MAX_POINTS)
    seq = base.max_length
    params = {s: size_params(s) for s in spec.sizes}
    for s, count in params.items():
        if count > lim.max_params:
            raise ConfigError("model_too_big", value=s.name, params=count, limit=lim.max_params)
    free = free_memory_bytes(device)
    if free is not None:
        for s, b in itertools.product(spec.sizes, spec.batch_sizes):
            need = memory_estimate(params[s], s, b, seq)
            if need > MEMORY_SHARE * free:
                raise ConfigError(
                    "sweep_memory",
                    size=s.name, batch=b, seq=seq, params=params[s],
                    need_gb=need / 2**30, free_gb=free / 2**30,
                )  # fmt: skip
    measured = dict(rates) if rates is not None else probe_rates(device, precisions)
    budget = spec.budget_s / n
    cells = sorted(
        itertools.product(spec.sizes, spec.batch_sizes),
        key=lambda sb: (params[sb[0]] * sb[1], sb[0], sb[1]),
    )  # the cheapest first: a Stop early still leaves a curve at every batch size
    points = tuple(
        PointPlan(
            s, b, params[s],
            _point_estimate(params[s], b, seq, measured, budget),
            memory_estimate(params[s], s, b, seq),
        )
        for s, b in cells
    )  # fmt: skip
    total = sum(p.estimate_s for p in points)
    cap = max_sweep_s()
    if total > cap:
        worst = max(points, key=lambda p: p.estimate_s)
        raise ConfigError(
            "sweep_too_long",
            total_min=total / 60, cap_min=cap / 60, points=len(points),
            size=worst.size.name, batch=worst.batch_size, point_min=worst.estimate_s / 60,
            gflops=measured["fp32"] / 1e9, slowest=min(measured, key=measured.__getitem__),
            slowest_gflops=min(measured.values()) / 1e9,
        )  # fmt: skip
    return SweepPlan(spec, device, precisions, points, measured, total, cap)


# --- events -----------------------------------------------------------------------------------


@dataclass
class _SweepEvent:
    def to_dict(self) -> dict[str, Any]:
        """JSON-ready form."""
        return asdict(self)


@dataclass
class SweepPlanned(_SweepEvent):
    """Before the first point: the machine, the points in order, the estimate."""

    machine: dict[str, Any]
    device: str
    precisions: list[str]
    points: list[dict[str, Any]]
    estimate_s: float
    seq: int
    kind: Literal["sweep_plan"] = "sweep_plan"


@dataclass
class SweepPoint(_SweepEvent):
    """One size x batch, every precision timed interleaved against fp32."""

    index: int
    total: int
    model: str
    hidden: int
    layers: int
    params: int
    batch_size: int
    seq: int
    device: str
    step_s: dict[str, float]  # median step per precision
    checks: dict[str, dict[str, Any]]  # precision -> SpeedCheck.to_dict(), fp32 left out
    samples_per_s: dict[str, float]
    tflops: dict[str, float]  # achieved, by FLOPS_RULE
    mfu: dict[str, float | None]  # tflops / the device's dense peak for the precision
    peak: dict[str, list[Any] | None]  # [peak's precision, TFLOP/s] per precision, or None
    load: dict[str, float] | None
    wall_s: float
    kind: Literal["point"] = "point"

    def check(self, precision: str) -> SpeedCheck | None:
        """The precision's SpeedCheck against fp32 (None for fp32 itself)."""
        raw = self.checks.get(precision)
        return SpeedCheck.from_dict(raw) if raw else None

    def rows(self) -> list[dict[str, Any]]:
        """One JSON/CSV row per precision (fp32's speed-up is 1 by definition, no interval)."""
        out = []
        for precision, step in self.step_s.items():
            c = self.check(precision)
            out.append(
                {
                    "model": self.model,
                    "params": self.params,
                    "hidden": self.hidden,
                    "layers": self.layers,
                    "batch_size": self.batch_size,
                    "seq": self.seq,
                    "precision": precision,
                    "step_s": step,
                    "speedup_vs_fp32": 1.0 if c is None else c.speedup,
                    "speedup_interval": None if c is None else c.interval,
                    "speed_verdict": None if c is None else c.verdict,
                    "speed_reason": None if c is None else c.reason,
                    "rounds": None if c is None else c.rounds,
                    "samples_per_s": self.samples_per_s.get(precision),
                    "tflops": self.tflops.get(precision),
                    "mfu": self.mfu.get(precision),
                    "device": self.device,
                }
            )
        return out


@dataclass
class SweepMemory(_SweepEvent):
    """The memory anatomy of one size and batch, per precision, with Accelerate's estimate."""

    model: str
    hidden: int
    layers: int
    params: int
    batch_size: int
    seq: int
    device: str
    parts: dict[str, dict[str, Any]]  # precision -> Anatomy.to_dict()
    estimate: dict[str, dict[str, int] | None]  # precision -> accelerate's parts and "training"
    notes: list[dict[str, Any]]
    kind: Literal["memory"] = "memory"


@dataclass
class SweepFinished(_SweepEvent):
    """The sweep ended: how, how many points, and the crossover sentences from them."""

    status: str  # completed | stopped | failed
    points: int
    total: int
    wall_s: float
    notes: list[dict[str, Any]]
    error: dict[str, Any] | None = None  # the Note of what failed
    kind: Literal["sweep_end"] = "sweep_end"


SweepEvent = SweepPlanned | SweepPoint | SweepMemory | SweepFinished


# --- running it ---------------------------------------------------------------------------------


def _point_event(
    plan: SweepPlan, index: int, pp: PointPlan, times: Any, load: Any, wall: float, gpu: str | None
) -> SweepPoint:
    checks = compare(times, "fp32", load)
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
    """A timed training step per precision on one model, each cycling through the same
    batches in the same order (so a round's blocks do the same work)."""

    def one(precision: str) -> Callable[[], float]:
        cursor = itertools.count()
        return timed_step(
            model, optimizer, device, precision, cfg,
            lambda: batches[next(cursor) % len(batches)],
        )  # fmt: skip

    return {p: one(p) for p in precisions}


@contextlib.contextmanager
def exclusive(stop: threading.Event) -> Iterator[bool]:
    """Hold this process's run lock (runner.RUN_LOCK) for one point: a training, the Underflow
    lab or a calibration of this process never shares the cores with a point's timing (the
    load meter sees other processes only). Yields False if Stop came while waiting."""
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
    """Measure the plan's points in this thread, emitting each as it is done; return them.

    Run it in the thread that will keep using torch (its OpenMP pool is per thread). Stop ends
    the sweep between points or inside one: the points finished are kept, the one in progress
    is dropped (it was not measured in full), and the end event says "stopped".
    """
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
                status = "stopped"
                break
            t0 = time.perf_counter()
            template, batches = _data_for(spec, pp.batch_size, data)
            with exclusive(stop) as mine:
                if not mine:  # stopped while a training of this process held the cores
                    status = "stopped"
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
                status = "stopped"
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


def sweep(plan: SweepPlan, stop: threading.Event | None = None) -> Iterator[SweepEvent]:
    """The sweep's events as an iterator; the work runs in a thread of its own, as train() does
    (a handler's thread may change between two yields; torch's pool is per thread). Closing the
    iterator early stops the sweep."""
    stop = stop or threading.Event()
    yield from stream(lambda emit: run_sweep(plan, emit, stop), stop, "mpdemo-sweep")


# --- the crossover, in sentences rendered from the points ------------------------------------


def _m(params: int) -> float:
    return params / 1e6


VERDICT_ORDER = ("faster", "slower", "same", "unsure")


def breakdown(s: Sequence[tuple[int, str, str]]) -> dict[str, Any]:
    """'slower at 64x2, 128x2; the same as fp32 at 256x4' as a nested message: the verdicts
    present, each with the sizes that had it (width x layers: the same in every language),
    each part holding the next as its `rest`."""
    parts = [
        (v, ", ".join(n for _, n, x in s if x == v))
        for v in VERDICT_ORDER
        if any(x == v for _, _, x in s)
    ]
    out: dict[str, Any] | None = None
    for v, sizes in reversed(parts):
        out = (
            {"key": f"at_{v}", "args": {"sizes": sizes}}
            if out is None
            else {"key": f"at_{v}_then", "args": {"sizes": sizes, "rest": out}}
        )
    assert out is not None, "a breakdown of no sizes"
    return out


def series(points: Iterable[SweepPoint], precision: str) -> dict[int, list[tuple[int, str, str]]]:
    """{batch: [(params, size name, verdict), ...] by params} for one precision."""
    out: dict[int, list[tuple[int, str, str]]] = {}
    for p in points:
        c = p.check(precision)
        if c is not None:
            out.setdefault(p.batch_size, []).append((p.params, f"{p.hidden}x{p.layers}", c.verdict))
    return {b: sorted(v) for b, v in sorted(out.items())}


def classify(verdicts: Sequence[str]) -> tuple[str, int | None]:
    """(always | never | never_unsure | unsure | from | mixed, where 'from' starts) for one
    batch's verdicts ordered by size.

    "from k": faster at every size from k on and at none below (those below are slower, the
    same or unsure, and named so). "never": no size faster and none unsure.
    """
    faster = [v == "faster" for v in verdicts]
    if all(faster):
        return "always", 0
    if not any(faster):
        if all(v == "unsure" for v in verdicts):
            return "unsure", None
        return ("never_unsure" if "unsure" in verdicts else "never"), None
    k = faster.index(True)
    if all(faster[k:]):
        return "from", k
    return "mixed", None


def crossover_notes(points: Sequence[SweepPoint], device: str) -> list[Note]:
    """The sentences of where each precision paid, from the points' verdicts and nothing else.

    One per precision where every batch size says "never" (or every one "always"); else one per
    precision and batch size. Sizes are named width x layers, and parameters in millions.
    """
    precisions = [q for q in PRECISION_NAMES if any(q in p.checks for p in points)]
    where = "GPU" if device == "cuda" else device.upper()
    out: list[Note] = []
    for precision in precisions:
        by_batch = series(points, precision)
        kinds = {b: classify([v for _, _, v in s]) for b, s in by_batch.items()}
        every = [x for s in by_batch.values() for x in s]
        for kind in ("never", "always"):
            if len(by_batch) > 1 and all(k == kind for k, _ in kinds.values()):
                args = {"precision": precision, "device": where, "points": len(every),
                        "lo_m": _m(min(every)[0]), "hi_m": _m(max(every)[0])}  # fmt: skip
                one = args["lo_m"] == args["hi_m"]  # one size: "(0.19 to 0.19 M)" read oddly
                out.append(Note(f"pays_{kind}_anywhere" + ("_one" if one else ""), args))
                break
        else:
            for batch, s in by_batch.items():
                out.append(_series_note(precision, batch, s, kinds[batch], points))
    return out


def _series_note(
    precision: str,
    batch: int,
    s: Sequence[tuple[int, str, str]],
    kind: tuple[str, int | None],
    points: Sequence[SweepPoint],
) -> Note:
    name, k = kind
    args: dict[str, Any] = {
        "precision": precision,
        "batch": batch,
        "sizes": ", ".join(n for _, n, _ in s),
        "hi_m": _m(s[-1][0]),
        "breakdown": breakdown(s),
    }
    if name == "from":
        assert k is not None
        params, size, _ = s[k]
        check = next(
            p.check(precision)
            for p in points
            if p.batch_size == batch and p.params == params and f"{p.hidden}x{p.layers}" == size
        )
        assert check is not None
        args.update(from_m=_m(params), size=size, speedup=check.speedup, low=check.low,
                    high=check.high, breakdown=breakdown(s[:k]))  # fmt: skip
    return Note(f"pays_{name}", args)


def crossover_text(points: Sequence[SweepPoint], device: str) -> str:
    """The crossover sentences in English, one line."""
    return " ".join(n.text for n in crossover_notes(points, device))


# --- files ---------------------------------------------------------------------------------------


def sweep_document(
    points: Sequence[SweepPoint],
    memory: SweepMemory | None,
    machine: Mapping[str, Any] | None = None,
    spec: SweepSpec | None = None,
    status: str | None = None,
    notes: Sequence[Mapping[str, Any]] | None = None,
) -> dict[str, Any]:
    """The --json document: version, machine, one row per point and precision, memory."""
    doc: dict[str, Any] = {
        "version": SWEEP_VERSION,
        "machine": dict(machine or machine_info()),
        "flops_rule": FLOPS_RULE,
        "points": [row for p in points for row in p.rows()],
        "memory": {},
    }
    if spec is not None:
        doc["spec"] = spec.to_dict()
    if status is not None:
        doc["status"] = status
    if notes is not None:
        doc["crossover"] = [dict(n) for n in notes]
    if memory is not None:
        doc["memory"] = {
            p: {
                "weights_bytes": a["weights_bytes"],
                "grads_bytes": a["grads_bytes"],
                "optimizer_bytes": a["optimizer_bytes"],
                "saved_activation_bytes": a["saved_activation_bytes"],
                "peak_mem_bytes": a["peak_mem_bytes"],
                "accelerate_estimate_bytes": (memory.estimate.get(p) or {}).get("training"),
            }
            for p, a in memory.parts.items()
        }
        doc["memory_of"] = {
            "model": memory.model, "hidden": memory.hidden, "layers": memory.layers,
            "params": memory.params, "batch_size": memory.batch_size, "seq": memory.seq,
            "device": memory.device,
        }  # fmt: skip
    return doc


CSV_COLUMNS = (
    "model", "params", "hidden", "layers", "batch_size", "seq", "precision", "step_s",
    "speedup_vs_fp32", "speedup_low", "speedup_high", "speed_verdict", "speed_reason", "rounds",
    "samples_per_s", "tflops", "mfu", "device",
)  # fmt: skip


def csv_rows(points: Sequence[SweepPoint]) -> list[dict[str, Any]]:
    """The points as flat CSV rows (the interval split into low and high)."""
    out = []
    for p in points:
        for row in p.rows():
            iv = row.pop("speedup_interval") or [None, None]
            row["speedup_low"], row["speedup_high"] = iv
            out.append({k: row.get(k) for k in CSV_COLUMNS})
    return out


def params_label(params: int) -> str:
    """'3.6 M', '191 k': a size for a table cell."""
    if params >= 1e6:
        return f"{params / 1e6:.3g} M"
    return f"{params / 1e3:.3g} k"


def log10_params(params: int) -> float:
    """log10 of the parameter count: the plot's x (gradio's plots have no log axis)."""
    return math.log10(max(1, params))


__all__ = [
    "Anatomy",
    "Size",
    "SweepSpec",
    "SweepPlan",
    "SweepPoint",
    "SweepMemory",
    "SweepFinished",
    "SweepPlanned",
    "crossover_notes",
    "parse_sizes",
    "parse_batch_sizes",
    "plan_sweep",
    "run_sweep",
    "sweep",
    "sweep_document",
]
