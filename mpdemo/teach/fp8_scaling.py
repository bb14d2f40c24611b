"""fp8's scaling recipes (tensorwise, rowwise, OCP MX blocks, delayed amax history), emulated
exactly on any machine: what each flushes to zero or saturates. torch inside functions.
"""

from __future__ import annotations

import itertools
import math
from dataclasses import asdict, dataclass
from typing import TYPE_CHECKING

from .. import engine
from .formats import FP8_FORMATS, layout
from .rounding import round_nearest

if TYPE_CHECKING:
    import torch

    from ..config import RunConfig

RECIPES = ("tensorwise", "rowwise", "mx", "delayed")
MX_BLOCK = 32
E8M0_MIN, E8M0_MAX = -127, 127
AMAX_EPS = 1e-12  # torchao's floor under an amax, so max / amax stays finite
HISTORY = 16  # Transformer Engine's default amax_history_len is 1024; a short run has fewer steps


@dataclass(frozen=True)
class RecipeResult:
    """One recipe on one tensor in one format."""

    tensor: str
    fmt: str
    recipe: str
    elements: int
    nonzero: int
    flushed: float  # share of the non-zero elements that became 0
    saturated: float  # share of the elements clamped to +-max
    rel_error: float  # ||dequantized - x|| / ||x||
    scales: int  # how many scales the tensor needed


def quantize(x: torch.Tensor, fmt: str, scale: torch.Tensor) -> tuple[torch.Tensor, torch.Tensor]:
    """(x * scale cast to fmt saturating, as float64; the mask of clamped elements)."""
    import torch

    lay = layout(fmt)
    scaled = x.to(torch.float32) * scale.to(torch.float32)  # the scale multiplies in fp32
    # Saturated: what a plain cast would have rounded past max (x * max/amax may land a hair
    # above max in fp32 and still round to max: that is not saturation).
    clamped = round_nearest(scaled, fmt).abs() > lay.max
    return round_nearest(scaled, fmt, saturate=True), clamped


def _scales(x: torch.Tensor, fmt: str, recipe: str, history: list[float] | None) -> torch.Tensor:
    """The scale (broadcastable to x) a recipe gives this tensor."""
    import torch

    fmax = layout(fmt).max
    if recipe == "tensorwise":
        return fmax / x.abs().amax().float().clamp(min=AMAX_EPS)
    if recipe == "rowwise":
        return fmax / x.abs().amax(dim=-1, keepdim=True).float().clamp(min=AMAX_EPS)
    if recipe == "delayed":
        amax = max(history) if history else float(x.abs().amax())  # first step: current
        return torch.tensor(fmax / max(amax, AMAX_EPS), dtype=torch.float32)
    raise ValueError(f"unknown recipe {recipe!r}")


def mx_quantize(x: torch.Tensor, fmt: str) -> tuple[torch.Tensor, torch.Tensor, int]:
    """MX block scaling: (dequantized x, clamped mask, number of blocks)."""
    import torch

    flat = x.reshape(-1, x.shape[-1]).to(torch.float32)
    rows, cols = flat.shape
    pad = (-cols) % MX_BLOCK
    padded = torch.nn.functional.pad(flat, (0, pad))
    blocks = padded.reshape(rows, -1, MX_BLOCK)
    amax = blocks.abs().amax(dim=-1, keepdim=True)
    _, e = torch.frexp(amax)  # floor(log2 amax) = e - 1 for amax > 0
    emax = math.frexp(layout(fmt).max)[1] - 1  # the top binade's exponent: 8 for E4M3
    shared = torch.where(amax > 0, e - 1 - emax, torch.zeros_like(e))
    shared = shared.clamp(E8M0_MIN, E8M0_MAX)  # E8M0 holds 2^-127 .. 2^127
    scale = torch.pow(torch.tensor(2.0, dtype=torch.float64), -shared.to(torch.float64))
    q, clamped = quantize(blocks, fmt, scale)
    deq = (q / scale).reshape(rows, -1)[:, :cols].reshape(x.shape)
    clamped = clamped.reshape(rows, -1)[:, :cols].reshape(x.shape)
    return deq, clamped, blocks.shape[0] * blocks.shape[1]


