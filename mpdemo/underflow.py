"""Underflow lab: where a real backward pass puts gradient magnitudes against fp16's range.

Rebuilds the figure of Micikevicius et al. (ICLR 2018) on the selected model: one fp32
forward/backward on the first batch, then the share of non-zero activation and weight
gradients that fp16 would flush to zero, keep only as subnormals, or overflow, unscaled and with
the loss scaled by S.

Summaries are bounded whatever the model (a 4 MB table per kind of gradient): every gradient is
folded, chunk by chunk, into counts per (fp32 exponent, top 11 mantissa bits), then reduced to
counts per fp32 binade plus where the mantissa sits against fp16's rounding thresholds. A
power-of-two scale only shifts binades, so those counts give exactly the shares that casting
`(g*S).half()` gives, for any S = 2^k, with no backward pass redone; GradScaler only ever uses
powers of two. Other scales are counted by casting, during the pass itself.
torch is imported inside functions; nothing here imports gradio.
"""

from __future__ import annotations

import math
from collections.abc import Iterable
from dataclasses import dataclass, field
from typing import Any

from .config import Limits, RunConfig
from .messages import ConfigError

KINDS = ("activation", "weight")
HIST_LO, HIST_HI = -60, 20  # displayed log2 bins; values outside are counted in the end bins
# fp32 binades: |x| in [2^b, 2^(b+1)) for b from -149 (smallest subnormal) to 127.
BIN_LO, BIN_HI = -149, 127
NBINS = BIN_HI - BIN_LO + 1
K_MAX = 100  # binned shares are exact for scales 2^-100 .. 2^100 (see _Folder.result)
CHUNK = 1 << 22  # elements folded at a time: bounds temporaries to ~50 MB for any layer

# fp16 rounding thresholds as (binade, mantissa in [1, 2)) of the fp32 value, round to nearest
# even: 2^-25 is the tie between 0 and 2^-24 and goes to 0; 2^-15*(2 - 2^-10) = 2^-14 - 2^-25
# is the tie between the largest subnormal (odd) and 2^-14 (even) and goes up to the normal;
# 2^15*(2 - 2^-11) = 65520 is the tie between 65504 (odd) and 2^16 = inf (even).
_ZERO_BIN = -25
_NORMAL_BIN, _NORMAL_MANT = -15, 2 - 2**-10
_INF_BIN, _INF_MANT = 15, 2 - 2**-11


@dataclass(frozen=True)
class Magnitudes:
    """Binned |g| of one kind of gradient: plain ints, so the UI keeps it without torch."""

    kind: str
    values: int  # every element seen, zeros included
    nonzero: int  # finite non-zero elements (the denominator of every share)
    nonfinite: int  # inf/NaN elements (none in a healthy fp32 pass), left out of the shares
    tensors: int
    total: tuple[int, ...]  # per fp32 binade, index b - BIN_LO
    pow2: tuple[int, ...]  # ... of which exactly a power of two (mantissa 1.0)
    top10: tuple[int, ...]  # ... of which mantissa >= 2 - 2^-10
    top11: tuple[int, ...]  # ... of which mantissa >= 2 - 2^-11

    def hist(self, shift: int = 0, lo: int = HIST_LO, hi: int = HIST_HI) -> dict[str, list[int]]:
        """Counts per integer log2 bin of |g|*2^shift from lo to hi; values outside go to the end bins."""
        edges = list(range(lo, hi + 1))
        counts = [0] * (len(edges) - 1)
        for i, n in enumerate(self.total):
            if n:
                b = min(max(i + BIN_LO + shift, lo), hi - 1)
                counts[b - lo] += n
        return {"edges_log2": edges, "counts": counts}

    def median_log2(self) -> int | None:
        """The binade holding the median magnitude (floor of log2 |g|), None when empty."""
        half, acc = self.nonzero / 2, 0
        for i, n in enumerate(self.total):
            acc += n
            if n and acc >= half:
                return i + BIN_LO
        return None


def _below(m: Magnitudes, b: int) -> int:
    """Count of values in binades strictly below b."""
    return sum(m.total[: max(0, min(NBINS, b - BIN_LO))])


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


def _shares(zero: int, below_normal: int, over: int, nonzero: int, scale: float) -> dict[str, Any]:
    """Shares of the non-zero values; below_normal counts zeros and subnormals together."""
    n = max(nonzero, 1)  # an empty set gives 0 shares, not a division error
    return {
        "scale": scale,
        "underflow_share": zero / n,
        "subnormal_share": (below_normal - zero) / n,
        "overflow_share": over / n,
    }


def _binned_shares(m: Magnitudes, scale: float) -> dict[str, Any]:
    """Exact fp16 shares of g*scale from the bins; scale must be a power of two."""
    k = log2_of_power(scale)
    if k is None or abs(k) > K_MAX:
        raise ValueError(
            f"binned shares need a scale 2^k with |k| <= {K_MAX} (GradScaler only uses powers of two)"
        )
    # g*2^k is exact in fp32 (same mantissa, binade + k): compare against thresholds moved by -k.
    zero = _below(m, _ZERO_BIN - k) + _at(m.pow2, _ZERO_BIN - k)
    nb = _NORMAL_BIN - k
    below_normal = _below(m, nb) + _at(m.total, nb) - _at(m.top10, nb)
    over = m.nonzero - _below(m, _INF_BIN - k + 1) + _at(m.top11, _INF_BIN - k)
    return _shares(zero, below_normal, over, m.nonzero, scale)


