"""Master weights and what replaces them: `fp32` (the master copy the update lands in), `bf16` (pure
bf16 weights and moments: an update under half an ulp rounds away), `bf16-sr` (stochastic rounding);
`LostUpdates` measures the share of elements an update should have changed that did not change."""

from __future__ import annotations

import math
import time
from typing import Any

import torch

from ..teach.rounding import stochastic_round_bf16


def torchao_adamw() -> Any:
    """torchao's _AdamW class, or None where torchao (or that class) is not installed."""
    try:
        from torchao.optim import _AdamW  # type: ignore[import-not-found]
    except Exception:  # noqa: BLE001 - not installed, or a version without it
        return None
    return _AdamW


class SRAdamW(torch.optim.Optimizer):
    """AdamW for bf16 weights: moments kept bf16, arithmetic in fp32, weights rounded stochastically."""

    def __init__(
        self,
        params: Any,
        lr: float = 1e-3,
        weight_decay: float = 1e-2,
        seed: int = 0,
    ) -> None:
        defaults = {"lr": lr, "betas": (0.9, 0.999), "eps": 1e-8, "weight_decay": weight_decay}
        super().__init__(params, defaults)
        self._gen: torch.Generator | None = None
        self._seed = seed

    @torch.no_grad()
    def step(self, closure: Any = None) -> Any:
        """One AdamW step (torch.optim.AdamW's formulas), the new weights rounded stochastically."""
        loss = closure() if closure is not None else None
        for group in self.param_groups:
            lr, (b1, b2), eps, wd = group["lr"], group["betas"], group["eps"], group["weight_decay"]
            for p in group["params"]:
                if p.grad is None:
                    continue
                if self._gen is None or self._gen.device != p.device:
                    self._gen = torch.Generator(device=p.device).manual_seed(self._seed)
                st = self.state[p]
                if not st:
                    # On the CPU on purpose, as torch.optim.AdamW keeps its step (float() below).
                    st["step"] = torch.tensor(0.0, device="cpu")
                    st["exp_avg"] = torch.zeros_like(p)  # bf16, like the weights
                    st["exp_avg_sq"] = torch.zeros_like(p)
                st["step"] += 1
                t = float(st["step"])
                g = p.grad.float()
                w = p.float() * (1 - lr * wd)
                m = st["exp_avg"].float().lerp_(g, 1 - b1)
                v = st["exp_avg_sq"].float().mul_(b2).addcmul_(g, g, value=1 - b2)
                st["exp_avg"].copy_(m)
                st["exp_avg_sq"].copy_(v)
                denom = (v / (1 - b2**t)).sqrt_().add_(eps)
                w.addcdiv_(m, denom, value=-lr / (1 - b1**t))
                p.copy_(stochastic_round_bf16(w, self._gen) if p.dtype == torch.bfloat16 else w)
        return loss


def build_optimizer(model: torch.nn.Module, lr: float, weights: str, seed: int = 0) -> Any:
    """The run's AdamW: torch's for fp32 and bf16 weights; stochastic rounding for bf16-sr."""
    if weights == "bf16-sr":
        ao = torchao_adamw()
        if ao is not None:
            return ao(model.parameters(), lr=lr, bf16_stochastic_round=True)
        return SRAdamW(model.parameters(), lr=lr, seed=seed)
    return torch.optim.AdamW(model.parameters(), lr=lr)


def sr_source(weights: str) -> str | None:
    """Which stochastic rounding a run used: 'torchao' or 'mpdemo' (None without SR)."""
    if weights != "bf16-sr":
        return None
    return "torchao" if torchao_adamw() is not None else "mpdemo"


def cast_weights(model: torch.nn.Module, weights: str) -> torch.nn.Module:
    """The model with its weights in the recipe's dtype (pure bf16: every parameter bf16)."""
    return model.to(torch.bfloat16) if weights in ("bf16", "bf16-sr") else model


def _intended_update(p: torch.Tensor, before: torch.Tensor, st: dict, group: dict) -> torch.Tensor:
    """AdamW's update for p this step in fp32, from its state after the step."""
    lr, (b1, b2), eps = group["lr"], group["betas"], group["eps"]
    wd = group.get("weight_decay", 0.0)
    t = float(st["step"])
    m = st["exp_avg"].float() / (1 - b1**t)
    v = st["exp_avg_sq"].float() / (1 - b2**t)
    return lr * (m / (v.sqrt() + eps) + wd * before.float())


class LostUpdates:
    """Per step: share of elements whose update was not zero but whose stored weight did not move."""

    def __init__(self, optimizer: torch.optim.Optimizer) -> None:
        self.optimizer = optimizer
        # seconds inside the timed step (the post-step hook): the Recorder subtracts them
        self.spent = 0.0
        self._before: dict[int, torch.Tensor] = {}
        self._share: float | None = None
        self._handle = optimizer.register_step_post_hook(self._after)

    def snapshot(self) -> None:
        """Copy the weights before the step (called before the step's clock starts)."""
        self._share = None
        self.spent = 0.0
        self._before = {
            id(p): p.detach().clone() for g in self.optimizer.param_groups for p in g["params"]
        }

    def _after(self, optimizer: Any, _args: Any, _kwargs: Any) -> None:
        t0 = time.perf_counter()
        should = lost = 0
        with torch.no_grad():
            for group in optimizer.param_groups:
                for p in group["params"]:
                    before = self._before.get(id(p))
                    st = optimizer.state.get(p)
                    if before is None or not st or "exp_avg" not in st:
                        continue
                    u = _intended_update(p, before, st, group)
                    moved = u != 0
                    should += int(moved.sum())
                    lost += int((moved & (p.detach() == before)).sum())
        self._share = lost / should if should else None
        self.spent += time.perf_counter() - t0

    def take(self) -> float | None:
        """This step's share (None when the optimizer did not step: a skipped fp16 step)."""
        share, self._share = self._share, None
        self._before = {}
        return share

    def close(self) -> None:
        """Remove the hook."""
        self._handle.remove()


def bytes_per_param(model: torch.nn.Module, optimizer: Any) -> dict[str, float]:
    """Bytes each parameter costs in this run, from its tensors (no master_copy: under autocast the
    fp32 weights are the master; gradients in the weights' dtype when absent)."""
    params = [p for p in model.parameters() if p.requires_grad]
    n = sum(p.numel() for p in params) or 1
    grads = sum((p.grad if p.grad is not None else p).nbytes for p in params)
    moments = [optimizer.state.get(p, {}).get(k) for p in params for k in ("exp_avg", "exp_avg_sq")]
    out = {
        "weights": sum(p.nbytes for p in params) / n,
        "gradients": grads / n,
        "master_copy": 0.0,
        "adam_moments": sum(t.nbytes for t in moments if isinstance(t, torch.Tensor)) / n,
    }
    out["total"] = math.fsum(out.values())
    return out
