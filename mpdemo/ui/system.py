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
from pathlib import Path

from ..catalog import BUNDLED_DATASET_DIR, DATASETS
from ..engine.hfhub import hub_reachable
from ..engine.slices import resolve
from ..state import on_reset

_hub_done = threading.Event()
_hub_result: list[bool] = []
_hub_started = threading.Lock()
_hub_thread: threading.Thread | None = None
_warm_lock = threading.Lock()
_warm_thread: threading.Thread | None = None


def start_hub_check() -> None:
    """Ask once, in a daemon thread, whether the Hugging Face Hub answers (up to ~1.5 s)."""
    global _hub_thread
    with _hub_started:
        if _hub_thread is not None:
            return

        def work() -> None:
            try:
                _hub_result.append(hub_reachable())
            finally:
                _hub_done.set()

        _hub_thread = threading.Thread(target=work, name="mpdemo-hub-check", daemon=True)
        _hub_thread.start()


@on_reset
def forget_hub_check() -> None:
    """Ask the Hub again at the next start_hub_check() (a check under way still answers)."""
    global _hub_thread
    with _hub_started:
        _hub_thread = None
        _hub_result.clear()
        _hub_done.clear()


def hub_status(wait: float = 0.0) -> bool | None:
    """True/False once the background check has answered, None while it has not."""
    start_hub_check()
    if _hub_done.wait(wait) and _hub_result:
        return _hub_result[0]
    return None


def warm_engine() -> None:
    """Import torch and the engine in a daemon thread, so the first Train click is quick."""
    global _warm_thread
    with _warm_lock:
        if _warm_thread is not None or "mpdemo.engine.core" in sys.modules:
            return

        def work() -> None:
            # Any failure is the click's to report. Not transformers' modules: that import raced
            # a click's own in the runner thread ("cannot import name 'get_constant_schedule'").
            with contextlib.suppress(Exception):
                import mpdemo.engine.core  # noqa: F401

        _warm_thread = threading.Thread(target=work, name="mpdemo-warmup", daemon=True)
        _warm_thread.start()


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
    entry = DATASETS.get(dataset)
    if entry is None or not entry.builtin or dataset != "reviews":
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
