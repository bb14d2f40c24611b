"""Two processes on the CPU through `accelerate launch` (gloo): the curve is the global one."""

from __future__ import annotations

import json
import os
import shutil
import subprocess
import sys

import pytest
from conftest import ROOT

ARGS = ["run", "--steps", "3", "--train-slice", "train[:128]", "--eval-slice",
        "validation[:32]", "--batch-size", "16", "--quiet"]  # fmt: skip


def _launch(tmp_path, backend: str) -> subprocess.CompletedProcess:
    accelerate = shutil.which("accelerate", path=os.path.dirname(sys.executable))
    # --multi_gpu with no GPU gives torchrun + gloo on the CPU (accelerate 1.15's --cpu flag
    # launches a single process whatever --num_processes says).
    return subprocess.run(
        [accelerate, "launch", "--multi_gpu", "--num_processes", "2", "--num_machines", "1",
         "--mixed_precision", "no", "--dynamo_backend", "no", "-m", "mpdemo", *ARGS,
         "--backend", backend, "--json", str(tmp_path / "runs.json")],
        capture_output=True, text=True, cwd=ROOT, timeout=240,
        env={**os.environ, "OMP_NUM_THREADS": "1"},
    )  # fmt: skip


@pytest.mark.parametrize("backend", ["accelerate", "trainer"])
def test_two_processes_match_one(tmp_path, backend):
    from mpdemo.cli.main import main

    proc = _launch(tmp_path, backend)
    assert proc.returncode == 0, proc.stderr[-2000:]
    # Only the main process prints the table.
    assert proc.stdout.count("backend") == 1, proc.stdout
    (run,) = json.loads((tmp_path / "runs.json").read_text())["runs"]
    assert run["summary"]["processes"] == 2
    assert any(w["key"] == "distributed" for w in run["summary"]["warning_keys"])
    assert main([*ARGS, "--backend", backend, "--json", str(tmp_path / "one.json")]) == 0
    (one,) = json.loads((tmp_path / "one.json").read_text())["runs"]
    two_losses = [s["loss"] for s in run["steps"]]
    one_losses = [s["loss"] for s in one["steps"]]
    # The global batch split in two halves, gradients averaged: the same training as one process.
    assert two_losses == pytest.approx(one_losses, abs=1e-5)


def test_torch_backend_refuses_many_processes(monkeypatch):
    from mpdemo.cli.main import main

    monkeypatch.setenv("WORLD_SIZE", "2")
    assert main([*ARGS, "--backend", "torch"]) == 2
