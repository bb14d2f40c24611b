"""Underflow watched live: each layer's gradient magnitudes, as the loss scaler sees them, binned
on log2 against a format's windows every N steps of a run (`--watch-grads N`).

A hook on every parameter (`register_post_accumulate_grad_hook`) fires inside backward, once
the parameter's gradient is complete; the first one queues a callback on autograd's engine
(`queue_callback`, as DDP's reducer does) that copies every gradient at once when backward ends.
With a GradScaler those gradients are still multiplied by the step's loss scale (unscale_ comes
later, in scaler.step), so the values binned are the ones the scaler guards; without one the
scale is 1. The hooks are there only for a watched step, and the Recorder takes the copy's
seconds out of that step's time (`spent`), so the step times stay the training's own. Works the
same for the three backends: the hooks are on the tensors, the callback on backward itself.
"""

from __future__ import annotations

import time
from typing import Any

import torch

from ..teach.formats import LOW_PRECISION, layout
from ..teach.rounding import log2_windows
from .precision import synchronize

LO, HI = -40, 20  # log2 bin edges shown: 2^-40 .. 2^20, one bin per binade
WATCH_FORMATS = LOW_PRECISION  # every format a run can be watched against (a record's)


def windows() -> dict[str, dict[str, float]]:
    """log2 of each watched format's edges: zero below, subnormal below, overflow above."""
    return log2_windows(WATCH_FORMATS)


def histogram(g: torch.Tensor, fmt: str) -> dict[str, Any]:
    """|g| binned on log2 edges LO..HI, with the shares fmt flushes, keeps subnormal, overflows.

    counts has len(edges) + 1 entries: counts[0] is below 2^LO (exact zeros included),
    counts[i] is [2^edges[i-1], 2^edges[i]), the last is 2^HI and above (inf and NaN included),
    so the counts sum to g's elements. The shares are of the non-zero elements, decided by
    rounding exactly as a cast to fmt does (round to nearest even).
    """
    lay = layout(fmt)
    a = g.detach().abs().to(torch.float32).flatten()
    # On the gradient's device: boundaries on the CPU with a model on CUDA made every watched
    # step fail there ("Expected all tensors to be on the same device", H200, 2026-12-04).
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
        # The exact zeros hide in counts[0] (below 2^LO): a picture of the non-zero values, and
        # shares summed over layers, need them apart (an embedding's unused rows are zeros).
        "nonzero": nz,
        "flushed": int(flushed.sum()) / nz if nz else 0.0,
        "subnormal": int(sub.sum()) / nz if nz else 0.0,
        "overflow": int(over.sum()) / a.numel() if a.numel() else 0.0,
    }


def _layer_name(param_name: str) -> str:
    """A module's name from its parameter's: 'encoder.0.dense.weight' -> 'encoder.0.dense'."""
    return param_name.rsplit(".", 1)[0] if "." in param_name else param_name


class GradWatch:
    """Hooks on every parameter; on an armed step, each layer's gradient histogram."""

    def __init__(self, model: torch.nn.Module, fmt: str, every: int) -> None:
        self.fmt = fmt
        self.every = every
        self.spent = 0.0  # seconds the copy took in the current step (the Recorder subtracts)
        self.armed = False
        self._layers: dict[str, list[torch.Tensor]] = {}
        self._params = [(_layer_name(n), p) for n, p in model.named_parameters() if p.requires_grad]
        self._handles: list[Any] = []
        # The parameters whose gradient backward completed, in that order (the layers' order in
        # the histograms, as when each hook copied its own gradient).
        self._done: list[tuple[str, torch.Tensor]] = []

    def _hook_all(self) -> None:
        # Only for the watched step: hooks on every parameter on every step cost the unwatched
        # steps ~100 Python calls inside backward (bench/watch_grads.py: 6-8 % on tiny-bert).
        self._handles = [
            p.register_post_accumulate_grad_hook(self._hook(layer)) for layer, p in self._params
        ]

    def _hook(self, layer: str) -> Any:
        def hook(p: torch.Tensor) -> None:
            if not self.armed or p.grad is None:
                return
            # Only note the parameter: one callback copies them all once backward has finished,
            # so backward's kernels run back to back as in an unwatched step (a copy here, between
            # two of them, once measured the watched step ~8 % over its `spent`; later quiet runs
            # of bench/watch_grads.py put both ways within noise of the plain run). Chosen over
            # leaving the watched steps out of the step-time statistics: every step stays in the
            # median and in the verdict's paired rounds, and nothing after the Recorder changes.
            self._done.append((layer, p))
            if len(self._done) == 1:
                torch.autograd.Variable._execution_engine.queue_callback(self._copy)

        return hook

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
        if self.armed:
            self._hook_all()

    def collect(self, step: int, scale: float | None) -> dict[str, Any] | None:
        """The armed step's histograms (outside the timed step), or None when not watched."""
        self.close()
        if not self.armed or not self._layers:
            self.armed = False
            return None
        layers = []
        for name, parts in self._layers.items():
            g = torch.cat(parts) if len(parts) > 1 else parts[0]
            layers.append({"name": name, **histogram(g, self.fmt)})
        self._layers.clear()
        self.armed = False
        return {"step": step, "scale": scale, "format": self.fmt, "layers": layers}

    def close(self) -> None:
        """Remove the hooks."""
        for h in self._handles:
            h.remove()
        self._handles.clear()
