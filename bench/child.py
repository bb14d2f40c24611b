"""A measurement in a fresh Python process: its last stdout line, a JSON object (the bench
scripts' `--one` mode). Fresh processes share no OpenMP pool, allocator or autocast cache."""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path
from typing import Any

ROOT = Path(__file__).resolve().parent.parent


def run_child(script: str | Path, *args: str, what: str = "child") -> dict[str, Any]:
    """Run `python script args...` from the repository root; its last line parsed as JSON."""
    proc = subprocess.run(
        [sys.executable, str(script), *args],
        capture_output=True,
        text=True,
        cwd=ROOT,
        env={**os.environ, "TOKENIZERS_PARALLELISM": "false"},
        check=False,
    )
    if proc.returncode != 0:
        raise RuntimeError(f"{what} failed:\n{proc.stderr[-2000:]}")
    return json.loads(proc.stdout.strip().splitlines()[-1])
