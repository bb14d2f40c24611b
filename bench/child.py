"""A measurement in a fresh Python process: its last stdout line, a JSON object (the bench
scripts' `--one` mode). Fresh processes share no OpenMP pool, allocator or autocast cache."""

from __future__ import annotations

import contextlib
import json
import os
import signal
import subprocess
import sys
import tempfile
import time
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


def active_s(spans: list[tuple[float, float]], t0: float, t1: float) -> float:
    """Seconds of [t0, t1] that fall inside `spans` (the times a process was let run)."""
    return sum(max(0.0, min(b, t1) - max(a, t0)) for a, b in spans)


def run_paired(
    script: str | Path, args_a: list[str], args_b: list[str], slice_s: float = 0.5
) -> tuple[list[dict[str, Any]], list[list[tuple[float, float]]]]:
    """Run two measurements at once, taking turns: only one process runs at a time, switched
    every `slice_s` with SIGSTOP / SIGCONT, so both see the same machine within a second or two.

    Returns each child's last stdout line (JSON) and the spans (time.perf_counter(), the
    system-wide CLOCK_MONOTONIC on Linux, as the children stamp their steps) each was let run.
    A child measures its own steps in wall time; `active_s` takes out the spans it was stopped.
    """
    env = {**os.environ, "TOKENIZERS_PARALLELISM": "false"}
    spans: list[list[tuple[float, float]]] = [[], []]
    with contextlib.ExitStack() as stack:
        files = [tuple(stack.enter_context(tempfile.TemporaryFile("w+")) for _ in "oe")
                 for _ in range(2)]  # fmt: skip
        launched = time.perf_counter()
        procs = [subprocess.Popen([sys.executable, str(script), *args], stdout=out, stderr=err,
                                  cwd=ROOT, env=env)
                 for (out, err), args in zip(files, (args_a, args_b), strict=True)]  # fmt: skip
        os.kill(procs[1].pid, signal.SIGSTOP)  # b ran only while it was being started
        spans[1].append((launched, time.perf_counter()))
        run, since = 0, launched
        try:
            while procs[run].poll() is None or procs[1 - run].poll() is None:
                time.sleep(slice_s)
                other = 1 - run
                if procs[other].poll() is not None:  # the other one is done: this one runs on
                    continue
                if procs[run].poll() is None:
                    os.kill(procs[run].pid, signal.SIGSTOP)
                now = time.perf_counter()
                spans[run].append((since, now))
                os.kill(procs[other].pid, signal.SIGCONT)
                run, since = other, now
            spans[run].append((since, time.perf_counter()))
        finally:
            for p in procs:
                if p.poll() is None:
                    p.kill()
                    os.kill(p.pid, signal.SIGCONT)
                    p.wait()
        results = []
        for p, (out, err) in zip(procs, files, strict=True):
            out.seek(0)
            err.seek(0)
            if p.returncode != 0:
                raise RuntimeError(f"child failed:\n{err.read()[-2000:]}")
            results.append(json.loads(out.read().strip().splitlines()[-1]))
    return results, spans
