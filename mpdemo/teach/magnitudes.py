"""The underflow lab's arithmetic: magnitudes counted per fp32 binade and mantissa tie, so the
shares at any power-of-two scale (all GradScaler uses) come exactly with no pass redone.
"""

from __future__ import annotations

import bisect
import functools
import math
from dataclasses import dataclass
from itertools import accumulate

from .formats import LOW_PRECISION, Layout, layout, torch_dtype

KINDS = ("activation", "weight")
HIST_LO, HIST_HI = -60, 20  # displayed log2 bins; values outside are counted in the end bins
# fp32 binades: |x| in [2^b, 2^(b+1)) for b from -149 (smallest subnormal) to 127.
BIN_LO, BIN_HI = -149, 127
NBINS = BIN_HI - BIN_LO + 1
FP32_MIN_NORMAL_BIN = -126
K_MAX = 100  # binned shares are computed for scales 2^-100 .. 2^100
CHUNK = 1 << 22  # elements folded at a time: bounds temporaries to ~50 MB for any layer
MANT_STEPS = 2048  # the folded mantissa resolution: 11 bits, 1 + j/2048


@dataclass(frozen=True)
class Band:
    """A format's rounding ties as (fp32 binade, mantissa 1 + j/2048): below its smallest subnormal
    (to 0), below its smallest normal (up), above max (past it where the format has inf)."""

    lay: Layout
    zero_bin: int
    normal_bin: int
    normal_j: int
    inf_bin: int
    inf_j: int


@functools.cache
def band(fmt: str) -> Band:
    """The thresholds of a low-precision format, from its layout."""
    if fmt not in LOW_PRECISION:
        raise ValueError(f"unknown format {fmt!r}; expected one of {', '.join(LOW_PRECISION)}")
    lay = layout(fmt)
    e_max = math.frexp(lay.max)[1] - 1
    return Band(
        lay,
        zero_bin=lay.min_exp - lay.mantissa_bits - 1,
        normal_bin=lay.min_exp - 1,
        normal_j=round(MANT_STEPS * (1 - lay.eps)),  # 2^(min_exp-1) x (2 - eps)
        inf_bin=e_max,
        inf_j=round(MANT_STEPS * (lay.max / 2.0**e_max + lay.eps / 2 - 1)),  # max + ulp/2
    )


def thresholds() -> tuple[int, ...]:
    """Every mantissa index j a format's band needs, plus 0 (exact powers of two)."""
    return tuple(
        sorted({0} | {j for f in LOW_PRECISION for j in (band(f).normal_j, band(f).inf_j)})
    )


@dataclass(frozen=True)
class Magnitudes:
    """Binned |g| of one kind of gradient: plain ints, so the UI keeps it without torch."""

    kind: str
    values: int  # every element seen, zeros included
    nonzero: int  # finite non-zero elements (the denominator of every share)
    nonfinite: int  # inf/NaN elements (none in a healthy fp32 pass), left out of the shares
    tensors: int
    total: tuple[int, ...]  # per fp32 binade, index b - BIN_LO
    ge: dict[int, tuple[int, ...]]  # per binade: mantissa >= 1 + j/2048
    eq: dict[int, tuple[int, ...]]  # per binade: mantissa == 1 + j/2048 exactly (23 bits)
    amax: float = 0.0  # the largest finite |g|: what per-tensor fp8 scaling divides by

    @functools.cached_property
    def prefix(self) -> tuple[int, ...]:
        """Counts below each binade: prefix[i] is the sum of total[:i]."""
        return (0, *accumulate(self.total))

    def hist(self, shift: int = 0, lo: int = HIST_LO, hi: int = HIST_HI) -> dict[str, list[int]]:
        """Counts per integer log2 bin of |g|*2^shift from lo to hi; values outside go to the end bins."""
        edges = list(range(lo, hi + 1))
        counts = [0] * (len(edges) - 1)
        for i, n in enumerate(self.total):
            b = min(max(i + BIN_LO + shift, lo), hi - 1)
            counts[b - lo] += n
        return {"edges_log2": edges, "counts": counts}

    def median_log2(self) -> int | None:
        """The binade holding the median magnitude (floor of log2 |g|), None when empty."""
        first_past_half = bisect.bisect_left(self.prefix, self.nonzero / 2)
        return first_past_half - 1 + BIN_LO if self.nonzero else None


def _below(m: Magnitudes, b: int) -> int:
    """Count of values in binades strictly below b."""
    return m.prefix[max(0, min(NBINS, b - BIN_LO))]


def _at(counts: tuple[int, ...], b: int) -> int:
    """counts[b] for a binade b, 0 outside fp32's range."""
    i = b - BIN_LO
    return counts[i] if 0 <= i < NBINS else 0


