"""fp8 scaling recipes: exact casts, the shares each recipe flushes and saturates."""

from __future__ import annotations

import pytest
import torch

from mpdemo.teach import fp8_scaling as F
from mpdemo.teach.formats import layout


@pytest.mark.parametrize("fmt", F.FP8_FORMATS)
def test_tensorwise_cast_equals_torchs_float8_cast(fmt: str) -> None:
    g = torch.Generator().manual_seed(0)
    x = torch.randn(64, 96, generator=g) * torch.exp2(torch.randint(-20, 4, (64, 96), generator=g))
    scale = layout(fmt).max / x.abs().amax()
    q, clamped = F.quantize(x, fmt, scale)
    dtype = getattr(torch, {"e4m3": "float8_e4m3fn", "e5m2": "float8_e5m2"}[fmt])
    fmax = layout(fmt).max
    want = (x * scale).clamp(-fmax, fmax).to(dtype).to(torch.float64)
    assert torch.equal(q, want)
    assert not clamped.any()  # current scaling: nothing beyond max


def test_delayed_scaling_saturates_a_tensor_larger_than_its_history() -> None:
    x = torch.linspace(-4, 4, 1000)
    r = F.apply_recipe(x, "e4m3", "delayed", history=[1.0, 2.0])  # amax 4 > history's 2
    # Scale 448 / 2: every |x| whose scaled value rounds past 448 (beyond the tie at 464, which
    # rounds to 448's even mantissa) is clamped to 448, i.e. dequantizes to 2.
    assert r.saturated == int((x.abs() * 224 > 464).sum()) / 1000
    cur = F.apply_recipe(x, "e4m3", "tensorwise")
    assert cur.saturated == 0.0 and cur.rel_error < r.rel_error


def test_per_tensor_scale_flushes_small_elements_that_mx_blocks_keep() -> None:
    # A tensor with one huge element: its one scale pushes the small rows under E4M3's
    # smallest subnormal; rows and MX blocks each get a scale of their own.
    x = torch.full((4, 64), 1e-3)
    x[0, 0] = 1e4
    tw = F.apply_recipe(x, "e4m3", "tensorwise")
    row = F.apply_recipe(x, "e4m3", "rowwise")
    mx = F.apply_recipe(x, "e4m3", "mx")
    assert tw.flushed > 0.7  # 1e-3 * 448/1e4 = 4.5e-5 < 2^-10 / 2
    assert row.flushed == pytest.approx(63 / 256)  # only row 0 shares the huge scale
    assert mx.flushed == pytest.approx(31 / 256)  # only block 0 does
    assert mx.scales == 8 and row.scales == 4 and tw.scales == 1


def test_mx_scale_is_a_power_of_two_and_can_saturate_the_top_binade() -> None:
    # amax 500 = 2^8 * 1.95: the E8M0 scale is 2^(8 - 8) = 1, so 500 saturates to 448 (OCP MX).
    x = torch.tensor([[500.0] + [1.0] * 31])
    deq, clamped, blocks = F.mx_quantize(x, "e4m3")
    assert blocks == 1 and clamped[0, 0] and not clamped[0, 1:].any()
    assert float(deq[0, 0]) == 448.0 and float(deq[0, 1]) == 1.0