def apply_recipe(
    x: torch.Tensor, fmt: str, recipe: str, history: list[float] | None = None, name: str = "tensor"
) -> RecipeResult:
    """Scale, cast and unscale x by one recipe; count what flushed and what saturated."""
    import torch

    if fmt not in FP8_FORMATS:
        raise ValueError(f"unknown fp8 format {fmt!r}; expected one of {', '.join(FP8_FORMATS)}")
    x = x.detach().to(torch.float32)
    if recipe == "mx":
        deq, clamped, nscales = mx_quantize(x, fmt)
    else:
        scale = _scales(x, fmt, recipe, history)
        q, clamped = quantize(x, fmt, scale)
        deq = q / scale.to(torch.float64)
        nscales = scale.numel()
    x64 = x.to(torch.float64)
    nz = x64 != 0
    nonzero = int(nz.sum())
    flushed = int((nz & (deq == 0)).sum())
    norm = float(x64.norm())
    return RecipeResult(
        tensor=name,
        fmt=fmt,
        recipe=recipe,
        elements=x.numel(),
        nonzero=nonzero,
        flushed=flushed / nonzero if nonzero else 0.0,
        saturated=int(clamped.sum()) / x.numel() if x.numel() else 0.0,
        rel_error=float((deq - x64).norm()) / norm if norm else 0.0,
        scales=nscales,
    )


def compare(
    tensors: dict[str, object], histories: dict[str, list[float]] | None = None
) -> list[RecipeResult]:
    """Every recipe in every fp8 format on every named tensor (histories: delayed scaling's)."""
    hist = histories or {}
    return [
        apply_recipe(x, fmt, recipe, hist.get(name), name)
        for name, x in tensors.items()
        for fmt in FP8_FORMATS
        for recipe in RECIPES
    ]


def model_report(cfg: RunConfig, steps: int = 8) -> dict[str, object]:
    """Every recipe on cfg's middle Linear layer's input and output gradient after `steps` steps."""
    import torch

    prep = engine.prepare(cfg.replace(steps=steps, precision="fp32"))
    model = prep.model
    linears = [(n, m) for n, m in model.named_modules() if isinstance(m, torch.nn.Linear)]
    if not linears:
        raise ValueError("the model has no Linear layer")
    name, module = linears[len(linears) // 2]
    seen: dict[str, torch.Tensor] = {}
    hooks = [
        module.register_forward_hook(lambda _m, inp, _o: seen.__setitem__("activation", inp[0])),
        module.register_full_backward_hook(
            lambda _m, _gi, gout: seen.__setitem__("gradient", gout[0])
        ),
    ]
    amaxes: dict[str, list[float]] = {"activation": [], "gradient": []}
    kept: dict[str, torch.Tensor] = {}
    try:
        model.train()
        for batch in itertools.islice(prep.train_dataloader, steps):
            seen.clear()
            model(**batch).loss.backward()
            prep.optimizer.step()
            prep.optimizer.zero_grad()
            for k in amaxes:
                amaxes[k].append(float(seen[k].detach().abs().amax()))
            kept = {k: seen[k].detach().clone() for k in amaxes}
    finally:
        for h in hooks:
            h.remove()
    histories = {k: v[:-1][-HISTORY:] for k, v in amaxes.items()}  # the steps before the last
    return {
        "layer": name,
        "steps": len(amaxes["gradient"]),
        "tensors": {
            k: {"shape": list(t.shape), "amax": float(t.abs().amax()), "amax_history": histories[k]}
            for k, t in kept.items()
        },
        "results": [asdict(r) for r in compare(kept, histories)],
    }
