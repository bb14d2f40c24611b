"""Each lesson's point as figures its runs must show on any seed (issue #48's bars). Torch-free."""

from __future__ import annotations

import itertools
import statistics
from collections.abc import Callable, Iterable, Mapping
from dataclasses import dataclass, field

from ..config import RunConfig

FALLS = 0.8  # last-10 mean over first-5 mean, at most
AGREE = 0.02  # curves agree: mean |gap| per step, as a share of the reference's mean loss
LAG = 0.05  # a lagging run's last-10 mean, at least this much above the other's
# Shares of gradients below fp16's normal range (tiny-bert: 0.40-0.97 unscaled, 0.002-0.006 scaled).
UNDERFLOW_SHARE = 0.25
UNDERFLOW_RATIO = 10
SCALED_SHARE = 0.05
MIN_SKIPS = 3  # the loss-scaling lesson's skipped steps, at least


@dataclass
class Trace:
    """One run of a lesson as its step events drew it."""

    config: RunConfig
    losses: list[float] = field(default_factory=list)
    scales: list[float | None] = field(default_factory=list)
    skipped: int = 0
    # Per watched step: the share of non-zero gradients below the format's smallest normal.
    below_normal: list[float] = field(default_factory=list)

    def first(self, n: int = 5) -> float:
        """Mean loss of the first n steps."""
        return statistics.fmean(self.losses[:n])

    def last(self, n: int = 10) -> float:
        """Mean loss of the last n steps."""
        return statistics.fmean(self.losses[-n:])


@dataclass(frozen=True)
class Reading:
    """One figure a lesson's point rests on, the bar it must clear, and whether it did."""

    what: str
    figure: float
    bar: str
    ok: bool

    def __str__(self) -> str:
        return f"{'ok ' if self.ok else 'NO '} {self.what}: {self.figure:.3f} (bar {self.bar})"


def below_normal_share(layers: Iterable[Mapping[str, object]]) -> float:
    """A watched step's share of non-zero gradients under the format's normal range, all layers."""
    nonzero = sum(int(layer["nonzero"]) for layer in layers)
    if not nonzero:
        return 0.0
    under = sum((layer["flushed"] + layer["subnormal"]) * int(layer["nonzero"]) for layer in layers)
    return under / nonzero


def traces_of(runs: Iterable[Mapping[str, object]]) -> dict[str, Trace]:
    """The lesson's runs by label, from runs-JSON entries (a RunFold's runs or a recording's)."""
    traces: dict[str, Trace] = {}
    for run in runs:
        if not run.get("config"):
            continue
        cfg = RunConfig.from_dict(run["config"])
        trace = traces[cfg.label] = Trace(cfg)
        for step in run.get("steps") or []:
            trace.losses.append(step["loss"])
            trace.scales.append(step.get("loss_scale"))
            trace.skipped += bool(step.get("skipped"))
        trace.below_normal = [
            below_normal_share(h["layers"]) for h in run.get("grad_histograms") or []
        ]
    return traces


def check_runs(
    check: Callable[[Mapping[str, Trace]], list[Reading]], traces: Mapping[str, Trace]
) -> list[Reading]:
    """The check's readings, or none where a run is missing or too short to read (stopped)."""
    if any(len(t.losses) < 10 for t in traces.values()):
        return []
    try:
        return check(traces)
    except ValueError:  # a run the check reads is not among them (a partial grid)
        return []


def _least(what: str, figure: float, bar: float) -> Reading:
    return Reading(what, figure, f">= {bar}", figure >= bar)


def _most(what: str, figure: float, bar: float) -> Reading:
    return Reading(what, figure, f"<= {bar}", figure <= bar)


def _falls(t: Trace) -> Reading:
    return _most(f"{t.config.label}: loss last 10 / first 5", t.last() / t.first(), FALLS)


def _agree(ref: Trace, others: Iterable[Trace]) -> list[Reading]:
    out = []
    for t in others:
        n = min(len(ref.losses), len(t.losses))  # a run stopped early: the steps both have
        gap = statistics.fmean(abs(a - b) for a, b in zip(ref.losses, t.losses, strict=False))
        share = gap / statistics.fmean(ref.losses[:n])
        out.append(
            _most(f"{t.config.label} vs {ref.config.label}: mean |loss gap| / loss", share, AGREE)
        )
    return out


def _one(traces: Mapping[str, Trace], pick: Callable[[RunConfig], bool]) -> Trace:
    (t,) = [t for t in traces.values() if pick(t.config)]
    return t


def still_trains(traces: Mapping[str, Trace]) -> list[Reading]:
    """Both runs' loss falls from the first steps, and fp16 with its scaler draws fp32's curve."""
    ref = _one(traces, lambda c: c.precision == "fp32")
    others = [t for t in traces.values() if t is not ref]
    return [_falls(t) for t in traces.values()] + _agree(ref, others)


def underflow(traces: Mapping[str, Trace]) -> list[Reading]:
    """Unscaled fp16 puts many times the scaled run's share of gradients below its normal range."""
    bare = _one(traces, lambda c: c.precision == "fp16" and not c.scales_loss)
    scaled = _one(traces, lambda c: c.precision == "fp16" and c.scales_loss)
    low, high = min(bare.below_normal, default=0.0), max(scaled.below_normal, default=1.0)
    ratio = low / high if high else float("inf") if low else 0.0
    below = "share of gradients below fp16's normal range"
    return [
        _least(f"{bare.config.label}: least {below}", low, UNDERFLOW_SHARE),
        _most(f"{scaled.config.label}: most {below}", high, SCALED_SHARE),
        _least("the unscaled run's least share over the scaled run's most", ratio, UNDERFLOW_RATIO),
    ]


def loss_scaling(traces: Mapping[str, Trace]) -> list[Reading]:
    """Steps that overflow are skipped, and the scale visibly rises and falls."""
    (t,) = traces.values()
    scales = [s for s in t.scales if s]
    rises = sum(b > a for a, b in itertools.pairwise(scales))
    falls = sum(b < a for a, b in itertools.pairwise(scales))
    return [
        _least(f"{t.config.label}: skipped steps", t.skipped, MIN_SKIPS),
        _least(f"{t.config.label}: times the scale rose", rises, 1),
        _least(f"{t.config.label}: times the scale fell", falls, 1),
    ]


def master_weights(traces: Mapping[str, Trace]) -> list[Reading]:
    """Pure bf16 weights lag the fp32 master copy; stochastic rounding closes half the gap or more."""
    master = _one(traces, lambda c: c.weights == "fp32")
    pure = _one(traces, lambda c: c.weights == "bf16")
    sr = _one(traces, lambda c: c.weights == "bf16-sr")
    gap = pure.last() - master.last()
    left = sr.last() - master.last()
    closed = 1 - left / gap if gap > 0 else 0.0
    return [
        _least(f"{pure.config.label}: last-10 loss above the fp32 master's", gap, LAG),
        _least(f"{sr.config.label}: share of that gap closed", closed, 0.5),
    ]


def backends(traces: Mapping[str, Trace]) -> list[Reading]:
    """One flag through three backends: three curves that agree."""
    ref = _one(traces, lambda c: c.backend == "torch")
    return _agree(ref, [t for t in traces.values() if t is not ref])
