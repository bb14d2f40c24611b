"""What a run measures about itself beyond its clock: the bytes autograd saves for backward."""

from __future__ import annotations

from typing import Any

import torch

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
    """Counts the bytes autograd saves for backward while active (torch saved_tensors_hooks): each
    storage the model computed once, leaving out the batch, the parameters and autocast's copies
    of them. What is left is the activations (bf16/fp16 wherever autocast runs)."""

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
