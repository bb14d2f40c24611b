"""Underflow lab: where a real backward pass puts gradient magnitudes against a format's range.

Rebuilds the figure of Micikevicius et al. (ICLR 2018) on the selected model: one fp32
forward/backward on the first batch, every non-zero activation and weight gradient folded into
counts (mpdemo.teach.magnitudes, 8 MB of tables per kind whatever the model) from which the
shares a format (fp16, bf16, E4M3, E5M2) flushes, keeps as subnormals or overflows come at any
scale S = 2^k: the loss scale, or fp8's per-tensor scale. torch is imported inside functions.
"""

from __future__ import annotations

import math
from collections.abc import Iterable
from dataclasses import dataclass, field
from typing import TYPE_CHECKING

from .. import engine
from ..config import Limits, RunConfig
from ..messages import ConfigError
from ..runs.runner import RUN_LOCK
from .formats import LOW_PRECISION, cast_overflow, layout
from .magnitudes import (
    CHUNK,
    KINDS,
    MANT_STEPS,
    NBINS,
    Magnitudes,
    amax_scale,
    band,
    best_scale,
    cast_counts,
    format_band,
    shares_at,
    shares_of_counts,
    thresholds,
)

if TYPE_CHECKING:
    import torch


@dataclass
class _Folder:
    """Accumulates Magnitudes (and cast counts at given scales and formats) one tensor at a time."""

    kind: str
    scales: tuple[float, ...]
    fmts: tuple[str, ...] = ("fp16",)
    values: int = 0
    tensors: int = 0
    amax: float = 0.0
    fine: torch.Tensor | None = (
        None  # int64 [2^19]: counts per (fp32 exponent field, top 11 mantissa bits)
    )
    exact: torch.Tensor | None = (
        None  # int64 [2^19]: ... of values whose mantissa is exactly those 11 bits
    )
    sub_fine: torch.Tensor | None = (
        None  # the same two tables for fp32 subnormals, folded after x 2^64
    )
    sub_exact: torch.Tensor | None = None
    cast: dict[tuple[str, float], list[int]] = field(default_factory=dict)

    def __post_init__(self) -> None:
        self.cast = {(f, s): [0, 0, 0] for f in self.fmts for s in self.scales}

    def add(self, grad: torch.Tensor) -> None:
        """Fold one gradient tensor in."""
        import torch

        if self.fine is None:
            self.fine = torch.zeros(1 << 19, dtype=torch.int64)
            self.exact = torch.zeros(1 << 19, dtype=torch.int64)
        self.tensors += 1
        # Counted on the CPU in fp32 (grads here are fp32: this pass runs without autocast).
        flat = grad.detach().reshape(-1)
        for chunk in flat.split(CHUNK):
            g = chunk.to("cpu", torch.float32).contiguous()
            self.values += g.numel()
            # Integer ops on the bits: several times faster than frexp and boolean masks, which
            # matters for amp-mlp's 50M weight gradients.
            bits = g.view(torch.int32) & 0x7FFFFFFF  # |g|
            top = bits >> 12
            counts = torch.bincount(top, minlength=1 << 19)
            exact = torch.bincount(top[(bits & 0xFFF) == 0], minlength=1 << 19)
            self.fine += counts
            self.exact += exact
            zeros, infs = int(exact[0]), int(exact[255 << 11])
            finite = bits < 0x7F800000
            if bool(finite.any()):
                self.amax = max(self.amax, float(g.abs()[finite].max()))
            if int(counts[:MANT_STEPS].sum()) > zeros:
                self._add_subnormals(g[(bits > 0) & (bits < 0x800000)])
            for (fmt, s), c in self.cast.items():
                # Zeros stay 0 and infs stay inf when scaled: take them out of the cast counts.
                zero, below_normal, over = cast_counts(g, s, fmt)
                c[0] += zero - zeros
                c[1] += below_normal - zeros
                c[2] += over - infs

    def _add_subnormals(self, sub: torch.Tensor) -> None:
        """fp32 subnormals (rare): x 2^64 is exact and normal, so their mantissas are kept too."""
        import torch

        if self.sub_fine is None:
            self.sub_fine = torch.zeros(1 << 19, dtype=torch.int64)
            self.sub_exact = torch.zeros(1 << 19, dtype=torch.int64)
        bits = (sub.abs() * 2.0**64).view(torch.int32)
        top = bits >> 12
        self.sub_fine += torch.bincount(top, minlength=1 << 19)
        self.sub_exact += torch.bincount(top[(bits & 0xFFF) == 0], minlength=1 << 19)

    def result(self) -> tuple[Magnitudes, dict[str, dict[float, dict[str, object]]]]:
        """The Magnitudes and the cast shares per format and scale."""
        import torch

        js = thresholds()
        total = torch.zeros(NBINS, dtype=torch.int64)
        ge = {j: total.clone() for j in js}
        eq = {j: total.clone() for j in js}
        zeros = nonfinite = 0
        if self.fine is not None:
            fine = self.fine.view(256, MANT_STEPS)  # [exponent field, top 11 mantissa bits]
            exact = self.exact.view(256, MANT_STEPS)
            # Normal numbers: exponent field e in 1..254 is binade e - 127, bin index e + 22.
            total[23:] = fine[1:255].sum(1)
            for j in js:
                ge[j][23:] = fine[1:255, j:].sum(1)
                eq[j][23:] = exact[1:255, j]
            zeros, nonfinite = int(exact[0, 0]), int(fine[255].sum())
        if self.sub_fine is not None:
            # Folded x 2^64: binades -149..-127 sit at exponent fields 42..64, bin index 0..22.
            fine = self.sub_fine.view(256, MANT_STEPS)[42:65]
            exact = self.sub_exact.view(256, MANT_STEPS)[42:65]
            total[:23] = fine.sum(1)
            for j in js:
                ge[j][:23] = fine[:, j:].sum(1)
                eq[j][:23] = exact[:, j]

        def ints(t: torch.Tensor) -> tuple[int, ...]:
            return tuple(int(v) for v in t.tolist())

        nonzero = self.values - zeros - nonfinite
        mags = Magnitudes(
            self.kind,
            self.values,
            nonzero,
            nonfinite,
            self.tensors,
            ints(total),
            {j: ints(v) for j, v in ge.items()},
            {j: ints(v) for j, v in eq.items()},
            self.amax,
        )
        cast: dict[str, dict[float, dict[str, object]]] = {}
        for (fmt, s), c in self.cast.items():
            cast.setdefault(fmt, {})[s] = shares_of_counts(*c, nonzero, s)
        return mags, cast


