"""fp8 training where the hardware has it (CUDA, compute capability >= 8.9): the check, torchao's
conversion of the same layers in the three backends (`linear_filter`), and the audit. torchao is
optional (requirements-gpu.txt)."""

from __future__ import annotations

import importlib.metadata
import importlib.util
from collections.abc import Callable
from typing import Any

from packaging.version import InvalidVersion, Version

from ..messages import ConfigError
from ..registry import PRECISIONS

NAME = "fp8"
TORCHAO_MIN = (0, 6, 1)  # accelerate 1.15's is_torchao_available() floor
INSTALL = "pip install -r requirements-gpu.txt"
FLOAT8_LAYER = "Float8Linear"  # torchao.float8's module class, matched by name (no import)


def gpu(device: Any = None) -> tuple[str, tuple[int, int]] | None:
    """(name, compute capability) of the CUDA GPU torch sees, or None without one."""
    import torch

    if not torch.cuda.is_available():
        return None
    idx = getattr(device, "index", None)
    idx = torch.cuda.current_device() if idx is None else idx
    return torch.cuda.get_device_name(idx), tuple(torch.cuda.get_device_capability(idx))


def refusal(device: Any = None) -> ConfigError:
    """The one-line refusal, saying what this machine has; one message key per case."""
    import torch

    found = gpu(device)
    if found is None:
        mps = torch.backends.mps.is_available()
        return ConfigError("fp8_needs_gpu_mps" if mps else "fp8_needs_gpu")
    name, (major, minor) = found
    cc = f"{major}.{minor}"
    on = getattr(device, "type", None)
    if on is not None and on != "cuda":
        return ConfigError("fp8_not_on_gpu", gpu=name, cc=cc, device=on)
    return ConfigError("fp8_old_gpu", gpu=name, cc=cc)


def torchao_version() -> tuple[int, ...] | None:
    """torchao's installed version as numbers, or None when it is not installed."""
    if importlib.util.find_spec("torchao") is None:
        return None
    try:
        return Version(importlib.metadata.version("torchao")).release[:3]
    except (importlib.metadata.PackageNotFoundError, InvalidVersion):
        return None


def check(device: Any) -> None:
    """Refuse fp8 before anything loads: no capable GPU, or no (recent enough) torchao."""
    card = gpu(device) if getattr(device, "type", None) == "cuda" else None
    needs = PRECISIONS[NAME].needs_compute_capability  # 8.9: fp8 matmuls
    if card is None or needs is None or card[1] < needs:
        raise refusal(device)
    version = torchao_version()
    if version is None or version < TORCHAO_MIN:
        found = "" if version is None else f" (found {'.'.join(map(str, version))})"
        minimum = ".".join(map(str, TORCHAO_MIN))
        raise ConfigError("fp8_no_torchao", found=found, minimum=minimum, install=INSTALL)


def linear_filter(model: Any) -> Callable[[Any, str], bool]:
    """Which nn.Linear layers become Float8Linear (accelerate 1.15's default rule): not the first
    and last (fp8 there hurts convergence), nor one with sizes `torch._scaled_mm` refuses."""
    from torch import nn

    names = [name for name, mod in model.named_modules() if isinstance(mod, nn.Linear)]
    keep = {names[0], names[-1]} if names else set()

    def convert(module: Any, fqn: str) -> bool:
        if isinstance(module, nn.Linear) and (module.in_features % 16 or module.out_features % 16):
            return False
        return fqn not in keep

    return convert


def float8_config() -> Any:
    """torchao's Float8LinearConfig as Accelerate's AORecipeKwargs builds it by default."""
    from torchao.float8 import Float8LinearConfig

    # pad_inner_dim: torch._scaled_mm needs inner sizes that are multiples of 16.
    return Float8LinearConfig(pad_inner_dim=True)


def converter() -> Callable[..., Any]:
    """torchao's convert_to_float8_training (imports torchao: only for fp8 runs)."""
    from torchao.float8 import convert_to_float8_training

    return convert_to_float8_training


def audit(model: Any) -> dict[str, Any]:
    """What really ran, read from the trained model: Float8Linear layers, Linear kept, formats."""
    from torch import nn

    float8, kept = [], []
    formats: dict[str, str] = {}
    for name, mod in model.named_modules():
        if type(mod).__name__ == FLOAT8_LAYER:
            float8.append(name)
            cfg = getattr(mod, "config", None)
            for tensor in ("input", "weight", "grad_output"):
                dtype = getattr(getattr(cfg, f"cast_config_{tensor}", None), "target_dtype", None)
                if dtype is not None:
                    formats[tensor] = str(dtype).replace("torch.", "")
        elif isinstance(mod, nn.Linear):
            kept.append(name)
    total = len(float8) + len(kept)
    return {"float8_layers": len(float8), "linear_layers": total, "kept": kept, "formats": formats}
