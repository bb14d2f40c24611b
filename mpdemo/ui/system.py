"""Cheap facts about this machine and the bundled data, without importing torch: the Hub check
runs in a thread, GPUs are seen in driver files, row counts read with pyarrow."""

from __future__ import annotations

import contextlib
import functools
import json
import os
import platform
import sys
import threading
from collections.abc import Callable
from pathlib import Path

from ..catalog import BUNDLED_DATASET_DIR
from ..engine.hfhub import hub_reachable
from ..engine.slices import resolve
from ..state import on_reset

_lock = threading.Lock()
_started: dict[str, threading.Thread] = {}  # a background job's name -> its thread
_hub_result: list[bool] = []


def _start_once(name: str, work: Callable[[], object]) -> threading.Thread:
    """Run `work` once, in a daemon thread named `name` (a slow one must not hold the exit)."""
    with _lock:
        if name not in _started:
            thread = threading.Thread(target=work, name=name, daemon=True)
            thread.start()  # kept once started: a thread that could not start is asked again
            _started[name] = thread
        return _started[name]


def start_hub_check() -> threading.Thread:
    """Ask once, in a daemon thread, whether the Hugging Face Hub answers (up to ~1.5 s)."""
    return _start_once("mpdemo-hub-check", lambda: _hub_result.append(hub_reachable()))


@on_reset
def forget_hub_check() -> None:
    """Ask the Hub again at the next start_hub_check() (a check under way still answers)."""
    with _lock:
        _started.pop("mpdemo-hub-check", None)
        _hub_result.clear()


def hub_status(wait: float = 0.0) -> bool | None:
    """True/False once the background check has answered, None while it has not."""
    start_hub_check().join(wait)
    return _hub_result[0] if _hub_result else None


def _import_engine() -> None:
    # Any failure is the click's to report. Not transformers' modules: that import raced a
    # click's own in the runner thread ("cannot import name 'get_constant_schedule'").
    with contextlib.suppress(Exception):
        import mpdemo.engine.core  # noqa: F401


def warm_engine() -> None:
    """Import torch and the engine in a daemon thread, so the first Train click is quick."""
    if "mpdemo.engine.core" not in sys.modules:
        _start_once("mpdemo-warmup", _import_engine)


@functools.lru_cache(maxsize=1)
def cuda_present() -> bool:
    """Whether an NVIDIA GPU is usable, without importing torch when it is not loaded yet."""
    torch = sys.modules.get("torch")
    if torch is not None:
        try:
            return bool(torch.cuda.is_available())
        except Exception:  # noqa: BLE001
            return False
    if os.environ.get("CUDA_VISIBLE_DEVICES", None) in ("", "-1"):
        return False
    return Path("/proc/driver/nvidia/version").exists() or Path("/dev/nvidiactl").exists()


def mps_present() -> bool:
    """Whether this is an Apple-silicon Mac (torch's MPS device)."""
    return sys.platform == "darwin" and platform.machine() == "arm64"


def device_choices() -> list[str]:
    """The devices to offer: auto and cpu always, cuda/mps only where present."""
    out = ["auto", "cpu"]
    if cuda_present():
        out.append("cuda")
    if mps_present():
        out.append("mps")
    return out


def trains_on_cpu(device: str | None) -> bool:
    """Whether a run with this device setting will train on the CPU."""
    return device == "cpu" or (
        device in (None, "", "auto") and not cuda_present() and not mps_present()
    )


def _rows_of_split(split_dir: Path) -> int:
    # The bundled dataset_info.json holds no split sizes: count the arrow files' rows.
    import pyarrow as pa  # lightweight next to torch; only the record-batch headers are read

    total = 0
    for arrow in sorted(split_dir.glob("data-*.arrow")):
        with pa.memory_map(str(arrow)) as source:
            total += sum(batch.num_rows for batch in pa.ipc.open_stream(source))
    return total


@functools.lru_cache(maxsize=8)
def _bundled_sizes(root: str, mtime: float) -> dict[str, int]:
    base = Path(root)
    names = json.loads((base / "dataset_dict.json").read_text(encoding="utf-8"))["splits"]
    return {name: _rows_of_split(base / name) for name in names}


def split_sizes(dataset: str) -> dict[str, int] | None:
    """Rows per split for the bundled dataset; None where only loading would tell."""
    if dataset != "reviews":  # the one dataset bundled, at BUNDLED_DATASET_DIR
        return None
    try:
        mtime = (BUNDLED_DATASET_DIR / "dataset_dict.json").stat().st_mtime
        return _bundled_sizes(str(BUNDLED_DATASET_DIR), mtime)
    except (OSError, ValueError, KeyError):
        return None


def slice_rows(spec: str, sizes: dict[str, int] | None) -> tuple[int, int, bool] | None:
    """(rows selected, rows in the split, asked for more than there are) for a slice string, by
    the engine's arithmetic; ConfigError for bad syntax, None when the sizes are unknown."""
    got = resolve(spec or "", sizes)
    return None if got is None else (got.rows, got.total, got.clamped)


def fmt_params(n: int) -> str:
    """400000 → '0.4M', 67000000 → '67M', 330000 → '0.33M'."""
    for size, unit in ((1e9, "B"), (1e6, "M"), (1e3, "k")):
        if n >= size:
            return f"{n / size:.3g}{unit}"
    return str(n)
