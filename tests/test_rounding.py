"""Emulated rounding equals torch's casts, and TF32 equals its definition in exact fractions."""

from __future__ import annotations

import math
from fractions import Fraction

import pytest
import torch

from mpdemo.teach import rounding
from mpdemo.teach.formats import layout


def _samples() -> torch.Tensor:
    g = torch.Generator().manual_seed(0)
    # Every binade from far below fp8's subnormals to beyond fp16's max, signs mixed, plus
    # the exact ties and edges that rounding gets wrong first.
    mags = torch.exp2(torch.empty(20000).uniform_(-30, 20, generator=g))
    signs = torch.where(torch.rand(20000, generator=g) < 0.5, -1.0, 1.0)
    edges = torch.tensor(
        [
            0.0,
            -0.0,
            2.0**-24,
            2.0**-25,
            3 * 2.0**-26,
            2.0**-14,
            65504.0,
            65519.0,
            65520.0,
            448.0,
            464.0,
            57344.0,
            61439.0,
            2.0**-9,
            2.0**-10,
            1 + 2.0**-11,
            1 + 3 * 2.0**-11,
        ]
    )
    return torch.cat([(mags * signs).float(), edges, -edges]).float()


@pytest.mark.parametrize("fmt", ["fp16", "bf16", "e4m3", "e5m2"])
def test_round_nearest_equals_torchs_cast(fmt: str) -> None:
    x = _samples()
    lay = layout(fmt)
    dtype = getattr(torch, layout(fmt).dtype)
    # Saturating casts (fp8 recipes clamp first), so torch's e4m3 NaN/saturation choice is moot.
    clamped = x.clamp(-lay.max, lay.max)
    want = clamped.to(dtype).to(torch.float64)
    got = rounding.round_nearest(clamped, fmt)
    assert torch.equal(got, want), (got != want).nonzero()[:5]
    sat = rounding.round_nearest(x * 1e6, fmt, saturate=True)
    assert torch.equal(sat, (x * 1e6).clamp(-lay.max, lay.max).to(dtype).to(torch.float64))


@pytest.mark.parametrize("fmt", ["fp16", "bf16", "e5m2"])
def test_ieee_overflow_goes_to_inf_like_torch(fmt: str) -> None:
    lay = layout(fmt)
    x = torch.tensor([lay.max, lay.overflow_threshold, lay.overflow_threshold * 0.999999, 1e30])
    want = x.to(getattr(torch, layout(fmt).dtype)).to(torch.float64)
    assert torch.equal(rounding.round_nearest(x, fmt), want)


def _tf32_exact(v: float) -> float:
    """TF32 by definition: the nearest value m 2^(e-10), m whole, ties to an even m."""
    if v == 0 or not math.isfinite(v):
        return v
    e = max(math.frexp(abs(v))[1] - 1, -126)
    q = Fraction(2) ** (e - 10)
    m = round(Fraction(v) / q)  # Python's round of a Fraction: half to even
    return float(m * q)


def test_tf32_equals_its_definition() -> None:
    x = _samples()
    x = torch.cat([x, torch.tensor([1e-40, 3e-39, 3.4e38, 1.0 + 2.0**-11, 1.0 + 3 * 2.0**-11])])
    got = rounding.round_nearest(x, "tf32").to(torch.float32)
    assert got.dtype == torch.float32
    want = [_tf32_exact(float(v)) for v in x.tolist()]
    assert got.tolist() == want
    # 10 mantissa bits: the low 13 bits of every result's fp32 pattern are zero.
    assert int((got.view(torch.int32) & 0x1FFF).abs().sum()) == 0


def test_stochastic_rounding_is_unbiased_and_lands_on_bf16_neighbours() -> None:
    g = torch.Generator().manual_seed(1)
    x = torch.full((200000,), 1.0 + 2.0**-10)  # a quarter of the way from 1 to the next bf16
    out = rounding.stochastic_round_bf16(x, generator=g).float()
    assert set(out.unique().tolist()) == {1.0, 1.0 + 2.0**-7 * 1}  # bf16 neighbours only
    up = float((out > 1).float().mean())
    assert abs(up - 0.125) < 0.01  # 2^-10 / 2^-7 of the way: rounds up 1 time in 8
    assert abs(float(out.double().mean()) - (1 + 2.0**-10)) < 2e-4
    exact = torch.tensor([1.0, -2.5, 0.0, math.inf])
    assert rounding.stochastic_round_bf16(exact).float().tolist() == exact.tolist()
