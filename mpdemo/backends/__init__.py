"""The three backends: siblings with the same skeleton (begin → step → end, then eval)."""

from __future__ import annotations

from collections.abc import Callable
from typing import Any


def _torch(prep: Any, rec: Any) -> None:
    from .torch_amp import run

    run(prep, rec)


def _accelerate(prep: Any, rec: Any) -> None:
    from .accelerate import run

    run(prep, rec)


def _trainer(prep: Any, rec: Any) -> None:
    from .trainer import run

    run(prep, rec)


# Imported lazily: transformers' Trainer alone costs seconds to import.
BACKEND_RUNNERS: dict[str, Callable[[Any, Any], None]] = {
    "torch": _torch,
    "accelerate": _accelerate,
    "trainer": _trainer,
}
