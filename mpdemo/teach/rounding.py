"""Exact emulation of a float format's rounding, for formats torch has no dtype for (TF32) and
for fp8 recipes computed on any CPU: round to nearest even, or stochastically.

A format is (mantissa bits, smallest normal exponent, max). `round_nearest` works in float64,
where every fp32 value, every quantum 2^k used here and every quotient x / quantum is exact, so
`torch.round` (round half to even) on x / quantum is the format's own rounding. The tests check
it against torch's casts for fp16, bf16, e4m3 and e5m2 element by element, and TF32 against a
definition in exact fractions.
"""

from __future__ import annotations

import math
from dataclasses import dataclass
from typing import TYPE_CHECKING

from .formats import TORCH_DTYPE_NAMES

if TYPE_CHECKING:
    import torch


@dataclass(frozen=True)
class Layout:
    """What rounding needs of a format: mantissa bits, smallest normal exponent, largest value."""

    name: str
    mantissa_bits: int
    min_exp: int  # the smallest normal number is 2^min_exp
    max: float
    ieee_inf: bool  # beyond the range a plain cast gives inf (else: NaN or saturation)

    @property
    def min_normal(self) -> float:
        """Smallest normal number."""
        return 2.0**self.min_exp

    @property
    def min_subnormal(self) -> float:
        """Smallest subnormal number: one quantum of the lowest binade."""
        return 2.0 ** (self.min_exp - self.mantissa_bits)

    @property
    def overflow_threshold(self) -> float:
        """Half an ulp above max: beyond it (at it, for an odd max) rounding leaves the range."""
        top = math.frexp(self.max)[1] - 1
        return self.max + 2.0 ** (top - self.mantissa_bits) / 2


# TF32 (NVIDIA Ampere's tensor-core input format): fp32's 8 exponent bits, fp16's 10 mantissa
# bits, stored in 19 bits. Its max is fp32's exponent with 10 mantissa bits: (2 - 2^-10) 2^127.
LAYOUTS: dict[str, Layout] = {
    "fp32": Layout("fp32", 23, -126, (2 - 2.0**-23) * 2.0**127, True),
    "tf32": Layout("tf32", 10, -126, (2 - 2.0**-10) * 2.0**127, True),
    "fp16": Layout("fp16", 10, -14, 65504.0, True),
    "bf16": Layout("bf16", 7, -126, (2 - 2.0**-7) * 2.0**127, True),
    "e4m3": Layout("e4m3", 3, -6, 448.0, False),
    "e5m2": Layout("e5m2", 2, -14, 57344.0, True),
}
TORCH_DTYPES = TORCH_DTYPE_NAMES  # the formats' one list (mpdemo.teach.formats)


def layout(fmt: str) -> Layout:
    """The layout of a format name; ValueError for an unknown one."""
    try:
        return LAYOUTS[fmt]
    except KeyError:
        raise ValueError(f"unknown format {fmt!r}; expected one of {', '.join(LAYOUTS)}") from None


def log2_windows(fmts: tuple[str, ...]) -> dict[str, dict[str, float]]:
    """log2 of each format's edges: zero below, subnormal below, overflow above (no torch).

    The gradient watch's events carry these, and a runs file's histograms are drawn with the same
    (a file keeps the format's name only).
    """
    out = {}
    for fmt in fmts:
        lay = layout(fmt)
        out[fmt] = {
            "zero_below_log2": math.log2(lay.min_subnormal) - 1,
            "subnormal_below_log2": float(lay.min_exp),
            "overflow_above_log2": math.log2(lay.overflow_threshold),
            "max": lay.max,
        }
    return out


def round_nearest(x: torch.Tensor, fmt: str, saturate: bool = False) -> torch.Tensor:
    """x rounded to fmt (nearest, ties to even), returned as float64 holding the exact values.

    Beyond the range: +-inf (or +-max with saturate=True, what fp8 recipes do by clamping first).
    NaN stays NaN. Subnormals are kept, as torch's casts keep them.
    """
    import torch

    lay = layout(fmt)
    x64 = x.detach().to(torch.float64)
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


def round_tf32(x: torch.Tensor) -> torch.Tensor:
    """fp32 tensor rounded to TF32 (10 mantissa bits), still an fp32 tensor."""
    import torch

    return round_nearest(x, "tf32").to(torch.float32)


def stochastic_round_bf16(
    x: torch.Tensor, generator: torch.Generator | None = None
) -> torch.Tensor:
    """fp32 tensor rounded stochastically to bf16: up with probability equal to the distance.

    Adding 16 random low bits to the fp32 pattern and truncating them is rounding up exactly
    when the random draw is below the discarded fraction (the trick torchao's
    `_fp32_to_bf16_sr` uses). inf and NaN pass through.
    """
    import torch

    x = x.detach().to(torch.float32)
    bits = x.view(torch.int32)
    noise = torch.randint(
        0, 1 << 16, x.shape, dtype=torch.int32, device=x.device, generator=generator
    )
    rounded = ((bits + noise) & -65536).view(torch.float32)  # -65536 == 0xFFFF0000
    out = torch.where(torch.isfinite(x), rounded, x)
    return out.to(torch.bfloat16)  # exact: the low 16 bits are zero
