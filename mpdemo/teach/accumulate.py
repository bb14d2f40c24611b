"""fp32 accumulation (CS336's exercise): a 16-bit running sum stalls once each addend is under
half an ulp of it, an fp32 sum of the same 16-bit values does not. torch inside functions.
"""

from __future__ import annotations

import decimal
import itertools
from dataclasses import dataclass
from typing import TYPE_CHECKING

from .. import engine
from .formats import parse, torch_dtype

if TYPE_CHECKING:
    from ..config import RunConfig

# (accumulator, what each added value is stored in): fp32 of fp16 values is tensor cores' trick.
ACCUMULATORS: tuple[tuple[str, str], ...] = (
    ("fp16", "fp16"),
    ("bf16", "bf16"),
    ("fp32", "fp16"),
    ("fp32", "fp32"),
)
MAX_N = 20_000  # a public page asks for at most this many additions (one torch op each)
MAX_POINTS = 400  # points of the running sum kept for a plot


@dataclass(frozen=True)
class SumResult:
    """One accumulator's running sum of n equal values."""

    accumulator: str
    values_in: str
    addend: float  # the value as stored in `values_in`
    final: float
    exact: float  # n times the value typed, in exact decimal arithmetic
    abs_error: float
    rel_error: float | None
    stalled_at: int | None  # the first addition after which the sum never grew (None: it grew)
    stalled_sum: float | None  # the sum it stuck at
    steps: list[int]  # addition counts sampled for a plot
    sums: list[float]  # the running sum at each of `steps`


def running_sum(value: float | str, n: int, accumulator: str, values_in: str) -> SumResult:
    """Add `value` (stored in `values_in`) n times into an `accumulator` sum, one add at a time."""
    import torch

    if not isinstance(n, int) or isinstance(n, bool) or not 1 <= n <= MAX_N:
        raise ValueError(f"n must be a whole number from 1 to {MAX_N}")
    typed, exact_value = parse(str(value).strip())
    if exact_value is None:
        raise ValueError("the value must be a finite number such as 0.01 or 1e-3")
    acc_t, in_t = torch_dtype(accumulator), torch_dtype(values_in)
    addend = torch.tensor(typed, dtype=torch.float32).to(in_t)
    x = addend.to(acc_t)  # exact: every fp16 value is an fp32 value; bf16 into bf16 is itself
    total = torch.zeros((), dtype=acc_t)
    every = max(1, n // MAX_POINTS)
    steps, sums = [0], [0.0]
    last_growth = 0
    prev = 0.0
    # One add at a time, as a loop does: torch.cumsum may accumulate in a wider type.
    for i in range(1, n + 1):
        total = total + x
        cur = float(total)
        if cur != prev:
            last_growth = i
            prev = cur
        if i % every == 0 or i == n:
            steps.append(i)
            sums.append(cur)
    final = float(total)
    with decimal.localcontext(prec=50):
        exact = exact_value * n
        err = abs(decimal.Decimal(final) - exact)
        rel = float(err / abs(exact)) if exact != 0 else None
    stalled = last_growth < n and final != 0
    return SumResult(
        accumulator=accumulator,
        values_in=values_in,
        addend=float(addend),
        final=final,
        exact=float(exact),
        abs_error=float(err),
        rel_error=rel,
        stalled_at=last_growth + 1 if stalled else None,
        stalled_sum=float(prev) if stalled else None,
        steps=steps,
        sums=sums,
    )


def compare_sums(value: float | str = "0.01", n: int = 1000) -> list[SumResult]:
    """The running sum of `value` n times in every accumulator of ACCUMULATORS."""
    return [running_sum(value, n, acc, vin) for acc, vin in ACCUMULATORS]


def micro_batch_accumulation(grads: list[dict[str, object]]) -> list[dict[str, object]]:
    """Relative L2 error of summing micro-batch gradients in each buffer dtype, and of one store."""
    import torch

    names = list(grads[0])
    ref = {k: sum(g[k].double() for g in grads) for k in names}
    out = []
    for buf in ("fp16", "bf16", "fp32"):
        dt = torch_dtype(buf)
        acc = {k: torch.zeros_like(grads[0][k], dtype=dt) for k in names}
        for g in grads:
            for k in names:
                acc[k] += g[k].to(dt)  # the buffer's own dtype: each add rounds to it
        num = den = once = 0.0
        for k in names:
            r = ref[k]
            num += float(((acc[k].double() - r) ** 2).sum())
            once += float(((r.to(dt).double() - r) ** 2).sum())
            den += float((r**2).sum())
        out.append(
            {
                "buffer": buf,
                "micro_batches": len(grads),
                "rel_error": (num / den) ** 0.5 if den else 0.0,
                "storage_rel_error": (once / den) ** 0.5 if den else 0.0,
                "elements": sum(r.numel() for r in ref.values()),
            }
        )
    return out


def model_micro_batch_grads(cfg: RunConfig, micro_batches: int = 8) -> list[dict[str, object]]:
    """The fp32 gradients of each of the first `micro_batches` batches of cfg's model and data."""
    prep = engine.prepare(cfg.replace(steps=micro_batches))
    model = prep.model
    model.train()
    out = []
    for batch in itertools.islice(prep.train_dataloader, micro_batches):
        model.zero_grad(set_to_none=True)
        loss = model(**batch).loss / micro_batches  # the mean over micro-batches, as a loop does
        loss.backward()
        out.append(
            {n: p.grad.detach().clone() for n, p in model.named_parameters() if p.grad is not None}
        )
    model.zero_grad(set_to_none=True)
    return out
