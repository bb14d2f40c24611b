"""Underflow lab: Micikevicius et al.'s (ICLR 2018) figure on the selected model, from one fp32
backward pass folded into counts (mpdemo.teach.magnitudes). torch is imported inside functions.
"""

from __future__ import annotations

import math
from collections.abc import Iterable
from dataclasses import dataclass, field, fields
from typing import TYPE_CHECKING

from .. import engine
from ..config import Limits, RunConfig, check_choice
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
    best_scale,
    cast_counts,
    format_band,
    shares_at,
    shares_of_counts,
    thresholds,
)

if TYPE_CHECKING:
    import torch


def _tables(bits: torch.Tensor) -> torch.Tensor:
    """[2, 2^19] counts per top 19 bits of |x|'s pattern (exponent field, top 11 mantissa bits):
    of every value, and of those whose mantissa is exactly those 11 bits."""
    import torch

    top = bits >> 12
    exact = top[(bits & 0xFFF) == 0]
    return torch.stack([torch.bincount(t, minlength=1 << 19) for t in (top, exact)])


@dataclass
class _Folder:
    """Accumulates Magnitudes (and cast counts at given scales and formats) one tensor at a time."""

    kind: str
    scales: tuple[float, ...]
    fmts: tuple[str, ...] = ("fp16",)
    values: int = 0
    tensors: int = 0
    amax: float = 0.0
    # _tables of the values' bits, and of the rare fp32 subnormals' x 2^64 (exact and normal).
    normal: torch.Tensor | int = 0
    subnormal: torch.Tensor | int = 0
    cast: dict[tuple[str, float], list[int]] = field(default_factory=dict)

    def __post_init__(self) -> None:
        self.cast = {(f, s): [0, 0, 0] for f in self.fmts for s in self.scales}

    def add(self, grad: torch.Tensor) -> None:
        """Fold one gradient tensor in."""
        import torch

        self.tensors += 1
        # Counted on the CPU in fp32 (grads here are fp32: this pass runs without autocast).
        for chunk in grad.detach().reshape(-1).split(CHUNK):
            g = chunk.to("cpu", torch.float32).contiguous()
            self.values += g.numel()
            # Integer ops on the bits: several times faster than frexp (amp-mlp: 50M gradients).
            bits = g.view(torch.int32) & 0x7FFFFFFF  # |g|
            tables = _tables(bits)
            self.normal = self.normal + tables
            zeros, infs = int(tables[1, 0]), int(tables[1, 255 << 11])
            finite = bits < 0x7F800000
            if bool(finite.any()):
                self.amax = max(self.amax, float(g.abs()[finite].max()))
            if int(tables[0, :MANT_STEPS].sum()) > zeros:
                sub = g[(bits > 0) & (bits < 0x800000)].abs() * 2.0**64
                self.subnormal = self.subnormal + _tables(sub.view(torch.int32))
            for (fmt, s), c in self.cast.items():
                # Zeros stay 0 and infs stay inf when scaled: take them out of the cast counts.
                zero, below_normal, over = cast_counts(g, s, fmt)
                c[0] += zero - zeros
                c[1] += below_normal - zeros
                c[2] += over - infs

    def result(self) -> tuple[Magnitudes, dict[str, dict[float, dict[str, object]]]]:
        """The Magnitudes and the cast shares per format and scale."""
        import torch

        js = thresholds()
        total = torch.zeros(NBINS, dtype=torch.int64)
        ge = {j: total.clone() for j in js}
        eq = {j: total.clone() for j in js}
        zeros = nonfinite = 0
        if isinstance(self.normal, torch.Tensor):
            zeros, nonfinite = int(self.normal[1, 0]), int(self.normal[0, 255 << 11 :].sum())
        # Exponent field e in 1..254 is binade e - 127, bin index e + 22; the subnormals, folded
        # x 2^64, hold binades -149..-127 at fields 42..64, bin index 0..22.
        parts = (
            (self.normal, slice(1, 255), slice(23, None)),
            (self.subnormal, slice(42, 65), slice(0, 23)),
        )
        for tables, rows, bins in parts:
            if isinstance(tables, int):
                continue
            fine, exact = tables.view(2, 256, MANT_STEPS)[:, rows]
            total[bins] = fine.sum(1)
            for j in js:
                ge[j][bins] = fine[:, j:].sum(1)
                eq[j][bins] = exact[:, j]

        nonzero = self.values - zeros - nonfinite
        mags = Magnitudes(
            self.kind,
            self.values,
            nonzero,
            nonfinite,
            self.tensors,
            tuple(total.tolist()),
            {j: tuple(v.tolist()) for j, v in ge.items()},
            {j: tuple(v.tolist()) for j, v in eq.items()},
            self.amax,
        )
        cast: dict[str, dict[float, dict[str, object]]] = {}
        for (fmt, s), c in self.cast.items():
            cast.setdefault(fmt, {})[s] = shares_of_counts(*c, nonzero, s)
        return mags, cast


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
        """The JSON-ready report at scale `scale` in format `fmt`."""
        rng = layout(fmt).facts()
        out: dict[str, object] = {
            f.name: getattr(self, f.name)
            for f in fields(self)
            if f.name not in ("magnitudes", "cast_shares")
        }
        out |= {
            "scale": scale,
            # The format's range next to the shares it explains.
            **{k: rng[k] for k in ("format", "dtype", "max", "min_normal", "min_subnormal")},
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


def collect(
    cfg: RunConfig,
    scales: Iterable[float] = (),
    wait: bool = True,
    limits: Limits | None = None,
    fmts: Iterable[str] = ("fp16",),
) -> GradientLab:
    """fp32 forward + backward of the first batch of cfg, every gradient folded into a GradientLab;
    `scales` x `fmts` are also counted by casting during the pass (any S, not only 2^k)."""
    import torch
    from transformers.pytorch_utils import Conv1D

    scales = tuple(dict.fromkeys(float(s) for s in scales))
    fmts = tuple(dict.fromkeys(fmts))
    for s in scales:
        if not (math.isfinite(s) and s > 0):
            raise ConfigError("bad_number", field="scale", rule="a number above 0", value=s)
    for f in fmts:
        check_choice("format", f, LOW_PRECISION)
    # Shares the training lock: a backward pass here would skew a running comparison's timings.
    if not RUN_LOCK.acquire(blocking=wait):
        raise ConfigError("busy")
    try:
        prep = engine.prepare(cfg, limits)
        model = prep.model
        act, wgt = _Folder("activation", scales, fmts), _Folder("weight", scales, fmts)
        # Linear and GPT-2's Conv1D outputs, not Embedding's: BERT sums three embeddings, so each
        # would count the same gradient again.
        kinds = (torch.nn.Linear, Conv1D)

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
