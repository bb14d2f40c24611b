"""Precisions timed interleaved (ABBA blocks on the same batches: a burst of load lands on both
sides), their speed-up's 95 % interval, and `verdict()`, the one faster/slower/same/unsure rule."""

from __future__ import annotations

import math
import statistics
import threading
import time
from collections.abc import Callable, Mapping, Sequence
from dataclasses import asdict, dataclass
from typing import Any

from ..engine.cores import LoadMeter

CONFIDENCE = 0.95
# Fewer paired rounds cannot give a 95 % interval from order statistics: with 5, even the
# widest one (min..max) holds the median with only 1 - 2 / 2**5 = 94 % probability.
MIN_ROUNDS = 6
# An interval within ±10 % of 1 is "the same"; one clearing 1 by Criterion.rs's noise threshold
# (2 %) is "faster" or "slower"; anything else "unsure", with the reason.
SAME_WITHIN = 0.10
NOISE_THRESHOLD = 0.02
BUSY_SHARE = 0.25  # other processes' share of the CPU above which the machine was busy
VERDICTS = ("faster", "slower", "same", "unsure")


def median_interval(values: Sequence[float]) -> tuple[float, float] | None:
    """The median's distribution-free interval from order statistics (None below 6 values)."""
    xs = sorted(v for v in values if math.isfinite(v))
    n = len(xs)
    tail = (1.0 - CONFIDENCE) / 2.0
    cdf, k = 0.0, 0
    for j in range(n):
        p = math.comb(n, j) / 2**n  # whole numbers: no float overflow at 1000+ rounds
        if cdf + p > tail:
            break
        cdf += p
        k = j + 1
    if k == 0:
        return None
    return xs[k - 1], xs[n - k]


RESAMPLES = 2000  # the bootstrap's: from 2000 on its ends move < 1 % between seeds


def ratio_of_medians_interval(pairs: Sequence[tuple[float, float]]) -> tuple[float, float] | None:
    """95 % interval of median(a) / median(b), the table's figure (the per-round ratios' missed it
    in 2 of 8 comparisons), by a paired bootstrap seeded by the data; None below MIN_ROUNDS."""
    import numpy as np  # lazily: the page's first load imports no numerics it does not draw

    ab = np.asarray([(a, b) for a, b in pairs if math.isfinite(a) and math.isfinite(b) and b > 0])
    n = len(ab)
    if n < MIN_ROUNDS:
        return None
    figure = float(np.median(ab[:, 0]) / np.median(ab[:, 1]))
    rng = np.random.default_rng(int(ab.sum() * 1e6) % 2**32)
    idx = rng.integers(0, n, size=(RESAMPLES, n))
    boot = np.median(ab[idx, 0], axis=1) / np.median(ab[idx, 1], axis=1)
    tail = (1.0 - CONFIDENCE) / 2.0
    low, high = (float(x) for x in np.quantile(boot, [tail, 1.0 - tail]))
    return min(low, figure), max(high, figure)


def verdict(
    low: float | None, high: float | None, rounds: int, busy: float | None = None
) -> tuple[str, str | None]:
    """(faster | slower | same | unsure, why unsure) for a speed-up's interval [low, high]; why:
    too_few (rounds or no interval), busy (others took > BUSY_SHARE of the CPU), wide."""
    if low is None or high is None or rounds < MIN_ROUNDS:
        return "unsure", "too_few"
    if low > 1.0 + NOISE_THRESHOLD:
        return "faster", None
    if high < 1.0 / (1.0 + NOISE_THRESHOLD):
        return "slower", None
    if low >= 1.0 / (1.0 + SAME_WITHIN) and high <= 1.0 + SAME_WITHIN:
        return "same", None
    return "unsure", "busy" if busy is not None and busy > BUSY_SHARE else "wide"


def runs_interval(
    base_step: float, base_mad: float | None, base_n: int, step: float, mad: float | None, n: int
) -> tuple[float, float] | None:
    """95 % interval of base_step / step from two runs' MADs: only to tell whether their own figure
    disagrees with the interleaved one, never a verdict (None without MADs)."""
    if base_mad is None or mad is None or base_n < 2 or n < 2 or step <= 0:
        return None
    # A median's relative error is 1.2533 x 1.4826 MAD / sqrt(n); added on the log scale.
    se = math.hypot(1.858 * base_mad / math.sqrt(base_n), 1.858 * mad / math.sqrt(n))
    z = statistics.NormalDist().inv_cdf(0.5 + CONFIDENCE / 2)
    ratio = base_step / step
    return ratio * math.exp(-z * se), ratio * math.exp(z * se)