def _cast_counts(values: Any, scale: float) -> tuple[int, int, int]:
    """(zero, below normal, inf) counts of fp16(values*scale), multiplied in float32."""
    import torch

    h = (values.float() * scale).to(torch.float16)
    zero = int((h == 0).sum())
    below_normal = int((h.abs() < torch.finfo(torch.float16).smallest_normal).sum())
    return zero, below_normal, int(torch.isinf(h).sum())


def shares_at(values: Magnitudes | Any, scale: float) -> dict[str, Any]:
    """fp16 shares at loss scale S: from a Magnitudes' bins (power-of-two S) or by casting a tensor."""
    if isinstance(values, Magnitudes):
        return _binned_shares(values, scale)
    g = values.detach().reshape(-1).float()
    g = g[(g != 0) & g.isfinite()]
    return _shares(*_cast_counts(g, scale), g.numel(), scale)


@dataclass
class _Folder:
    """Accumulates Magnitudes (and cast counts at given scales) one tensor at a time."""

    kind: str
    scales: tuple[float, ...]
    values: int = 0
    tensors: int = 0
    fine: Any = None  # int64 [2^19]: counts per (fp32 exponent field, top 11 mantissa bits)
    exact: Any = None  # int64 [256]: counts per exponent field of mantissa-0 values (2^e, 0, inf)
    cast: dict[float, list[int]] = field(default_factory=dict)

    def __post_init__(self) -> None:
        self.cast = {s: [0, 0, 0] for s in self.scales}

    def add(self, grad: Any) -> None:
        """Fold one gradient tensor in."""
        import torch

        if self.fine is None:
            self.fine = torch.zeros(1 << 19, dtype=torch.int64)
            self.exact = torch.zeros(256, dtype=torch.int64)
        self.tensors += 1
        # Counted on the CPU in fp32 (grads here are fp32: this pass runs without autocast).
        flat = grad.detach().reshape(-1)
        for chunk in flat.split(CHUNK):
            g = chunk.to("cpu", torch.float32).contiguous()
            self.values += g.numel()
            # Integer ops on the bits: several times faster than frexp and boolean masks, which
            # matters for amp-mlp's 50M weight gradients.
            bits = g.view(torch.int32) & 0x7FFFFFFF  # |g|
            self.fine += torch.bincount(bits >> 12, minlength=1 << 19)
            exact = torch.bincount(bits[(bits & 0x7FFFFF) == 0] >> 23, minlength=256)
            self.exact += exact
            zeros, infs = int(exact[0]), int(exact[255])
            for s in self.scales:
                # Zeros stay 0 and infs stay inf when scaled: take them out of the cast counts.
                zero, below_normal, over = _cast_counts(g, s)
                c = self.cast[s]
                c[0] += zero - zeros
                c[1] += below_normal - zeros
                c[2] += over - infs

    def result(self) -> tuple[Magnitudes, dict[float, dict[str, Any]]]:
        """The Magnitudes and the cast shares per scale."""
        import torch

        total = torch.zeros(NBINS, dtype=torch.int64)
        pow2, top10, top11 = total.clone(), total.clone(), total.clone()
        zeros = nonfinite = 0
        if self.fine is not None:
            fine = self.fine.view(256, 2048)  # [exponent field, top 11 mantissa bits]
            # Normal numbers: exponent field e in 1..254 is binade e - 127, bin index e + 22.
            total[23:] = fine[1:255].sum(1)
            top10[23:] = fine[1:255, 2046:].sum(1)  # mantissa >= 1 + 2046/2048 = 2 - 2^-10
            top11[23:] = fine[1:255, 2047]
            pow2[23:] = self.exact[1:255]
            zeros, nonfinite = int(self.exact[0]), int(fine[255].sum())
            # fp32 subnormals (|g| < 2^-126): binade from the top mantissa bits; below 2^-137
            # they are lumped into the lowest bin. Their pow2/top flags stay 0, which is why
            # binned shares are limited to |k| <= K_MAX.
            sub = fine[0].clone()
            sub[0] -= zeros
            m11 = torch.arange(1, 2048)
            total.index_add_(0, torch.floor(torch.log2(m11.double())).long() + 12, sub[1:])
            total[0] += sub[0]
        rows = [tuple(int(v) for v in r.tolist()) for r in (total, pow2, top10, top11)]
        nonzero = self.values - zeros - nonfinite
        mags = Magnitudes(self.kind, self.values, nonzero, nonfinite, self.tensors, *rows)
        cast = {s: _shares(*c, nonzero, s) for s, c in self.cast.items()}
        return mags, cast


def magnitudes_of(*tensors: Any, kind: str = "values") -> Magnitudes:
    """Fold any tensors into a Magnitudes (what collect does to each gradient)."""
    folder = _Folder(kind, ())
    for t in tensors:
        folder.add(t)
    return folder.result()[0]