def log2_of_power(scale: float) -> int | None:
    """k when scale == 2**k exactly, else None."""
    if not (isinstance(scale, (int, float)) and math.isfinite(scale) and scale > 0):
        return None
    mant, exp = math.frexp(scale)
    return exp - 1 if mant == 0.5 else None


def shares_of_counts(
    zero: int, below_normal: int, over: int, nonzero: int, scale: float
) -> dict[str, object]:
    """Shares of the non-zero values; below_normal counts zeros and subnormals together."""
    n = max(nonzero, 1)  # an empty set gives 0 shares, not a division error
    return {
        "scale": scale,
        "underflow_share": zero / n,
        "subnormal_share": (below_normal - zero) / n,
        "overflow_share": over / n,
        "normal_share": (nonzero - below_normal - over) / n if nonzero else 0.0,
    }


def binned_k_range(fmt: str) -> range:
    """The k for which binned shares of fmt at 2^k are exact: all, but k >= 0 for a format whose
    thresholds lie among fp32's subnormals (bf16's), where g*2^k for k < 0 would round."""
    b = band(fmt)
    low = 0 if min(b.zero_bin, b.normal_bin) < FP32_MIN_NORMAL_BIN else -K_MAX
    return range(low, K_MAX + 1)


def shares_at(m: Magnitudes, scale: float, fmt: str = "fp16") -> dict[str, object]:
    """Exact shares of fmt(g*scale) from the bins; scale must be a power of two."""
    k = log2_of_power(scale)
    ks = binned_k_range(fmt)
    if k is None or k not in ks:
        raise ValueError(
            f"binned {fmt} shares need a scale 2^k with k from {ks.start} to {ks.stop - 1} "
            "(GradScaler only uses powers of two); other scales are counted by casting"
        )
    b = band(fmt)
    # g*2^k is exact in fp32 (same mantissa, binade + k): compare against thresholds moved by -k.
    zb = b.zero_bin - k
    zero = _below(m, zb) + _at(m.eq[0], zb)
    nb = b.normal_bin - k
    below_normal = _below(m, nb) + _at(m.total, nb) - _at(m.ge[b.normal_j], nb)
    ib = b.inf_bin - k
    over = m.nonzero - _below(m, ib + 1) + _at(m.ge[b.inf_j], ib)
    if not b.lay.ieee_inf:  # E4M3: the tie itself still rounds to max
        over -= _at(m.eq[b.inf_j], ib)
    return shares_of_counts(zero, below_normal, over, m.nonzero, scale)


def cast_counts(values: object, scale: float, fmt: str = "fp16") -> tuple[int, int, int]:
    """(zero, below normal, overflow) counts of fmt(values*scale), multiplied in float32. Overflow
    is inf; for E4M3 (no inf) |v| past the tie above 448, saturated or NaN by the cast: lost."""
    import torch

    b = band(fmt)
    v = values.float() * scale
    h = v.to(torch_dtype(fmt)).float()  # exact: every fp8/fp16/bf16 value is an fp32 value
    zero = int((h == 0).sum())
    below_normal = int((h.abs() < b.lay.min_normal).sum())
    if b.lay.ieee_inf:
        over = int(torch.isinf(h).sum())
    else:
        over = int((v.abs() > b.lay.overflow_threshold).sum())
    return zero, below_normal, over


def best_scale(m: Magnitudes, fmt: str = "fp16") -> dict[str, object]:
    """The power-of-two scale keeping the most values normal in fmt (ties: the one nearest 1)."""
    ks = sorted(binned_k_range(fmt), key=lambda k: (abs(k), k))
    best = max(ks, key=lambda k: shares_at(m, 2.0**k, fmt)["normal_share"])
    return {**shares_at(m, 2.0**best, fmt), "log2": best}


def amax_scale(m: Magnitudes, fmt: str) -> dict[str, object] | None:
    """Per-tensor scaling as torchao does it (S = max / amax), binned at its power-of-two floor."""
    if not m.nonzero or not (m.amax > 0 and math.isfinite(m.amax)):
        return None
    exact = layout(fmt).max / m.amax
    k = math.floor(math.log2(exact))
    ks = binned_k_range(fmt)
    k = min(max(k, ks.start), ks.stop - 1)
    return {"amax": m.amax, "exact_scale": exact, "log2": k, **shares_at(m, 2.0**k, fmt)}


def tf32_below_normal(m: Magnitudes, k: int = 0) -> float:
    """Share of the non-zero |g| * 2^k below 2^-126, TF32's smallest normal (fp32's exponent)."""
    if not m.nonzero:
        return 0.0
    return _below(m, FP32_MIN_NORMAL_BIN - k) / m.nonzero


def format_band(fmt: str) -> dict[str, float]:
    """log2 of a format's smallest subnormal, smallest normal and largest value."""
    facts = layout(fmt).facts()
    return {k: facts[k] for k in ("min_subnormal_log2", "min_normal_log2", "max_log2")}
