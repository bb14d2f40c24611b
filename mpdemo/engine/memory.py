"""Memory anatomy: what one training step holds, per precision, counted from the tensors themselves
(weights, gradients, AdamW's state by `nbytes`; saved activations by SavedBytes, which a run's first
step uses too; on CUDA the allocator's peak), beside what Accelerate's `estimate-memory` rule says.
"""

from __future__ import annotations

from collections.abc import Callable, Iterable, Mapping
from dataclasses import asdict, dataclass
from typing import TYPE_CHECKING, Any

import torch

from ..messages import Note
from .models import count_params
from .precision import timed_step

if TYPE_CHECKING:
    from ..config import RunConfig

# Accelerate's own names for what its rule is given (accelerate/commands/estimate.py).
_ACCELERATE_DTYPES = {"fp32": "float32", "fp16": "float16", "bf16": "bfloat16"}
PARTS = ("weights_bytes", "grads_bytes", "optimizer_bytes", "saved_activation_bytes")
_CAST_OR_VIEW = (
    "ToCopyBackward",
    "TBackward",
    "TransposeBackward",
    "PermuteBackward",
    "ViewBackward",
    "UnsafeViewBackward",
    "ExpandBackward",
    "AliasBackward",
)


class SavedBytes:
    """Counts the activations autograd saves for backward while active (saved_tensors_hooks): each
    storage the model computed once, not the batch, the parameters or autocast's copies of them."""

    def __init__(self, model: torch.nn.Module | None = None) -> None:
        self.bytes = 0
        self._seen: set[int] = set()
        self._params = {p.data_ptr() for p in model.parameters()} if model is not None else set()
        self._ctx: Any = None

    def _pack(self, t: torch.Tensor) -> torch.Tensor:
        try:
            ptr = t.untyped_storage().data_ptr()
        except (RuntimeError, NotImplementedError):  # tensors without storage (sparse, meta)
            return t
        # Only what the model computed (it has a grad_fn): the batch and its casts are data.
        if t.grad_fn is None or ptr in self._seen or ptr in self._params or self._is_param_cast(t):
            return t
        self._seen.add(ptr)
        self.bytes += t.untyped_storage().nbytes()
        return t

    @staticmethod
    def _is_param_cast(t: torch.Tensor) -> bool:
        # A weight saved as autocast's cast and/or a view of it (Linear saves weight.t()):
        # cast/view nodes only, back to a leaf (AccumulateGrad).
        fn = t.grad_fn
        for _ in range(8):
            if fn is None:
                return False
            name = type(fn).__name__
            if name == "AccumulateGrad":
                return True
            if not name.startswith(_CAST_OR_VIEW):
                return False
            inputs = [f for f, _ in fn.next_functions if f is not None]
            if len(inputs) != 1:
                return False
            fn = inputs[0]
        return False

    def __enter__(self) -> SavedBytes:
        self._ctx = torch.autograd.graph.saved_tensors_hooks(self._pack, lambda t: t)
        self._ctx.__enter__()
        return self

    def __exit__(self, *exc: Any) -> None:
        self.close()

    def close(self) -> None:
        """Pop the hooks (idempotent): the thread's later steps run without them."""
        if self._ctx is not None:
            ctx, self._ctx = self._ctx, None
            ctx.__exit__(None, None, None)


@dataclass(frozen=True)
class Anatomy:
    """One precision's step, in bytes: each part from the tensors it is made of."""

    precision: str
    params: int
    weights_bytes: int
    grads_bytes: int
    optimizer_bytes: int  # every tensor AdamW keeps: exp_avg, exp_avg_sq and its step counters
    saved_activation_bytes: int
    peak_mem_bytes: int | None  # CUDA allocator's peak over the step; None elsewhere
    step_s: float

    @property
    def total_bytes(self) -> int:
        """Weights + gradients + optimizer state + saved activations."""
        return sum(getattr(self, k) for k in PARTS)

    def to_dict(self) -> dict[str, Any]:
        """JSON-ready form."""
        return {**asdict(self), "total_bytes": self.total_bytes}


