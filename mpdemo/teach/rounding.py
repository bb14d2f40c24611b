"""Exact emulation of a format's rounding (nearest even, or stochastic), for TF32, which torch has
no dtype for, and fp8 recipes on any CPU; the tests check it against torch's casts.
"""

from __future__ import annotations

import math
from typing import TYPE_CHECKING

from .formats import layout

if TYPE_CHECKING:
    import torch


def log2_windows(fmts: tuple[str, ...]) -> dict[str, dict[str, float]]:
    """log2 of each format's edges, as the gradient watch's events carry them (no torch)."""
    return {
        lay.name: {
            "zero_below_log2": math.log2(lay.min_subnormal) - 1,
            "subnormal_below_log2": float(lay.min_exp),
            "overflow_above_log2": math.log2(lay.overflow_threshold),
            "max": lay.max,
        }
        for lay in map(layout, fmts)
    }


def round_nearest(x: torch.Tensor, fmt: str, saturate: bool = False) -> torch.Tensor:
    """x rounded to fmt (nearest, ties to even) as exact float64, subnormals kept; beyond the range
    +-inf, or +-max with saturate=True (fp8 recipes clamp first)."""
    import torch

    lay = layout(fmt)
    x64 = x.detach().to(torch.float64)  # holds every fp32 value and quantum 2^k exactly
    # floor(log2|x|) exactly: frexp gives |x| = m 2^e with m in [0.5, 1).
    _, e = torch.frexp(x64)
    binade = torch.clamp(e - 1, min=lay.min_exp)  # subnormals share the lowest binade's quantum
    quantum = torch.pow(torch.tensor(2.0, dtype=torch.float64), binade - lay.mantissa_bits)
    out = torch.round(x64 / quantum) * quantum
    out = torch.where(x64 == 0, x64, out)  # keeps -0.0
    finite = torch.isfinite(x64)
    big = finite & (out.abs() > lay.max)
    if saturate:
        out = torch.where(big | torch.isinf(x64), torch.sign(x64) * lay.max, out)
    else:
        out = torch.where(big, torch.sign(x64) * math.inf, out)
    return out


def stochastic_round_bf16(
    x: torch.Tensor, generator: torch.Generator | None = None
) -> torch.Tensor:
    """fp32 tensor rounded stochastically to bf16, up with probability equal to the distance: 16
    random low bits added to the fp32 pattern, then cut (torchao's `_fp32_to_bf16_sr`)."""
    import torch

    x = x.detach().to(torch.float32)
    bits = x.view(torch.int32)
    noise = torch.randint(
        0, 1 << 16, x.shape, dtype=torch.int32, device=x.device, generator=generator
    )
    rounded = ((bits + noise) & -65536).view(torch.float32)  # -65536 == 0xFFFF0000
    out = torch.where(torch.isfinite(x), rounded, x)
    return out.to(torch.bfloat16)  # exact: the low 16 bits are zero
