"""The size sweep's grid, torch-free: the page and the CLI parse it without importing torch."""

from __future__ import annotations

import re
from dataclasses import dataclass

from ..catalog import MODELS
from ..config import Limits, RunConfig, check_number
from ..messages import ConfigError

SWEEP_PRECISIONS = ("fp32", "fp16", "bf16")  # autocast's (fp8 brings torchao's layers instead)
HIDDEN_RANGE = (32, 4096)  # multiples of 32: two heads of 16 at the least
LAYERS_RANGE = (1, 48)
MAX_POINTS = 64
# From the tiny built-in to 26 M parameters, about a minute on 2 cores (bench/sweep.py).
DEFAULT_SIZES = "64x2,256x4,512x8"
DEFAULT_BATCH_SIZES = "8,32"
DEFAULT_BUDGET_S = 30.0


@dataclass(frozen=True)
class Grid:
    """A default grid: sizes, batch sizes, tokens a row and the timing budget, as typed."""

    sizes: str
    batch_sizes: str
    max_length: int
    budget_s: float


CPU_GRID = Grid(DEFAULT_SIZES, DEFAULT_BATCH_SIZES, RunConfig.max_length, DEFAULT_BUDGET_S)
# On CUDA the CPU's grid is launch-bound (H200: 16-bit 1.20-1.28x slower throughout); this one
# spans the crossing (small-bert 32 x 256 1.24x slower, 128 x 256 1.72x faster) in 2-3 minutes.
CUDA_GRID = Grid("64x2,256x4,512x8,768x12,1024x24", "8,32,128", 256, 90.0)


def default_grid(kind: str) -> Grid:
    """The default grid for a device kind ('cuda' or anything else: the CPU's)."""
    return CUDA_GRID if kind == "cuda" else CPU_GRID


_SIZE = re.compile(r"\s*([0-9]{1,5})\s*[xX×]\s*([0-9]{1,3})\s*")
_WHOLE = re.compile(r"\s*[0-9]{1,9}\s*")


@dataclass(frozen=True, order=True)
class Size:
    """One width x depth of the built-in BERT (tiny-bert is 64x2, small-bert 256x4)."""

    hidden: int
    layers: int

    @property
    def heads(self) -> int:
        """Heads of 64 where the width allows (two at the least), as the built-ins have."""
        return max(2, self.hidden // 64) if self.hidden % 64 == 0 else 2

    @property
    def name(self) -> str:
        """'256x4': width x layers, the same in every language."""
        return f"{self.hidden}x{self.layers}"

    @property
    def model(self) -> str:
        """The built-in's name where it is one, else 'bert-512x8'."""
        return _BUILTIN_SIZES.get(self, f"bert-{self.name}")


_BUILTIN_SIZES = {Size(64, 2): "tiny-bert", Size(256, 4): "small-bert", Size(768, 12): "base-bert"}
BUILTIN_BY_NAME = {v: k for k, v in _BUILTIN_SIZES.items()}


def parse_sizes(text: str) -> tuple[Size, ...]:
    """'128x2,256x4' -> Sizes by cost (a built-in's name works too); one keyed ConfigError if not."""
    items = [t.strip() for t in str(text).split(",") if t.strip()]
    if not items:
        raise ConfigError("sweep_bad_sizes", value=str(text)[:64])
    out: list[Size] = []
    for item in items:
        if item in BUILTIN_BY_NAME:
            out.append(BUILTIN_BY_NAME[item])
            continue
        m = _SIZE.fullmatch(item)
        if m is None:
            raise ConfigError("sweep_bad_sizes", value=item[:64])
        size = Size(int(m.group(1)), int(m.group(2)))
        lo, hi = HIDDEN_RANGE
        if not (lo <= size.hidden <= hi) or size.hidden % 32:
            raise ConfigError("sweep_bad_hidden", value=item, lo=lo, hi=hi)
        lo, hi = LAYERS_RANGE
        if not (lo <= size.layers <= hi):
            raise ConfigError("sweep_bad_layers", value=item, lo=lo, hi=hi)
        out.append(size)
    return tuple(sorted(dict.fromkeys(out), key=lambda s: (s.hidden * s.hidden * s.layers, s)))


def parse_batch_sizes(text: str, limits: Limits | None = None) -> tuple[int, ...]:
    """'8,32,128' -> (8, 32, 128), each in the batch size's range on this server."""
    lim = limits or Limits.from_env()
    items = [t.strip() for t in str(text).split(",") if t.strip()]
    if not items:
        raise ConfigError("sweep_bad_batch_sizes", value=str(text)[:64])
    out = []
    for item in items:
        if not _WHOLE.fullmatch(item):
            raise ConfigError("sweep_bad_batch_sizes", value=item[:64])
        check_number("batch_size", int(item), lim)
        out.append(int(item))
    return tuple(sorted(dict.fromkeys(out)))


def builtin_size(model: str) -> Size | None:
    """The Size of a built-in BERT ('tiny-bert' -> 64x2); None for other models."""
    entry = MODELS.get(model)
    return BUILTIN_BY_NAME.get(model) if entry is not None and entry.builtin else None
