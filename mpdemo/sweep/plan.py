"""The size sweep's plan: sized models, FLOPs and peaks, time and memory estimates, the grid fitted to a budget."""

from __future__ import annotations

import copy
import functools
import itertools
import os
import time
from collections.abc import Iterable, Mapping
from dataclasses import dataclass, field
from typing import Any

import torch

from ..catalog import BUNDLED_TOKENIZER_DIR
from ..config import Limits, RunConfig, check_number, on_hf_space
from ..engine.models import builtin_model, count_params, load_tokenizer
from ..engine.precision import autocast, check_precision_on, resolve_device, synchronize
from ..messages import ConfigError
from ..registry import PRECISION_NAMES
from ..runs.timing import MIN_ROUNDS
from .sizes import (
    DEFAULT_BUDGET_S,
    DEFAULT_SIZES,
    MAX_POINTS,
    SWEEP_PRECISIONS,
    Size,
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
    if device.type == "cuda":
        # That layer is launch-bound on a GPU: on an H200 the estimate from it put the four
        # largest points (768x12, 1024x24 at 32 and 128 x 256) at 7.5 min; they took 66 s.
        width, out_width, seq = 1024, 4096, max(seq, 8192)
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


def fitting_budget(plan: SweepPlan, cap_s: float) -> int | None:
    """The largest whole timing budget (s) whose estimate, at the rates this plan measured, is
    within cap_s; None when even 1 s is not (each point's rounds take longer: fewer points)."""
    seq, n = plan.spec.base.max_length, max(1, len(plan.points))

    def total(budget: float) -> float:
        return sum(
            _point_estimate(p.params, p.batch_size, seq, plan.rates, budget / n)
            for p in plan.points
        )

    lo, hi = 1, max(1, int(plan.spec.budget_s))
    if total(lo) > cap_s:
        return None
    while lo < hi:  # the estimate grows with the budget
        mid = (lo + hi + 1) // 2
        if total(mid) <= cap_s:
            lo = mid
        else:
            hi = mid - 1
    return lo


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
