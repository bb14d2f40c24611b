"""Underflow watched live (`--watch-grads N`): every N steps, each layer's gradient magnitudes, as
the scaler sees them (scaled), binned on log2 against a format's windows; the copy's seconds
(`spent`) are taken out of the step's time."""

from __future__ import annotations

import functools
import time
from typing import Any

import torch

from ..teach.formats import LOW_PRECISION, layout
from .precision import synchronize

LO, HI = -40, 20  # log2 bin edges shown: 2^-40 .. 2^20, one bin per binade
WATCH_FORMATS = LOW_PRECISION  # every format a run can be watched against (a record's)


def histogram(g: torch.Tensor, fmt: str) -> dict[str, Any]:
    """|g| binned on log2 edges LO..HI (counts[0] below 2^LO with the zeros, the last 2^HI and up
    with inf and NaN), with the shares a cast to fmt flushes, keeps subnormal, overflows."""
    lay = layout(fmt)
    a = g.detach().abs().to(torch.float32).flatten()
    # On the gradient's device: CPU boundaries failed every watched step of a CUDA model.
    edges = torch.arange(LO, HI + 1, dtype=torch.float32, device=a.device)
    finite = torch.isfinite(a)
    # bucketize on exact powers of two: |g| = 2^LO lands in the first bin above LO.
    idx = torch.bucketize(a, torch.exp2(edges), right=True)
    idx = torch.where(finite, idx, torch.full_like(idx, len(edges)))
    counts = torch.bincount(idx, minlength=len(edges) + 1)
    nonzero = a != 0
    nz = int(nonzero.sum())
    # The rounding ties: half the smallest subnormal goes to 0 (even); the top tie depends on
    # max's mantissa (formats.Layout's note).
    flushed = nonzero & (a <= lay.min_subnormal / 2)
    over = ~finite | (a > lay.overflow_threshold)
    if lay.ieee_inf:
        over |= a == lay.overflow_threshold
    sub = nonzero & ~flushed & (a < lay.min_normal)
    return {
        "bin_edges_log2": edges.to(torch.int64).tolist(),
        "counts": counts.tolist(),
        "elements": a.numel(),
        # Zeros hide in counts[0]: the non-zero picture and summed shares need them apart.
        "nonzero": nz,
        "flushed": int(flushed.sum()) / nz if nz else 0.0,
        "subnormal": int(sub.sum()) / nz if nz else 0.0,
        "overflow": int(over.sum()) / a.numel() if a.numel() else 0.0,
    }


class GradWatch:
    """Hooks on every parameter; on an armed step, each layer's gradient histogram."""

    def __init__(self, model: torch.nn.Module, fmt: str, every: int) -> None:
        self.fmt = fmt
        self.every = every
        self.spent = 0.0  # seconds the copy took in the current step (the Recorder subtracts)
        self.armed = False
        self._layers: dict[str, list[torch.Tensor]] = {}
        named = [(n, p) for n, p in model.named_parameters() if p.requires_grad]
        self._params = [(n.rsplit(".", 1)[0], p) for n, p in named]  # 'l.dense.weight' -> 'l.dense'
        self._handles: list[Any] = []
        # The parameters whose gradient backward completed, in that order (the layers' order in
        # the histograms, as when each hook copied its own gradient).
        self._done: list[tuple[str, torch.Tensor]] = []

    def _note(self, layer: str, p: torch.Tensor) -> None:
        """A parameter's gradient is complete: only note it. One callback copies them all after
        backward, so backward's kernels run back to back as in an unwatched step."""
        if not self.armed or p.grad is None:
            return
        self._done.append((layer, p))
        if len(self._done) == 1:
            torch.autograd.Variable._execution_engine.queue_callback(self._copy)

    def _copy(self) -> None:
        """At the end of backward, before the optimizer step may unscale_ (or clip) in place."""
        device = self._done[0][1].device
        synchronize(device)  # backward's own kernels have finished: they are the training's time
        t0 = time.perf_counter()
        for layer, p in self._done:
            if p.grad is not None:
                # A copy in fp32; the histogram is computed once the step's clock has stopped.
                g = p.grad.detach().flatten().to(torch.float32, copy=True)
                self._layers.setdefault(layer, []).append(g)
        self._done.clear()
        synchronize(device)  # and the copies' have too, before their seconds are read
        self.spent += time.perf_counter() - t0

    def arm(self, step: int) -> None:
        """Before step `step` (1-based) begins: watch it if it is every N-th."""
        self.close()  # a step watched before, stopped before its collect()
        self.armed = step % self.every == 0
        self._layers.clear()
        self._done.clear()
        self.spent = 0.0
        if self.armed:  # only for the watched step: on every step they cost 6-8 % (tiny-bert)
            self._handles = [
                p.register_post_accumulate_grad_hook(functools.partial(self._note, layer))
                for layer, p in self._params
            ]

    def collect(self, step: int, scale: float | None) -> dict[str, Any] | None:
        """The armed step's histograms (outside the timed step), or None when not watched."""
        self.close()
        self.armed = False
        if not self._layers:  # only an armed step's hooks fill it
            return None
        layers = [
            {"name": name, **histogram(torch.cat(parts), self.fmt)}
            for name, parts in self._layers.items()
        ]
        self._layers.clear()
        return {"step": step, "scale": scale, "format": self.fmt, "layers": layers}

    def close(self) -> None:
        """Remove the hooks."""
        for h in self._handles:
            h.remove()
        self._handles.clear()