@dataclass(frozen=True)
class SpeedCheck:
    """One precision timed interleaved against the baseline: the one source of its verdict."""

    precision: str
    baseline: str
    speedup: float | None  # baseline step / this step (median of the rounds): >1 is faster
    low: float | None  # the 95 % interval of the speed-up
    high: float | None
    rounds: int
    block: int  # steps per precision in each round
    step_s: float | None  # this precision's median step over every timed step
    baseline_step_s: float | None
    spread: float | None  # median absolute deviation / median of this precision's steps
    others_cpu: float | None  # share of the CPU other processes took while it was measured
    steal: float | None
    verdict: str
    reason: str | None  # why unsure: too_few | busy | wide

    @property
    def interval(self) -> list[float] | None:
        """[low, high], as the summaries and files carry it."""
        return None if self.low is None or self.high is None else [self.low, self.high]

    def to_dict(self) -> dict[str, Any]:
        """JSON-ready form."""
        return asdict(self)

    @classmethod
    def from_dict(cls, d: Mapping[str, Any]) -> SpeedCheck:
        """Back from to_dict() (a GridPlanned event read from JSON)."""
        return cls(**{k: d.get(k) for k in cls.__dataclass_fields__})


def spread(xs: Sequence[float]) -> float | None:
    """Median absolute deviation over the median (None below two values)."""
    if len(xs) < 2:
        return None
    med = statistics.median(xs)
    return statistics.median(abs(x - med) for x in xs) / med if med > 0 else None


def speed_check(
    precision: str,
    speedup: float | None,
    interval: tuple[float, float] | None,
    rounds: int,
    block: int,
    steps: Sequence[float],
    base_steps: Sequence[float],
    load: Mapping[str, float] | None,
) -> SpeedCheck:
    """A precision's SpeedCheck against fp32 from its figures, with the one verdict of its interval."""
    low, high = interval if interval else (None, None)
    others = load.get("others") if load else None
    v, why = verdict(low, high, rounds, others)
    return SpeedCheck(
        precision=precision,
        baseline="fp32",
        speedup=speedup,
        low=low,
        high=high,
        rounds=rounds,
        block=block,
        step_s=statistics.median(steps) if steps else None,
        baseline_step_s=statistics.median(base_steps) if base_steps else None,
        spread=spread(steps),
        others_cpu=others,
        steal=load.get("steal") if load else None,
        verdict=v,
        reason=why,
    )


def compare(
    times: Mapping[str, Sequence[Sequence[float]]], load: Mapping[str, float] | None = None
) -> dict[str, SpeedCheck]:
    """SpeedChecks against fp32 from interleaved steps: times[precision][round] = a block's steps."""
    base = times.get("fp32") or []
    base_all = [t for block in base for t in block]
    out: dict[str, SpeedCheck] = {}
    for name, rounds in times.items():
        ratios = [
            statistics.median(b) / max(statistics.median(p), 1e-12)
            for b, p in zip(base, rounds, strict=False)
            if b and p
        ]
        speedup = statistics.median(ratios) if ratios else None
        block = max((len(b) for b in rounds), default=0)
        every = [t for b in rounds for t in b]
        if name != "fp32":
            iv = median_interval(ratios)
            out[name] = speed_check(name, speedup, iv, len(ratios), block, every, base_all, load)
    return out


def interleave(
    steppers: Mapping[str, Callable[[], float]],
    *,
    budget_s: float,
    cap_s: float | None = None,
    block_s: float = 0.25,
    max_block: int = 4,
    max_rounds: int = 60,
    stop: threading.Event | None = None,
    clock: Callable[[], float] = time.perf_counter,
) -> tuple[dict[str, list[list[float]]], dict[str, float] | None]:
    """Time each stepper in blocks, in ABBA order, until the budget and MIN_ROUNDS are met (up to
    `cap_s`): (times[name][round] = that block's steps, load)."""
    names = ["fp32", *[n for n in steppers if n != "fp32"]]
    cap = cap_s if cap_s is not None else 3.0 * budget_s
    t0 = clock()
    warm = {n: steppers[n]() for n in names}
    block = max(1, min(max_block, int(block_s / max(max(warm.values()), 1e-6))))
    meter = LoadMeter()
    times: dict[str, list[list[float]]] = {n: [] for n in names}
    for r in range(max_rounds):
        if stop is not None and stop.is_set():
            break
        spent = clock() - t0
        # One round at the least: a point whose warm-up outran the cap still gets a figure.
        if r > 0 and (spent > cap or (spent > budget_s and r >= MIN_ROUNDS)):
            break
        # ABBA: the order turns round every round, so neither side always follows the other.
        for name in names if r % 2 == 0 else reversed(names):
            times[name].append([steppers[name]() for _ in range(block)])
    return times, meter.read()
