"""Prepared: what every backend gets from prepare(), in a module of its own (no import cycle)."""

from __future__ import annotations

from collections.abc import Iterator
from dataclasses import dataclass, field
from typing import Any

import torch

from ..config import RunConfig
from ..messages import Note


@dataclass
class Prepared:
    """Everything a training loop needs, built the same way for every backend."""

    model: torch.nn.Module
    optimizer: torch.optim.Optimizer
    lr_scheduler: Any
    train_dataloader: Any  # yields dicts of tensors already on `device`
    eval_dataloader: Any
    device: torch.device
    cfg: RunConfig
    task: str  # cls | lm | regression
    params: int
    train_dataset: Any  # rows laid out in batch order (sequential sampling reproduces it)
    eval_dataset: Any
    raw_train_loader: torch.utils.data.DataLoader  # the CPU-side loaders, for accelerate/Trainer
    raw_eval_loader: torch.utils.data.DataLoader
    tokens_per_sample: int | None
    train_rows: int
    eval_rows: int
    notes: list[Note] = field(default_factory=list)


@dataclass
class DeviceLoader:
    """Wraps a DataLoader so batches arrive on the device, as the course's loop expects."""

    loader: torch.utils.data.DataLoader
    device: torch.device

    def __len__(self) -> int:
        return len(self.loader)

    def __iter__(self) -> Iterator[dict[str, torch.Tensor]]:
        non_blocking = self.device.type == "cuda"
        for batch in self.loader:
            yield {k: v.to(self.device, non_blocking=non_blocking) for k, v in batch.items()}