def magnitudes_of(*tensors: torch.Tensor, kind: str = "values") -> Magnitudes:
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
    # kind -> format -> scale -> shares: exact counts made by casting during the pass
    cast_shares: dict[str, dict[str, dict[float, dict[str, object]]]]

    def shares(self, kind: str, scale: float, fmt: str = "fp16") -> dict[str, object]:
        """Shares for kind at scale: counted during the pass if asked for, else from the bins."""
        cast = self.cast_shares.get(kind, {}).get(fmt, {})
        if scale in cast:
            return dict(cast[scale])
        return shares_at(self.magnitudes[kind], scale, fmt)

    def report(self, scale: float = 1.0, fmt: str = "fp16") -> dict[str, object]:
        """The JSON-ready report at scale `scale` in format `fmt` ."""
        rng = band(fmt).to_dict()
        out: dict[str, object] = {
            "model": self.model,
            "task": self.task,
            "device": self.device,
            "params": self.params,
            "loss": self.loss,
            "batch_size": self.batch_size,
            "activation_layers": self.activation_layers,
            "scale": scale,
            "format": fmt,
            "dtype": f"torch.{layout(fmt).dtype}",
            # The format's range, from torch.finfo, next to the shares it explains.
            "max": rng["max"],
            "min_normal": rng["min_normal"],
            "min_subnormal": rng["min_subnormal"],
            "cast_overflow": cast_overflow(fmt),  # what torch's cast does past max
            "band": rng,
            "fp16_band": format_band("fp16"),
        }
        for kind in KINDS:
            m = self.magnitudes[kind]
            out[kind] = {
                "nonzero": m.nonzero,
                "values": m.values,
                "zeros": m.values - m.nonzero - m.nonfinite,
                "nonfinite": m.nonfinite,
                "tensors": m.tensors,
                "amax": m.amax,
                "median_log2": m.median_log2(),
                "hist": m.hist(),
                **self.shares(kind, scale, fmt),
                "best_scale": best_scale(m, fmt) if m.nonzero else None,
                "amax_scale": amax_scale(m, fmt),
            }
        return out


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
    fmts: Iterable[str] = ("fp16",),
) -> GradientLab:
    """fp32 forward + backward of the first batch of cfg; fold every gradient into a GradientLab.

    `scales` x `fmts` are also counted by casting during the pass (any S, not only 2^k).
    """
    import torch

    scales = tuple(dict.fromkeys(float(s) for s in scales))
    fmts = tuple(dict.fromkeys(fmts))
    for s in scales:
        if not (math.isfinite(s) and s > 0):
            raise ConfigError("bad_number", field="scale", rule="a number above 0", value=s)
    for f in fmts:
        if f not in LOW_PRECISION:
            allowed = ", ".join(LOW_PRECISION)
            raise ConfigError("unknown_choice", field="format", allowed=allowed, value=f)
    # Shares the training lock: a backward pass here would skew a running comparison's timings.
    if not RUN_LOCK.acquire(blocking=wait):
        raise ConfigError("busy")
    try:
        prep = engine.prepare(cfg, limits)
        model = prep.model
        act, wgt = _Folder("activation", scales, fmts), _Folder("weight", scales, fmts)
        kinds = _activation_layers()

        def on_output(
            _module: torch.nn.Module, _inputs: tuple[torch.Tensor, ...], output: torch.Tensor
        ) -> None:
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
