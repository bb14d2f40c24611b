"""fp8 training where the hardware has it: the check, torchao's conversion, and the audit.

fp8 matmuls run on NVIDIA GPUs of compute capability 8.9 and newer (Ada, Hopper); the number
formats themselves (E4M3, E5M2) are taught on any machine by mpdemo.teach.formats and mpdemo.teach.underflow.
Training goes through torchao's `Float8Linear` (dynamic per-tensor scaling): the torch backend's
loop calls `convert_to_float8_training` with `linear_filter` and `float8_config` from here;
`Accelerator(mixed_precision="fp8")` builds its torchao backend's `AORecipeKwargs` itself when
torchao is installed, and the Trainer gets the same Accelerator through its mixed_precision
(what Accelerate's config sets). All three keep the first and last Linear in high precision and
convert the rest whose sizes are multiples of 16 (accelerate 1.15's default filter, written out
in `linear_filter`), so the three backends convert the same layers.

torch is imported inside functions; torchao is optional (requirements-gpu.txt brings it).
"""

from __future__ import annotations

import contextlib
import importlib.metadata
import importlib.util
from collections.abc import Callable
from typing import Any

from ..messages import ConfigError
from ..registry import PRECISIONS

NAME = "fp8"
TORCHAO_MIN = (0, 6, 1)  # accelerate 1.15's is_torchao_available() floor
INSTALL = "pip install -r requirements-gpu.txt"
FLOAT8_LAYER = "Float8Linear"  # torchao.float8's module class, matched by name (no import)


def required_capability() -> tuple[int, int]:
    """The compute capability the fp8 record asks for, (8, 9)."""
    cc = PRECISIONS[NAME].needs_compute_capability
    assert cc is not None
    return cc


def gpu(device: Any = None) -> tuple[str, tuple[int, int]] | None:
    """(name, compute capability) of the CUDA GPU torch sees, or None without one."""
    import torch

    if not torch.cuda.is_available():
        return None
    index = device.index if getattr(device, "index", None) is not None else None
    idx = torch.cuda.current_device() if index is None else index
    return torch.cuda.get_device_name(idx), tuple(torch.cuda.get_device_capability(idx))


def refusal(device: Any = None) -> ConfigError:
    """The one-line refusal, saying what this machine has (read from torch), in message keys.

    One key per case, so every language says the whole sentence (mpdemo/ui/locales).
    """
    import torch

    found = gpu(device)
    if found is None:
        mps = False
        with contextlib.suppress(AttributeError, RuntimeError):
            mps = bool(torch.backends.mps.is_available())
        return ConfigError("fp8_needs_gpu_mps" if mps else "fp8_needs_gpu")
    name, (major, minor) = found
    cc = f"{major}.{minor}"
    on = getattr(device, "type", None)
    if on is not None and on != "cuda":
        return ConfigError("fp8_not_on_gpu", gpu=name, cc=cc, device=on)
    return ConfigError("fp8_old_gpu", gpu=name, cc=cc)


def supported(device: Any) -> bool:
    """Whether fp8 matmuls can run on this device: CUDA with compute capability >= 8.9."""
    if getattr(device, "type", None) != "cuda":
        return False
    found = gpu(device)
    return found is not None and found[1] >= required_capability()


def torchao_version() -> tuple[int, ...] | None:
    """torchao's installed version as numbers, or None when it is not installed."""
    if importlib.util.find_spec("torchao") is None:
        return None
    try:
        text = importlib.metadata.version("torchao")
    except importlib.metadata.PackageNotFoundError:
        return None
    parts = []
    for piece in text.split("+")[0].split(".")[:3]:
        digits = "".join(ch for ch in piece if ch.isdigit())
        parts.append(int(digits or 0))
    return tuple(parts)


def check(device: Any, backend: str | None = None) -> None:
    """Refuse fp8 before anything loads: no capable GPU, or no (recent enough) torchao."""
    if not supported(device):
        raise refusal(device)
    version = torchao_version()
    if version is None or version < TORCHAO_MIN:
        found = "" if version is None else f" (found {'.'.join(map(str, version))})"
        raise ConfigError(
            "fp8_no_torchao",
            found=found,
            minimum=".".join(map(str, TORCHAO_MIN)),
            install=INSTALL,
        )


def linear_filter(model: Any) -> Callable[[Any, str], bool]:
    """Which nn.Linear layers become Float8Linear: accelerate 1.15's default rule, written out.

    The first and last Linear stay in high precision (fp8 there hurts convergence), and so does
    any Linear whose in/out features are not multiples of 16 (`torch._scaled_mm` needs that).
    """
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


def _dtype_of(cast_config: Any) -> str | None:
    dtype = getattr(cast_config, "target_dtype", None)
    return str(dtype).replace("torch.", "") if dtype is not None else None


def audit(model: Any) -> dict[str, Any]:
    """What really ran: how many Linear layers are torchao Float8Linear, and which were kept.

    Read from the model after training (the converted modules), not from the request. The
    formats are read from the layers' config where this torchao records them there.
    """
    from torch import nn

    float8, kept = [], []
    formats: dict[str, str] = {}
    for name, mod in model.named_modules():
        if type(mod).__name__ == FLOAT8_LAYER:
            float8.append(name)
            cfg = getattr(mod, "config", None)
            for tensor in ("input", "weight", "grad_output"):
                dtype = _dtype_of(getattr(cfg, f"cast_config_{tensor}", None))
                if dtype:
                    formats[tensor] = dtype
        elif isinstance(mod, nn.Linear):
            kept.append(name)
    return {
        "float8_layers": len(float8),
        "linear_layers": len(float8) + len(kept),
        "kept": kept,
        "formats": formats,
    }


def effective_dtype(model: Any) -> Any:
    """torch.float8_e4m3fn when any layer trained as Float8Linear, else None (nothing in fp8)."""
    import torch

    return torch.float8_e4m3fn if audit(model)["float8_layers"] else None