@dataclass(frozen=True)
class GradientLab:
    """One backward pass, summarized: the UI keeps this and asks for shares at any 2^k."""

    model: str
    task: str
    device: str
    params: int
    loss: float
    batch_size: int
    activation_layers: int
    magnitudes: dict[str, Magnitudes]
    cast_shares: dict[str, dict[float, dict[str, Any]]]  # exact counts made during the pass

    def shares(self, kind: str, scale: float) -> dict[str, Any]:
        """Shares for kind at scale: counted during the pass if asked for, else from the bins."""
        cast = self.cast_shares.get(kind, {})
        if scale in cast:
            return dict(cast[scale])
        return shares_at(self.magnitudes[kind], scale)

    def report(self, scale: float = 1.0) -> dict[str, Any]:
        """The JSON-ready report at loss scale `scale` (see underflow_report)."""
        out: dict[str, Any] = {
            "model": self.model,
            "task": self.task,
            "device": self.device,
            "params": self.params,
            "loss": self.loss,
            "batch_size": self.batch_size,
            "activation_layers": self.activation_layers,
            "scale": scale,
            "fp16_band": fp16_band(),
        }
        for kind in KINDS:
            m = self.magnitudes[kind]
            out[kind] = {
                "nonzero": m.nonzero,
                "values": m.values,
                "zeros": m.values - m.nonzero - m.nonfinite,
                "nonfinite": m.nonfinite,
                "tensors": m.tensors,
                "median_log2": m.median_log2(),
                "hist": m.hist(),
                **self.shares(kind, scale),
            }
        return out


def fp16_band() -> dict[str, float]:
    """log2 of fp16's smallest subnormal, smallest normal and largest value, from torch.finfo."""
    import torch

    fi = torch.finfo(torch.float16)
    return {
        "min_subnormal_log2": math.log2(fi.smallest_normal * fi.eps),
        "min_normal_log2": math.log2(fi.smallest_normal),
        "max_log2": math.log2(fi.max),
    }


def _activation_layers() -> tuple[type, ...]:
    """Layers whose output gradient counts as an activation gradient: Linear and GPT-2's Conv1D."""
    from torch import nn

    try:
        from transformers.pytorch_utils import Conv1D
    except ImportError:  # pragma: no cover - transformers always ships it today
        return (nn.Linear,)
    # Embedding outputs are left out: BERT sums three of them, so each would repeat the same
    # gradient and count it three times.
    return (nn.Linear, Conv1D)


def collect(
    cfg: RunConfig,
    scales: Iterable[float] = (),
    wait: bool = True,
    limits: Limits | None = None,
) -> GradientLab:
    """fp32 forward + backward of the first batch of cfg; fold every gradient into a GradientLab."""
    import torch

    from .engine import prepare
    from .runner import RUN_LOCK

    scales = tuple(dict.fromkeys(float(s) for s in scales))
    for s in scales:
        if not (math.isfinite(s) and s > 0):
            raise ConfigError("bad_number", field="scale", rule="a number above 0", value=s)
    # Shares the training lock: a backward pass here would skew a running comparison's timings.
    if not RUN_LOCK.acquire(blocking=wait):
        raise ConfigError("busy")
    try:
        prep = prepare(cfg, limits)
        model = prep.model
        act, wgt = _Folder("activation", scales), _Folder("weight", scales)
        kinds = _activation_layers()

        def on_output(_module: Any, _inputs: Any, output: Any) -> None:
            # The tensor hook receives dLoss/d(output) during backward; folded there and dropped.
            if isinstance(output, torch.Tensor) and output.requires_grad:
                output.register_hook(act.add)

        handles = [
            mod.register_forward_hook(on_output)
            for mod in model.modules()
            if isinstance(mod, kinds)
        ]
        try:
            batch = next(iter(prep.train_dataloader))
            model.zero_grad(set_to_none=True)
            # fp32 on purpose: the figure shows what fp16 *would* do to the true gradients.
            with torch.autocast(prep.device.type, enabled=False):
                loss = model(**batch).loss
            loss.backward()
        finally:
            for h in handles:
                h.remove()
        for p in model.parameters():
            if p.grad is not None:
                wgt.add(p.grad)
        loss_value = float(loss.detach())  # .item(): one sync, after the pass
        (am, ac), (wm, wc) = act.result(), wgt.result()
        return GradientLab(
            model=cfg.model,
            task=prep.task,
            device=str(prep.device),
            params=prep.params,
            loss=loss_value,
            batch_size=cfg.batch_size,
            activation_layers=len(handles),
            magnitudes={"activation": am, "weight": wm},
            cast_shares={"activation": ac, "weight": wc},
        )
    finally:
        RUN_LOCK.release()


def underflow_report(cfg: RunConfig, scale: float = 1.0) -> dict[str, Any]:
    """Gradient magnitudes of one real backward pass vs fp16's range, shares counted at `scale`."""
    # Counted by casting (g*S) to fp16 during the pass, so any S is exact, not only 2^k.
    return collect(cfg, scales=(scale,)).report(float(scale))
