"""What makes two comparisons the same: their configs, repeat, code and machine."""

from __future__ import annotations

import functools
import hashlib
import importlib.metadata
import json
import os
import platform
from pathlib import Path

from ..config import RunConfig


@functools.cache
def code_version() -> str:
    """mpdemo's version and a hash of its source files: a changed line is another comparison."""
    try:
        version = importlib.metadata.version("mpdemo")
    except importlib.metadata.PackageNotFoundError:
        version = "0"
    root = Path(__file__).resolve().parents[1]  # the whole package
    digest = hashlib.sha256()
    for path in sorted(root.rglob("*.py")):
        digest.update(str(path.relative_to(root)).encode())
        digest.update(path.read_bytes())
    return f"{version}+{digest.hexdigest()[:12]}"


@functools.cache
def machine_key() -> str:
    """This machine (host, CPU, cores), the same all the process long: it tells servers apart."""
    info = [platform.node(), platform.machine(), platform.processor(), os.cpu_count()]
    return hashlib.sha256(json.dumps(info, default=str).encode()).hexdigest()[:16]


def comparison_key(configs: list[RunConfig], repeat: int = 1) -> str:
    """Configs (as dicts), repeat, code version and machine, hashed."""
    doc = {
        "configs": [c.to_dict() for c in configs],
        "repeat": repeat,
        "code": code_version(),
        "machine": machine_key(),
    }
    return hashlib.sha256(json.dumps(doc, sort_keys=True, default=str).encode()).hexdigest()
