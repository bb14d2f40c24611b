"""Shared fixtures: small, fast configs on the bundled data; the Hub is never contacted."""

from __future__ import annotations

import os
import sys
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT))
# Tests must behave as on a machine without internet, wherever they run.
os.environ.setdefault("HF_HUB_OFFLINE", "1")
os.environ.setdefault("HF_DATASETS_OFFLINE", "1")
os.environ.setdefault("TOKENIZERS_PARALLELISM", "false")

from mpdemo.config import RunConfig  # noqa: E402


@pytest.fixture
def small_cfg() -> RunConfig:
    """The tiny model on a small slice: a few steps take well under a second each."""
    return RunConfig(
        train_slice="train[:256]",
        eval_slice="validation[:64]",
        steps=4,
        batch_size=16,
        device="cpu",
    )


def events_of(cfg: RunConfig, stop=None) -> list:
    """Run train() to the end and return every event."""
    from mpdemo import train

    return list(train(cfg, stop))


def summary_of(events: list) -> dict:
    """The end event's summary."""
    (end,) = [e for e in events if e.kind == "end"]
    return end.summary
