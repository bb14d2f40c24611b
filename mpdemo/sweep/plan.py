"""The size sweep's plan, measured here: sized models, the device's peaks and probed rates."""

from __future__ import annotations

import copy
import functools
import itertools
import time
from collections.abc import Iterable, Mapping
from typing import TYPE_CHECKING

import torch

from ..catalog import BUNDLED_TOKENIZER_DIR
from ..config import Limits, check_number
from ..engine.models import builtin_model, count_params, load_tokenizer
from ..engine.precision import autocast, check_precision_on, resolve_device, synchronize
from ..messages import ConfigError
from ..registry import PRECISION_NAMES
from ..runs.runner import MEMORY_SHARE, available_bytes
from .sizes import MAX_POINTS, SWEEP_PRECISIONS, Size
from .spec import (
    PointPlan,
    SweepPlan,
    SweepSpec,
    _point_estimate,
    max_sweep_s,
    memory_estimate,
)

if TYPE_CHECKING:
    from transformers import PretrainedConfig

BATCHES_PER_POINT = 8  # distinct batches each precision cycles through, in the same order


def default_precisions(device: torch.device) -> tuple[str, ...]:
    """fp32 and what torch.autocast offers on the device by default."""
    if device.type == "cuda":
        return ("fp32", "fp16", "bf16") if torch.cuda.is_bf16_supported() else ("fp32", "fp16")
    if device.type == "mps":
        return ("fp32", "fp16")
    return ("fp32", "bf16")


@functools.cache
def _tokenizer_ids() -> tuple[int, int, int]:
    tok = load_tokenizer(str(BUNDLED_TOKENIZER_DIR))
    eos = tok.sep_token_id if tok.sep_token_id is not None else 0
    return len(tok), tok.pad_token_id, eos


def sized_config(base: PretrainedConfig, size: Size) -> PretrainedConfig:
    """The built-in BERT's config (dropout off, vocabulary, labels) at another width and depth."""
    config = copy.deepcopy(base)
    config.hidden_size = size.hidden
    config.num_hidden_layers = size.layers
    config.num_attention_heads = size.heads
    config.intermediate_size = 4 * size.hidden
    return config


@functools.cache
def size_params(size: Size, num_labels: int = 2) -> int:
    """Parameters of the BERT at `size` (counted on the meta device: no memory, no weights)."""
    vocab, pad, eos = _tokenizer_ids()
    with torch.device("meta"):
        base = builtin_model("tiny-bert", vocab, num_labels, pad, eos)
        return count_params(type(base)(sized_config(base.config, size)))


def build_model(
    template: torch.nn.Module, size: Size, seed: int, device: torch.device
) -> torch.nn.Module:
    """The BERT at `size`, seeded, on the device: the built-in's class and config, resized."""
    torch.manual_seed(seed)
    return type(template)(sized_config(template.config, size)).to(device)


# Dense peaks in TFLOP/s (the vendors' data sheets without sparsity, as Composer's SpeedMonitor
# keeps them). Matched on the CUDA device's name in this order; unknown GPUs get no MFU.
PEAK_TFLOPS: tuple[tuple[str, tuple[str, ...], dict[str, float]], ...] = (
    ("H100", ("PCIe", "NVL"), {"fp32": 67, "tf32": 494.5, "fp16": 989, "bf16": 989, "fp8": 1979}),
    ("H200", ("NVL",), {"fp32": 67, "tf32": 494.5, "fp16": 989, "bf16": 989, "fp8": 1979}),
    ("H100 PCIe", (), {"fp32": 51, "tf32": 378, "fp16": 756, "bf16": 756, "fp8": 1513}),
    ("A100", (), {"fp32": 19.5, "tf32": 156, "fp16": 312, "bf16": 312}),
)


def peak_tflops(device_name: str | None, precision: str) -> tuple[str, float] | None:
    """(the peak's precision, its dense TFLOP/s) for a CUDA device; None when not in the table."""
    if not device_name:
        return None
    kind = "tf32" if precision == "fp32" and torch.backends.cuda.matmul.allow_tf32 else precision
    for needle, excluded, table in PEAK_TFLOPS:
        if needle in device_name and not any(x in device_name for x in excluded):
            return (kind, float(table[kind])) if kind in table else None
    return None


def free_memory_bytes(device: torch.device) -> int | None:
    """Memory free now on the device (the GPU's, or the machine's RAM for a CPU)."""
    if device.type == "cuda":
        return int(torch.cuda.mem_get_info(device)[0])
    return available_bytes()


PROBE_TOKENS = 1024  # rows of the probe's Linear layer: small shapes run far below the rate
PROBE_S = 0.25  # timed calls per precision stop after this long (at least one after the warm-up)


def probe_rates(
    device: torch.device, precisions: Iterable[str], seq: int = PROBE_TOKENS
) -> dict[str, float]:
    """FLOP/s of a Linear layer's training step under each precision's autocast: the fastest of
    up to 5 calls, so another process's burst cannot refuse a sweep."""
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


def plan_sweep(
    spec: SweepSpec, limits: Limits | None = None, rates: Mapping[str, float] | None = None
) -> SweepPlan:
    """Check every size, batch and precision, estimate time and memory; one ConfigError if not."""
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