def tensor_bytes(tensors: Iterable[torch.Tensor | None]) -> int:
    """Sum of `nbytes` over distinct tensors (None skipped): tied weights are one tensor."""
    return sum(t.nbytes for t in {id(t): t for t in tensors if t is not None}.values())


def optimizer_state_bytes(optimizer: torch.optim.Optimizer) -> int:
    """Bytes of every tensor in the optimizer's state (AdamW: the two moments and `step`)."""
    return tensor_bytes(
        v for state in optimizer.state.values() for v in state.values() if torch.is_tensor(v)
    )


def one_step(
    model: torch.nn.Module,
    optimizer: torch.optim.Optimizer,
    batch: Mapping[str, torch.Tensor],
    device: torch.device,
    precision: str,
    cfg: RunConfig,
) -> Anatomy:
    """Run one real training step of `precision` (the sweep's) and count what it held, part by part;
    a fresh model makes the peak include the optimizer state's first allocation, as a run's does."""
    step = timed_step(model, optimizer, device, precision, cfg, lambda: batch)
    if device.type == "cuda":
        torch.cuda.reset_peak_memory_stats(device)
    model.train()
    with SavedBytes(model) as saved:
        step_s = step()
    peak = int(torch.cuda.max_memory_allocated(device)) if device.type == "cuda" else None
    return Anatomy(
        precision=precision,
        params=count_params(model),
        weights_bytes=tensor_bytes(model.parameters()),
        grads_bytes=tensor_bytes(p.grad for p in model.parameters()),
        optimizer_bytes=optimizer_state_bytes(optimizer),
        saved_activation_bytes=saved.bytes,
        peak_mem_bytes=peak,
        step_s=step_s,
    )


def measure(
    build: Callable[[], tuple[torch.nn.Module, torch.optim.Optimizer]],
    batch: Mapping[str, torch.Tensor],
    device: torch.device,
    precisions: Iterable[str],
    cfg: RunConfig,
) -> dict[str, Anatomy]:
    """{precision: Anatomy}: each precision on a freshly built model and optimizer (same seed)."""
    out: dict[str, Anatomy] = {}
    for precision in precisions:
        model, optimizer = build()
        out[precision] = one_step(model, optimizer, batch, device, precision, cfg)
        del model, optimizer
        if device.type == "cuda":
            torch.cuda.empty_cache()  # the next precision's peak starts from what it allocates
    return out


def accelerate_estimate(params: int, precision: str) -> dict[str, int] | None:
    """Accelerate's own `estimate_training_usage` for AdamW on `params` fp32 parameters, "training"
    its largest part (no activations); None where the rule says nothing."""
    name = _ACCELERATE_DTYPES.get(precision)
    if name is None:
        return None
    try:
        from accelerate.commands.estimate import estimate_training_usage
    except ImportError:
        return None
    parts = estimate_training_usage(params * 4, name)
    if min(parts.values()) < 0:
        return None
    return {**{k: int(v) for k, v in parts.items()}, "training": int(max(parts.values()))}


def anatomy_notes(anatomy: Mapping[str, Anatomy]) -> list[Note]:
    """The sentences under the bars: each precision's parts against fp32's, from the bytes."""
    base = anatomy.get("fp32")
    out: list[Note] = []
    for precision, a in anatomy.items():
        est = accelerate_estimate(a.params, precision)
        args: dict[str, Any] = {
            "precision": precision,
            "mb": a.total_bytes / 2**20,
            "fixed_mb": (a.weights_bytes + a.grads_bytes + a.optimizer_bytes) / 2**20,
            "per_param": (a.weights_bytes + a.grads_bytes + a.optimizer_bytes) / max(1, a.params),
            "act_mb": a.saved_activation_bytes / 2**20,
            "act_pct": 100 * a.saved_activation_bytes / max(1, a.total_bytes),
            "est_mb": (est["training"] / 2**20) if est else 0.0,
        }
        if base is not None and precision != "fp32" and base.saved_activation_bytes:
            args["act_ratio"] = a.saved_activation_bytes / base.saved_activation_bytes
            out.append(Note("anatomy_vs_fp32", args))
        else:
            out.append(Note("anatomy_one", args))
    return out
